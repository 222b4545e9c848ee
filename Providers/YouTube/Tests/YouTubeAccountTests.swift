import Foundation
import JSONRPC
import MediaHTTP
import MediaHost
import MediaKit
import Sandbox
import Synchronization
import Testing

@testable import YouTube
@testable import YouTubeSandbox

/// Login, refresh, likes and logout through the host, against the replica's OAuth endpoints.
struct AccountFixture {
    let replica = YouTubeReplica()
    let server: SandboxServer
    let host: HostRuntime
    let directory: String
    let prompts = PromptLog()

    init() async throws {
        server = SandboxServer(replicas: [replica])
        try await server.start()
        directory = NSTemporaryDirectory() + "mediahost-yt-" + UUID().uuidString
        host = try HostRuntime(
            paths: HostPaths(configFile: directory + "/none.toml", dataDir: directory + "/data", cacheDir: directory + "/cache"),
            providers: [.of(YouTubeProvider.self)], http: MediaHTTPClient(), environment: server.providerEnvironment())
        let prompts = self.prompts
        host.events.subscribe { event in if event.method == AuthPrompt.method { prompts.append(event.params) } }
    }

    func call(_ method: String, _ params: JSONValue? = nil) async throws -> JSONValue {
        try JSONParser.parse(try await host.dispatcher.call(method, params: params))
    }

    func error(_ method: String, _ params: JSONValue? = nil) async -> RPCError? {
        do { _ = try await host.dispatcher.call(method, params: params); return nil } catch { return error }
    }

    var tokenRequests: Int { server.traffic.count(prefix: "/youtube/oauth2/token") }
}

final class PromptLog: Sendable {
    private let values = Mutex<[JSONValue]>([])
    func append(_ value: JSONValue) { values.withLock { $0.append(value) } }
    var all: [JSONValue] { values.withLock { $0 } }
}

@Suite struct YouTubeAccountTests {
    static let video = "youtube:video:" + YouTubeCatalogue().videos[5].id

    @Test func deviceLoginThenLikesThenLogout() async throws {
        let f = try await AccountFixture()
        defer { f.server.stop() }
        // Approved at the second poll, however fast or slow this machine is.
        f.replica.accounts.configure(approveAfter: 0, pendingPolls: 1)
        #expect(try await f.call("auth.status") == [["provider": "youtube", "auth": "oauthDevice", "loggedIn": false]])
        let status = try await f.call("auth.login", ["provider": "youtube"])
        #expect(status["loggedIn"] == true)
        #expect(status["account"] == "Swift Academy")
        let prompt = try #require(f.prompts.all.first)
        #expect(prompt["code"]?.stringValue?.hasPrefix("SBX-") == true)
        #expect(prompt["url"] == "https://www.google.com/device")
        #expect(f.tokenRequests >= 2, "polled while pending")
        let file = f.directory + "/data/auth/youtube.json"
        #expect((try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int) == 0o600)
        #expect(
            (try FileManager.default.attributesOfItem(atPath: f.directory + "/data/auth")[.posixPermissions] as? Int) == 0o700)

        let added = try await f.call("favorites.add", ["id": .string(Self.video)])
        #expect(added["extra"]?["account"] == "saved to your youtube account")
        #expect(f.replica.accounts.likes == [String(Self.video.dropFirst("youtube:video:".count))])
        let remote = try await f.call("favorites.list", ["provider": "youtube", "remote": true])
        #expect(remote["items"]?.arrayValue?.map { $0["id"] } == [.string(Self.video)])
        #expect(remote["items"]?.arrayValue?.first?["favorite"] == true)
        let removed = try await f.call("favorites.remove", ["id": .string(Self.video)])
        #expect(removed["account"] == "removed from your youtube account")
        #expect(f.replica.accounts.likes.isEmpty)

