import Foundation
import HostPlayer
import JSONRPC
import MediaHTTP
import MediaHost
import MediaKit
import Sandbox
import TMDBSandbox
import TestSupport
import Testing

@testable import TMDB

struct TMDBFixture {
    let replica = TMDBReplica()
    let server: SandboxServer
    let provider: TMDBProvider

    init(credentials: [String: String] = ["api_key": "test-key"]) async throws {
        server = SandboxServer(replicas: [replica])
        try await server.start()
        provider = try TMDBProvider(context: server.providerContext("tmdb", credentials))
    }

    func requests(_ path: String) -> [Sandbox.TrafficLog.RequestRecord] {
        server.traffic.requests.filter { $0.path == "/tmdb/3/" + path }
    }
}

@Suite struct TMDBProviderTests {
    @Test func genresAndListsPagedByPageNumbers() async throws {
        let f = try await TMDBFixture()
        defer { f.server.stop() }
        let categories = try await f.provider.categories()
        #expect(categories.prefix(4).map(\.id) == ["popular", "now_playing", "top_rated", "upcoming"])
        #expect(categories.contains(MediaCategory(id: "35", name: "Comedy")))
        let first = try await f.provider.browse(category: "Comedy", cursor: nil)
        #expect(first.items.count == 20 && first.prev == nil && first.next == "2")
        let second = try await f.provider.browse(category: "35", cursor: first.next)
        #expect(second.prev == "1")
        #expect(Set(second.items.map(\.id)).isDisjoint(with: first.items.map(\.id)))
        let query = try #require(f.requests("discover/movie").first?.query)
        for part in ["with_genres=35", "sort_by=popularity.desc", "language=en-US", "page=1"] {
            #expect(query.contains(part), "\(query)")
        }
        #expect(try await f.provider.browse(category: "top_rated", cursor: nil).items.count == 20)
    }

    @Test func detailsWithImagesCastDirectorAndTrailers() async throws {
        let f = try await TMDBFixture()
        defer { f.server.stop() }
        let movie = try await f.provider.item(ItemID(provider: "tmdb", kind: .movie, nativeID: "550"))
        #expect(movie.title == "Fight Club")
        #expect(movie.duration == Double(139 * 60))
        // The configuration's image base (on the sandbox's stand-in for image.tmdb.org), size, path.
        let images = f.server.baseURL(for: "tmdb")! + "/files/image.tmdb.org/t/p/"
        #expect(movie.artwork == images + "w500/p550x.jpg")
        #expect(movie.extra?["backdrop"] == images + "w1280/b550x.jpg")
        #expect(movie.extra?["rating"] == "8.4/10")
        #expect(movie.extra?["cast"]?.split(separator: ",").count == 5)
        #expect(movie.extra?["director"] != nil && movie.creator == movie.extra?["director"])
        #expect(movie.extra?["trailer"]?.hasPrefix("youtube:video:") == true)
        #expect(try ItemID(parsing: movie.extra?["trailer"] ?? "").kind == .video)
        // What `play` plays for it is a field the provider fills, with a page for when YouTube
        // is not configured: the host knows nothing of YouTube.
        let plays = try #require(movie.plays)
        #expect(plays.id.description == movie.extra?["trailer"] && plays.label == "the first trailer")
        #expect(plays.url == "https://www.youtube.com/watch?v=\(plays.id.nativeID)")
        #expect(f.requests("movie/550").first?.query?.contains("append_to_response=credits%2Cvideos") == true)
        _ = try await f.provider.search(SearchQuery(text: "harbor"))
        #expect(f.requests("configuration").count == 1, "the image configuration is fetched once")
    }

    @Test func searchAndRelatedMovies() async throws {
        let f = try await TMDBFixture()
        defer { f.server.stop() }
        let page = try await f.provider.search(SearchQuery(text: "fight club"))
        #expect(page.items.map(\.id.nativeID) == ["550"])
        let similar = try await f.provider.children(of: ItemID(provider: "tmdb", kind: .movie, nativeID: "550"), cursor: nil)
        #expect(!similar.items.isEmpty)
        #expect(similar.next?.rawValue.hasPrefix("s") == true)
        let more = try await f.provider.children(
            of: ItemID(provider: "tmdb", kind: .movie, nativeID: "550"), cursor: similar.next)
        #expect(more.prev == "s1")
        let recommended = try await f.provider.children(of: ItemID(provider: "tmdb", kind: .movie, nativeID: "550"), cursor: "r1")
        #expect(Set(recommended.items.map(\.id)).isDisjoint(with: similar.items.map(\.id)))
        await #expect(throws: ProviderError.self) { try await f.provider.search(SearchQuery(text: "x", kind: .user)) }
    }

    @Test func bothCredentialModes() async throws {
        let key = try await TMDBFixture(credentials: ["api_key": "key-123"])
        defer { key.server.stop() }
        _ = try await key.provider.categories()
        #expect(key.requests("genre/movie/list").first?.query?.contains("api_key=key-123") == true)
        let token = try await TMDBFixture(credentials: ["access_token": "eyJ.token"])
        defer { token.server.stop() }
        _ = try await token.provider.categories()
        #expect(token.requests("genre/movie/list").first?.query?.contains("api_key") == false)
        #expect(token.server.traffic.requests.last?.headers["user-agent"] != nil)
    }

