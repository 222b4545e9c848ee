import Foundation
import JSONRPC
import MediaKit
import Synchronization
import TestSupport
import Testing

/// The real binary against servers that attack it: escape sequences in error bodies, requests
/// echoed back with their credentials, and (below) compressed media, silence, dribbles and
/// broken status lines. Nothing may reach the terminal, a log, the database or a file that the
/// person did not ask for.
@Suite struct HostileServerTests {
    /// Secrets of every provider, all set at once, each long enough to be recognised.
    static let secrets: [String: String] = [
        "YOUTUBE_API_KEY": "yt-SECRET-key-0123456789",
        "TMDB_API_KEY": "tmdb-SECRET-key-0123456789",
        "TWITTER_BEARER_TOKEN": "x-SECRET-bearer-0123456789",
        "MASTODON_ACCESS_TOKEN": "mastodon-SECRET-token-0123456789",
        "MEDIAHOST_YOUTUBE_CLIENT_SECRET": "client-SECRET-0123456789",
        "MEDIAHOST_YOUTUBE_CLIENT_ID": "client-id.apps.example",
    ]

    /// A server that answers every request 500 with the request echoed (URL and headers, as
    /// some APIs and proxies do) between terminal escape sequences.
    static func echoingServer(status: Int = 500) throws -> HostileServer {
        try HostileServer { request, connection in
            let hostile = "\u{1B}]52;c;cm0gLXJmIH4=\u{07}\u{1B}[2J\u{1B}[31m"
            let body =
                #"{"error":{"code":\#(status),"message":"\#(hostile)echo: \#(request.head.replacingOccurrences(of: "\r\n", with: " | ").replacingOccurrences(of: "\"", with: "'"))","errors":[{"reason":"backendError","message":"\#(hostile)"}]},"status_message":"\#(hostile)\#(request.line)","errors":["\#(hostile)\#(request.line)"]}"#
            connection.respond(
                status: status, reason: "Oops", headers: ["Content-Type": "application/json"], body: Array(body.utf8))
        }
    }

    static func environment(_ server: HostileServer) -> [String: String] {
        var environment = secrets
        for id in ["podcasts", "youtube", "tmdb", "twitter"] {
            environment[ProviderDescriptor.environmentName(provider: id, key: "base_url")] = server.baseURL + "/" + id
        }
        environment["MASTODON_INSTANCE"] = server.baseURL + "/mastodon"
        environment["MEDIAHOST_MASTODON_BASE_URL"] = server.baseURL + "/mastodon"
        environment["MEDIAHOST_HTTP_TIMEOUT"] = "5"
        return environment
    }

