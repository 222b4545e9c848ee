import Foundation
import JSONRPC
import MediaKit
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The desk's surfaces attacked from outside, as a hostile feed, image host, chapters file,
/// transcript, import file or sync server would (every server on loopback, every input built at
/// test time), against the built binary: no signal, a peak under 300 MB, an answer within its
/// bound, one short reason in words, and no secret in answers, logs, the database or its WAL.
@Suite struct DeskSurfaceAttackTests {
    /// The most a process may hold at its peak while it refuses or reads hostile input.
    static let peakLimitKB = 300_000

    struct Measured {
        var status: Int32
        var stdout: String
        var stderr: String
        /// GNU time's maximum resident set size, KB.
        var peakKB: Int
        /// Ended by a signal (GNU time says "Command terminated by signal").
        var signalled: Bool
        var seconds: Double
    }

    /// Runs mediahost under GNU time (`make test` installs it) for its peak memory.
    static func measured(
        _ arguments: [String], dataDir: String, environment: [String: String] = [:], input: String? = nil
    ) async throws -> Measured {
        let time = try #require(
            ["/usr/bin/time"].first { FileManager.default.isExecutableFile(atPath: $0) }, "`make test` installs GNU time")
        let process = try MediahostProcess(
            ["-f", "mediahost-peak %M %e", mediahostBinary()] + arguments, dataDir: dataDir, environment: environment,
            executable: time)
        if let input { process.send(input) }
        process.closeInput()
        let status = await process.waitForExit() ?? -1
        var out: [UInt8] = []
        while let message = await process.next(timeout: .seconds(10)) { out += message.raw + [0x0A] }
        let errors = await process.errorsToTheEnd()
        let line = errors.split(separator: "\n").last { $0.hasPrefix("mediahost-peak ") } ?? ""
        let parts = line.split(separator: " ")
        return Measured(
            status: status, stdout: String(decoding: out, as: UTF8.self),
            stderr: errors.split(separator: "\n").filter {
                !$0.hasPrefix("mediahost-peak ") && !$0.hasPrefix("Command exited with non-zero status")
                    && !$0.hasPrefix("Command terminated by signal")
            }.joined(separator: "\n"),
            peakKB: parts.count == 3 ? Int(parts[1]) ?? 0 : 0, signalled: errors.contains("Command terminated by signal"),
            seconds: parts.count == 3 ? Double(parts[2]) ?? 0 : 0)
    }

    /// A feed server on loopback: `/feed.xml` and whatever `files` hold, by path.
    static func feedServer(episodeExtra: String, files: [String: [UInt8]]) throws -> HostileServer {
        let base = Mutex("")
        let server = try HostileServer { request, connection in
            let here = base.withLock { $0 }
            if request.path.hasPrefix("/feed.xml") {
                let feed = """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0" xmlns:psc="http://podlove.org/simple-chapters">
                    <channel><title>Hostile Radio</title><link>\(here)/</link><description>x</description>
                    <item><title>The Episode</title><guid>ep-1</guid><pubDate>Mon, 10 Nov 2025 10:00:00 GMT</pubDate>
                    <enclosure url="\(here)/audio.mp3" type="audio/mpeg" length="1000"/><itunes:duration xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">120</itunes:duration>
                    \(episodeExtra.replacingOccurrences(of: "BASE", with: here))
                    </item></channel></rss>
                    """
                connection.respond(headers: ["Content-Type": "application/rss+xml"], body: Array(feed.utf8))
            } else if let body = files[String(request.path.split(separator: "?").first ?? "")] {
                connection.respond(headers: ["Content-Type": "application/octet-stream"], body: body)
            } else {
                connection.respond(status: 404, reason: "Not Found", body: [])
            }
        }
        base.withLock { $0 = server.baseURL }
        return server
    }

    /// The episode of the feed `server` serves.
    static func episode(of server: HostileServer, dataDir: String) async throws -> String {
        let show = try #require(ItemID.feed(server.baseURL + "/feed.xml", provider: "podcasts"))
        let children = try await runMediahost(["call", "media.children", #"{"id":"\#(show)"}"#], dataDir: dataDir)
        #expect(children.status == 0, "\(children.stderr)")
        return try #require(try JSONValue(parsing: children.stdout)["items"]?.arrayValue?.first?["id"]?.stringValue)
    }

    static func expectHeld(
        _ run: Measured, _ what: String, within seconds: Double, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            !run.signalled && run.status >= 0 && run.status < 128,
            "\(what): ended by a signal (\(run.status)): \(run.stderr.suffix(300))",
            sourceLocation: sourceLocation)
        #expect(run.peakKB > 0 && run.peakKB < peakLimitKB, "\(what): peak \(run.peakKB) KB", sourceLocation: sourceLocation)
        #expect(run.seconds < seconds, "\(what): \(run.seconds) s", sourceLocation: sourceLocation)
        #expect(
            !run.stderr.contains("WARNING **") && !run.stderr.contains("CRITICAL **"), "\(what): \(run.stderr)",
            sourceLocation: sourceLocation)
        print("\(what): peak \(run.peakKB / 1000) MB, \(run.seconds) s, status \(run.status)")
    }

    // MARK: Chapters

    /// Chapters at 1e300 s (untitled), at "99999999999999999999" s and a Podlove chapter at
    /// 99999999999999999999:00:00: `media.chapters` answers (it died by SIGILL) and leaves them out.
    @Test func absurdChapterTimesAreLeftOut() async throws {
        let json =
            #"{"version":"1.2.0","chapters":[{"startTime":0,"title":"Start"},{"startTime":1e300},{"startTime":"99999999999999999999","title":"Far"},{"startTime":60,"title":"Minute"}]}"#
        let server = try Self.feedServer(
            episodeExtra: """
                <podcast:chapters url="BASE/chapters.json" type="application/json+chapters"/>
                """, files: ["/chapters.json": Array(json.utf8)])
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        let episode = try await Self.episode(of: server, dataDir: dataDir)
        let run = try await Self.measured(["call", "media.chapters", #"{"id":"\#(episode)"}"#], dataDir: dataDir)
        Self.expectHeld(run, "chapters at 1e300 s", within: 30)
        let answer = try JSONValue(parsing: run.stdout)
        let titles = answer["chapters"]?.arrayValue?.compactMap { $0["title"]?.stringValue } ?? []
        #expect(titles == ["Start", "Minute"], "\(run.stdout)")

        let podlove = try Self.feedServer(
            episodeExtra: """
                <psc:chapters version="1.2"><psc:chapter start="00:00:00" title="Start"/>
                <psc:chapter start="99999999999999999999:00:00" title="Never"/></psc:chapters>
                """, files: [:])
        defer { podlove.stop() }
        let other = try await Self.episode(of: podlove, dataDir: dataDir)
        let second = try await Self.measured(["call", "media.chapters", #"{"id":"\#(other)"}"#], dataDir: dataDir)
        Self.expectHeld(second, "a Podlove chapter at 99999999999999999999:00:00", within: 30)
        #expect(second.stdout.contains("Start") && !second.stdout.contains("Never"), "\(second.stdout)")
    }

    // MARK: Transcripts

    /// A WebVTT of 1,000,000 one-word cues (14 MB, under the 16 MB limit): read to its first
    /// 50,000 lines, saying so (it took 749 MB and 29 s and answered 34 MB).
    @Test func aMillionCueTranscriptIsReadToItsBound() async throws {
        // Bare seconds and no end (as some hosts write), the next timing ending each cue.
        var vtt = "WEBVTT\n\n"
        vtt.reserveCapacity(15_000_000)
        for index in 0..<1_000_000 { vtt += "\(index) -->\nw\n" }
        #expect(vtt.utf8.count < 16 << 20)
        let server = try Self.feedServer(
            episodeExtra: #"<podcast:transcript url="BASE/t.vtt" type="text/vtt"/>"#, files: ["/t.vtt": Array(vtt.utf8)])
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        let episode = try await Self.episode(of: server, dataDir: dataDir)
        let run = try await Self.measured(["call", "media.transcript", #"{"id":"\#(episode)"}"#], dataDir: dataDir)
        Self.expectHeld(run, "a WebVTT of 1,000,000 cues", within: 60)
        let answer = try JSONValue(parsing: run.stdout)
        #expect(answer["cues"]?.arrayValue?.count == 50_000)
        #expect(answer["notes"]?.arrayValue?.contains { $0.stringValue?.contains("more than 50000 lines") == true } == true)
        #expect(run.stdout.utf8.count < 8 << 20, "\(run.stdout.utf8.count) bytes")

        // Searching them: 2,000 of one word is refused at once; 30 words are searched.
        let refused = try await Self.measured(
            ["call", "transcripts.search", #"{"text":"\#(String(repeating: "alpha ", count: 2000))"}"#], dataDir: dataDir)
        Self.expectHeld(refused, "transcripts.search of 2,000 words", within: 10)
        #expect(refused.status != 0 && refused.stderr.contains("at most 32 words"), "\(refused.stderr)")
        let searched = try await Self.measured(
            ["call", "transcripts.search", #"{"text":"\#(Array(repeating: "w", count: 30).joined(separator: " "))"}"#],
            dataDir: dataDir)
        Self.expectHeld(searched, "transcripts.search of 30 words", within: 10)
        #expect(searched.status == 0, "\(searched.stderr)")
    }

    // MARK: Imports

    /// A Takeout CSV of 1,000,000 rows with no channel in them answers with a few reasons and how
    /// many more (it listed 999,999 in 54 MB); one of 500,000 channels is refused while read.
    @Test func hugeTakeoutFilesAreAnsweredInFewWords() async throws {
        let dataDir = try makeTemporaryDirectory()
        let bad = try makeTemporaryDirectory() + "/subscriptions.csv"
        try
            ("Channel Id,Channel Url,Channel Title\nUC0123456789012345678901,,One\n"
            + String(repeating: "x,y,z\n", count: 1_000_000))
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let run = try await Self.measured(
            ["call", "lists.import", #"{"path":"\#(bad)","format":"takeout"}"#], dataDir: dataDir)
        Self.expectHeld(run, "a Takeout of 1,000,000 bad rows", within: 60)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.utf8.count < 20_000, "\(run.stdout.prefix(300))")
        let skipped = try JSONValue(parsing: run.stdout)["skipped"]?.arrayValue ?? []
        #expect(skipped.count == 21 && skipped.last?.stringValue == "and 999980 more entries left out", "\(skipped.suffix(2))")

        let many = try makeTemporaryDirectory() + "/subscriptions.csv"
        var text = "Channel Id,Channel Url,Channel Title\n"
        text.reserveCapacity(13_000_000)
        for index in 0..<500_000 { text += "UC" + String(format: "%022d", index) + ",,\n" }
        try text.write(toFile: many, atomically: true, encoding: .utf8)
        let refused = try await Self.measured(
            ["call", "lists.import", #"{"path":"\#(many)","format":"takeout"}"#], dataDir: dataDir)
        Self.expectHeld(refused, "a Takeout of 500,000 channels", within: 60)
        #expect(refused.status != 0 && refused.stderr.contains("more than 10000 channels"), "\(refused.stderr)")
    }

    // MARK: Pictures

    /// An animated WebP of 1,000 frames on a 3000x3000 canvas, a progressive CMYK JPEG of
    /// 6300x6300 and an SVG filter bomb named .jpg: each drawn or refused in a few words, in
    /// little memory and time, with no GLib warning on the screen.
    @Test func picturesThatWouldRunAwayDoNot() async throws {
        let folder = try makeTemporaryDirectory()
        let images = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("PicturesTests/Images").path
        let still = try [UInt8](Data(contentsOf: URL(fileURLWithPath: images + "/quad.webp")))
        func le(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        let frame: [UInt8] = le(0, 3) + le(0, 3) + le(319, 3) + le(179, 3) + le(100, 3) + [0] + Array(still[12...])
        var body: [UInt8] = Array("WEBP".utf8) + Array("VP8X".utf8) + le(10, 4) + [0x02, 0, 0, 0] + le(2999, 3) + le(2999, 3)
        body += Array("ANIM".utf8) + le(6, 4) + le(0, 4) + le(0, 2)
        for _ in 0..<1000 { body += Array("ANMF".utf8) + le(frame.count, 4) + frame + (frame.count % 2 == 1 ? [0] : []) }
        let webp = folder + "/animated.webp"
        try Data(Array("RIFF".utf8) + le(body.count, 4) + body).write(to: URL(fileURLWithPath: webp))
        var jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC2, 0x00, 0x14, 0x08, 0x18, 0x9C, 0x18, 0x9C, 0x04]
        for component in 1...4 { jpeg += [UInt8(component), 0x11, 0x00] }
        let cmyk = folder + "/cmyk.jpg"
        try Data(jpeg + [0xFF, 0xD9]).write(to: URL(fileURLWithPath: cmyk))
        let svg = folder + "/cover.jpg"
        try
            #"<svg xmlns="http://www.w3.org/2000/svg" width="3000" height="3000"><filter id="f"><feTurbulence baseFrequency="0.01" numOctaves="1000000000"/></filter><rect filter="url(#f)" width="3000" height="3000"/></svg>"#
            .write(toFile: svg, atomically: true, encoding: .utf8)
        let dataDir = try makeTemporaryDirectory()
        for (path, what) in [(webp, "an animated WebP of 1,000 frames"), (cmyk, "a progressive CMYK JPEG"), (svg, "an SVG bomb")]
        {
            let run = try await Self.measured(
                ["picture", path, "--protocol", "blocks", "--columns", "40", "--rows", "12", "--cell", "8x16"], dataDir: dataDir)
            Self.expectHeld(run, what, within: 20)
            if run.status != 0 {
                let reason = run.stderr.trimmingCharacters(in: .whitespacesAndNewlines)
                #expect(!reason.contains("\n") && reason.count < 160, "\(what): \(reason)")
            }
        }
    }

    // MARK: The sync server

    /// A sync server that echoes the password in its errors (the Basic header's base64, the
    /// password JSON-escaped and percent-encoded): none of those forms reaches an answer, a
    /// message, `sync status`, `doctor`, the database or its WAL.
    @Test func aSyncServerEchoingThePasswordGetsItNowhere() async throws {
        let password = #"s3cr"et/pässword"#
        let basic = Data("alice:\(password)".utf8).base64EncodedString()
        let json = String(decoding: JSONWriter.bytes(.string(password)).dropFirst().dropLast(), as: UTF8.self)
        let percent = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password
        let forms = [password, basic, json, percent]
        let server = try HostileServer { request, connection in
            let echo = #"{"message":"bad: \#(request.headers["authorization"] ?? "") \#(json) \#(percent)"}"#
            if request.path.contains("/subscriptions") {
                // A subscription whose URL carries the Basic value.
                let basic = String((request.headers["authorization"] ?? "").dropFirst("Basic ".count))
                connection.respond(
                    headers: ["Content-Type": "application/json"],
                    body: Array(#"{"add":["http://feeds.example/f.xml?k=\#(basic)"],"remove":[],"timestamp":1}"#.utf8))
            } else {
                connection.respond(
                    status: 500, reason: "Oops", headers: ["Content-Type": "application/json"], body: Array(echo.utf8))
            }
        }
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        let login = try await runMediahost(
            [
                "call", "sync.login",
                #"{"server":"\#(server.baseURL)","username":"alice","password":"\#(json)","dialect":"nextcloud"}"#,
            ],
            dataDir: dataDir)
        var seen = [login.stdout, login.stderr]
        for call in [
            ["call", "sync.now"], ["call", "sync.status"], ["doctor"], ["doctor", "--online"], ["call", "host.doctor"],
            ["call", "favorites.list"],
        ] {
            let run = try await runMediahost(call, dataDir: dataDir)
            seen += [run.stdout, run.stderr]
        }
        let repl = try await runMediahost([], input: "sync\nsync status\n", dataDir: dataDir)
        seen += [repl.stdout, repl.stderr]
        #expect(seen.joined().contains("500"), "the failure is said: \(seen.joined().suffix(500))")
        for file in (try? FileManager.default.contentsOfDirectory(atPath: dataDir)) ?? [] where file.hasPrefix("mediahost.sqlite")
        {
            seen.append(
                String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: dataDir + "/" + file))) ?? Data(), as: UTF8.self))
        }
        for text in seen {
            for form in forms { #expect(!text.contains(form), "\(form) in \(text.prefix(300))") }
        }
    }

    /// A sync server that takes the connection and never answers: each request gives up within
    /// http.timeout, retries included (it waited 30 s a request, four times over).
    @Test func aSyncServerThatNeverAnswersIsBoundedByTheTimeout() async throws {
        let silent = try HostileServer { _, connection in connection.hold(limit: 120) }
        defer { silent.stop() }
        let answering = try HostileServer { request, connection in
            connection.respond(
                headers: ["Content-Type": "application/json"], body: Array(#"{"add":[],"remove":[],"timestamp":1}"#.utf8))
        }
        let dataDir = try makeTemporaryDirectory()
        let login = try await runMediahost(
            [
                "call", "sync.login",
                #"{"server":"\#(answering.baseURL)","username":"alice","password":"app-pass","dialect":"nextcloud"}"#,
            ],
            dataDir: dataDir)
        #expect(login.status == 0, "\(login.stderr)")
        answering.stop()
        // The account now points at the silent server (its file, as a moved server would be).
        let auth = dataDir + "/auth/sync.json"
        let text = try String(contentsOfFile: auth, encoding: .utf8).replacingOccurrences(
            of: answering.baseURL.replacingOccurrences(of: "/", with: "\\/"),
            with: silent.baseURL.replacingOccurrences(of: "/", with: "\\/")
        )
        .replacingOccurrences(of: answering.baseURL, with: silent.baseURL)
        try text.write(toFile: auth, atomically: true, encoding: .utf8)
        let run = try await Self.measured(["call", "sync.now"], dataDir: dataDir, environment: ["MEDIAHOST_HTTP_TIMEOUT": "3"])
        Self.expectHeld(run, "sync.now against a server that never answers", within: 20)
        #expect(run.status != 0 && run.stderr.contains("sync"), "\(run.stderr)")
    }
}
