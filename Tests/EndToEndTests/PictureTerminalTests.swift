import Basics
import Foundation
import JSONRPC
import Sandbox
import Synchronization
import TestSupport
import Testing

/// A virtual screen (Xvfb) with a real terminal emulator on it running `mediahost` through a
/// pseudo-terminal (Tests/Tools/pty-relay.py): the terminal answers mediahost's queries, a test
/// types through a FIFO and reads back what the screen shows from a screenshot.
final class XScreen: @unchecked Sendable {
    let display: String
    let dataDir: String
    private let fifo: String
    let log: String
    private var processes: [ChildProcess] = []

    static func tool(_ name: String) -> String? {
        ["/usr/bin/", "/usr/local/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static var available: Bool { ["Xvfb", "xterm", "import", "convert"].allSatisfy { tool($0) != nil } }

    init() async throws {
        dataDir = try makeTemporaryDirectory()
        fifo = dataDir + "/keys"
        log = dataDir + "/written"
        try #require(mkfifo(fifo, 0o600) == 0)
        // A display no other X server holds.
        var number = 90 + Int(getpid() % 100)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)") { number += 1 }
        display = ":\(number)"
        try start(try #require(Self.tool("Xvfb")), [display, "-screen", "0", "1280x900x24", "-nolisten", "tcp"])
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        try #require(FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(number)"), "Xvfb did not start")
    }

    deinit {
        for process in processes.reversed() where process.isRunning { process.terminate() }
    }

    /// Starts a program on this screen, its environment naming the test run (so it ends with it).
    func start(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) throws {
        var environment = [
            "DISPLAY": display, "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": dataDir, "LANG": "C.UTF-8",
            "MEDIAHOST_TEST_ROOT": TestRun.root, "MEDIAHOST_DATA_DIR": dataDir, "XDG_CONFIG_HOME": dataDir + "/config",
            "XDG_CACHE_HOME": dataDir + "/cache",
        ]
        for (key, value) in extra { environment[key] = value }
        processes.append(
            try ChildProcess(
                executable, arguments: arguments, environment: environment, standardOutput: .null, standardError: .null))
    }

    /// The command line that runs `mediahost` under the relay, for a terminal's `-e`.
    func relayed(_ arguments: [String]) -> [String] {
        let relay = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/pty-relay.py").path
        return ["python3", relay, fifo, log, mediahostBinary()] + sandboxInDataDir(arguments, dataDir)
    }

    /// What mediahost wrote so far.
    var written: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Types `line` and Enter into mediahost.
    func type(_ line: String) throws {
        let handle = try #require(FileHandle(forWritingAtPath: fifo))
        handle.write(Data((line + "\r").utf8))
        try handle.close()
    }

    /// Waits until what mediahost wrote contains `text` `count` times.
    func wait(for text: String, count: Int = 1, timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if written.components(separatedBy: text).count > count { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// How many pixels of each colour the screen shows in `region` (x, y, width, height).
    func colours(in region: (x: Int, y: Int, width: Int, height: Int)) async throws -> [(r: Int, g: Int, b: Int, count: Int)] {
        let shot = dataDir + "/shot-\(UUID().uuidString.prefix(6)).png"
        let taken = await runProgram(try #require(Self.tool("import")), ["-display", display, "-window", "root", shot])
        try #require(taken.status == 0, "no screenshot")
        let histogram = await runProgram(
            try #require(Self.tool("convert")),
            [
                shot, "-crop", "\(region.width)x\(region.height)+\(region.x)+\(region.y)", "+repage", "-format", "%c",
                "histogram:info:-",
            ])
        return String(decoding: histogram.output, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard let match = line.firstMatch(of: /\s*(\d+):\s*\(\s*(\d+),\s*(\d+),\s*(\d+)/), let count = Int(match.1),
                let r = Int(match.2), let g = Int(match.3), let b = Int(match.4)
            else { return nil }
            return (r, g, b, count)
        }
    }

    /// Saves the screen's `region` as a PNG at `path` (the README's screenshot is made so).
    func save(_ region: (x: Int, y: Int, width: Int, height: Int), to path: String) async throws {
        let shot = dataDir + "/save.png"
        _ = await runProgram(try #require(Self.tool("import")), ["-display", display, "-window", "root", shot])
        let cropped = await runProgram(
            try #require(Self.tool("convert")),
            [shot, "-crop", "\(region.width)x\(region.height)+\(region.x)+\(region.y)", "+repage", "-strip", path])
        try #require(cropped.status == 0)
    }

    /// The pixels near `colour` in `colours`.
    static func count(_ colours: [(r: Int, g: Int, b: Int, count: Int)], near colour: (r: UInt8, g: UInt8, b: UInt8)) -> Int {
        colours.filter { abs($0.r - Int(colour.r)) < 40 && abs($0.g - Int(colour.g)) < 40 && abs($0.b - Int(colour.b)) < 40 }
            .reduce(0) { $0 + $1.count }
    }
}

/// Pictures drawn through each protocol into a real terminal and read back from the screen.
@Suite(.serialized) struct PictureTerminalTests {
    /// The first YouTube result for "swift" in the sandbox, and its picture's four colours.
    static func firstResult() async throws -> (id: String, colours: [(r: UInt8, g: UInt8, b: UInt8)]) {
        let result = try await runMediahost(
            ["--sandbox", "--no-service", "call", "media.search", #"{"provider":"youtube","query":"swift"}"#],
            dataDir: try makeTemporaryDirectory())
        let first = try #require(try JSONValue(parsing: result.stdout)["items"]?.arrayValue?.first)
        let artwork = try #require(first["artwork"]?.stringValue.flatMap(URL.init(string:)))
        return (try #require(first["id"]?.stringValue), SandboxPicture.colours(for: artwork.path.lowercased()))
    }

    /// `show` in the terminal: the picture's four colours on the left, the details' text on the right.
    func expectPictureBesideText(_ screen: XScreen, colours: [(r: UInt8, g: UInt8, b: UInt8)], what: String) async throws {
        var found: [Int] = []
        let deadline = ContinuousClock.now + .seconds(30)
        repeat {
            try await Task.sleep(for: .milliseconds(500))
            let left = try await screen.colours(in: (0, 0, 420, 900))
            found = colours.map { XScreen.count(left, near: $0) }
        } while found.contains(where: { $0 < 400 }) && ContinuousClock.now < deadline
        #expect(!found.contains { $0 < 400 }, "\(what): the picture's colours on screen: \(found)")
        // The text beside it is there: dark glyphs on the terminal's light background, right of it.
        let right = try await screen.colours(in: (440, 0, 800, 300))
        let ink = right.filter { $0.r + $0.g + $0.b < 200 }.reduce(0) { $0 + $1.count }
        #expect(ink > 500, "\(what): the details' text beside the picture (\(ink) dark pixels)")
    }

    @Test func sixelsInXterm() async throws {
        try #require(XScreen.available, "make test installs Xvfb, xterm and ImageMagick")
        let (_, colours) = try await Self.firstResult()
        let screen = try await XScreen()
        try screen.start(
            try #require(XScreen.tool("xterm")),
            [
                "-ti", "vt340", "-xrm", "XTerm*decTerminalID: vt340", "-xrm", "XTerm*numColorRegisters: 256", "-geometry",
                "140x45+0+0", "-bg", "white", "-fg", "black", "-e",
            ] + screen.relayed(["--sandbox", "--no-service"]))
        #expect(await screen.wait(for: "mediahost>"), "no prompt: \(screen.written.suffix(500))")
        try screen.type("search youtube swift")
        #expect(await screen.wait(for: "mediahost>", count: 2))
        try screen.type("show 1")
        // The picture is drawn as sixels (DCS … q), into the room left beside the details.
        #expect(await screen.wait(for: "\u{1B}P"), "no sixels: \(screen.written.suffix(300))")
        try await expectPictureBesideText(screen, colours: colours, what: "xterm sixels")
        // `make screenshots` keeps what the screen shows for the README.
        if let folder = ProcessInfo.processInfo.environment["MEDIAHOST_SCREENSHOTS"] {
            try await screen.save((0, 0, 846, 590), to: folder + "/show-in-xterm.png")
        }
    }

    /// kitty draws with OpenGL: Mesa's software renderer on the virtual screen.
    @Test func kittyGraphicsInKitty() async throws {
        try #require(XScreen.available, "make test installs Xvfb, xterm and ImageMagick")
        let kitty = try #require(XScreen.tool("kitty"), "make test installs kitty")
        let (_, colours) = try await Self.firstResult()
        let screen = try await XScreen()
        try screen.start(
            kitty,
            [
                "--config", "NONE", "-o", "background=#ffffff", "-o", "foreground=#000000", "-o", "initial_window_width=1200",
                "-o", "initial_window_height=800", "-o", "remember_window_size=no",
            ] + screen.relayed(["--sandbox", "--no-service"]),
            environment: ["LIBGL_ALWAYS_SOFTWARE": "1", "TERM": "xterm-kitty"])
        #expect(await screen.wait(for: "mediahost>"), "no prompt: \(screen.written.suffix(500))")
        try screen.type("search youtube swift")
        #expect(await screen.wait(for: "mediahost>", count: 2))
        try screen.type("show 1")
        // The picture goes as kitty graphics (APC G … a=T), answered by kitty's own query first.
        #expect(await screen.wait(for: "\u{1B}_Ga=T"), "no kitty graphics: \(screen.written.suffix(300))")
        try await expectPictureBesideText(screen, colours: colours, what: "kitty")
    }

    /// At every terminal's default size (80x24) and a narrow one (60x32), in xterm (sixels)
    /// and kitty: `show` draws its picture, scaled to the room the details leave.
    @Test(arguments: [("xterm", 80, 24), ("xterm", 60, 32), ("kitty", 80, 24), ("kitty", 60, 32)])
    func aPictureAtTheUsualSizes(terminal: String, columns: Int, rows: Int) async throws {
        try #require(XScreen.available, "make test installs Xvfb, xterm and ImageMagick")
        let (_, colours) = try await Self.firstResult()
        let screen = try await XScreen()
        if terminal == "xterm" {
            try screen.start(
                try #require(XScreen.tool("xterm")),
                [
                    "-ti", "vt340", "-xrm", "XTerm*decTerminalID: vt340", "-xrm", "XTerm*numColorRegisters: 256",
                    "-geometry", "\(columns)x\(rows)+0+0", "-bg", "white", "-fg", "black", "-e",
                ] + screen.relayed(["--sandbox", "--no-service"]))
        } else {
            try screen.start(
                try #require(XScreen.tool("kitty"), "make test installs kitty"),
                [
                    "--config", "NONE", "-o", "background=#ffffff", "-o", "foreground=#000000",
                    "-o", "initial_window_width=\(columns)c", "-o", "initial_window_height=\(rows)c",
                    "-o", "remember_window_size=no",
                ] + screen.relayed(["--sandbox", "--no-service"]),
                environment: ["LIBGL_ALWAYS_SOFTWARE": "1", "TERM": "xterm-kitty"])
        }
        #expect(await screen.wait(for: "mediahost>"), "no prompt: \(screen.written.suffix(500))")
        try screen.type("search youtube swift")
        #expect(await screen.wait(for: "mediahost>", count: 2))
        try screen.type("show 1")
        #expect(
            await screen.wait(for: terminal == "xterm" ? "\u{1B}P" : "\u{1B}_Ga=T"),
            "no picture sent: \(screen.written.suffix(300))")
        var found: [Int] = []
        let deadline = ContinuousClock.now + .seconds(30)
        repeat {
            try await Task.sleep(for: .milliseconds(500))
            let window = try await screen.colours(in: (0, 0, 1280, 900))
            found = colours.map { XScreen.count(window, near: $0) }
        } while found.contains(where: { $0 < 150 }) && ContinuousClock.now < deadline
        #expect(!found.contains { $0 < 150 }, "\(terminal) at \(columns)x\(rows): the picture's colours on screen: \(found)")
        if let folder = ProcessInfo.processInfo.environment["MEDIAHOST_SCREENSHOTS"] {
            try await screen.save((0, 0, 1280, 900), to: folder + "/show-\(terminal)-\(columns)x\(rows).png")
        }
    }

    /// Inside tmux with allow-passthrough on, sixels pass through to xterm.
    @Test func sixelsThroughTmuxInXterm() async throws {
        try #require(XScreen.available, "make test installs Xvfb, xterm and ImageMagick")
        let tmux = try #require(TmuxScreen.tmux, "make test installs tmux")
        let (_, colours) = try await Self.firstResult()
        let screen = try await XScreen()
        let conf = screen.dataDir + "/tmux.conf"
        try "set -g allow-passthrough on\nset -g status off\n".write(toFile: conf, atomically: true, encoding: .utf8)
        let socket = screen.dataDir + "/tmux.socket"
        try screen.start(
            try #require(XScreen.tool("xterm")),
            [
                "-ti", "vt340", "-xrm", "XTerm*decTerminalID: vt340", "-xrm", "XTerm*numColorRegisters: 256", "-geometry",
                "140x45+0+0", "-bg", "white", "-fg", "black", "-e", tmux, "-S", socket, "-f", conf, "new-session",
            ] + screen.relayed(["--sandbox", "--no-service"]))
        #expect(await screen.wait(for: "mediahost>"), "no prompt: \(screen.written.suffix(500))")
        try screen.type("search youtube swift")
        #expect(await screen.wait(for: "mediahost>", count: 2))
        try screen.type("show 1")
        #expect(await screen.wait(for: "\u{1B}Ptmux;"), "no passthrough: \(screen.written.suffix(300))")
        try await expectPictureBesideText(screen, colours: colours, what: "tmux in xterm")
        _ = await runProgram(tmux, ["-S", socket, "kill-server"])
    }

    /// Where the terminal draws no pictures but colours (tmux without passthrough), blocks in
    /// 24-bit colour: read from tmux's screen, cell by cell.
    @Test func blocksInTmux() async throws {
        let (_, colours) = try await Self.firstResult()
        let screen = try await TmuxScreen(
            columns: 120, rows: 45, arguments: ["--sandbox", "--no-service"],
            environment: ["NO_COLOR": "", "COLORTERM": "truecolor", "TERM": "tmux-256color"])
        #expect(await screen.run("search youtube swift"))
        #expect(await screen.run("show 1"))
        var drawn: [Bool] = []
        let deadline = ContinuousClock.now + .seconds(30)
        repeat {
            try await Task.sleep(for: .milliseconds(300))
            let cells = await screen.tmux(["capture-pane", "-p", "-e", "-t", "0"])
            let used = cells.matches(of: /\x1B\[(?:38|48);2;(\d+);(\d+);(\d+)m/).compactMap { m -> (Int, Int, Int)? in
                guard let r = Int(m.1), let g = Int(m.2), let b = Int(m.3) else { return nil }
                return (r, g, b)
            }
            // tmux writes a run of cells in one colour once: each quadrant is a run on each of its rows.
            drawn = colours.map { c in
                used.filter { abs($0.0 - Int(c.r)) < 40 && abs($0.1 - Int(c.g)) < 40 && abs($0.2 - Int(c.b)) < 40 }.count >= 3
            }
        } while drawn.contains(false) && ContinuousClock.now < deadline
        #expect(!drawn.contains(false), "the picture's colours in tmux's cells: \(drawn)")
        // The details are beside it, whole.
        let lines = await screen.lines()
        #expect(lines.contains { $0.contains("kind") && $0.contains("video") })

        // A listing's thumbnails, each labelled with its own row's number: a full page is 20
        // rows, in lines of as many as fit, so the last line's labels are the last rows'.
        #expect(await screen.run("search youtube swift --pictures"))
        let labels = await screen.lines().suffix(30).flatMap { line in
            line.split(separator: " ").compactMap { Int($0) }
        }
        #expect(labels.contains(20) && labels.contains(13), "thumbnails' labels: \(labels)")

        // `config repl.images off` at the prompt applies at once: `show` draws no picture now.
        #expect(await screen.run("config repl.images off"))
        _ = await screen.tmux(["send-keys", "-R", "-t", "0"])
        _ = await screen.tmux(["clear-history", "-t", "0"])
        #expect(await screen.run("show 1"))
        try await Task.sleep(for: .seconds(2))
        let after = await screen.tmux(["capture-pane", "-p", "-e", "-t", "0"])
        #expect(after.contains("kind") && !after.contains("48;2;"), "a picture after repl.images off: \(after.suffix(300))")
    }
}
