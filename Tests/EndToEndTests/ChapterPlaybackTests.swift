import Basics
import Foundation
import HostPlayer
import JSONRPC
import MediaHost
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Chapters through the binary and the real mpv: the sandbox radio's tone 3 has a Podcasting 2.0
/// chapters file (four chapters and a marker), tone 2 Podlove chapters in its feed item. mpv is
/// asked over its own IPC what it was given and where it is.
@Suite(.serialized) struct ChapterPlaybackTests {
    /// A JSON-IPC client of mpv's socket, one request at a time.
    final class MPVProbe {
        let fd: Int32

        init?(path: String) {
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard fd >= 0, bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in bytes.enumerated() { raw[index] = byte }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard connected == 0 else {
                close(fd)
                return nil
            }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        private var buffer: [UInt8] = []
        private var nextID = 100

        /// The `data` of mpv's answer to `command` (nil on an error answer).
        func ask(_ command: [JSONValue]) -> JSONValue? {
            nextID += 1
            let request = JSONWriter.bytes(.object(["command": .array(command), "request_id": JSONValue(nextID)])) + [0x0A]
            guard request.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == request.count else { return nil }
            while true {
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = Array(buffer[..<newline])
                    buffer.removeSubrange(...newline)
                    guard let message = try? JSONParser.parse(line), message["request_id"]?.intValue == nextID else { continue }
                    return message["error"]?.stringValue == "success" ? (message["data"] ?? .null) : nil
                }
                var chunk = [UInt8](repeating: 0, count: 65536)
                let count = read(fd, &chunk, chunk.count)
                guard count > 0 else { return nil }
                buffer += chunk[..<count]
            }
        }
    }