    static let calls: [(String, String)] = [
        ("media.search", #"{"provider":"youtube","query":"swift"}"#),
        ("media.search", #"{"provider":"tmdb","query":"fight"}"#),
        ("media.search", ##"{"provider":"twitter","query":"#swift"}"##),
        ("media.search", #"{"provider":"mastodon","query":"text search"}"#),
        ("media.search", #"{"provider":"podcasts","query":"garden"}"#),
        ("media.search", #"{"query":"everything"}"#),
        ("media.get", #"{"id":"youtube:video:abc"}"#),
        ("media.get", #"{"id":"tmdb:movie:550"}"#),
        ("providers.categories", #"{"provider":"youtube"}"#),
        ("media.children", #"{"id":"mastodon:user:1"}"#),
        ("media.artwork", #"{"id":"tmdb:movie:550"}"#),
    ]

    func expectClean(_ text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!text.contains("\u{1B}"), "an escape sequence reached \(what)", sourceLocation: sourceLocation)
        #expect(!text.contains("\u{07}"), "a BEL reached \(what)", sourceLocation: sourceLocation)
        for secret in Self.secrets.values where secret.contains("SECRET") {
            #expect(!text.contains(secret), "\(secret) reached \(what)", sourceLocation: sourceLocation)
        }
        #expect(!text.contains("-SECRET-"), "part of a secret reached \(what)", sourceLocation: sourceLocation)
    }

    @Test func errorBodiesReachNoTerminalAndCarryNoSecretThroughCall() async throws {
        let server = try Self.echoingServer()
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        for (method, params) in Self.calls {
            let result = try await runMediahost(
                ["call", method, params], dataDir: dataDir, environment: Self.environment(server))
            #expect(result.status != 0 || method == "media.search", "\(method) \(params)")
            expectClean(result.stderr, "stderr of call \(method) \(params)")
            expectClean(result.stdout, "stdout of call \(method) \(params)")
        }
        #expect(server.requests.withLock { $0.count } >= Self.calls.count, "the calls reached the hostile server")
        try expectNoSecretOnDisk(dataDir)
    }

    @Test func errorBodiesReachNoTerminalAndCarryNoSecretThroughRPCAndTheREPL() async throws {
        let server = try Self.echoingServer(status: 400)
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        let process = try MediahostProcess(
            ["rpc", "--log-level", "trace"], dataDir: dataDir, environment: Self.environment(server))
        for (n, (method, params)) in Self.calls.enumerated() {
            process.sendLine(#"{"jsonrpc":"2.0","id":\#(n),"method":"\#(method)","params":\#(params)}"#)
        }
        let replies = await process.messages(Self.calls.count, timeout: .seconds(60))
        #expect(replies.count == Self.calls.count)
        for reply in replies {
            // JSON escapes would hide an ESC from a text search: decode the message first.
            expectClean(reply["error"]?["message"]?.stringValue ?? "", "an RPC error")
            expectClean(reply.jsonString, "an RPC reply")
            for failure in reply["result"]?["errors"]?.arrayValue ?? [] {
                expectClean(failure["message"]?.stringValue ?? "", "a search failure")
            }
        }
        process.closeInput()
        _ = await process.waitForExit()
        expectClean(process.errors, "the rpc process's stderr at trace level")

        let script =
            Self.calls.map { "call \($0.0) \($0.1)" }.joined(separator: "\n")
            + "\nsearch youtube swift\nsearch everything\nconfig\n"
        let repl = try await runMediahost(
            ["--keep-going"], input: script, dataDir: dataDir, environment: Self.environment(server))
        expectClean(repl.stdout, "the REPL's output")
        expectClean(repl.stderr, "the REPL's error lines")
        #expect(repl.stderr.contains("error: "))
        try expectNoSecretOnDisk(dataDir)
    }

    /// No file in the data folder (database, WAL, history, sessions aside) holds a secret.
    func expectNoSecretOnDisk(_ dataDir: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let files = FileManager.default.enumerator(atPath: dataDir)?.compactMap { $0 as? String } ?? []
        for file in files where !file.hasPrefix("auth/") {
            guard let data = FileManager.default.contents(atPath: dataDir + "/" + file) else { continue }
            for secret in Self.secrets.values where secret.contains("SECRET") {
                #expect(
                    data.range(of: Data(secret.utf8)) == nil, "\(secret) is stored in \(file)", sourceLocation: sourceLocation)
            }
        }
    }
}

/// Slow, silent and broken servers: each call has a total deadline across its retries, says
/// "timed out after N s" with the host, and artwork never waits on a feed.
@Suite struct SlowServerTests {
    /// A directory with one show whose feed is whatever `feed` does, and a fast image host.
    static func directory(feed: @escaping @Sendable (HostileServer.Connection) -> Void) throws -> HostileServer {
        let base = Mutex("")
        let server = try HostileServer { request, connection in
            let root = base.withLock { $0 }
            if request.path.contains("/search") || request.path.contains("/lookup") {
                let body =
                    #"{"resultCount":1,"results":[{"wrapperType":"track","kind":"podcast","collectionId":42,"trackId":42,"collectionName":"Slow Show","artistName":"Ada","feedUrl":"\#(root)/feed.xml","artworkUrl600":"\#(root)/art.png","artworkUrl100":"\#(root)/art.png"}]}"#
                connection.respond(headers: ["Content-Type": "application/json"], body: Array(body.utf8))
            } else if request.path.hasSuffix("/art.png") {
                connection.respond(
                    headers: ["Content-Type": "image/png"],
                    body: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [UInt8](repeating: 0, count: 64))
            } else {
                feed(connection)
            }
        }
        base.withLock { $0 = server.baseURL }
        return server
    }

    static func environment(_ server: HostileServer, timeout: Int = 3) -> [String: String] {
        ["MEDIAHOST_PODCASTS_BASE_URL": server.baseURL, "MEDIAHOST_HTTP_TIMEOUT": String(timeout)]
    }

    static let dripping: @Sendable (HostileServer.Connection) -> Void = { connection in
        guard connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/rss+xml\r\nContent-Length: 100000\r\n\r\n") else {
            return
        }
        for byte in Array("<rss><channel><title>drip".utf8) + [UInt8](repeating: 0x20, count: 2000) {
            guard connection.write([byte]) else { return }
            Thread.sleep(forTimeInterval: 0.5)
        }
    }

    static let silent: @Sendable (HostileServer.Connection) -> Void = { connection in connection.hold(limit: 60) }

    @Test(arguments: ["drip", "silent"])
    func aSlowFeedCostsAtMostTheDeadline(kind: String) async throws {
        let server = try Self.directory(feed: kind == "drip" ? Self.dripping : Self.silent)
        defer { server.stop() }
        for method in ["media.get", "media.children"] {
            let started = ContinuousClock.now
            let result = try await runMediahost(
                ["call", method, #"{"id":"podcasts:podcast:42"}"#], environment: Self.environment(server))
            let elapsed = ContinuousClock.now - started
            // 3 s of network budget; the rest is a debug process starting on a busy machine.
            #expect(elapsed < .seconds(20), "\(method) on a \(kind) feed took \(elapsed)")
            if method == "media.children" {
                #expect(result.status == 1)
                #expect(result.stderr.contains("timed out after 3 s"), "\(result.stderr)")
                #expect(result.stderr.contains("127.0.0.1"), "the message names the host: \(result.stderr)")
            } else {
                // The directory entry is still worth showing; the feed's failure is noted on it.
                #expect(result.stdout.contains("timed out after 3 s"), "\(result.stdout) \(result.stderr)")
            }
        }
    }

    @Test func artworkOfAListedShowDoesNotWaitOnItsFeed() async throws {
        let server = try Self.directory(feed: Self.silent)
        defer { server.stop() }
        let process = try MediahostProcess(["rpc"], environment: Self.environment(server, timeout: 30))
        process.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"media.search","params":{"provider":"podcasts","query":"slow"}}"#)
        #expect(
            await process.next(timeout: .seconds(20))?.value?["result"]?["items"]?.arrayValue?.first?["id"]
                == "podcasts:podcast:42")
        let started = ContinuousClock.now
        process.sendLine(#"{"jsonrpc":"2.0","id":2,"method":"media.artwork","params":{"id":"podcasts:podcast:42"}}"#)
        let reply = await process.next(timeout: .seconds(20))?.value
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(reply?["result"]?["url"]?.stringValue?.hasSuffix("/art.png") == true, "\(reply as Any)")
        #expect(
            server.requests.withLock { $0.contains { $0.path.hasSuffix("feed.xml") } } == false,
            "no feed was fetched for the image")
        process.closeInput()
        _ = await process.waitForExit()
    }

    @Test func aStatusLineThatNeverEndsIsReportedAsNotHTTP() async throws {
        let server = try HostileServer { _, connection in
            guard connection.write("HTTP/1.1 200 OK") else { return }
            for _ in 0..<4096 where connection.write(String(repeating: "K", count: 256)) {}
        }
        defer { server.stop() }
        let result = try await runMediahost(
            ["call", "media.search", #"{"provider":"podcasts","query":"x"}"#],
            environment: ["MEDIAHOST_PODCASTS_BASE_URL": server.baseURL])
        #expect(result.status == 1)
        #expect(!result.stderr.contains("redirect"), "\(result.stderr)")
        #expect(result.stderr.contains("not HTTP") || result.stderr.contains("header"), "\(result.stderr)")
    }
}

@Suite struct LoggingTests {
    @Test func debugLogsEachRequestRetryAndCallWithoutSecrets() async throws {
        let attempts = Mutex(0)
        let server = try HostileServer { request, connection in
            // The first attempt fails with 503, then the directory answers.
            if attempts.withLock({
                $0 += 1; return $0
            }) == 1 {
                connection.respond(status: 503, reason: "Busy", headers: ["Retry-After": "0"], body: [])
                return
            }
            connection.respond(
                headers: ["Content-Type": "application/json"], body: Array(#"{"resultCount":0,"results":[]}"#.utf8))
        }
        defer { server.stop() }
        let quiet = try await runMediahost(
            ["call", "media.search", #"{"provider":"podcasts","query":"x"}"#],
            environment: ["MEDIAHOST_PODCASTS_BASE_URL": server.baseURL])
        #expect(quiet.stderr.isEmpty, "nothing is logged at the default level: \(quiet.stderr)")
        attempts.withLock { $0 = 0 }
        let result = try await runMediahost(
            ["--log-level", "debug", "call", "media.search", #"{"provider":"youtube","query":"x"}"#],
            environment: [
                "MEDIAHOST_YOUTUBE_BASE_URL": server.baseURL, "YOUTUBE_API_KEY": "yt-SECRET-key-0123456789",
            ])
        #expect(
            result.stderr.contains("GET http://127.0.0.1:\(server.port)/youtube/v3/search?")
                || result.stderr.contains("GET http://127.0.0.1:\(server.port)/"), "\(result.stderr)")
        #expect(result.stderr.contains("-> 503"), "\(result.stderr)")
        #expect(result.stderr.contains("retrying"), "\(result.stderr)")
        #expect(result.stderr.contains("-> 200"), "\(result.stderr)")
        #expect(result.stderr.contains(" ms"), "\(result.stderr)")
        #expect(
            result.stderr.contains("media.search answered in") || result.stderr.contains("media.search failed after"),
            "\(result.stderr)")
        #expect(result.stderr.contains("provider youtube worked"), "\(result.stderr)")
        #expect(!result.stderr.contains("SECRET"), "\(result.stderr)")
    }
}
