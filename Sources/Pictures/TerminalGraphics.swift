import Basics
import CPictures
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// How a terminal draws pictures.
public enum GraphicsMode: String, Sendable, CaseIterable {
    /// The kitty graphics protocol (kitty, Ghostty, WezTerm, Konsole).
    case kitty
    /// DEC sixels (xterm -ti vt340, foot, WezTerm, mlterm, Windows Terminal, VS Code).
    case sixel
    /// iTerm2's inline images (iTerm2, WezTerm, mintty).
    case iterm
    /// Unicode blocks in colour, where a terminal draws no pictures.
    case blocks

    var code: Int32 {
        switch self {
        case .kitty: Int32(MH_PICTURE_KITTY)
        case .sixel: Int32(MH_PICTURE_SIXELS)
        case .iterm: Int32(MH_PICTURE_ITERM)
        case .blocks: Int32(MH_PICTURE_BLOCKS)
        }
    }
}

/// The colours a terminal shows (for pictures in blocks).
public enum TerminalColors: String, Sendable {
    case truecolor, palette256, palette16

    var code: Int32 {
        switch self {
        case .truecolor: Int32(MH_COLORS_TRUE)
        case .palette256: Int32(MH_COLORS_256)
        case .palette16: Int32(MH_COLORS_16)
        }
    }
}

/// The `repl.images` setting: find out, a protocol named, or none.
public enum PictureSetting: String, Sendable, CaseIterable {
    case auto, kitty, sixel, iterm, blocks, off
}

/// What the terminal on a person's screen draws pictures with, found by asking it (the kitty
/// graphics query, XTVERSION, device attributes for sixel, the cell size), not from `TERM` alone.
public struct TerminalGraphics: Sendable, Equatable {
    public var mode: GraphicsMode
    public var colors: TerminalColors
    public var cell: CellSize
    /// Inside tmux with `allow-passthrough` on: pictures pass through to the terminal around it.
    public var passthrough: Bool
    /// How it was decided, for the debug log and `doctor`.
    public var reason: String

    public init(mode: GraphicsMode, colors: TerminalColors, cell: CellSize, passthrough: Bool = false, reason: String = "") {
        self.mode = mode
        self.colors = colors
        self.cell = cell
        self.passthrough = passthrough
        self.reason = reason
    }

    /// The terminal's answers to the queries `detect` sends, read.
    public struct Answers: Sendable, Equatable {
        public var kitty = false
        public var sixel = false
        /// XTVERSION's name, e.g. "XTerm(379)", "kitty(0.26.5)", "tmux 3.3a".
        public var version: String?
        public var cell: CellSize?
        /// The primary device attributes arrived (the queries' end).
        public var complete = false

        public init() {}