    @Test func statusCodesMapToTypedErrors() async throws {
        let bad = try await TMDBFixture(credentials: ["api_key": "bad-SECRET"])
        defer { bad.server.stop() }
        do {
            _ = try await bad.provider.categories()
            Issue.record("a bad key was accepted")
        } catch let error as ProviderError {
            guard case .unauthorized(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("TMDB_API_KEY") && !message.contains("SECRET"))
        }
        let f = try await TMDBFixture()
        defer { f.server.stop() }
        do {
            _ = try await f.provider.item(ItemID(provider: "tmdb", kind: .movie, nativeID: "999999"))
            Issue.record("a missing movie was found")
        } catch let error as ProviderError {
            guard case .notFound = error else { Issue.record("\(error)"); return }
        }
        f.server.faults.add(FaultRule(path: "/tmdb/3/search/movie", status: 429, retryAfter: 4, times: 1))
        await #expect(throws: ProviderError.rateLimited(retryAfter: 4)) { try await f.provider.search(SearchQuery(text: "x")) }
    }
}

/// Login and account favorites through the host.
@Suite struct TMDBAccountTests {
    func host(_ server: SandboxServer) throws -> HostRuntime {
        let directory = NSTemporaryDirectory() + "mediahost-tmdb-" + UUID().uuidString
        return try HostRuntime(
            paths: HostPaths(configFile: directory + "/none.toml", dataDir: directory + "/data", cacheDir: directory + "/cache"),
            providers: [.of(TMDBProvider.self)], http: MediaHTTPClient(), modules: [PlayerModule.self],
            environment: server.providerEnvironment())
    }

    func call(_ host: HostRuntime, _ method: String, _ params: JSONValue) async throws -> JSONValue {
        try JSONParser.parse(try await host.dispatcher.call(method, params: params))
    }

    @Test func loginFavoritesAndLogout() async throws {
        let replica = TMDBReplica()
        let server = SandboxServer(replicas: [replica])
        try await server.start()
        defer { server.stop() }
        let host = try host(server)
        let status = try await call(host, "auth.login", ["provider": "tmdb", "username": "ada", "password": "lovelace"])
        #expect(status["loggedIn"] == true && status["account"] == "ada")
        #expect(!status.jsonString.contains("lovelace"), "the password is never returned")
        let added = try await call(host, "favorites.add", ["id": "tmdb:movie:550"])
        #expect(added["extra"]?["account"] == "saved to your tmdb account")
        #expect(replica.accounts.favorites(of: "ada") == [550])
        let remote = try await call(host, "favorites.list", ["provider": "tmdb", "remote": true])
        #expect(remote["items"]?.arrayValue?.map { $0["id"] } == ["tmdb:movie:550"])
        _ = try await call(host, "favorites.remove", ["id": "tmdb:movie:550"])
        #expect(replica.accounts.favorites(of: "ada").isEmpty)
        // A failure on the account keeps the local favorite and says so.
        server.faults.add(FaultRule(path: "/tmdb/3/account/", status: 500, times: 1))
        let kept = try await call(host, "favorites.add", ["id": "tmdb:movie:1001"])
        #expect(kept["favorite"] == true)
        #expect(kept["extra"]?["account"]?.stringValue?.hasPrefix("kept here, but your tmdb account was not updated") == true)
        let out = try await call(host, "auth.logout", ["provider": "tmdb"])
        #expect(out["loggedIn"] == false)
        #expect(server.traffic.requests.contains { $0.method == "DELETE" && $0.path == "/tmdb/3/authentication/session" })
    }

    /// `play` on a movie plays its first trailer (its YouTube watch page when YouTube is not set up).
    @Test func playingAMoviePlaysItsFirstTrailer() async throws {
        let server = SandboxServer(replicas: [TMDBReplica()])
        try await server.start()
        defer { server.stop() }
        let host = try host(server)
        let script = NSTemporaryDirectory() + "mediahost-player-" + UUID().uuidString + ".sh"
        try "#!/bin/sh\nexit 0\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        _ = try await call(host, "config.set", ["key": "player.command", "value": .string(script)])
        let movie = try await call(host, "media.get", ["id": "tmdb:movie:550"])
        let trailer = try #require(movie["extra"]?["trailer"]?.stringValue)
        let played = try await call(host, "player.open", ["id": "tmdb:movie:550"])
        #expect(played["played"]?.stringValue == trailer)
        #expect(played["note"] == "the first trailer")
        #expect(played["target"]?.stringValue == "https://www.youtube.com/watch?v=" + trailer.dropFirst("youtube:video:".count))
    }

    @Test func wrongPasswordAndExpiredTokenFailClearly() async throws {
        let replica = TMDBReplica()
        let server = SandboxServer(replicas: [replica])
        try await server.start()
        defer { server.stop() }
        let host = try host(server)
        do {
            _ = try await host.dispatcher.call("auth.login", params: ["provider": "tmdb", "username": "ada", "password": "nope"])
            Issue.record("a wrong password logged in")
        } catch {
            #expect(error.code == -32003)
            #expect(error.message.contains("invalid username or password"))
        }
        replica.accounts.tokenLifetime = -1
        do {
            _ = try await host.dispatcher.call(
                "auth.login", params: ["provider": "tmdb", "username": "ada", "password": "lovelace"])
            Issue.record("an expired request token logged in")
        } catch {
            #expect(error.message.contains("request token expired"))
        }
        do {
            _ = try await host.dispatcher.call("auth.login", params: ["provider": "tmdb"])
            Issue.record("a login without credentials went ahead")
        } catch {
            #expect(error.code == -32602)
        }
    }
}