    @Test(.enabled(if: PlayerTests.mpv != nil, "mpv is not installed (`make test` installs it)"))
    func mpvGetsTheChaptersAndChapterNextLandsOnTheNext() async throws {
        let setup = try await PlayerTests.setUp()
        defer { setup.sandbox.process.terminate() }
        let client = try PlayerTests.Client(dataDir: setup.dataDir, environment: setup.environment)
        let tone3 = setup.tones[2], tone2 = setup.tones[1]

        // What the feed and its chapters file say.
        let listed = try await client.call("media.chapters", #"{"id":"\#(tone3)"}"#)
        #expect(listed["source"] == "podcast:chapters", "\(listed)")
        let chapters = listed["chapters"]?.arrayValue ?? []
        #expect(chapters.map { $0["start"]?.doubleValue } == [0, 30, 60, 90, 150.5])
        #expect(chapters.filter { $0["toc"] == true }.count == 4)
        let simple = try await client.call("media.chapters", #"{"id":"\#(tone2)"}"#)
        #expect(simple["source"] == "psc" && simple["chapters"]?.arrayValue?.count == 3, "\(simple)")
        #expect(simple["chapters"]?.arrayValue?.last?["start"]?.doubleValue == 80.5)

        // Started at chapter 2 (30 s), mpv is given the four chapters of the contents.
        let opened = try await client.call("player.open", #"{"id":"\#(tone3)","chapter":2}"#)
        let pid = try #require(opened["pid"]?.intValue, "\(opened)")
        defer { kill(pid_t(pid), SIGKILL) }
        #expect(abs((opened["resumedAt"]?.doubleValue ?? 0) - 30) < 0.01, "\(opened)")
        let playing = await client.waitForState { ($0["position"]?.doubleValue ?? 0) >= 30 && $0["state"] == "playing" }
        #expect(playing != nil, "it plays from chapter 2: \(client.process.errors.suffix(2000))")
        let socket = HostPaths(configFile: setup.dataDir + "/none.toml", dataDir: setup.dataDir, cacheDir: setup.dataDir)
            .playerSocket(environment: ProcessInfo.processInfo.environment.merging(setup.environment) { $1 })
        let mpv = try #require(MPVProbe(path: socket), "mpv's socket at \(socket)")
        var given: [JSONValue] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while given.count != 4, ContinuousClock.now < deadline {
            given = mpv.ask(["get_property", "chapter-list"])?.arrayValue ?? []
            if given.count != 4 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(given.map { $0["title"]?.stringValue } == ["Opening", "The long middle", "Part three", "Closing"], "\(given)")
        #expect(mpv.ask(["get_property", "chapter"])?.intValue == 1, "in chapter 2")

        // `chapter next` (the REPL's, through player.chapter) lands on chapter 3 at 90 s.
        let next = try await client.call("player.chapter", #"{"to":"next"}"#)
        let at = next["position"]?.doubleValue ?? 0
        #expect(at >= 89.5 && at < 95, "\(next)")
        #expect(mpv.ask(["get_property", "chapter"])?.intValue == 2)
        #expect((mpv.ask(["get_property", "time-pos"])?.doubleValue ?? 0) >= 89.5, "mpv lands a hair before: 89.99997")
        // To chapter 4 by its number, then the last has no next.
        let fourth = try await client.call("player.chapter", #"{"to":"4"}"#)
        #expect((fourth["position"]?.doubleValue ?? 0) >= 150, "\(fourth)")
        #expect(mpv.ask(["get_property", "chapter"])?.intValue == 3)
        let past = try await client.call("player.chapter", #"{"to":"next"}"#)
        #expect(past["message"]?.stringValue?.contains("last chapter") == true, "\(past)")
        let none = try await client.call("player.chapter", #"{"to":"9"}"#)
        #expect(none["code"]?.intValue == -32602 && none["message"]?.stringValue?.contains("has 4 chapters") == true, "\(none)")
        // Back within its first seconds: the chapter before.
        let back = try await client.call("player.chapter", #"{"to":"prev"}"#)
        let backAt = back["position"]?.doubleValue ?? 0
        #expect(backAt >= 89.5 && backAt < 100, "\(back)")
        _ = try await client.call("player.stop")
        await client.close()
    }

    /// A soundbite (tone 2's, 40 s for 6 s) plays alone in the real mpv: from its start to its
    /// end (mpv's own `end`), then what is queued; where the episode was left stays as it was.
    /// A second format (tone 2's lower bitrate) plays when player.bitrate asks for it.
    @Test(.enabled(if: PlayerTests.mpv != nil, "mpv is not installed (`make test` installs it)"))
    func aSoundbitePlaysAloneAndAnotherFormatWhenAsked() async throws {
        let setup = try await PlayerTests.setUp()
        defer { setup.sandbox.process.terminate() }
        let client = try PlayerTests.Client(dataDir: setup.dataDir, environment: setup.environment)
        let tone1 = setup.tones[0], tone2 = setup.tones[1]
        let item = try await client.call("media.get", #"{"id":"\#(tone2)"}"#)
        #expect(item["namespace"]?["soundbites"]?.arrayValue?.first?["title"] == "The tone at forty", "\(item)")

        // Left at 10 s first.
        let first = try await client.call("player.open", #"{"id":"\#(tone2)","start":10}"#)
        let pid = try #require(first["pid"]?.intValue, "\(first)")
        defer { kill(pid_t(pid), SIGKILL) }
        #expect(await client.waitForState { ($0["position"]?.doubleValue ?? 0) >= 10.5 && $0["state"] == "playing" } != nil)
        _ = try await client.call("player.pause")
        let left = try await client.call("media.get", #"{"id":"\#(tone2)"}"#)["position"]?.doubleValue ?? 0
        #expect(left >= 10 && left < 20, "left at \(left)")

        // Mistakes say what there is.
        let none = try await client.call("player.open", #"{"id":"\#(tone1)","soundbite":1}"#)
        #expect(
            none["code"]?.intValue == -32602 && none["message"]?.stringValue?.contains("has no soundbites") == true, "\(none)")
        let past = try await client.call("player.open", #"{"id":"\#(tone2)","soundbite":2}"#)
        #expect(past["message"]?.stringValue?.contains("has 1 soundbite: ask for 1") == true, "\(past)")
        let both = try await client.call("player.open", #"{"id":"\#(tone2)","soundbite":1,"chapter":2}"#)
        #expect(both["code"]?.intValue == -32602, "\(both)")

        _ = try await client.call("player.stop")
        // Tone 1 queued, then tone 2 itself; the soundbite plays now, from 40 s, told to end
        // at 46 s, and leaves tone 2 in the queue.
        _ = try await client.call("queue.add", #"{"ids":["\#(tone1)","\#(tone2)"]}"#)
        let bite = try await client.call("player.open", #"{"id":"\#(tone2)","soundbite":1}"#)
        let bitePID = bite["pid"]?.intValue ?? 0
        defer { if bitePID > 0 { kill(pid_t(bitePID), SIGKILL) } }
        #expect(bite["queued"] == nil && abs((bite["resumedAt"]?.doubleValue ?? 0) - 40) < 0.01, "\(bite)")
        let clip = await client.waitForState { ($0["position"]?.doubleValue ?? 0) >= 40 && $0["state"] == "playing" }
        #expect(clip?["item"]?["clip"]?["end"]?.doubleValue == 46, "\(String(describing: clip))")
        let socket = HostPaths(configFile: setup.dataDir + "/none.toml", dataDir: setup.dataDir, cacheDir: setup.dataDir)
            .playerSocket(environment: ProcessInfo.processInfo.environment.merging(setup.environment) { $1 })
        let mpv = try #require(MPVProbe(path: socket), "mpv's socket at \(socket)")
        #expect(mpv.ask(["get_property", "end"])?.stringValue?.hasPrefix("46") == true, "mpv ends the file at 46 s")
        let queued = try await client.call("queue.list")
        #expect(queued["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [tone1, tone2], "\(queued)")
        // Then the queue's tone 1, and tone 2 is still where it was left, not played.
        let next = await client.waitForState(timeout: .seconds(90)) { $0["item"]?["id"]?.stringValue == tone1 }
        #expect(next != nil, "the queue plays on after the soundbite: \(client.process.errors.suffix(2000))")
        let after = try await client.call("media.get", #"{"id":"\#(tone2)"}"#)
        #expect(abs((after["position"]?.doubleValue ?? 0) - left) < 0.01 && after["played"] != true, "\(after)")
        // Tone 1 (4 s) ends, and tone 2 plays whole, where it was left: no soundbite any more.
        // (States heard before are kept by the client: the clip's, and the pause at `left`.)
        let whole = await client.waitForState(timeout: .seconds(90)) {
            $0["item"]?["id"]?.stringValue == tone2 && $0["item"]?["clip"] == nil
                && ($0["position"]?.doubleValue ?? 0) > left + 0.5
        }
        #expect(whole != nil, "tone 2 plays whole after tone 1: \(client.process.errors.suffix(2000))")
        let status = try await client.call("player.status")
        #expect(status["item"]?["id"]?.stringValue == tone2 && status["item"]?["clip"] == nil, "\(status)")
        _ = try await client.call("player.pause")
        let kept = try await client.call("media.get", #"{"id":"\#(tone2)"}"#)["position"]?.doubleValue ?? 0
        #expect(kept > left, "played on from where it was left: \(kept)")

        // player.format audio with at most 100 kb/s: tone 2's 64 kb/s file, said.
        _ = try await client.call("config.set", #"{"key":"player.format","value":"audio"}"#)
        _ = try await client.call("config.set", #"{"key":"player.bitrate","value":"100"}"#)
        let low = try await client.call("player.open", #"{"id":"\#(tone2)","now":true}"#)
        #expect(low["target"]?.stringValue?.hasSuffix("/2.wav?bitrate=64") == true, "\(low)")
        #expect(low["note"] == "the audio/wav file at 64 kb/s", "\(low)")
        let playing = await client.waitForState { ($0["item"]?["target"]?.stringValue ?? "").hasSuffix("?bitrate=64") }
        #expect(playing != nil)
        // mpv opens it a moment after it is told.
        var path = ""
        let opening = ContinuousClock.now + .seconds(60)
        while !path.hasSuffix("?bitrate=64"), ContinuousClock.now < opening {
            path = mpv.ask(["get_property", "path"])?.stringValue ?? ""
            if !path.hasSuffix("?bitrate=64") { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(path.hasSuffix("?bitrate=64"), "mpv plays \(path)")
        // It resumes as the episode, wherever its file comes from.
        #expect(abs((low["resumedAt"]?.doubleValue ?? 0) - kept) < 0.01, "\(low)")
        _ = try await client.call("player.stop")
        await client.close()
    }

    /// The REPL lists them at 80 columns: numbered, the marker apart, the source said.
    @Test func theREPLListsChapters() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        let result = try await runMediahost(
            ["run", "-"], input: "open \(PlayerTests.radio)\nchapters 1\nchapters 2\nchapters 3\nshow 2\nshow 1\n",
            dataDir: dataDir,
            environment: ["MEDIAHOST_PODCASTS_BASE_URL": base, "COLUMNS": "80"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("1  0:00  Opening") && lines.contains("4  2:30  Closing"), "\(result.stdout)")
        #expect(lines.contains { $0.contains("1:00  · Marker at 1:00") }, "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("4 chapters from the episode's chapters file; 1 marker") })
        #expect(
            lines.contains("3  1:20  Eighty and a half") && lines.contains { $0.hasPrefix("3 chapters from the feed's Podlove") })
        #expect(lines.contains { $0.hasPrefix("no chapters: ") })
        // `show` says how many chapters there are: a feed's Podlove ones, and those of a chapters file.
        #expect(lines.contains { $0.contains("chapters") && $0.contains("3 (`chapters <n>` lists them)") }, "\(result.stdout)")
        #expect(lines.contains { $0.contains("chapters") && $0.contains("4 (`chapters <n>` lists them)") }, "\(result.stdout)")
        #expect(lines.contains { $0.contains("transcript") && $0.contains("yes (`transcript <n>` shows it)") })
        // (A script's `show` prints a media URL whole: only the chapters' lines are fitted.)
        #expect(
            lines.filter { !$0.hasPrefix("media ") }.allSatisfy { $0.count <= 80 }, "\(lines.filter { $0.count > 80 })")
    }

    /// Transcripts through the binary: read (JSON merged into lines, the English SRT chosen by
    /// the locale over a German VTT), kept, searched across episodes from another process, and a
    /// hit played from where it was said.
    @Test(.enabled(if: PlayerTests.mpv != nil, "mpv is not installed (`make test` installs it)"))
    func transcriptsAreReadKeptSearchedAndPlayedFromAHit() async throws {
        let setup = try await PlayerTests.setUp()
        defer { setup.sandbox.process.terminate() }
        let environment = setup.environment.merging(["LANG": "en_US.UTF-8", "COLUMNS": "80"]) { $1 }
        let script = """
            open \(PlayerTests.radio)
            transcript 1
            transcript 2
            transcript search long middle

            """
        let first = try await runMediahost(["run", "-"], input: script, dataDir: setup.dataDir, environment: environment)
        #expect(first.status == 0, "\(first.stderr)")
        let lines = first.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.contains("0:00  Ada: The tone rises slowly.")
                && lines.contains("2:31  Grace: Closing words: thank you for listening."), "\(first.stdout)")
        #expect(lines.contains("0:01  Host: Forty seconds of a steady tone begin here."), "the English SRT: \(first.stdout)")
        #expect(lines.contains { $0.hasPrefix("1  Tone 3 (180 s) · 0:31") }, "\(first.stdout)")
        #expect(lines.contains { $0.contains("Listen for the [long] [middle] of the sine wave.") })

        // Another process: kept, searched without fetching, played from the hit.
        let client = try PlayerTests.Client(dataDir: setup.dataDir, environment: environment)
        let kept = try await client.call("media.transcript", #"{"id":"\#(setup.tones[2])"}"#)
        #expect(kept["cached"] == true && kept["format"] == "json", "\(kept)")
        let found = try await client.call("transcripts.search", #"{"text":"\"thank you\""}"#)
        let hit = try #require(found["hits"]?.arrayValue?.first, "\(found)")
        #expect(found["transcripts"]?.intValue == 2 && hit["start"]?.doubleValue == 151 && hit["speaker"] == "Grace", "\(found)")
        let none = try await client.call("transcripts.search", #"{"text":"NEAR( OR"}"#)
        #expect(none["hits"]?.arrayValue?.isEmpty == true, "operators are words: \(none)")
        let opened = try await client.call(
            "player.open", #"{"id":"\#(setup.tones[2])","start":\#(hit["start"]?.doubleValue ?? 0),"now":true}"#)
        let pid = try #require(opened["pid"]?.intValue, "\(opened)")
        defer { kill(pid_t(pid), SIGKILL) }
        #expect(opened["resumedAt"]?.doubleValue == 151)
        let playing = await client.waitForState { ($0["position"]?.doubleValue ?? 0) >= 151 }
        #expect(playing != nil, "it plays from where it was said")
        _ = try await client.call("player.stop")
        await client.close()
    }

    /// SponsorBlock while playing: a sandbox YouTube video (downloaded through yt-dlp from the
    /// site's stand-in) plays in the real mpv; its sponsor segment (5-12 s) is skipped once, said
    /// in `player.skipped`, and playing it again after a seek back into it is not skipped; the
    /// reminder to subscribe (20-24 s) is only marked (sponsorblock.skip is `sponsor`).
    @Test(
        .enabled(
            if: PlayerTests.mpv != nil && YTDLPEndToEndTests.ytdlp != nil,
            "needs mpv and yt-dlp (`make test` installs them)"))
    func sponsorSegmentsAreSkippedOnceWhilePlaying() async throws {
        let ytdlp = try #require(YTDLPEndToEndTests.ytdlp)
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let root = String(base.dropLast("/podcasts".count))
        let dataDir = try makeTemporaryDirectory()
        let environment = [
            "MEDIAHOST_YOUTUBE_BASE_URL": root + "/youtube", "MEDIAHOST_YOUTUBE_SITE_URL": root + "/youtube/site",
            "YOUTUBE_API_KEY": "sandbox-key", "MEDIAHOST_YOUTUBE_DOWNLOADER": "ytdlp", "MEDIAHOST_YOUTUBE_YTDLP": ytdlp,
            "MEDIAHOST_SPONSORBLOCK_SERVER": root + "/youtube/sponsorblock",
            "MEDIAHOST_PLAYER": "mpv --ao=null --vo=null --ytdl=no",
        ]
        let client = try PlayerTests.Client(dataDir: dataDir, environment: environment)
        // A video with segments: every third of the sandbox's has them.
        let found = try await client.call("media.search", #"{"query":"a","provider":"youtube"}"#)
        var video: String?
        for id in (found["items"]?.arrayValue ?? []).compactMap({ $0["id"]?.stringValue }) {
            let segments = try await client.call("media.segments", #"{"id":"\#(id)"}"#)
            if segments["segments"]?.arrayValue?.contains(where: { $0["action"] == "skip" }) == true {
                #expect(segments["segments"]?.arrayValue?.map { $0["action"]?.stringValue } == ["skip", "mark", "highlight"])
                video = id
                break
            }
        }
        let id = try #require(video, "no sandbox video with segments: \(found)")
        _ = try await client.call("downloads.start", #"{"id":"\#(id)"}"#)
        let deadline = ContinuousClock.now + .seconds(90)
        var state = ""
        while state != "completed", ContinuousClock.now < deadline {
            let list = try await client.call("downloads.list")
            state = list.arrayValue?.first { $0["id"]?.stringValue == id }?["state"]?.stringValue ?? ""
            if state == "failed" { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        try #require(state == "completed", "the download: \(state) \(client.process.errors.suffix(2000))")

        let opened = try await client.call("player.open", #"{"id":"\#(id)"}"#)
        let pid = try #require(opened["pid"]?.intValue, "\(opened)")
        defer { kill(pid_t(pid), SIGKILL) }
        #expect(opened["local"] == true)
        // The skip, as said to clients, then where mpv is.
        var skipped: JSONValue?
        let until = ContinuousClock.now + .seconds(60)
        while skipped == nil, ContinuousClock.now < until,
            let message = await client.process.next(timeout: until - ContinuousClock.now)?.value
        {
            if message["method"] == "player.skipped" { skipped = message["params"] }
        }
        let skip = try #require(skipped, "no player.skipped: \(client.process.errors.suffix(2000))")
        #expect(
            skip["category"] == "sponsor" && skip["action"] == "skipped" && skip["start"] == 5 && skip["end"] == 12, "\(skip)")
        let socket = HostPaths(configFile: dataDir + "/none.toml", dataDir: dataDir, cacheDir: dataDir)
            .playerSocket(environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        let mpv = try #require(MPVProbe(path: socket))
        let after = mpv.ask(["get_property", "time-pos"])?.doubleValue ?? 0
        #expect(after >= 11.9 && after < 20, "past the segment: \(after)")
        // Back into it: played this time.
        _ = try await client.call("player.seek", #"{"seconds":6}"#)
        try await Task.sleep(for: .seconds(2))
        let inside = mpv.ask(["get_property", "time-pos"])?.doubleValue ?? 0
        #expect(inside >= 6 && inside < 11.5, "seeking back into a skipped segment plays it: \(inside)")
        // The marked one plays through.
        _ = try await client.call("player.seek", #"{"seconds":19}"#)
        try await Task.sleep(for: .seconds(2.5))
        let marked = mpv.ask(["get_property", "time-pos"])?.doubleValue ?? 0
        #expect(marked >= 20 && marked < 23.5, "a marked segment plays: \(marked)")
        // And the chapters list the segments as markers, the highlight as a chapter.
        let chapters = try await client.call("media.chapters", #"{"id":"\#(id)"}"#)
        let titles = (chapters["chapters"]?.arrayValue ?? []).compactMap { $0["title"]?.stringValue }
        #expect(titles.contains("Sponsor (skipped)") && titles.contains("Highlight"), "\(chapters)")
        _ = try await client.call("player.stop")
        await client.close()
    }

    /// transcripts.prefetch (downloads by default): a downloaded episode's transcript is kept
    /// with it, found by a search that never asked for it.
    @Test func aDownloadedEpisodesTranscriptIsSearchableWithoutAsking() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        let client = try PlayerTests.Client(dataDir: dataDir, environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
        let children = try await client.call("media.children", #"{"id":"\#(PlayerTests.radio)"}"#)
        let tone3 = try #require(children["items"]?.arrayValue?.first?["id"]?.stringValue)
        _ = try await client.call("downloads.start", #"{"id":"\#(tone3)"}"#)
        var hits: [JSONValue] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while hits.isEmpty, ContinuousClock.now < deadline {
            hits = try await client.call("transcripts.search", #"{"text":"sine wave"}"#)["hits"]?.arrayValue ?? []
            if hits.isEmpty { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(hits.first?["id"]?.stringValue == tone3 && hits.first?["start"]?.doubleValue == 31, "\(hits)")
        await client.close()
    }

    /// A video SponsorBlock labels whole (one in nine of the sandbox's) says so in its details.
    @Test func aWholeVideoLabelIsInItsDetails() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let root = String(base.dropLast("/podcasts".count))
        let client = try PlayerTests.Client(
            dataDir: try makeTemporaryDirectory(),
            environment: [
                "MEDIAHOST_YOUTUBE_BASE_URL": root + "/youtube", "YOUTUBE_API_KEY": "sandbox-key",
                "MEDIAHOST_SPONSORBLOCK_SERVER": root + "/youtube/sponsorblock",
            ])
        let found = try await client.call("media.search", #"{"query":"a","provider":"youtube"}"#)
        var labelled: String?
        var plain: String?
        for id in (found["items"]?.arrayValue ?? []).compactMap({ $0["id"]?.stringValue }) {
            let segments = try await client.call("media.segments", #"{"id":"\#(id)"}"#)
            if segments["full"] != nil, labelled == nil { labelled = id }
            if segments["full"] == nil, plain == nil { plain = id }
        }
        let id = try #require(labelled, "no labelled video among \(found["items"]?.arrayValue?.count ?? 0)")
        let item = try await client.call("media.get", #"{"id":"\#(id)"}"#)
        #expect(item["extra"]?["sponsorblock"] == "exclusive access (the whole video)", "\(item)")
        let other = try await client.call("media.get", #"{"id":"\#(try #require(plain))"}"#)
        #expect(other["extra"]?["sponsorblock"] == nil)
        await client.close()
    }

    /// transcripts.prefetch new: the service keeps the newest episodes' transcripts of what is
    /// followed as it starts, found by a search that never asked for them.
    @Test func theServiceKeepsNewEpisodesTranscripts() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base, "MEDIAHOST_TRANSCRIPTS_PREFETCH": "new"]
        let added = try await runMediahost(
            ["call", "favorites.add", #"{"id":"\#(PlayerTests.radio)"}"#], dataDir: dataDir, environment: environment)
        #expect(added.status == 0, "\(added.stderr)")
        let service = try MediahostProcess(["serve"], dataDir: dataDir, environment: environment)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(dataDir)
        var hits: [JSONValue] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while hits.isEmpty, ContinuousClock.now < deadline {
            let found = try await runMediahost(
                ["call", "transcripts.search", #"{"text":"sine wave"}"#], dataDir: dataDir, environment: environment)
            hits = (try? JSONValue(parsing: found.stdout))?["hits"]?.arrayValue ?? []
            if hits.isEmpty { try await Task.sleep(for: .milliseconds(300)) }
        }
        #expect(hits.first?["start"]?.doubleValue == 31, "\(hits) \(service.errors.suffix(1500))")
    }
}