        /// Reads whatever answers `text` holds.
        public init(parsing text: String) {
            let bytes = Array(text.utf8)
            if text.contains("\u{1B}_Gi=31;OK") { kitty = true }
            if let start = text.firstRange(of: "\u{1B}P>|"), let end = text[start.upperBound...].firstRange(of: "\u{1B}\\") {
                version = String(text[start.upperBound..<end.lowerBound])
            }
            // CSI 6 ; height ; width t: the cell size in pixels.
            if let match = text.firstMatch(of: /\x1B\[6;(\d+);(\d+)t/), let h = Int(match.1), let w = Int(match.2), h > 0,
                w > 0
            {
                cell = CellSize(width: w, height: h)
            }
            // CSI ? 6x ; … c: primary device attributes; 4 among them is sixel.
            for match in text.matches(of: /\x1B\[\?([0-9;]*)c/) {
                complete = true
                if match.1.split(separator: ";").contains("4") { sixel = true }
            }
            _ = bytes
        }
    }

    /// Decides from the answers, the environment and the setting.
    public static func decide(
        setting: PictureSetting, answers: Answers, environment: [String: String], cell: CellSize?, inTmux: Bool,
        passthrough: Bool
    ) -> TerminalGraphics? {
        let colorTerm = environment["COLORTERM"]?.lowercased() ?? ""
        let term = environment["TERM"] ?? ""
        let colors: TerminalColors =
            colorTerm == "truecolor" || colorTerm == "24bit" ? .truecolor : term.contains("256") ? .palette256 : .palette16
        let size = cell ?? answers.cell ?? .usual
        func made(_ mode: GraphicsMode, _ reason: String) -> TerminalGraphics {
            // Inside tmux without passthrough only blocks reach the screen.
            if inTmux, !passthrough, mode != .blocks {
                return TerminalGraphics(
                    mode: .blocks, colors: colors, cell: size,
                    reason: reason + "; inside tmux without allow-passthrough: blocks (`tmux set -g allow-passthrough on`)")
            }
            return TerminalGraphics(
                mode: mode, colors: colors, cell: size, passthrough: inTmux && mode != .blocks, reason: reason)
        }
        switch setting {
        case .off: return nil
        case .kitty: return made(.kitty, "repl.images is kitty")
        case .sixel: return made(.sixel, "repl.images is sixel")
        case .iterm: return made(.iterm, "repl.images is iterm")
        case .blocks: return made(.blocks, "repl.images is blocks")
        case .auto: break
        }
        if term == "dumb" || !(environment["NO_COLOR"] ?? "").isEmpty { return nil }
        let version = answers.version?.lowercased() ?? ""
        let program = (environment["TERM_PROGRAM"] ?? "").lowercased()
        if answers.kitty { return made(.kitty, "the terminal answered the kitty graphics query") }
        if version.hasPrefix("iterm2") || version.hasPrefix("mintty") {
            return made(.iterm, "the terminal is \(answers.version ?? "")")
        }
        if answers.sixel { return made(.sixel, "the terminal's device attributes include sixel") }
        if !answers.complete {
            // A terminal that did not answer: what the environment says.
            if term == "xterm-kitty" || environment["KITTY_WINDOW_ID"] != nil {
                return made(.kitty, "TERM is xterm-kitty")
            }
            if program == "iterm.app" || environment["LC_TERMINAL"] == "iTerm2" {
                return made(.iterm, "TERM_PROGRAM is iTerm.app")
            }
            if program == "wezterm" { return made(.kitty, "TERM_PROGRAM is WezTerm") }
        }
        return made(.blocks, answers.complete ? "the terminal draws no pictures: blocks" : "the terminal did not answer: blocks")
    }

    /// Asks the terminal on `input`/`output` (both terminals) and decides; nil when pictures are
    /// not drawn (not a terminal, `NO_COLOR`, `TERM=dumb`, the setting off).
    /// - Parameter typed: given what the person typed while the terminal was asked (keys
    ///   between its answers), so a front end can keep it as typed-ahead input.
    public static func detect(
        setting: PictureSetting, environment: [String: String] = ProcessInfo.processInfo.environment, input: Int32 = 0,
        output: Int32 = 1, timeout: Duration = .milliseconds(600), typed: ([UInt8]) -> Void = { _ in }
    ) -> TerminalGraphics? {
        guard setting != .off, isatty(input) == 1, isatty(output) == 1 else { return nil }
        // Opted out: the terminal is not even asked (its answers would be for nothing).
        if setting == .auto, environment["TERM"] == "dumb" || !(environment["NO_COLOR"] ?? "").isEmpty { return nil }
        let inTmux = environment["TMUX"] != nil
        let passthrough = inTmux && tmuxAllowsPassthrough()
        let cell = windowCell(output)
        var answers = Answers()
        if setting == .auto, !inTmux || passthrough {
            // Each query passes through tmux to the terminal around it (tmux answers none of them).
            let queries = [
                "\u{1B}_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\u{1B}\\", "\u{1B}[16t", "\u{1B}[>0q", "\u{1B}[c",
            ]
            let text = queries.map { passthrough ? tmuxWrapped($0) : $0 }.joined()
            let (said, keys) = splitAnswers(ask(text, input: input, output: output, timeout: timeout))
            answers = Answers(parsing: said)
            if !keys.isEmpty { typed(keys) }
        }
        return decide(
            setting: setting, answers: answers, environment: environment, cell: cell, inTmux: inTmux,
            passthrough: passthrough)
    }

    /// The cell size from the window size in pixels, when the terminal reports it (xterm's
    /// includes its border: the division drops it).
    public static func windowCell(_ fd: Int32) -> CellSize? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0, size.ws_xpixel > 0,
            size.ws_ypixel > 0
        else { return nil }
        let cell = CellSize(width: Int(size.ws_xpixel) / Int(size.ws_col), height: Int(size.ws_ypixel) / Int(size.ws_row))
        return cell.width > 0 && cell.height > 0 ? cell : nil
    }

