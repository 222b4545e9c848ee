import Basics
import Foundation
import JSONRPC
import MediaHTTP
import MediaHost
import MediaKit
import Synchronization
import TestSupport
import Testing

@testable import MediaREPL

#if canImport(Glibc)
    import Glibc
#endif

/// `mediahost` on a pseudo-terminal, as a person at a terminal runs it: the session leader with
/// the pty as its controlling terminal, so Ctrl-C is a real SIGINT and a resize a real SIGWINCH.
final class TerminalSession: @unchecked Sendable {
    let pid: pid_t
    private let master: Int32
    private let output = Bytes()

    final class Bytes: Sendable {
        let value = Mutex<[UInt8]>([])
        /// How the reading of the terminal ended, if it did (for a failure's message).
        let ended = Mutex<String?>(nil)
    }
    let dataDir: String

    /// - Parameter stdoutFile: stdout redirected to this file instead of the terminal.
    init(
        columns: Int, rows: Int = 30, arguments: [String] = ["--sandbox"], stdoutFile: String? = nil,
        dataDir: String? = nil, environment extra: [String: String] = [:]
    ) throws {
        self.dataDir = try dataDir ?? makeTemporaryDirectory()
        // posix_openpt and friends, the Linux way (Glibc's module does not export them).
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, UInt(0x4004_5431), &unlock) == 0,  // TIOCSPTLCK
            ioctl(master, UInt(0x8004_5430), &number) == 0  // TIOCGPTN
        else { throw POSIXError(.ENODEV) }
        let slave = "/dev/pts/\(number)"
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, 0x80)  // POSIX_SPAWN_SETSID: the pty becomes its terminal
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addclose(&actions, master)
        posix_spawn_file_actions_addopen(&actions, 0, slave, O_RDWR, 0)
        if let stdoutFile {
            posix_spawn_file_actions_addopen(&actions, 1, stdoutFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
        }
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        // Nothing of the other tests (their pipes) goes with it.
        actions.closeInheritedDescriptors()
        var environment = ProcessInfo.processInfo.environment
        environment["MEDIAHOST_DATA_DIR"] = self.dataDir
        environment["XDG_CONFIG_HOME"] = self.dataDir + "/config"
        environment["XDG_CACHE_HOME"] = self.dataDir + "/cache"
        environment["TERM"] = "xterm-256color"
        environment["NO_COLOR"] = "1"
        environment["MEDIAHOST_SANDBOX_MEDIA_RATE"] = "100000"
        for (key, value) in extra { environment[key] = value }
        let argv = ([mediahostBinary()] + sandboxInDataDir(arguments, self.dataDir)).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let status = posix_spawn(&child, mediahostBinary(), &actions, &attributes, argv, envp)
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
        pid = child
        let fd = master
        let output = self.output
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else {
                    let why = n == 0 ? "end of file" : String(cString: strerror(errno))
                    output.ended.withLock { $0 = why }
                    return
                }
                output.value.withLock { $0 += buffer[0..<n] }
            }
        }
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(master)
    }

    func type(_ text: String) { _ = text.utf8CString.withUnsafeBufferPointer { write(master, $0.baseAddress, $0.count - 1) } }

    /// Whether the terminal echoes what is typed (the REPL turns echo off while it starts).
    var echoes: Bool {
        var settings = termios()
        return tcgetattr(master, &settings) == 0 && settings.c_lflag & tcflag_t(ECHO) != 0
    }

    func resize(columns: Int, rows: Int = 30) {
        var size = winsize(ws_row: UInt16(rows), ws_col: UInt16(columns), ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
    }

    /// Everything written to the terminal, as bytes.
    var raw: [UInt8] { output.value.withLock { $0 } }
    /// The same as text, terminal sequences removed.
    var text: String { Self.plain(String(decoding: raw, as: UTF8.self)) }

    static func plain(_ text: String) -> String {
        // "\r\n" is one Character in Swift: replace it whole, then lone carriage returns.
        text.replacing(/\u{1B}\[[0-9;?]*[A-Za-z]/, with: "").replacing("\r\n", with: "\n").replacing("\r", with: "")
    }

    /// Waits until the output contains `needle` after `offset` bytes; false on timeout.
    @discardableResult
    func wait(for needle: String, after offset: Int = 0, timeout: Duration = .seconds(20)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if Self.plain(String(decoding: raw.dropFirst(offset), as: UTF8.self)).contains(needle) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let tail = String(decoding: raw.suffix(400), as: UTF8.self).debugDescription
        let reading = output.ended.withLock { $0 }.map { "ended: \($0)" } ?? "still reading"
        print(
            "mediahost \(pid) did not write \(needle) in \(timeout) (\(raw.count) bytes so far, the terminal \(reading); the last: \(tail)); its stacks:\n\(await stacks(of: pid))"
        )
        return false
    }

    /// Waits for the process to exit; its status, or nil on timeout.
    func exitStatus(timeout: Duration = .seconds(20)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return (status >> 8) & 0xff }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}

@Suite(.serialized) struct TerminalTests {
    static let prompt = "mediahost> "

    /// Quitting with a download under way offers it to the background service, which finishes
    /// it with the REPL gone, byte-identical.
    @Test func quittingTheREPLHandsItsDownloadsToTheService() async throws {
        let (sandbox, base) = try await startSandboxProcess(rate: 2_000_000)
        defer { sandbox.process.terminate() }
        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base]
        let session = try TerminalSession(columns: 100, arguments: [], environment: environment)
        #expect(await session.wait(for: Self.prompt))
        session.type("open podcasts:podcast:1000007919\r")
        #expect(await session.wait(for: "`next` for more"))
        session.type("download 1\r")
        try await Task.sleep(for: .seconds(2))
        session.type("quit\r")
        #expect(await session.wait(for: "keep it going in the background? [Y/n]"), "\(session.text.suffix(400))")
        session.type("\r")
        #expect(await session.wait(for: "going on in the background service"), "\(session.text.suffix(400))")
        #expect(await session.exitStatus() == 0)

        var path: String?
        let deadline = ContinuousClock.now + .seconds(60)
        while path == nil, ContinuousClock.now < deadline {
            let listed = try await runMediahost(["call", "downloads.list"], dataDir: session.dataDir, environment: environment)
            let downloads =
                (try? JSONValue(parsing: listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))?.arrayValue ?? []
            path = downloads.first { $0["state"] == "completed" }?["path"]?.stringValue
            if path == nil { try await Task.sleep(for: .milliseconds(300)) }
        }
        let file = try #require(path, "the service finished the download")
        let media = base + "/media/1000007919/26.mp3"
        var request = HTTPRequest(url: URL(string: media)!)
        request.maxBodySize = 1 << 30
        #expect(FileManager.default.contents(atPath: file) == (try await MediaHTTPClient().send(request).body))
        let stopped = try await runMediahost(["serve", "--stop"], dataDir: session.dataDir)
        #expect(stopped.stdout.contains("stopped the service"), "\(stopped.stdout)")
    }

    /// Playing from the REPL: the "now playing" line above the prompt, the player commands, and
    /// quitting hands the playback to the background service, which keeps following it.
    @Test(.enabled(if: PlayerTests.mpv != nil, "mpv is not installed (`make test` installs it)"))
    func theREPLControlsPlaybackAndHandsItToTheService() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base, "MEDIAHOST_PLAYER": "mpv --ao=null --vo=null"]
        let session = try TerminalSession(columns: 80, arguments: [], environment: environment)
        #expect(await session.wait(for: Self.prompt))
        session.type("open \(PlayerTests.radio)\r")
        #expect(await session.wait(for: "3 in all"))
        session.type("play 2\r")
        #expect(await session.wait(for: "playing the stream in mpv"), "\(session.text.suffix(400))")
        #expect(await session.wait(for: " / 2:00"), "\(session.text.suffix(400))")
        var mark = session.raw.count
        session.type("seek 1:10\r")
        #expect(await session.wait(for: "▶ Tone 2 (120 s) · Forty seconds in  1:1", after: mark), "\(session.text.suffix(400))")
        mark = session.raw.count
        session.type("toggle\r")
        #expect(await session.wait(for: "‖ Tone 2 (120 s) · Forty seconds in  1:1", after: mark), "\(session.text.suffix(400))")
        mark = session.raw.count
        session.type("play 1\r")
        #expect(await session.wait(for: "queued Tone 3 (180 s), the stream", after: mark), "\(session.text.suffix(400))")
        #expect(await session.wait(for: "+1 queued", after: mark))
        mark = session.raw.count
        session.type("seek soon\r")
        #expect(await session.wait(for: "'soon' is not a position", after: mark))
        for line in session.text.components(separatedBy: "\n") { #expect(Renderer.columns(line) <= 80, "\(line)") }

        session.type("quit\r")
        #expect(
            await session.wait(for: "Tone 2 (120 s) is playing: keep it going in the background? [Y/n]"),
            "\(session.text.suffix(400))")
        session.type("\r")
        #expect(await session.wait(for: "going on in the background service"), "\(session.text.suffix(400))")
        #expect(await session.exitStatus() == 0)

        // The service follows the same mpv: its status, its queue; stopping it keeps the place.
        let status = try await runMediahost(["call", "player.status"], dataDir: session.dataDir, environment: environment)
        let value = try JSONValue(parsing: status.stdout)
        #expect(value["state"] == "paused", "\(status.stdout)\(status.stderr)")
        #expect(value["queue"]?.arrayValue?.count == 1)
        let stop = try await runMediahost(["call", "player.stop"], dataDir: session.dataDir, environment: environment)
        #expect(stop.status == 0, "\(stop.stderr)")
        let listed = try await runMediahost(
            ["call", "media.children", #"{"id":"\#(PlayerTests.radio)"}"#], dataDir: session.dataDir, environment: environment)
        let tone2 = try JSONValue(parsing: listed.stdout)["items"]?.arrayValue?.first { $0["title"] == "Tone 2 (120 s)" }
        // Paused at the 1:10 seek: mpv reports the audio frame it stopped on (69.999875 was seen).
        #expect((tone2?["position"]?.doubleValue ?? 0) >= 69.5, "\(String(describing: tone2))")
        let stopped = try await runMediahost(["serve", "--stop"], dataDir: session.dataDir)
        #expect(stopped.stdout.contains("stopped the service"), "\(stopped.stdout)")
    }

    /// With a service running, the REPL works in it: a download started at the REPL is the
    /// service's, an editor on the service sees its progress, and it goes on after the REPL quits.
    @Test func theREPLAttachesToARunningService() async throws {
        let (sandbox, base) = try await startSandboxProcess(rate: 1_500_000)
        defer { sandbox.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base]
        let service = try MediahostProcess(["serve"], dataDir: dataDir, environment: environment)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(dataDir)
        let editor = try MediahostProcess(["rpc"], dataDir: dataDir, environment: environment)
        // Notifications reach a client once it has said something (as an editor's first request).
        editor.sendLine(#"{"jsonrpc":"2.0","id":0,"method":"host.info"}"#)

        let session = try TerminalSession(columns: 100, arguments: [], dataDir: dataDir, environment: environment)
        #expect(await session.wait(for: "attached to the background service"), "\(session.text.suffix(400))")
        session.type("open podcasts:podcast:1000007919\r")
        #expect(await session.wait(for: "`next` for more"))
        session.type("download 1\r")
        #expect(await session.wait(for: "⬇ "), "the REPL draws the service's progress: \(session.text.suffix(400))")
        var heard = false
        let deadline = ContinuousClock.now + .seconds(20)
        while !heard, ContinuousClock.now < deadline, let message = await editor.next(timeout: .seconds(20))?.value {
            heard = message["method"] == "downloads.progress"
        }
        #expect(heard, "the editor sees the download the REPL started")
        session.type("quit\r")
        #expect(await session.wait(for: "go on in the background service"), "\(session.text.suffix(400))")
        #expect(await session.exitStatus() == 0)
        editor.closeInput()

        var completed = false
        let end = ContinuousClock.now + .seconds(60)
        while !completed, ContinuousClock.now < end {
            let list = try await runMediahost(["call", "downloads.list"], dataDir: dataDir, environment: environment)
            completed = list.stdout.contains(#""state":"completed""#)
            if !completed { try await Task.sleep(for: .milliseconds(300)) }
        }
        #expect(completed, "the service finished what the REPL started")
        let stopped = try await runMediahost(["serve", "--stop"], dataDir: dataDir)
        #expect(stopped.stdout.contains("stopped the service"), "\(stopped.stdout)")
    }

    @Test func rowsFitTheTerminalAndFollowAResize() async throws {
        let session = try TerminalSession(columns: 80)
        #expect(await session.wait(for: Self.prompt))
        session.type("browse mastodon swift\r")
        #expect(await session.wait(for: "`next` for more"))
        let rows = session.text.components(separatedBy: "\n").filter { $0.hasPrefix("  1  ") || $0.hasPrefix(" 20  ") }
        #expect(rows.count == 2)
        for row in rows { #expect(Renderer.columns(row) <= 79, "\(row)") }
        // Wide characters count twice: the Japanese post's row is as wide as the others.
        let japanese = session.text.components(separatedBy: "\n").first { $0.contains("日本語") }
        #expect(japanese.map { Renderer.columns($0) } == rows.first.map { Renderer.columns($0) })
        // After a resize the next listing follows the new width.
        session.resize(columns: 60)
        let mark = session.raw.count
        session.type("browse mastodon swift\r")
        #expect(await session.wait(for: "`next` for more", after: mark))
        let narrow = TerminalSession.plain(String(decoding: session.raw.dropFirst(mark), as: UTF8.self))
            .components(separatedBy: "\n").filter { $0.hasPrefix("  1  ") }
        #expect(narrow.count == 1)
        #expect(narrow.allSatisfy { Renderer.columns($0) <= 59 && Renderer.columns($0) > 50 }, "\(narrow)")
        // Every row's date in one column at the new width, with or without what comes before it.
        let rows60 = TerminalSession.plain(String(decoding: session.raw.dropFirst(mark), as: UTF8.self))
            .components(separatedBy: "\n").filter { $0.firstMatch(of: /^ {0,2}\d{1,2}  .*\d{4}-\d\d-\d\d$/) != nil }
        #expect(rows60.count >= 10 && Set(rows60.map { Renderer.columns($0) }).count == 1, "\(rows60)")
        session.type("quit\r")
        #expect(await session.exitStatus() == 0)
    }

    /// `help` fits the default terminal (80x24) whole; `help all`, longer than the screen, goes
    /// through the person's pager (PAGER, here a script keeping what it was given), wrapped to
    /// the terminal at word boundaries.
    /// Keys typed while the REPL starts are not echoed above its banner: they run once the
    /// prompt is there, as bash does.
    @Test func keysTypedWhileItStartsRunAtThePrompt() async throws {
        let session = try TerminalSession(columns: 80, rows: 24)
        // Typed once the REPL has begun (the terminal stops echoing), before the prompt.
        let deadline = ContinuousClock.now + .seconds(20)
        while session.echoes, !session.text.contains(Self.prompt), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        let early = !session.text.contains(Self.prompt)
        session.type("history\r")
        #expect(await session.wait(for: "(no searches yet)"), "\(session.text)")
        let lines = session.text.components(separatedBy: "\n")
        let banner = try #require(lines.firstIndex { $0.hasPrefix("mediahost ") })
        #expect(!lines[..<banner].contains { $0.contains("history") }, "echoed above the banner: \(lines.prefix(5))")
        #expect(lines.contains { $0 == Self.prompt + "history" }, "\(lines)")
        if !early { print("note: the prompt came before the keys could be typed ahead") }
        session.type("quit\r")
        #expect(await session.exitStatus() == 0)
    }

    @Test(arguments: [80, 160])
    func helpFitsTheTerminal(columns: Int) async throws {
        let folder = try makeTemporaryDirectory()
        let paged = folder + "/paged"
        let pager = folder + "/pager.sh"
        try "#!/bin/sh\ncat > '\(paged)'\n".write(toFile: pager, atomically: true, encoding: .utf8)
        chmod(pager, 0o755)
        let session = try TerminalSession(columns: columns, rows: 24, environment: ["PAGER": pager])
        #expect(await session.wait(for: Self.prompt))
        let mark = session.raw.count
        session.type("help\r")
        #expect(await session.wait(for: "man mediahost-repl", after: mark))
        try await Task.sleep(for: .milliseconds(200))
        let lines = TerminalSession.plain(String(decoding: session.raw.dropFirst(mark), as: UTF8.self)).components(
            separatedBy: "\n")
        #expect(lines.count <= 23, "\(lines)")
        for line in lines { #expect(Renderer.columns(line) < columns, "\(line)") }
        #expect(!FileManager.default.fileExists(atPath: paged), "one screen needs no pager")

        let second = session.raw.count
        session.type("help all\r")
        let deadline = ContinuousClock.now + .seconds(30)
        while !((try? String(contentsOfFile: paged, encoding: .utf8))?.contains("config.set") ?? false),
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(100))
        }
        let all = try String(contentsOfFile: paged, encoding: .utf8).components(separatedBy: "\n")
        for line in all { #expect(Renderer.columns(line) < columns, "\(line)") }
        for spec in CommandSpec.all { #expect(all.contains { $0.hasPrefix("  " + spec.usage) }, "\(spec.name)") }
        // Wrapped at word boundaries: no line ends inside a word of the summaries.
        let specs: [CommandSpec] = CommandSpec.all.flatMap { [$0] + $0.subcommands }
        let summaries: [String] = specs.map { $0.summary + " (also" }
        let words = Set(summaries.flatMap { $0.split(separator: " ").map(String.init) })
        for line in all where line.hasPrefix("      ") {
            let last = line.split(separator: " ").last.map(String.init) ?? ""
            #expect(words.contains(last) || last.hasSuffix(")") || last.contains("."), "\(line)")
        }
        #expect(await session.wait(for: Self.prompt, after: second))
        session.type("quit\r")
        #expect(await session.exitStatus() == 0)
    }

    /// Data is printed as it is, however narrow the terminal: `call`'s JSON keeps every value
    /// whole (a "…" in a path would change what a person copies), as does `--json`.
    @Test func dataIsNeverShortenedToFit() async throws {
        let session = try TerminalSession(columns: 40)
        #expect(await session.wait(for: Self.prompt))
        session.type("call host.info\r")
        #expect(await session.wait(for: "mediahost.sqlite"))
        let database = session.dataDir + "/mediahost.sqlite"
        #expect(session.text.replacingOccurrences(of: "\n", with: "").contains(database), "\(session.text.suffix(600))")
        #expect(!session.text.contains("…"), "\(session.text.suffix(600))")
        session.type("quit\r")
        #expect(await session.exitStatus() == 0)
    }

    @Test func ctrlCAtThePromptDropsTheLine() async throws {
        let session = try TerminalSession(columns: 80)
        #expect(await session.wait(for: Self.prompt))
        session.type("frobnicate")
        try await Task.sleep(for: .milliseconds(300))
        session.type("\u{03}")
        #expect(await session.wait(for: "frobnicate^C"))
        try await Task.sleep(for: .milliseconds(300))
        session.type("\r")
        session.type("providers\r")
        #expect(await session.wait(for: "podcasts"))
        #expect(!session.text.contains("unknown command 'frobnicate'"), "the dropped line did not run")
        session.type("\u{04}")
        #expect(await session.exitStatus() == 0)
    }

    /// Ctrl-C while a command waits cancels it: "^C" where the terminal echoed it, then
    /// "cancelled" on a line of its own, no error label, and the prompt back.
    @Test func ctrlCDuringACommandCancelsItOnALineOfItsOwn() async throws {
        let server = try HostileServer { _, connection in connection.hold(limit: 60) }
        defer { server.stop() }
        let session = try TerminalSession(
            columns: 80, arguments: ["--no-service"], environment: ["MEDIAHOST_PODCASTS_BASE_URL": server.baseURL])
        #expect(await session.wait(for: Self.prompt))
        session.type("search podcasts kitchen\r")
        let deadline = ContinuousClock.now + .seconds(20)
        while server.requests.withLock({ $0.isEmpty }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let mark = session.raw.count
        session.type("\u{03}")
        #expect(await session.wait(for: "cancelled", after: mark))
        #expect(await session.wait(for: Self.prompt, after: mark))
        let lines = Self.plainLines(session, after: mark)
        #expect(lines.contains("cancelled"), "\(lines)")
        #expect(!lines.contains { $0.contains("error") }, "\(lines)")
        session.type("quit\r")
        #expect(await session.exitStatus() == 0)
    }

    @Test func ctrlDSaysWhatBecomesOfRunningDownloads() async throws {
        let session = try TerminalSession(columns: 100)
        #expect(await session.wait(for: Self.prompt))
        session.type("browse podcasts Comedy\r")
        #expect(await session.wait(for: "`next` for more"))
        session.type("open 1\r")
        #expect(await session.wait(for: "episode"))
        session.type("download 1\r")
        // The start says the download's state: queued, or already running when its worker took it
        // before the answer was made (on a busy machine, either).
        let said = { ["queued: Episode", "running: Episode"].contains { session.text.contains($0) } }
        let deadline = ContinuousClock.now + .seconds(20)
        while !said(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(said(), "\(session.text.split(separator: "\n").filter { $0.contains("Episode 45") && !$0.contains("⬇") })")
        try await Task.sleep(for: .milliseconds(500))
        session.type("\u{04}")
        #expect(await session.wait(for: "1 download is not finished: it stops now, keeping what it has"))
        #expect(await session.exitStatus() == 0)
    }

    /// One action, one line: pausing or cancelling a download at this prompt is said by the
    /// command, not again by its notification; `remove` names the episode, not its id.
    @Test func oneActionOneLine() async throws {
        let session = try TerminalSession(columns: 100)
        #expect(await session.wait(for: Self.prompt))
        session.type("open podcasts:podcast:1000007919\r")
        #expect(await session.wait(for: "`next` for more"))
        session.type("download 1\r")
        #expect(await session.wait(for: "⬇ "))
        var mark = session.raw.count
        session.type("pause 1\r")
        #expect(await session.wait(for: "paused", after: mark))
        try await Task.sleep(for: .milliseconds(500))
        let pausing = Self.plainLines(session, after: mark).filter { $0.contains("paused") }
        #expect(pausing.count == 1, "\(pausing)")
        mark = session.raw.count
        session.type("cancel 1\r")
        #expect(await session.wait(for: "cancelled", after: mark))
        try await Task.sleep(for: .milliseconds(500))
        let cancelling = Self.plainLines(session, after: mark).filter { $0.contains("cancelled") }
        #expect(cancelling.count == 1, "\(cancelling)")
        mark = session.raw.count
        session.type("remove 1\r")
        #expect(await session.wait(for: "removed the download of Episode 26", after: mark), "\(session.text.suffix(300))")
        #expect(!Self.plainLines(session, after: mark).contains { $0.contains("podcasts:episode:") })
        session.type("quit\r")
        #expect(await session.exitStatus() == 0)
    }

    /// The lines written after `offset`, without terminal sequences, each as last drawn.
    static func plainLines(_ session: TerminalSession, after offset: Int) -> [String] {
        TerminalSession.plain(String(decoding: session.raw.dropFirst(offset), as: UTF8.self))
            .components(separatedBy: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    @Test func redirectedOutputHoldsOnlyText() async throws {
        let file = try makeTemporaryDirectory() + "/out.txt"
        let session = try TerminalSession(columns: 80, stdoutFile: file)
        #expect(await session.wait(for: Self.prompt))
        session.type("providers\r")
        try await Task.sleep(for: .seconds(1))
        session.type("quit\r")
        #expect(await session.exitStatus() == 0)
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(written.contains("podcasts"))
        #expect(!written.contains("\u{1B}"), "\(written.debugDescription)")
        #expect(!written.contains(Self.prompt))
    }
}
