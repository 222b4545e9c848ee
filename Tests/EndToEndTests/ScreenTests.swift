import Basics
import Foundation
import JSONRPC
import MediaKit
import Synchronization
import TestSupport
import Testing

@testable import MediaREPL

/// `mediahost` in a real terminal emulator (tmux), to check what a person sees: the screen as
/// drawn, every line the terminal had to wrap joined again (`capture-pane -J`), so a line wider
/// than the terminal shows as one line wider than it.
final class TmuxScreen: @unchecked Sendable {
    static let tmux: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }

    let dataDir: String
    private let socket: String

    init(columns: Int, rows: Int = 40, arguments: [String], environment extra: [String: String] = [:]) async throws {
        let tmux = try #require(Self.tmux)
        dataDir = try makeTemporaryDirectory()
        socket = dataDir + "/tmux.socket"
        // The pane stays after mediahost exits, so what it wrote last can be read.
        let conf = dataDir + "/tmux.conf"
        try "set -g remain-on-exit on\nset -g history-limit 20000\nset -g status off\n".write(
            toFile: conf, atomically: true, encoding: .utf8)
        var environment = [
            "MEDIAHOST_DATA_DIR": dataDir, "XDG_CONFIG_HOME": dataDir + "/config", "XDG_CACHE_HOME": dataDir + "/cache",
            "TERM": "tmux-256color", "NO_COLOR": "1", "HOME": dataDir, "LANG": "C.UTF-8",
            "MEDIAHOST_SPONSORBLOCK_SERVER": "http://127.0.0.1:9",
        ]
        for (key, value) in extra { environment[key] = value }
        let command =
            (["env"] + environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + [mediahostBinary()]
            + sandboxInDataDir(arguments, dataDir))
            .map(Self.quote).joined(separator: " ")
        let started = await runProgram(
            tmux, ["-S", socket, "-f", conf, "new-session", "-d", "-x", "\(columns)", "-y", "\(rows)", command])
        try #require(started.status == 0, "tmux did not start")
    }

    deinit {
        if let tmux = Self.tmux {
            let socket = socket
            Thread.detachNewThread { _ = runProgramBlockingForTests(tmux, ["-S", socket, "kill-server"]) }
        }
    }

    static func quote(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    func tmux(_ arguments: [String]) async -> String {
        guard let tmux = Self.tmux else { return "" }
        return String(decoding: await runProgram(tmux, ["-S", socket] + arguments).output, as: UTF8.self)
    }

    /// Types `line` and Enter.
    func type(_ line: String) async {
        _ = await tmux(["send-keys", "-t", "0", "-l", line])
        _ = await tmux(["send-keys", "-t", "0", "Enter"])
    }

    /// Types `command` and waits for its answer: the next prompt.
    func run(_ command: String, timeout: Duration = .seconds(60)) async -> Bool {
        let before = await lines().joined(separator: "\n").components(separatedBy: ScreenTests.prompt).count
        await type(command)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await lines().joined(separator: "\n").components(separatedBy: ScreenTests.prompt).count > before { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    func key(_ name: String) async { _ = await tmux(["send-keys", "-t", "0", name]) }

    /// The screen's lines, wrapped ones joined; with `history`, from the start of the scrollback.
    func lines(history: Bool = true) async -> [String] {
        let text = await tmux(["capture-pane", "-p", "-J", "-t", "0"] + (history ? ["-S", "-"] : []))
        let lines = text.components(separatedBy: "\n").map { String($0.reversed().drop { $0 == " " }.reversed()) }
        captured.withLock { $0 = lines }
        return lines
    }

    /// The lines last read from the screen (for messages).
    var last: [String] { captured.withLock { $0 } }
    private let captured = Mutex<[String]>([])

    /// Waits until the scrollback shows `needle` at least `count` times; false on timeout.
    @discardableResult
    func wait(for needle: String, count: Int = 1, timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await lines().joined(separator: "\n").components(separatedBy: needle).count > count { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    func resize(columns: Int, rows: Int = 40) async {
        _ = await tmux(["resize-window", "-t", "0", "-x", "\(columns)", "-y", "\(rows)"])
    }

    /// Whether mediahost has exited (the pane is dead).
    var exited: Bool {
        get async { await tmux(["display-message", "-p", "-t", "0", "#{pane_dead}"]).hasPrefix("1") }
    }

    /// Lines wider than `columns` (as drawn: wrapped ones joined), each with its width.
    static func tooWide(_ lines: [String], columns: Int) -> [String] {
        lines.filter { Renderer.columns($0) > columns }.map { "\(Renderer.columns($0)): \($0)" }
    }
}

/// Runs a program to its end from a thread that may block (deinit).
private func runProgramBlockingForTests(_ executable: String, _ arguments: [String]) -> Int32 {
    guard
        let process = try? ChildProcess(
            executable, arguments: arguments, standardInput: .null, standardOutput: .null, standardError: .null)
    else { return -1 }
    process.waitUntilExit()
    return process.terminationStatus
}

@Suite(.serialized, .enabled(if: TmuxScreen.tmux != nil, "tmux is not installed (`make test` installs it)"))
struct ScreenTests {
    /// The prompt as captured (a line's trailing spaces are not kept).
    static let prompt = "mediahost>"

    /// The rule: nothing the REPL prints is wider than the terminal. Every command whose output
    /// was found wider than 80 columns (notes, show's URLs, a download's path, a player's reply,
    /// config, the Ctrl-D note), then progress bars at 60 columns: drawn, redrawn and finished
    /// without one wrapped line or fragment.
    @Test func everyLineFitsTheTerminal() async throws {
        let screen = try await TmuxScreen(
            columns: 80, arguments: ["--sandbox"],
            environment: [
                "MEDIAHOST_PLAYER": "true --a-long-option-for-a-player-that-is-not-mpv", "MEDIAHOST_SANDBOX_MEDIA_RATE": "400000",
            ])
        #expect(await screen.wait(for: Self.prompt))
        for command in ["providers", "config", "browse podcasts Comedy", "open 1", "show 1", "download 1"] {
            #expect(await screen.run(command), "\(command): \(screen.last.suffix(10))")
        }
        #expect(await screen.wait(for: "  → ~/"), "\(screen.last.suffix(10))")
        for command in ["downloads", "play 1", "artwork 1", "show 1"] {
            #expect(await screen.run(command), "\(command): \(screen.last.suffix(10))")
        }
        #expect(await screen.wait(for: "(pid "))
        try await Task.sleep(for: .seconds(1))
        let wide = await screen.lines()
        #expect(TmuxScreen.tooWide(wide, columns: 79).isEmpty, "\(TmuxScreen.tooWide(wide, columns: 79))")

        // At 60 columns (what was drawn at 80 is rewrapped by the terminal: only what comes
        // after the mark counts): details, then bars drawn while the download runs, redrawn,
        // then its end.
        await screen.resize(columns: 60)
        try await Task.sleep(for: .milliseconds(300))
        #expect(await screen.run("# mark"))
        for command in ["show 1", "browse podcasts Comedy", "open 1", "download 2"] {
            #expect(await screen.run(command), "\(command): \(screen.last.suffix(10))")
        }
        #expect(await screen.wait(for: "⬇"), "\(screen.last.suffix(10))")
        var bars = 0
        for _ in 0..<20 where bars < 3 {
            let screenful = await screen.lines(history: false)
            let visible =
                screenful.firstIndex { $0.hasPrefix(Self.prompt + " # mark") }.map { Array(screenful[$0...]) } ?? screenful
            if visible.contains(where: { $0.hasPrefix("⬇") }) {
                bars += 1
                #expect(TmuxScreen.tooWide(visible, columns: 59).isEmpty, "\(TmuxScreen.tooWide(visible, columns: 59))")
                // One bar, redrawn in place: no fragment of an earlier drawing is left.
                #expect(visible.filter { $0.contains("⬇") }.count == 1, "\(visible)")
            }
            try? await Task.sleep(for: .milliseconds(300))
        }
        #expect(bars > 0)
        // Ctrl-D with the download still running: the note on what becomes of it fits too.
        await screen.type("download 3")
        try await Task.sleep(for: .milliseconds(500))
        await screen.key("C-d")
        #expect(await screen.wait(for: "not finished"), "\(screen.last.suffix(10))")
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if await screen.exited { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let all = await screen.lines()
        let narrow = Array(all.drop { !$0.hasPrefix(Self.prompt + " # mark") })
        #expect(narrow.count > 10, "\(all.suffix(20))")
        #expect(narrow.contains { $0.contains("media ") && $0.contains("http") }, "\(narrow)")
        #expect(!narrow.contains { $0.contains("http") && $0.contains("…") }, "a URL is whole (on the lines it needs)")
        #expect(TmuxScreen.tooWide(narrow, columns: 59).isEmpty, "\(TmuxScreen.tooWide(narrow, columns: 59))")
    }
}

extension ScreenTests {
    /// A stream mpv cannot play is one line above the prompt that says so and why: no log line
    /// over the prompt, no "stopped" after it.
    @Test(.enabled(if: PlayerTests.mpv != nil, "mpv is not installed (`make test` installs it)"))
    func aPlayerThatFailsSaysSoOnce() async throws {
        let base = Mutex("")
        let server = try HostileServer { request, connection in
            if request.path.hasPrefix("/feed") {
                let feed = """
                    <?xml version="1.0"?><rss version="2.0"><channel><title>Gone Radio</title>
                    <item><title>The Missing Episode</title><guid>missing-1</guid>
                    <pubDate>Mon, 10 Nov 2025 09:00:00 GMT</pubDate>
                    <enclosure url="\(base.withLock { $0 })/missing.mp3" type="audio/mpeg" length="1000"/></item>
                    </channel></rss>
                    """
                _ = connection.respond(headers: ["Content-Type": "application/rss+xml"], body: Array(feed.utf8))
            } else {
                _ = connection.respond(status: 404, reason: "Not Found", body: Array("no such file".utf8))
            }
        }
        defer { server.stop() }
        base.withLock { $0 = server.baseURL }
        let show = try #require(ItemID.feed(server.baseURL + "/feed.xml", provider: "podcasts"))
        let screen = try await TmuxScreen(
            columns: 80, arguments: ["--no-service"], environment: ["MEDIAHOST_PLAYER": "mpv --ao=null --vo=null"])
        #expect(await screen.wait(for: Self.prompt))
        #expect(await screen.run("open \(show)"))
        #expect(await screen.run("play 1"))
        #expect(await screen.wait(for: "could not play"), "\(screen.last.suffix(10))")
        try await Task.sleep(for: .seconds(2))
        let lines = await screen.lines().filter { !$0.isEmpty }
        let failures = lines.filter { $0.contains("could not play") }
        #expect(failures.count == 1, "\(lines)")
        #expect(failures.first?.hasPrefix("✗ mpv could not play The Missing Episode: loading failed (") == true, "\(lines)")
        #expect(lines.joined().contains("404"), "mpv's own reason: \(lines)")
        #expect(!lines.joined().contains("ytdl"), "\(lines)")
        #expect(!lines.contains { $0.contains("warning") || $0.contains("stopped") }, "\(lines)")
        // The prompt is whole on its own line, ready.
        #expect(lines.last == Self.prompt.trimmingCharacters(in: .whitespaces), "\(lines)")
        await screen.key("C-d")
    }

    /// `transcript 1 --follow` while tone 3 plays: its lines come above the prompt as playback
    /// reaches them, the prompt whole below them.
    @Test(.enabled(if: PlayerTests.mpv != nil, "mpv is not installed (`make test` installs it)"))
    func aTranscriptFollowsPlayback() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let screen = try await TmuxScreen(
            columns: 80, arguments: ["--no-service"],
            environment: ["MEDIAHOST_PLAYER": "mpv --ao=null --vo=null", "MEDIAHOST_PODCASTS_BASE_URL": base])
        #expect(await screen.wait(for: Self.prompt))
        #expect(await screen.run("open \(PlayerTests.radio)"))
        #expect(await screen.run("play 1 --chapter 2"))
        #expect(await screen.run("transcript 1 --follow"))
        let following = await screen.wait(for: "following its 3 lines")
        let screenNow = await screen.lines().suffix(10)
        #expect(following, "\(screenNow)")
        // Started at 0:30: the line said at 0:31 comes, the one at 0:00 does not.
        let said = await screen.wait(for: "0:31  Ada: Listen for the long middle of the sine wave.")
        let lines = await screen.lines().filter { !$0.isEmpty }
        #expect(said, "\(lines.suffix(10))")
        #expect(!lines.contains { $0.contains("0:00  Ada: The tone rises") }, "\(lines)")
        _ = await screen.run("stop")
        await screen.key("C-d")
    }
}