        let out = try await f.call("auth.logout", ["provider": "youtube"])
        #expect(out["loggedIn"] == false)
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(f.server.traffic.count(prefix: "/youtube/oauth2/revoke") == 1)
        let error = try #require(await f.error("favorites.list", ["provider": "youtube", "remote": true]))
        #expect(error.code == -32003)
        #expect(error.message.contains("login youtube"))
    }

    @Test func favoritesMadeBeforeLoginAreCountedAndSynced() async throws {
        let f = try await AccountFixture()
        defer { f.server.stop() }
        f.replica.accounts.configure(approveAfter: 0)
        let videos = YouTubeCatalogue().videos[6...7].map { "youtube:video:" + $0.id }
        for id in videos { _ = try await f.call("favorites.add", ["id": .string(id)]) }
        let channel = try await f.call("media.search", ["provider": "youtube", "query": "swift", "kind": "channel"])
        let channelID = try #require(channel["items"]?.arrayValue?.first?["id"])
        _ = try await f.call("favorites.add", ["id": channelID])
        #expect(f.replica.accounts.likes.isEmpty)

        let status = try await f.call("auth.login", ["provider": "youtube"])
        #expect(status["unsyncedFavorites"] == 2, "two videos; a channel cannot be liked")
        let sync = try await f.call("favorites.sync", ["provider": "youtube"])
        #expect(sync == ["provider": "youtube", "synced": 2, "failed": []])
        #expect(Set(f.replica.accounts.likes) == Set(videos.map { String($0.dropFirst("youtube:video:".count)) }))
        _ = try await f.call("auth.logout", ["provider": "youtube"])
        #expect(try await f.call("auth.login", ["provider": "youtube"])["unsyncedFavorites"] == 0)
    }

    @Test func slowDownStretchesThePollingInterval() async throws {
        let f = try await AccountFixture()
        defer { f.server.stop() }
        // The first poll is told slow_down, whenever it comes (a loaded machine polls late).
        f.replica.accounts.configure(approveAfter: 0, interval: 1, slowDownPolls: 1)
        let start = ContinuousClock.now
        #expect(try await f.call("auth.login", ["provider": "youtube"])["loggedIn"] == true)
        // 1 s: slow_down; then at least 1 + 5 = 6 s later: approved.
        #expect(ContinuousClock.now - start >= .seconds(6))
        #expect(f.tokenRequests == 2)
    }

    @Test func expiredAndDeniedCodesFailClearly() async throws {
        let f = try await AccountFixture()
        defer { f.server.stop() }
        f.replica.accounts.configure(approveAfter: 100, codeLifetime: 1, interval: 1)
        let expired = try #require(await f.error("auth.login", ["provider": "youtube"]))
        #expect(expired.code == -32003)
        #expect(expired.message.contains("expired"))
        f.replica.accounts.configure(approveAfter: 0, deny: true, codeLifetime: 300)
        let denied = try #require(await f.error("auth.login", ["provider": "youtube"]))
        #expect(denied.message.contains("denied"))
        #expect(try await f.call("auth.status").arrayValue?.first?["loggedIn"] == false)
    }

    @Test func tokensAreRefreshedBeforeExpiryAndAfterA401() async throws {
        let f = try await AccountFixture()
        defer { f.server.stop() }
        f.replica.accounts.configure(approveAfter: 0, tokenLifetime: 30)
        _ = try await f.call("auth.login", ["provider": "youtube"])
        let afterLogin = f.tokenRequests
        // 30 s left is within the refresh margin: the next account call refreshes first.
        _ = try await f.call("favorites.list", ["provider": "youtube", "remote": true])
        #expect(f.tokenRequests == afterLogin + 1)
        f.replica.accounts.configure(tokenLifetime: 3600)
        _ = try await f.call("favorites.list", ["provider": "youtube", "remote": true])
        let beforeRevoke = f.tokenRequests
        // The service forgets the access token: the host refreshes once and retries.
        f.replica.accounts.expireAccessTokens()
        #expect(try await f.call("favorites.list", ["provider": "youtube", "remote": true])["items"] == [])
        #expect(f.tokenRequests == beforeRevoke + 1)
    }

    @Test func accountFailureKeepsTheLocalFavorite() async throws {
        let f = try await AccountFixture()
        defer { f.server.stop() }
        f.replica.accounts.configure(approveAfter: 0)
        _ = try await f.call("auth.login", ["provider": "youtube"])
        f.server.faults.add(FaultRule(path: "/youtube/youtube/v3/videos/rate", status: 500))
        let added = try await f.call("favorites.add", ["id": .string(Self.video)])
        #expect(added["favorite"] == true)
        #expect(added["extra"]?["account"]?.stringValue?.hasPrefix("kept here, but your youtube account was not updated") == true)
        #expect(try await f.call("favorites.list")["items"]?.arrayValue?.count == 1)
    }

    @Test func loginWithoutAnOAuthClientSaysWhatToSet() async throws {
        let server = SandboxServer(replicas: [YouTubeReplica()])
        try await server.start()
        defer { server.stop() }
        let directory = NSTemporaryDirectory() + "mediahost-yt-" + UUID().uuidString
        var environment = server.providerEnvironment()
        environment["MEDIAHOST_YOUTUBE_CLIENT_ID"] = nil
        let host = try HostRuntime(
            paths: HostPaths(configFile: directory + "/none.toml", dataDir: directory + "/data", cacheDir: directory + "/cache"),
            providers: [.of(YouTubeProvider.self)], http: MediaHTTPClient(), environment: environment)
        do {
            _ = try await host.dispatcher.call("auth.login", params: ["provider": "youtube"])
            Issue.record("login without a client id went ahead")
        } catch {
            #expect(error.code == -32009)
            #expect(error.message.contains("client_id"))
        }
    }
}
