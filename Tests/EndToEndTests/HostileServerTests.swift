import Foundation
import JSONRPC
import Testing
import TestSupport

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
            let body = #"{"error":{"code":\#(status),"message":"\#(hostile)echo: \#(request.head.replacingOccurrences(of: "\r\n", with: " | ").replacingOccurrences(of: "\"", with: "'"))","errors":[{"reason":"backendError","message":"\#(hostile)"}]},"status_message":"\#(hostile)\#(request.line)","errors":["\#(hostile)\#(request.line)"]}"#
            connection.respond(status: status, reason: "Oops", headers: ["Content-Type": "application/json"], body: Array(body.utf8))
        }
    }

    static func environment(_ server: HostileServer) -> [String: String] {
        var environment = secrets
        for id in ["podcasts", "youtube", "tmdb", "twitter"] { environment["MEDIAHOST_\(id.uppercased())_BASE_URL"] = server.baseURL + "/" + id }
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
            let result = try await runMediahost(["call", method, params], dataDir: dataDir, environment: Self.environment(server))
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
        let process = try MediahostProcess(["rpc", "--log-level", "trace"], dataDir: dataDir, environment: Self.environment(server))
        for (n, (method, params)) in Self.calls.enumerated() {
            process.sendLine(#"{"jsonrpc":"2.0","id":\#(n),"method":"\#(method)","params":\#(params)}"#)
        }
        let replies = await process.messages(Self.calls.count, timeout: .seconds(60))
        #expect(replies.count == Self.calls.count)
        for reply in replies {
            // JSON escapes would hide an ESC from a text search: decode the message first.
            expectClean(reply["error"]?["message"]?.stringValue ?? "", "an RPC error")
            expectClean(reply.jsonString, "an RPC reply")
            for failure in reply["result"]?["errors"]?.arrayValue ?? [] { expectClean(failure["message"]?.stringValue ?? "", "a search failure") }
        }
        process.closeInput()
        _ = await process.waitForExit()
        expectClean(process.errors, "the rpc process's stderr at trace level")

        let script = Self.calls.map { "call \($0.0) \($0.1)" }.joined(separator: "\n") + "\nsearch youtube swift\nsearch everything\nconfig\n"
        let repl = try await runMediahost(["--keep-going"], input: script, dataDir: dataDir, environment: Self.environment(server))
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
                #expect(data.range(of: Data(secret.utf8)) == nil, "\(secret) is stored in \(file)", sourceLocation: sourceLocation)
            }
        }
    }
}
