import Basics
import Foundation
import HostPlayer
import HostService
import JSONRPC
import MediaHost
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The player against real mpv (`--ao=null --vo=null`), playing the WAV tones the sandbox
/// serves (Sandbox Radio: 4 s, 2 min and 3 min), through the built binary.
@Suite(.serialized) struct PlayerTests {
    static let mpv: String? = ["/usr/bin/mpv", "/usr/local/bin/mpv"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let radio = "podcasts:podcast:1999999997"

    /// An RPC client on a `mediahost rpc` process that keeps the notifications it reads past.
    final class Client: @unchecked Sendable {
        let process: MediahostProcess
        var notifications: [JSONValue] = []
        private var nextID = 1

        init(dataDir: String, environment: [String: String]) throws {
            process = try MediahostProcess(["rpc"], dataDir: dataDir, environment: environment)
        }

        init(process: MediahostProcess) { self.process = process }

        /// The result of a call, or its error object.
        func call(_ method: String, _ params: String = "{}") async throws -> JSONValue {
            let id = nextID
            nextID += 1
            process.sendLine(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#)
            while let message = await process.next(timeout: .seconds(60))?.value {
                if message["id"]?.intValue == id { return message["result"] ?? message["error"] ?? .null }
                if message["method"] != nil { notifications.append(message) }
            }
            Issue.record("no answer to \(method): \(process.errors)")
            return .null
        }

        /// Reads notifications until a `player.state` matches (or the time is up).
        func waitForState(timeout: Duration = .seconds(60), _ matches: (JSONValue) -> Bool) async -> JSONValue? {
            if let found = notifications.last(where: { $0["method"] == "player.state" && matches($0["params"] ?? .null) }) {
                notifications.removeAll()
                return found["params"]
            }
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline, let message = await process.next(timeout: deadline - ContinuousClock.now)?.value
            {
                if message["method"] == "player.state", let params = message["params"], matches(params) { return params }
            }
            return nil
        }

        func close() async {
            process.closeInput()
            _ = await process.waitForExit()
        }
    }

    struct Setup {
        let sandbox: MediahostProcess
        let dataDir: String
        let environment: [String: String]
        /// Tone 1 (4 s), Tone 2 (2 min), Tone 3 (3 min).
        let tones: [String]

        /// A one-shot `mediahost call` on this data dir (`--no-service` with `alone`): its result.
        func call(_ method: String, _ params: String = "{}", alone: Bool = false) async throws -> JSONValue {
            let result = try await runMediahost(
                (alone ? ["--no-service"] : []) + ["call", method, params], dataDir: dataDir, environment: environment)
            #expect(result.status == 0, "\(method): \(result.stderr)")
            return try JSONValue(parsing: result.stdout)
        }
    }

    static func setUp() async throws -> Setup {
        let (sandbox, base) = try await startSandboxProcess()
        let dataDir = try makeTemporaryDirectory()
        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base, "MEDIAHOST_PLAYER": "mpv --ao=null --vo=null"]
        let children = try await runMediahost(
            ["call", "media.children", #"{"id":"\#(radio)"}"#], dataDir: dataDir, environment: environment)
        let items = try JSONValue(parsing: children.stdout)["items"]?.arrayValue ?? []
        let tones = items.compactMap { $0["id"]?.stringValue }.reversed()
        try #require(tones.count == 3, "\(children.stdout)\(children.stderr)")
        return Setup(sandbox: sandbox, dataDir: dataDir, environment: environment, tones: Array(tones))
    }

    static func alive(_ pid: Int) -> Bool { pid > 0 && kill(pid_t(pid), 0) == 0 }

    /// A YouTube video that is not downloaded, and a movie's trailer (a video of the YouTube
    /// replica), play in the sandbox: the host finds the stream as it finds downloads (yt-dlp on
    /// the site's stand-in) and gives mpv that, not the watch page its own yt-dlp would need the
    /// network for.
    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func aVideoAndATrailerPlayFromTheirStreams() async throws {
        guard let ytdlp = YTDLPEndToEndTests.requireYTDLP() else { return }
        let dataDir = try makeTemporaryDirectory()
        let video = try await YTDLPEndToEndTests.sandboxVideo(dataDir: dataDir)
        let process = try MediahostProcess(
            ["--sandbox", "rpc"], dataDir: dataDir,
            environment: ["MEDIAHOST_PLAYER": "mpv --ao=null --vo=null", "MEDIAHOST_YOUTUBE_YTDLP": ytdlp])
        let client = Client(process: process)
        for id in [video, "tmdb:movie:550"] {
            let opened = try await client.call("player.open", #"{"id":"\#(id)","now":true}"#)
            let target = opened["target"]?.stringValue ?? ""
            #expect(target.hasPrefix("http://127.0.0.1:") && !target.contains("youtube.com"), "\(opened)")
            let played = opened["played"]?.stringValue ?? id
            let playing = await client.waitForState {
                $0["state"] == "playing" && $0["item"]?["id"]?.stringValue == played && ($0["position"]?.doubleValue ?? 0) > 0.5
            }
            #expect(playing != nil, "\(id) plays: \(client.process.errors.suffix(2000))")
        }
        _ = try await client.call("player.stop")
        await client.close()
    }

    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func pauseSeekStopAndResumeWhereItWasLeft() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        let client = try Client(dataDir: setup.dataDir, environment: setup.environment)

        let opened = try await client.call("player.open", #"{"id":"\#(setup.tones[1])"}"#)
        let pid = try #require(opened["pid"]?.intValue, "\(opened)")
        #expect(Self.alive(pid))
        #expect(opened["queued"] == nil && opened["resumedAt"] == nil)
        let playing = await client.waitForState { ($0["position"]?.doubleValue ?? 0) >= 1 && $0["state"] == "playing" }
        #expect(
            playing?["item"]?["id"]?.stringValue == setup.tones[1],
            "\(String(describing: playing)) \(client.process.errors.suffix(3000))")
        #expect(playing?["duration"]?.doubleValue == 120)

        let paused = try await client.call("player.pause")
        #expect(paused["state"] == "paused" && paused["paused"] == true, "\(paused)")
        let pausedAt = paused["position"]?.doubleValue ?? -1
        try await Task.sleep(for: .milliseconds(1500))
        let still = try await client.call("player.status")
        #expect(abs((still["position"]?.doubleValue ?? 0) - pausedAt) < 0.3, "paused stays put: \(still)")

        let sought = try await client.call("player.seek", #"{"seconds":60}"#)
        #expect(abs((sought["position"]?.doubleValue ?? 0) - 60) < 1.5, "\(sought)")
        let back = try await client.call("player.seek", #"{"seconds":-5,"relative":true}"#)
        #expect(abs((back["position"]?.doubleValue ?? 0) - 55) < 1.5, "\(back)")
        let loud = try await client.call("player.volume", #"{"level":40}"#)
        #expect(loud["volume"]?.doubleValue == 40)
        let badSeek = try await client.call("player.seek", #"{"seconds":-5}"#)
        #expect(badSeek["code"]?.intValue == -32602, "\(badSeek)")

        let stopped = try await client.call("player.stop")
        #expect(stopped["state"] == "stopped" && stopped["item"] == nil, "\(stopped)")
        let item = try await client.call("media.get", #"{"id":"\#(setup.tones[1])"}"#)
        let kept = item["position"]?.doubleValue ?? 0
        #expect(kept > 54 && kept < 57 && item["played"] == false, "the position is kept: \(item)")
        let deadline = ContinuousClock.now + .seconds(30)
        while Self.alive(pid), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!Self.alive(pid), "mpv quit at stop")
        await client.close()

        // A new process (the next day): `play` starts where it was left.
        let later = try Client(dataDir: setup.dataDir, environment: setup.environment)
        let resumed = try await later.call("player.open", #"{"id":"\#(setup.tones[1])"}"#)
        #expect(abs((resumed["resumedAt"]?.doubleValue ?? 0) - kept) < 0.01, "\(resumed)")
        let there = await later.waitForState { ($0["position"]?.doubleValue ?? 0) >= kept }
        #expect(there != nil, "playback resumed at \(kept)")
        _ = try await later.call("player.stop")
        await later.close()
    }

    /// The queue is the store's, and mpv follows it: what is queued, moved or removed by any call
    /// (here one-shot `mediahost call`s from other processes, as a script or cron would) is what
    /// mpv plays next; an item that starts leaves the queue, one that ends is marked played; the
    /// watching client hears the queue change.
    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func theStoresQueueDrivesMPV() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        func call(_ method: String, _ params: String = "{}") async throws -> JSONValue {
            try await setup.call(method, params, alone: true)
        }
        func queued() async throws -> [String] {
            try await call("queue.list")["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        }
        let client = try Client(dataDir: setup.dataDir, environment: setup.environment)
        _ = try await client.call("player.open", #"{"id":"\#(setup.tones[2])"}"#)
        let playing = await client.waitForState { $0["item"]?["id"]?.stringValue == setup.tones[2] }
        #expect(playing != nil, "the first item plays")
        // Queued by another process: mpv is handed them, in the queue's order.
        _ = try await call("queue.add", #"{"ids":["\#(setup.tones[0])","\#(setup.tones[1])"]}"#)
        #expect(try await queued() == [setup.tones[0], setup.tones[1]])
        var status = try await client.call("player.status")
        #expect(
            status["queue"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [setup.tones[0], setup.tones[1]], "\(status)")
        // Moved: mpv's next file follows.
        _ = try await call("queue.move", #"{"from":2,"to":1}"#)
        status = try await client.call("player.status")
        #expect(
            status["queue"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [setup.tones[1], setup.tones[0]], "\(status)")
        // Next: the queue's first plays and leaves the queue.
        let skipped = try await client.call("player.next")
        #expect(skipped["item"]?["id"]?.stringValue == setup.tones[1], "\(skipped)")
        #expect(try await queued() == [setup.tones[0]])
        // Removed from the queue: mpv is not handed it, and stops at the end of what plays.
        _ = try await call("queue.remove", #"{"ids":["\#(setup.tones[0])"]}"#)
        status = try await client.call("player.status")
        #expect(status["queue"]?.arrayValue?.isEmpty == true, "\(status)")
        // Queued again and skipped to: the 4-second tone plays to its end, is marked played and
        // the queue is empty.
        _ = try await call("queue.add", #"{"ids":["\#(setup.tones[0])"],"next":true}"#)
        _ = try await client.call("player.next")
        let ended = await client.waitForState(timeout: .seconds(60)) { $0["state"] == "stopped" }
        #expect(ended != nil, "the queue ran out")
        #expect(try await queued() == [])
        let tone = try await call("media.get", #"{"id":"\#(setup.tones[0])"}"#)
        #expect(tone["played"] == true, "\(tone)")
        // Nothing plays: next starts the queue's first, which leaves it, and mpv is handed the rest.
        _ = try await call("queue.add", #"{"ids":["\#(setup.tones[1])","\#(setup.tones[0])"]}"#)
        let started = try await client.call("player.next")
        #expect(started["item"]?["id"]?.stringValue == setup.tones[1], "\(started)")
        #expect(started["queue"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [setup.tones[0]], "\(started)")
        #expect(try await queued() == [setup.tones[0]])
        _ = try await client.call("player.stop")
        // The client heard the queue change (told by the store's writes of its own process:
        // player.open and next take items off the queue there).
        let heard = client.notifications.filter { $0["method"] == "library.changed" && $0["params"]?["what"] == "queue" }
        #expect(!heard.isEmpty)
        await client.close()
    }

    /// The sleep timer pauses by itself, fading out and putting the volume back, after a time or
    /// at the end of what plays (not going on to what is queued); every client sees it; off
    /// cancels it; a one-shot call, whose process would end with the timer, is refused.
    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func theSleepTimerFadesOutAndPauses() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        let client = try Client(dataDir: setup.dataDir, environment: setup.environment)
        _ = try await client.call("player.open", #"{"id":"\#(setup.tones[2])","start":10}"#)
        _ = await client.waitForState {
            $0["item"]?["id"]?.stringValue == setup.tones[2] && ($0["position"]?.doubleValue ?? 0) >= 10.5
        }
        // Off cancels it.
        let set = try await client.call("player.sleep", #"{"minutes":5}"#)
        #expect(set["sleep"]?["at"] == "time" && set["sleep"]?["deadline"]?.stringValue != nil, "\(set)")
        let off = try await client.call("player.sleep", #"{"off":true}"#)
        #expect(off["sleep"] == nil, "\(off)")
        // In 6 seconds: the volume goes down, then it pauses, and the volume is put back.
        _ = try await client.call("player.sleep", #"{"minutes":0.1}"#)
        let fading = await client.waitForState(timeout: .seconds(30)) { ($0["volume"]?.doubleValue ?? 100) < 60 }
        #expect(fading != nil, "the volume went down")
        let paused = await client.waitForState(timeout: .seconds(30)) { $0["state"] == "paused" && $0["sleep"] == nil }
        #expect(paused != nil, "it paused by itself")
        let after = try await client.call("player.status")
        #expect(after["state"] == "paused" && after["volume"]?.doubleValue == 100, "\(after)")
        #expect(after["item"]?["id"]?.stringValue == setup.tones[2])
        // At the end of the 4-second tone, with another queued: it pauses there, not going on.
        _ = try await client.call("queue.add", #"{"ids":["\#(setup.tones[1])"]}"#)
        _ = try await client.call("player.open", #"{"id":"\#(setup.tones[0])","now":true,"start":0}"#)
        _ = await client.waitForState { $0["item"]?["id"]?.stringValue == setup.tones[0] && $0["duration"]?.doubleValue != nil }
        let atEnd = try await client.call("player.sleep", #"{"at":"end"}"#)
        #expect(atEnd["sleep"]?["at"] == "end", "\(atEnd)")
        // (It was paused before: a paused state at the start of the new item is not the timer's.)
        let stopped = await client.waitForState(timeout: .seconds(30)) {
            $0["state"] == "paused" && $0["item"]?["id"]?.stringValue == setup.tones[0]
                && ($0["position"]?.doubleValue ?? 0) >= 2.5 && $0["sleep"] == nil
        }
        #expect(stopped != nil, "it paused at the end of the 4-second tone")
        #expect(try await client.call("queue.list")["total"] == 1, "what is queued stays queued")
        // At the end of the chapter: where the next chapter starts.
        _ = try await client.call("player.open", #"{"id":"\#(setup.tones[2])","now":true,"start":1}"#)
        _ = await client.waitForState {
            $0["state"] == "playing" && $0["item"]?["id"]?.stringValue == setup.tones[2] && $0["duration"]?.doubleValue != nil
                && ($0["position"]?.doubleValue ?? 0) < 9
        }
        let chapters = try await client.call("media.chapters", #"{"id":"\#(setup.tones[2])"}"#)
        let starts = (chapters["chapters"]?.arrayValue ?? []).compactMap { $0["start"]?.doubleValue }
        let chapter = try await client.call("player.sleep", #"{"at":"chapter"}"#)
        let at = chapter["sleep"]?["position"]?.doubleValue ?? -1
        #expect(
            chapter["sleep"]?["at"] == "chapter" && at > 1 && starts.contains { abs($0 - at) < 0.01 }, "\(chapter) in \(starts)")
        _ = try await client.call("player.sleep", #"{"off":true}"#)
        // A one-shot call without a service: refused, saying what keeps a timer.
        let once = try await runMediahost(
            ["--no-service", "call", "player.sleep", #"{"minutes":30}"#], dataDir: setup.dataDir, environment: setup.environment)
        #expect(once.status != 0 && once.stderr.contains("mediahost serve"), "\(once.stderr)")
        _ = try await client.call("player.stop")
        await client.close()
    }

    /// `play` of a show plays its newest episode and queues the rest not played yet, in the
    /// show's order; what was played is left out.
    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func playingAShowQueuesTheRestInItsOrder() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        _ = try await setup.call("player.mark", #"{"ids":["\#(setup.tones[0])"],"played":true}"#)
        let client = try Client(dataDir: setup.dataDir, environment: setup.environment)
        let opened = try await client.call("player.open", #"{"id":"\#(Self.radio)"}"#)
        #expect(opened["played"]?.stringValue == setup.tones[2] && opened["filled"] == 1, "\(opened)")
        let queue = try await client.call("queue.list")
        #expect(queue["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [setup.tones[1]], "\(queue)")
        _ = try await client.call("player.stop")
        _ = try await client.call("queue.clear")
        await client.close()
    }

    /// mpv's own answer for a property, over its IPC socket (what the host set, read back).
    static func mpvProperty(_ name: String, dataDir: String, environment: [String: String]) -> JSONValue? {
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let path = HostPaths(configFile: dataDir + "/none.toml", dataDir: dataDir, cacheDir: dataDir).playerSocket(
            environment: merged)
        guard let fd = UnixSocket(path: path).connect() else { return nil }
        defer { close(fd) }
        let request = Array(#"{"command":["get_property","\#(name)"],"request_id":4242}"#.utf8) + [0x0A]
        guard Descriptor.writeAll(fd, request) else { return nil }
        var buffer: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 1000) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
            while let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                if let value = try? JSONParser.parse(line), value["request_id"]?.intValue == 4242 { return value["data"] }
            }
        }
        return nil
    }

    /// A show's own settings apply whenever its episode plays in mpv (read back over mpv's IPC):
    /// its speed, its intro skipped at the start, its loudness filters, and its outro skipped to
    /// the end, which counts as played; taken back, the next episode plays as built in.
    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func aShowsOwnSettingsApplyWheneverItsEpisodesPlay() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        _ = try await setup.call("favorites.add", #"{"id":"\#(Self.radio)"}"#)
        for (key, value) in [
            ("speed", "1.5"), ("skip_intro", "150"), ("skip_outro", "25"), ("loudnorm", "on"), ("volume_boost_db", "6"),
        ] {
            _ = try await setup.call("rules.set", #"{"show":"\#(Self.radio)","key":"\#(key)","value":"\#(value)"}"#)
        }
        let client = try Client(dataDir: setup.dataDir, environment: setup.environment)
        // Tone 3 is 180 s: it starts at 150 (the intro), and is ended at 155 (the outro).
        _ = try await client.call("player.open", #"{"id":"\#(setup.tones[2])"}"#)
        let skipped = await client.waitForState {
            $0["item"]?["id"]?.stringValue == setup.tones[2] && ($0["position"]?.doubleValue ?? 0) >= 149
        }
        #expect(skipped != nil, "the intro was skipped: \(client.process.errors.suffix(2000))")
        var speed: Double?
        let deadline = ContinuousClock.now + .seconds(20)
        while speed != 1.5, ContinuousClock.now < deadline {
            speed = Self.mpvProperty("speed", dataDir: setup.dataDir, environment: setup.environment)?.doubleValue
            if speed != 1.5 { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(speed == 1.5)
        let filters = Self.mpvProperty("af", dataDir: setup.dataDir, environment: setup.environment)
        let filter = filters?.arrayValue?.first { $0["label"] == "mediahost" }
        let graph = filter?["params"]?["graph"]?.stringValue ?? ""
        #expect(graph.contains("loudnorm=I=-16") && graph.contains("volume=6dB"), "\(String(describing: filters))")
        #expect(Self.mpvProperty("audio-pitch-correction", dataDir: setup.dataDir, environment: setup.environment) == true)
        // The outro: ended at 155 s, so played.
        let ended = await client.waitForState(timeout: .seconds(60)) {
            $0["item"]?["id"]?.stringValue != setup.tones[2] || $0["state"] == "stopped"
        }
        #expect(ended != nil, "the outro was skipped to the end")
        let played = try await client.call("media.get", #"{"id":"\#(setup.tones[2])"}"#)
        #expect(played["played"] == true, "\(played)")

        // Taken back: the next episode plays at 1, unfiltered, from its start.
        _ = try await client.call("rules.unset", #"{"show":"\#(Self.radio)"}"#)
        _ = try await client.call("player.open", #"{"id":"\#(setup.tones[1])","now":true}"#)
        _ = await client.waitForState { $0["item"]?["id"]?.stringValue == setup.tones[1] && $0["state"] == "playing" }
        var plain: Double?
        let again = ContinuousClock.now + .seconds(20)
        while plain != 1, ContinuousClock.now < again {
            plain = Self.mpvProperty("speed", dataDir: setup.dataDir, environment: setup.environment)?.doubleValue
            if plain != 1 { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(plain == 1)
        let none = Self.mpvProperty("af", dataDir: setup.dataDir, environment: setup.environment)?.arrayValue ?? []
        #expect(!none.contains { $0["label"] == "mediahost" }, "\(none)")
        _ = try await client.call("player.stop")
        await client.close()
    }

    /// Previous goes back to the item played before, where it was left, and what played goes back
    /// to the front of the queue; Previous, Previous walks back; with nothing before, it starts over.
    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func previousWalksBackAndPutsWhatPlayedFirstInTheQueue() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        let client = try Client(dataDir: setup.dataDir, environment: setup.environment)
        func queued() async throws -> [String] {
            try await client.call("queue.list")["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        }
        _ = try await client.call("player.open", #"{"id":"\#(setup.tones[2])","start":20}"#)
        let first = await client.waitForState {
            $0["item"]?["id"]?.stringValue == setup.tones[2] && ($0["position"]?.doubleValue ?? 0) >= 20.5
        }
        #expect(first != nil, "the first item plays")
        _ = try await client.call("queue.add", #"{"ids":["\#(setup.tones[1])"]}"#)
        let next = try await client.call("player.next")
        #expect(next["item"]?["id"]?.stringValue == setup.tones[1], "\(next)")
        let second = await client.waitForState {
            $0["item"]?["id"]?.stringValue == setup.tones[1] && ($0["position"]?.doubleValue ?? 0) >= 0.5
        }
        #expect(second != nil, "the second item plays")
        #expect(try await queued() == [])
        // Back: the first again, where it was left; the second is next again.
        let back = try await client.call("player.previous")
        #expect(back["item"]?["id"]?.stringValue == setup.tones[2], "\(back)")
        let resumed = await client.waitForState {
            $0["item"]?["id"]?.stringValue == setup.tones[2] && ($0["position"]?.doubleValue ?? 0) >= 20
        }
        #expect(resumed != nil, "it resumed where it was left")
        #expect(try await queued() == [setup.tones[1]])
        let status = try await client.call("player.status")
        #expect(status["queue"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [setup.tones[1]], "\(status)")
        // Nothing before it: it starts over.
        let over = try await client.call("player.previous")
        #expect(over["item"]?["id"]?.stringValue == setup.tones[2], "\(over)")
        let started = await client.waitForState { ($0["position"]?.doubleValue ?? 99) < 5 }
        #expect(started != nil, "it started over")
        _ = try await client.call("player.stop")
        // Stopping keeps the queue.
        #expect(try await queued() == [setup.tones[1]])
        await client.close()
    }

    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func theQueuePlaysOnAndFinishedItemsAreMarkedPlayed() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        let client = try Client(dataDir: setup.dataDir, environment: setup.environment)

        _ = try await client.call("player.open", #"{"id":"\#(setup.tones[2])"}"#)
        let queued = try await client.call("player.open", #"{"id":"\#(setup.tones[0])"}"#)
        #expect(queued["queued"] == true, "\(queued)")
        let status = try await client.call("player.status")
        #expect(status["queue"]?.arrayValue?.map { $0["id"] } == [.string(setup.tones[0])], "\(status)")

        // Skipping keeps the skipped item's place; the 4-second tone then plays to its end, is
        // marked played, and with nothing queued the player stops.
        let going = await client.waitForState { ($0["position"]?.doubleValue ?? 0) >= 1.5 }
        #expect(going != nil, "the first item plays")
        let skipped = try await client.call("player.next")
        #expect(skipped["item"]?["id"]?.stringValue == setup.tones[0], "\(skipped)")
        let ended = await client.waitForState(timeout: .seconds(60)) { $0["state"] == "stopped" }
        #expect(ended != nil, "the queue ran out")
        let children = try await client.call("media.children", #"{"id":"\#(Self.radio)"}"#)
        let byID = Dictionary(
            (children["items"]?.arrayValue ?? []).map { ($0["id"]?.stringValue ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byID[setup.tones[0]]?["played"] == true, "\(String(describing: byID[setup.tones[0]]))")
        #expect((byID[setup.tones[2]]?["position"]?.doubleValue ?? 0) >= 1, "the skipped one is in progress")
        #expect(byID[setup.tones[1]]?["played"] == nil, "never played: new")

        // Marks by hand.
        let marked = try await client.call("player.mark", #"{"ids":["\#(setup.tones[2])"],"played":true}"#)
        #expect(marked["played"] == true)
        let unmarked = try await client.call("player.mark", #"{"ids":["\#(setup.tones[0])"],"played":false}"#)
        #expect(unmarked["played"] == false)
        let after = try await client.call("media.get", #"{"id":"\#(setup.tones[0])"}"#)
        #expect(after["played"] == nil && after["position"] == nil, "\(after)")
        await client.close()
    }

    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func twoFrontEndsControlOnePlayback() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        let editor = try Client(dataDir: setup.dataDir, environment: setup.environment)
        let opened = try await editor.call("player.open", #"{"id":"\#(setup.tones[1])"}"#)
        _ = await editor.waitForState { ($0["position"]?.doubleValue ?? 0) >= 1 }

        // Another process of the same data dir (a terminal's `mediahost call`) sees and pauses
        // the same mpv; the editor hears of it.
        let status = try await runMediahost(["call", "player.status"], dataDir: setup.dataDir, environment: setup.environment)
        let seen = try JSONValue(parsing: status.stdout)
        #expect(seen["item"]?["id"]?.stringValue == setup.tones[1], "\(status.stdout)\(status.stderr)")
        #expect(seen["state"] == "playing")
        let pause = try await runMediahost(["call", "player.pause"], dataDir: setup.dataDir, environment: setup.environment)
        #expect(pause.status == 0, "\(pause.stderr)")
        let paused = await editor.waitForState { $0["state"] == "paused" }
        #expect(paused != nil, "the editor sees the pause made elsewhere")
        let stop = try await runMediahost(["call", "player.stop"], dataDir: setup.dataDir, environment: setup.environment)
        #expect(stop.status == 0, "\(stop.stderr)")
        _ = await editor.waitForState { $0["state"] == "stopped" }
        let pid = opened["pid"]?.intValue ?? 0
        let deadline = ContinuousClock.now + .seconds(30)
        while Self.alive(pid), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!Self.alive(pid))
        await editor.close()
    }

    /// The queue is mpv's own: with every host process gone, mpv plays it on; the next process
    /// knows what plays. mpv killed with -9 leaves the item's place kept and the status stopped.
    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func mpvPlaysTheQueueOnAloneAndAKilledPlayerKeepsThePlace() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        func call(_ method: String, _ params: String = "{}") async throws -> JSONValue {
            try await setup.call(method, params)
        }
        _ = try await call("player.open", #"{"id":"\#(setup.tones[0])"}"#)
        let queued = try await call("player.open", #"{"id":"\#(setup.tones[1])"}"#)
        #expect(queued["queued"] == true, "\(queued)")
        // No host process runs now; the 4-second tone ends and mpv goes on to the next.
        var status: JSONValue = .null
        let deadline = ContinuousClock.now + .seconds(60)
        repeat {
            try await Task.sleep(for: .milliseconds(500))
            status = try await call("player.status")
        } while status["item"]?["id"]?.stringValue != setup.tones[1] && ContinuousClock.now < deadline
        #expect(status["item"]?["id"]?.stringValue == setup.tones[1], "\(status)")
        #expect(status["queue"]?.arrayValue?.isEmpty == true)

        let client = try Client(dataDir: setup.dataDir, environment: setup.environment)
        _ = try await client.call("player.seek", #"{"seconds":30}"#)
        _ = await client.waitForState { ($0["position"]?.doubleValue ?? 0) >= 30 }
        let opened = try await call("player.open", #"{"id":"\#(setup.tones[1])","now":true,"start":31}"#)
        let mpvPID = try #require(opened["pid"]?.intValue)
        _ = await client.waitForState { ($0["position"]?.doubleValue ?? 0) >= 32 }
        kill(pid_t(mpvPID), SIGKILL)
        let gone = await client.waitForState { $0["state"] == "stopped" }
        #expect(gone != nil, "the client hears that playback ended")
        let item = try await client.call("media.get", #"{"id":"\#(setup.tones[1])"}"#)
        #expect((item["position"]?.doubleValue ?? 0) >= 31, "the place is kept: \(item)")
        // The next `play` starts a new mpv (the dead one's socket is cleared).
        let again = try await client.call("player.open", #"{"id":"\#(setup.tones[1])"}"#)
        #expect(again["pid"]?.intValue != mpvPID && (again["resumedAt"]?.doubleValue ?? 0) >= 31, "\(again)")
        _ = try await client.call("player.stop")
        await client.close()
    }

    /// One-shot `mediahost call`s with no service: `player.open` starts at the kept place (or at
    /// `start`) although the process exits at once; a status asked while another process starts
    /// playback does not lose the item; `player.open` right after `player.stop` starts a new mpv.
    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func oneShotCallsResumeAndRacingProcessesKeepTheItem() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        func call(_ method: String, _ params: String = "{}") async throws -> JSONValue {
            try await setup.call(method, params, alone: true)
        }
        /// The status once mpv reports a position, or the last one.
        func position(atLeast seconds: Double) async throws -> JSONValue {
            var status: JSONValue = .null
            let deadline = ContinuousClock.now + .seconds(60)
            repeat {
                status = try await call("player.status")
                if (status["position"]?.doubleValue ?? 0) >= seconds { break }
                try await Task.sleep(for: .milliseconds(200))
            } while ContinuousClock.now < deadline
            return status
        }
        defer {
            Task { _ = try? await runMediahost(["call", "player.stop"], dataDir: setup.dataDir, environment: setup.environment) }
        }

        let started = try await call("player.open", #"{"id":"\#(setup.tones[1])","start":50}"#)
        #expect(started["resumedAt"]?.doubleValue == 50, "\(started)")
        let there = try await position(atLeast: 49)
        #expect((there["position"]?.doubleValue ?? 0) >= 49, "mpv is where the answer says: \(there)")
        _ = try await call("player.stop")
        let resumed = try await call("player.open", #"{"id":"\#(setup.tones[1])"}"#)
        let kept = try #require(resumed["resumedAt"]?.doubleValue, "\(resumed)")
        #expect(kept >= 49)
        let again = try await position(atLeast: kept - 1)
        #expect((again["position"]?.doubleValue ?? 0) >= kept - 1, "resumed at \(kept): \(again)")

        var pids: Set<Int> = []
        for round in 1...5 {
            _ = try await call("player.stop")
            async let opening = runMediahost(
                ["--no-service", "call", "player.open", #"{"id":"\#(setup.tones[2])","start":20}"#], dataDir: setup.dataDir,
                environment: setup.environment)
            async let asking = runMediahost(
                ["--no-service", "call", "player.status"], dataDir: setup.dataDir, environment: setup.environment)
            let (opened, _) = try await (opening, asking)
            #expect(opened.status == 0, "round \(round), open right after stop: \(opened.stderr)")
            if let pid = try? JSONValue(parsing: opened.stdout)["pid"]?.intValue { pids.insert(pid) }
            // mpv lands a seek on a block of the stream: within a second before the start asked.
            let status = try await position(atLeast: 19)
            #expect(status["item"]?["id"]?.stringValue == setup.tones[2], "round \(round): \(status)")
            #expect((status["position"]?.doubleValue ?? 0) >= 19, "round \(round): the start is kept: \(status)")
        }
        #expect(pids.count == 5, "each open after a stop is a new mpv: \(pids)")
    }

    /// An mpv stopped with SIGSTOP: the status says so within the command deadline, the service
    /// goes on answering (and a new one starts), and `player.stop` ends it.
    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func aStoppedPlayerIsReportedAndNeverHoldsTheHost() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        let service = try MediahostProcess(["serve"], dataDir: setup.dataDir, environment: setup.environment)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(setup.dataDir)
        func call(_ method: String, _ params: String = "{}") async throws -> (status: Int32, value: JSONValue?, stderr: String) {
            let result = try await runMediahost(["call", method, params], dataDir: setup.dataDir, environment: setup.environment)
            return (result.status, try? JSONValue(parsing: result.stdout), result.stderr)
        }
        let opened = try await call("player.open", #"{"id":"\#(setup.tones[1])"}"#)
        let pid = try #require(opened.value?["pid"]?.intValue, "\(opened)")
        defer { kill(pid_t(pid), SIGKILL) }
        let deadline = ContinuousClock.now + .seconds(60)
        while (try await call("player.status").value?["position"]?.doubleValue ?? 0) < 1, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        kill(pid_t(pid), SIGSTOP)
        // Answered from the last known state within the status's own probe (2 s), well before a
        // command's 10 s deadline (it took those 10 s), through the service and from a process
        // of its own.
        for arguments in [["call", "player.status"], ["--no-service", "call", "player.status"]] {
            let started = ContinuousClock.now
            let result = try await runMediahost(arguments, dataDir: setup.dataDir, environment: setup.environment)
            let stuck = try? JSONValue(parsing: result.stdout)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(stuck?["problem"]?.stringValue?.contains("does not answer") == true, "\(result.stdout)")
            #expect(stuck?["item"]?["id"]?.stringValue == setup.tones[1], "the last known item")
            #expect(ContinuousClock.now - started < .seconds(8), "\(arguments)")
        }
        let paused = try await call("player.pause")
        #expect(paused.status == 1 && paused.stderr.contains("stopped or stuck"), "\(paused.stderr)")
        #expect(try await call("host.info").status == 0, "the service answers everyone else")

        // A service started while mpv is stuck answers at once.
        service.process.terminate()
        _ = await service.waitForExit()
        let next = try MediahostProcess(["serve"], dataDir: setup.dataDir, environment: setup.environment)
        defer { next.process.terminate() }
        try await ServiceTests.waitForService(setup.dataDir)
        #expect(try await call("host.info").status == 0)

        let stopped = try await call("player.stop")
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let gone = ContinuousClock.now + .seconds(30)
        while Self.alive(pid), ContinuousClock.now < gone { try await Task.sleep(for: .milliseconds(50)) }
        #expect(!Self.alive(pid), "stop ends an mpv that does not answer")
        #expect(try await call("player.status").value?["state"] == "stopped")
    }

    @Test func withoutMPVTheControlsSayHowToGetThem() async throws {
        let dataDir = try makeTemporaryDirectory()
        let result = try await runMediahost(
            ["call", "player.pause"], dataDir: dataDir, environment: ["MEDIAHOST_PLAYER": "vlc --fullscreen"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("config player.command mpv"), "\(result.stderr)")
        let status = try await runMediahost(
            ["call", "player.status"], dataDir: dataDir, environment: ["MEDIAHOST_PLAYER": "vlc"])
        let value = try JSONValue(parsing: status.stdout)
        #expect(value["state"] == "stopped" && value["player"] == nil, "\(status.stdout)")
    }
}

/// Clients that only listen: every notification reaches every attached client as it happens,
/// whether or not the client has sent anything (an editor waits for events without sending).
@Suite(.serialized) struct ListeningClientTests {
    /// Reads one client's messages on a thread of its own, timestamped, and never writes.
    final class Listener: @unchecked Sendable {
        let heard = Mutex<[(at: ContinuousClock.Instant, message: JSONValue, framing: Framing)]>([])

        init(fd: Int32) {
            Thread.detachNewThread { [self] in
                var splitter = MessageSplitter()
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n < 0, errno == EINTR { continue }
                    guard n > 0 else { return }
                    splitter.append(Array(buffer[0..<n]))
                    while let event = splitter.next() {
                        guard case .message(let bytes, let framing) = event, let message = try? JSONParser.parse(bytes) else {
                            continue
                        }
                        heard.withLock { $0.append((ContinuousClock.now, message, framing)) }
                    }
                }
            }
        }

        /// The first notification `matches` accepts, heard after `since`, waited for.
        func waitFor(
            since: ContinuousClock.Instant, timeout: Duration = .seconds(30), _ matches: @escaping (JSONValue) -> Bool
        ) async -> (at: ContinuousClock.Instant, message: JSONValue, framing: Framing)? {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if let found = heard.withLock({ $0.first { $0.at >= since && matches($0.message) } }) { return found }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return nil
        }
    }

    /// A client of the service's socket that never sends, and `mediahost rpc` bridges that never
    /// send (newline and Content-Length framed): each hears another client's favorite at once.
    @Test func clientsThatNeverSendHearEveryChange() async throws {
        let dataDir = try makeTemporaryDirectory()
        let service = try MediahostProcess(["serve"], dataDir: dataDir)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(dataDir)
        let socket = ServiceSocket(paths: HostPaths(configFile: dataDir + "/none.toml", dataDir: dataDir, cacheDir: dataDir))
        let direct = try #require(socket.connect())
        defer { close(direct) }
        let onSocket = Listener(fd: direct)
        let newline = try MediahostProcess(["rpc", "--framing", "newline"], dataDir: dataDir)
        let lsp = try MediahostProcess(["rpc", "--framing", "content-length"], dataDir: dataDir)
        // Attached (the bridges connect at start), then silent.
        try await Task.sleep(for: .milliseconds(500))
        let since = ContinuousClock.now
        let added = try await runMediahost(["call", "lists.create", #"{"name":"Heard"}"#], dataDir: dataDir)
        #expect(added.status == 0, "\(added.stderr)")
        let changed = { (message: JSONValue) in message["method"] == "library.changed" }
        let heard = await onSocket.waitFor(since: since, changed)
        #expect(heard != nil, "the socket client heard nothing")
        #expect(heard?.framing == .newline)
        let bridged = await newline.next(timeout: .seconds(30))
        #expect(bridged?.value?["method"] == "library.changed" && bridged?.framing == .newline)
        let framed = await lsp.next(timeout: .seconds(30))
        #expect(framed?.value?["method"] == "library.changed" && framed?.framing == .contentLength)
        // Heard as it happened, not when the client next spoke: within a few seconds even on a
        // busy machine (it was never, before).
        if let heard { #expect(heard.at - since < .seconds(10)) }
        newline.closeInput()
        lsp.closeInput()
        #expect(await newline.waitForExit() == 0)
        #expect(await lsp.waitForExit() == 0)
    }

    /// With mpv: a listener that never sends hears playback start, pause (from another client),
    /// the end of an item played through (marked played), and mpv killed with -9, as each happens.
    @Test(.enabled(if: PlayerTests.mpv != nil, "mpv is not installed (`make test` installs it)"))
    func aListenerHearsPlaybackFromStartToEnd() async throws {
        let setup = try await PlayerTests.setUp()
        defer { setup.sandbox.process.terminate() }
        let service = try MediahostProcess(["serve"], dataDir: setup.dataDir, environment: setup.environment)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(setup.dataDir)
        let socket = ServiceSocket(
            paths: HostPaths(configFile: setup.dataDir + "/none.toml", dataDir: setup.dataDir, cacheDir: setup.dataDir))
        let direct = try #require(socket.connect())
        defer { close(direct) }
        let listener = Listener(fd: direct)
        func state(_ name: String) -> (JSONValue) -> Bool {
            { $0["method"] == "player.state" && $0["params"]?["state"]?.stringValue == name }
        }
        // The 4 s tone, played through.
        var since = ContinuousClock.now
        let short = try await runMediahost(
            ["call", "player.open", #"{"id":"\#(setup.tones[0])"}"#], dataDir: setup.dataDir, environment: setup.environment)
        #expect(short.status == 0, "\(short.stderr)")
        #expect(await listener.waitFor(since: since, state("playing")) != nil, "playing")
        #expect(await listener.waitFor(since: since, timeout: .seconds(60), state("stopped")) != nil, "stopped at its end")
        // The 2 min tone, paused by another client, then mpv killed.
        since = ContinuousClock.now
        let opened = try await runMediahost(
            ["call", "player.open", #"{"id":"\#(setup.tones[1])"}"#], dataDir: setup.dataDir, environment: setup.environment)
        let playing = await listener.waitFor(since: since, state("playing"))
        #expect(playing != nil)
        since = ContinuousClock.now
        _ = try await runMediahost(["call", "player.pause"], dataDir: setup.dataDir, environment: setup.environment)
        #expect(await listener.waitFor(since: since, state("paused")) != nil, "paused")
        // No `playing` after the pause: a stale state would tell a client the opposite of the truth.
        try await Task.sleep(for: .milliseconds(500))
        let after = listener.heard.withLock {
            $0.filter { $0.at > since }.map { $0.message["params"]?["state"]?.stringValue ?? "" }
        }
        let afterPause = after.drop { $0 != "paused" }
        #expect(!afterPause.isEmpty && !afterPause.contains("playing"), "a stale playing came after the pause: \(after)")
        let pid = try #require(try JSONValue(parsing: opened.stdout)["pid"]?.intValue, "\(opened.stdout)")
        since = ContinuousClock.now
        kill(pid_t(pid), SIGKILL)
        #expect(await listener.waitFor(since: since, state("stopped")) != nil, "stopped when mpv was killed")
    }
}
