import Basics
import Foundation
import JSONRPC
import MediaKit
import Synchronization
import TestSupport
import Testing

/// The surfaces other programs and peers reach, attacked from outside through the binary that
/// ships (`make test` runs these against the release build): numbers from a program that
/// overflow sums, a client that pipelines and does not read, subscriptions by the ten thousand,
/// lists of hundreds of thousands, a login server that never answers.
@Suite struct AttackTests {
    /// A yt-dlp stand-in: `-J` answers with a video whose formats must be merged (so the
    /// download is yt-dlp's own), and the download prints the progress lines given, then writes
    /// the file.
    static func fakeYTDLP(in folder: String, progress: [String]) throws -> String {
        let path = folder + "/yt-dlp"
        let lines = progress.map { "echo '\($0)'" }.joined(separator: "\n")
        let script = """
            #!/bin/sh
            for word in "$@"; do
              if [ "$word" = "-J" ]; then
                echo '{"id":"abc","title":"Big numbers","ext":"mp4","url":"https://example.invalid/v.mp4","protocol":"https","requested_formats":[{"format_id":"1"},{"format_id":"2"}]}'
                exit 0
              fi
            done
            out=""
            while [ $# -gt 0 ]; do
              if [ "$1" = "-o" ]; then out="$2"; fi
              shift
            done
            \(lines)
            printf 'media' > "$out"
            exit 0
            """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    /// Progress near Int64.max that falls back and climbs again (yt-dlp restarting a stream)
    /// once killed `rpc` with SIGILL: the sums overflowed.
    @Test func progressNumbersNearInt64MaxDoNotKillTheHost() async throws {
        let dataDir = try makeTemporaryDirectory()
        let program = try Self.fakeYTDLP(
            in: dataDir,
            progress: [
                "progress 8e18 NA NA", "progress 0 NA NA", "progress 8e18 8e18 NA", "progress 9223372036854775807 NA NA",
                "progress 0 9223372036854775807 NA", "progress 9.3e18 NA 9.3e18", "progress 1000 NA 2000",
            ])
        let process = try MediahostProcess(
            ["rpc"], dataDir: dataDir,
            environment: ["MEDIAHOST_YOUTUBE_YTDLP": program, "MEDIAHOST_YOUTUBE_BACKEND": "ytdlp"])
        process.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"downloads.start","params":{"id":"youtube:video:abc"}}"#)
        var state: String?
        let deadline = ContinuousClock.now + .seconds(60)
        var asked = 2
        while state != "completed", ContinuousClock.now < deadline {
            process.sendLine(#"{"jsonrpc":"2.0","id":\#(asked),"method":"downloads.list"}"#)
            let (replies, _) = await process.replies([asked], timeout: .seconds(20))
            let list = try #require(replies[asked]?["result"]?.arrayValue, "no answer to downloads.list: \(process.errors)")
            state = list.first { $0["id"] == "youtube:video:abc" }?["state"]?.stringValue
            asked += 1
            if state == "failed" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(state == "completed", "\(process.errors)")
        process.closeInput()
        #expect(await process.waitForExit() == 0, "\(process.errors)")
    }
}

/// Lists from outside are bounded: a page is a page.
@Suite struct ListingAttackTests {
    /// yt-dlp (here a stand-in) printing 400,000 entries for a page of 20: the host stops
    /// reading at 8 MB and says why (it peaked at 1.5 GB and answered every entry).
    @Test func aListingOfHundredsOfThousandsIsRefusedAtItsBound() async throws {
        let dataDir = try makeTemporaryDirectory()
        let program = dataDir + "/yt-dlp"
        let script = """
            #!/usr/bin/env python3
            import sys
            sys.stdout.write('{"_type":"playlist","playlist_count":400000,"entries":[')
            sys.stdout.write(",".join('{"id":"v%d","title":"video number %d","ie_key":"Youtube"}' % (i, i) for i in range(400000)))
            sys.stdout.write("]}")
            """
        try script.write(toFile: program, atomically: true, encoding: .utf8)
        chmod(program, 0o755)
        let result = try await runMediahost(
            ["call", "media.search", #"{"provider":"youtube","query":"cats"}"#], dataDir: dataDir,
            environment: ["MEDIAHOST_YOUTUBE_YTDLP": program, "MEDIAHOST_YOUTUBE_BACKEND": "ytdlp"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("more than 8 MB"), "\(result.stderr)")
    }
}

/// Logins against servers that never answer.
@Suite struct LoginAttackTests {
    /// A server that takes the connection and says nothing: `auth.login bluesky` ends within
    /// the call's network budget (http.timeout, here 3 s) with a message that names it (it ran
    /// for more than 54 s: three attempts of 30 s each).
    @Test func aLoginServerThatNeverAnswersIsBoundedByTheTimeout() async throws {
        let server = try HostileServer { _, connection in connection.hold(limit: 120) }
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        let started = ContinuousClock.now
        let result = try await runMediahost(
            ["call", "auth.login", #"{"provider":"bluesky","username":"alice.example.com","password":"abcd-efgh-ijkl-mnop"}"#],
            dataDir: dataDir,
            environment: ["MEDIAHOST_BLUESKY_BASE_URL": server.baseURL, "MEDIAHOST_HTTP_TIMEOUT": "3"])
        let took = ContinuousClock.now - started
        #expect(result.status != 0)
        #expect(result.stderr.contains("timed out") && result.stderr.contains("http.timeout"), "\(result.stderr)")
        #expect(took < .seconds(30), "took \(took)")
        #expect(!result.stderr.contains("abcd-efgh-ijkl-mnop") && !result.stdout.contains("abcd-efgh-ijkl-mnop"))
    }

    /// Cancelling (what Ctrl-C in the REPL and an editor's cancel do) ends a login that waits on a
    /// silent server, whatever http.timeout is.
    @Test func cancellingAWaitingLoginEndsIt() async throws {
        let server = try HostileServer { _, connection in connection.hold(limit: 120) }
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        let process = try MediahostProcess(
            ["rpc"], dataDir: dataDir,
            environment: ["MEDIAHOST_BLUESKY_BASE_URL": server.baseURL, "MEDIAHOST_HTTP_TIMEOUT": "600"])
        process.sendLine(
            #"{"jsonrpc":"2.0","id":1,"method":"auth.login","params":{"provider":"bluesky","username":"alice.example.com","password":"abcd-efgh-ijkl-mnop"}}"#
        )
        let deadline = ContinuousClock.now + .seconds(30)
        while server.requests.withLock({ $0.isEmpty }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        process.sendLine(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
        let reply = await process.replies([1], timeout: .seconds(20)).byID[1]
        #expect(reply?["error"]?["code"] == -32800, "\(String(describing: reply))")
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }
}

/// `mediahost mcp` against clients that pipeline without reading and subscribe by the thousand.
@Suite struct MCPAttackTests {
    static let initialize =
        #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#

    /// 1,000 pipelined `tools/list` read after 2 s of not reading: every answer arrives and the
    /// server is still there (a whole 64 KB read was admitted before the backlog was checked,
    /// the output queue overflowed and the only client was dropped: 999 answers lost, exit 0).
    @Test func aClientThatReadsLateGetsEveryAnswer() async throws {
        let dataDir = try makeTemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["MEDIAHOST_DATA_DIR"] = dataDir
        environment["XDG_CONFIG_HOME"] = dataDir + "/config"
        environment["XDG_CACHE_HOME"] = dataDir + "/cache"
        environment["MEDIAHOST_HOST_BACKGROUND"] = "never"
        let process = try ChildProcess(
            mediahostBinary(), arguments: ["mcp"], environment: environment, standardInput: .pipe, standardOutput: .pipe,
            standardError: .null)
        let input = try #require(process.standardInput)
        let fd = try #require(process.standardOutput)
        defer { close(fd) }
        let requests = (1...1000).reduce(Self.initialize + "\n") { text, id in
            text + #"{"jsonrpc":"2.0","id":\#(id),"method":"tools/list"}"# + "\n"
        }
        let writer = Thread {
            _ = Descriptor.writeAll(input, Array(requests.utf8))
        }
        writer.start()
        // Not reading for two seconds: the server must wait for this client, not drop it.
        try await Task.sleep(for: .seconds(2))
        let answered = Mutex(Set<Int>())
        let reading = Thread {
            var buffer: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while answered.withLock({ $0.count }) < 1001 {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                buffer += chunk[0..<n]
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = Array(buffer[..<newline])
                    buffer.removeSubrange(...newline)
                    if let id = (try? JSONParser.parse(line))?["id"]?.intValue { _ = answered.withLock { $0.insert(id) } }
                }
            }
        }
        reading.start()
        let deadline = ContinuousClock.now + .seconds(120)
        while answered.withLock({ $0.count }) < 1001, process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(answered.withLock { $0.count } == 1001)
        #expect(process.isRunning, "the server exited while the client was still there")
        close(input)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!process.isRunning && process.terminationStatus == 0)
    }

    /// Subscriptions to what does not exist are refused (40,000 of them once kept 312 MB for
    /// the life of the process); the collections and existing lists can be subscribed to.
    @Test func subscriptionsToNothingAreRefused() async throws {
        let dataDir = try makeTemporaryDirectory()
        _ = try await runMediahost(["call", "lists.create", #"{"name":"Road trip"}"#], dataDir: dataDir)
        let process = try MediahostProcess(["mcp"], dataDir: dataDir, environment: ["MEDIAHOST_HOST_BACKGROUND": "never"])
        process.sendLine(Self.initialize)
        _ = await process.replies([0])
        func subscribe(_ id: Int, _ uri: String) async -> JSONValue? {
            process.sendLine(#"{"jsonrpc":"2.0","id":\#(id),"method":"resources/subscribe","params":{"uri":"\#(uri)"}}"#)
            return await process.replies([id]).byID[id]
        }
        #expect(await subscribe(1, "mediahost://favorites")?["result"] != nil)
        #expect(await subscribe(2, "mediahost://lists/Road%20trip")?["result"] != nil)
        #expect(await subscribe(3, "mediahost://lists/Nowhere")?["error"]?["code"] == -32002)
        #expect(await subscribe(4, "mediahost://item/podcasts:podcast:1")?["error"]?["code"] == -32002)
        #expect(await subscribe(5, "mediahost://nothing/at/all")?["error"]?["code"] == -32002)
        let before = Self.residentKB(process.process.processIdentifier)
        let long = String(repeating: "x", count: 4000)
        var batch = ""
        for id in 10..<40_010 {
            batch +=
                #"{"jsonrpc":"2.0","id":\#(id),"method":"resources/subscribe","params":{"uri":"mediahost://item/\#(id)\#(long)"}}"#
                + "\n"
        }
        process.send(batch)
        let replies = await process.replies(Set(10..<40_010), timeout: .seconds(60)).byID
        #expect(replies.count == 40_000)
        #expect(replies.values.allSatisfy { $0["error"]?["code"] == -32002 })
        let after = Self.residentKB(process.process.processIdentifier)
        // Refused, so nothing is kept: the process is about the size it was (it was 312 MB more).
        #expect(after - before < 100_000, "resident \(before) KB before, \(after) KB after")
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    static func residentKB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

/// A login's password and the secrets in effect never reach a person, a log or the database,
/// whatever a hostile server echoes back and however the host shortens what it shows.
@Suite struct SecretAttackTests {
    static let password = "abcd-efgh-ijkl-mnop"

    /// Every stretch of 8 characters of the password (its first half, its middle...).
    static func expectNoPiece(
        of secret: String, in text: String, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let characters = Array(secret)
        for start in 0...(characters.count - 8) {
            let piece = String(characters[start..<(start + 8)])
            let found = text.contains(piece)
            #expect(!found, "'\(piece)' of the secret reached \(what)", sourceLocation: sourceLocation)
        }
    }

    /// A Bluesky stand-in: the handle resolves to a DID made of the password, its document names
    /// this server, and createSession answers as `createSession` says.
    static func server(createSession: @escaping @Sendable (HostileServer.Connection, String) -> Void) throws -> HostileServer {
        try HostileServer { request, connection in
            let base = "http://\(request.headers["host"] ?? "127.0.0.1")"
            if request.path.contains("resolveHandle") {
                _ = connection.respond(
                    headers: ["Content-Type": "application/json"], body: Array(#"{"did":"did:plc:\#(password)"}"#.utf8))
            } else if request.path.contains("/plc/") {
                let document =
                    ##"{"id":"did:plc:\##(password)","service":[{"id":"#atproto_pds","type":"AtprotoPersonalDataServer","serviceEndpoint":"\##(base)"}]}"##
                _ = connection.respond(headers: ["Content-Type": "application/json"], body: Array(document.utf8))
            } else if request.path.contains("createSession") {
                createSession(connection, base)
            } else {
                _ = connection.respond(status: 404, headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
            }
        }
    }

    static func login(_ server: HostileServer, dataDir: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        try await runMediahost(
            [
                "--log-level", "debug", "call", "auth.login",
                #"{"provider":"bluesky","username":"alice.example.com","password":"\#(password)"}"#,
            ],
            dataDir: dataDir, environment: ["MEDIAHOST_BLUESKY_BASE_URL": server.baseURL, "MEDIAHOST_HTTP_TIMEOUT": "10"])
    }

    /// A 500 whose body holds the password after 290 other bytes: the message is shortened to
    /// 300 characters, and what is left of the password before the cut is masked too (its first
    /// half was shown); the DID made of the password is not in the debug log's URLs either.
    @Test func aPasswordCutShortInAnErrorIsMasked() async throws {
        let server = try Self.server { connection, _ in
            let message = String(repeating: "x", count: 290) + Self.password + " was refused"
            _ = connection.respond(
                status: 500, reason: "Oops", headers: ["Content-Type": "application/json"],
                body: Array(#"{"error":"InternalServerError","message":"\#(message)"}"#.utf8))
        }
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        let result = try await Self.login(server, dataDir: dataDir)
        #expect(result.status != 0)
        #expect(result.stderr.contains("xxxxxxxx"), "the server's message is shown: \(result.stderr)")
        Self.expectNoPiece(of: Self.password, in: result.stdout + result.stderr, "the login's output and debug log")
    }

    /// A createSession answer whose handle (and DID) is the password: the login succeeds, and
    /// neither its answer, the stored session, nor a later auth.status shows the password.
    @Test func aSessionNamedWithThePasswordDoesNotShowIt() async throws {
        let server = try Self.server { connection, _ in
            let session =
                #"{"did":"did:plc:\#(Self.password)","handle":"\#(Self.password)","accessJwt":"header.eyJleHAiOjQxMDI0NDQ4MDB9.signature","refreshJwt":"refresh.eyJleHAiOjQxMDI0NDQ4MDB9.sig"}"#
            _ = connection.respond(headers: ["Content-Type": "application/json"], body: Array(session.utf8))
        }
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        let result = try await Self.login(server, dataDir: dataDir)
        #expect(result.status == 0, "\(result.stderr)")
        Self.expectNoPiece(of: Self.password, in: result.stdout + result.stderr, "the login's answer and log")
        // On the same server (a login made on another is forgotten at start).
        let status = try await runMediahost(
            ["call", "auth.status", #"{"provider":"bluesky"}"#], dataDir: dataDir,
            environment: ["MEDIAHOST_BLUESKY_BASE_URL": server.baseURL])
        #expect(status.stdout.contains("\"loggedIn\":true"), "\(status.stdout)")
        Self.expectNoPiece(of: Self.password, in: status.stdout, "auth.status")
        let files = FileManager.default.enumerator(atPath: dataDir)?.compactMap { $0 as? String } ?? []
        for file in files {
            guard let bytes = FileManager.default.contents(atPath: dataDir + "/" + file) else { continue }
            Self.expectNoPiece(of: Self.password, in: String(decoding: bytes, as: UTF8.self), file)
        }
    }

    /// A secret in effect (here TMDB's key) that a server echoes into an item is masked in the
    /// snapshot kept with a favorite: it was written to the database as it came.
    @Test func aSecretEchoedIntoAnItemIsNotStored() async throws {
        let key = "tmdb-SECRET-key-0123456789"
        let server = try HostileServer { request, connection in
            let body =
                request.path.contains("/movie/")
                ? #"{"id":550,"title":"Echo \#(key)","overview":"Your key is \#(key) and a cut one \#(key.prefix(15))…","release_date":"1999-10-15"}"#
                : #"{"images":{"secure_base_url":"https://image.example/t/p/","poster_sizes":["w500"],"backdrop_sizes":["w780"]}}"#
            _ = connection.respond(headers: ["Content-Type": "application/json"], body: Array(body.utf8))
        }
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        let environment = [
            "TMDB_API_KEY": key, ProviderDescriptor.environmentName(provider: "tmdb", key: "base_url"): server.baseURL,
        ]
        let added = try await runMediahost(
            ["call", "favorites.add", #"{"id":"tmdb:movie:550"}"#], dataDir: dataDir, environment: environment)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(!added.stdout.contains(key))
        let files = FileManager.default.enumerator(atPath: dataDir)?.compactMap { $0 as? String } ?? []
        #expect(files.contains { $0.hasSuffix("mediahost.sqlite") })
        for file in files where file.contains("mediahost.sqlite") {
            guard let bytes = FileManager.default.contents(atPath: dataDir + "/" + file) else { continue }
            Self.expectNoPiece(of: key, in: String(decoding: bytes, as: UTF8.self), file)
        }
        let listed = try await runMediahost(["call", "favorites.list"], dataDir: dataDir, environment: environment)
        #expect(listed.stdout.contains("Your key is ***"), "\(listed.stdout)")
    }
}