    /// The terminal's answers (escape sequences: CSI, DCS, APC, OSC) apart from what was typed
    /// between them.
    public static func splitAnswers(_ bytes: [UInt8]) -> (answers: String, typed: [UInt8]) {
        var answers: [UInt8] = []
        var typed: [UInt8] = []
        var index = 0
        while index < bytes.count {
            guard bytes[index] == 0x1B, index + 1 < bytes.count else {
                typed.append(bytes[index])
                index += 1
                continue
            }
            var end = index + 2
            switch bytes[index + 1] {
            case UInt8(ascii: "["):
                // Parameters and intermediates, then a final byte in 0x40-0x7E.
                while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) { end += 1 }
                end = min(end + 1, bytes.count)
            case UInt8(ascii: "P"), UInt8(ascii: "_"), UInt8(ascii: "]"):
                // A string, to ST (ESC \) or, for OSC, BEL.
                while end < bytes.count,
                    !(bytes[end] == 0x07 || (bytes[end] == 0x1B && end + 1 < bytes.count && bytes[end + 1] == 0x5C))
                {
                    end += 1
                }
                end = min(end + (end < bytes.count && bytes[end] == 0x1B ? 2 : 1), bytes.count)
            default:
                // A key with Alt, or an escape alone: typed.
                typed.append(bytes[index])
                index += 1
                continue
            }
            answers += bytes[index..<end]
            index = end
        }
        return (String(decoding: answers, as: UTF8.self), typed)
    }

    /// Writes `query`, and reads the answers until the device attributes arrive or `timeout`.
    static func ask(_ query: String, input: Int32, output: Int32, timeout: Duration) -> [UInt8] {
        var saved = termios()
        guard tcgetattr(input, &saved) == 0 else { return [] }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(input, TCSANOW, &raw) == 0 else { return [] }
        defer { tcsetattr(input, TCSANOW, &saved) }
        let bytes = Array(query.utf8)
        guard bytes.withUnsafeBytes({ write(output, $0.baseAddress, $0.count) }) == bytes.count else { return [] }
        var answer: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 1024)
        while ContinuousClock.now < deadline, answer.count < 65536 {
            var poller = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
            let left = deadline - ContinuousClock.now
            let milliseconds = Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000))
            guard poll(&poller, 1, milliseconds) > 0 else { break }
            let count = read(input, &buffer, buffer.count)
            guard count > 0 else { break }
            answer += buffer[0..<count]
            if Answers(parsing: String(decoding: answer, as: UTF8.self)).complete { break }
        }
        return answer
    }

    /// Whether tmux passes escape sequences through to the terminal around it.
    static func tmuxAllowsPassthrough() -> Bool {
        guard
            let process = try? ChildProcess(
                "/usr/bin/env", arguments: ["tmux", "show", "-gv", "allow-passthrough"], standardOutput: .pipe,
                standardError: .null),
            let output = process.standardOutput
        else { return false }
        let data = readToEnd(output)
        close(output)
        process.waitUntilExit()
        let value = String(decoding: data, as: UTF8.self).trimming(.whitespacesAndNewlines)
        return value == "on" || value == "all"
    }

    /// `text` for tmux to pass through as it is: in its DCS, every escape doubled.
    public static func tmuxWrapped(_ text: String) -> String {
        "\u{1B}Ptmux;" + text.replacing("\u{1B}", with: "\u{1B}\u{1B}") + "\u{1B}\\"
    }

    /// The text that draws `drawing` with its top-left `rowsUp` rows above the cursor's line at
    /// `column` (1-based), and leaves the cursor where it was: pictures go into room left for
    /// them in the text, whatever the cursor does after a protocol's picture.
    public func place(_ drawing: Drawing, rowsUp: Int, column: Int) -> String {
        var out = "\u{1B}7"
        if rowsUp > 0 { out += "\u{1B}[\(rowsUp)A" }
        out += column > 1 ? "\u{1B}[\(column)G" : "\r"
        switch drawing.mode {
        case .blocks:
            // Rows of characters: each below the last, at the same column, without scrolling.
            let next = "\u{1B}[1B" + (column > 1 ? "\u{1B}[\(column)G" : "\r")
            out +=
                drawing.text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
                .joined(separator: next) + "\u{1B}[0m"
        case .kitty, .sixel, .iterm:
            out += passthrough ? Self.tmuxWrapped(drawing.text) : drawing.text
        }
        return out + "\u{1B}8"
    }
}
