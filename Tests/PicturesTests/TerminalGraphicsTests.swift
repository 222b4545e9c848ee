import Pictures
import Testing

/// How the protocol is chosen from what real terminals answered (recorded under Xvfb: xterm 379
/// as vt340, kitty 0.26.5, tmux 3.3a) and from the environment.
@Suite struct TerminalGraphicsTests {
    static let xterm = "\u{1B}[6;13;6t\u{1B}P>|XTerm(379)\u{1B}\\\u{1B}[?63;1;2;4;6;9;15;16;22;28c"
    static let plainXterm = "\u{1B}P>|XTerm(379)\u{1B}\\\u{1B}[?64;1;2;6;9;15;16;17;18;21;22;28c"
    static let kitty = "\u{1B}_Gi=31;OK\u{1B}\\\u{1B}[6;18;9t\u{1B}P>|kitty(0.26.5)\u{1B}\\\u{1B}[?62;c"
    static let tmux = "\u{1B}P>|tmux 3.3a\u{1B}\\\u{1B}[?1;2c"

    static func decide(
        _ answers: String, _ environment: [String: String] = ["TERM": "xterm-256color"], setting: PictureSetting = .auto,
        inTmux: Bool = false, passthrough: Bool = false
    ) -> TerminalGraphics? {
        TerminalGraphics.decide(
            setting: setting, answers: .init(parsing: answers), environment: environment, cell: nil, inTmux: inTmux,
            passthrough: passthrough)
    }

    @Test func theTerminalsOwnAnswersChoose() {
        #expect(Self.decide(Self.xterm)?.mode == .sixel)
        #expect(Self.decide(Self.xterm)?.cell == CellSize(width: 6, height: 13))
        #expect(Self.decide(Self.plainXterm)?.mode == .blocks)
        #expect(Self.decide(Self.kitty)?.mode == .kitty)
        #expect(Self.decide(Self.kitty)?.cell == CellSize(width: 9, height: 18))
        #expect(Self.decide("\u{1B}P>|iTerm2 3.5.0\u{1B}\\\u{1B}[?62;4c")?.mode == .iterm)
        #expect(Self.decide(Self.plainXterm, ["TERM": "xterm", "COLORTERM": "truecolor"])?.colors == .truecolor)
        #expect(Self.decide(Self.plainXterm, ["TERM": "xterm-256color"])?.colors == .palette256)
    }

    @Test func inTmuxPassthroughDecidesWhatReachesTheScreen() {
        let through = Self.decide(Self.xterm, inTmux: true, passthrough: true)
        #expect(through?.mode == .sixel && through?.passthrough == true)
        let blocked = Self.decide(Self.xterm, inTmux: true, passthrough: false)
        #expect(blocked?.mode == .blocks && blocked?.reason.contains("allow-passthrough") == true)
        #expect(Self.decide(Self.tmux, inTmux: true, passthrough: true)?.mode == .blocks)
    }

    @Test func silenceTheEnvironmentAndOptOuts() {
        #expect(Self.decide("", ["TERM": "xterm-kitty"])?.mode == .kitty)
        #expect(Self.decide("", ["TERM": "xterm-256color", "TERM_PROGRAM": "iTerm.app"])?.mode == .iterm)
        #expect(Self.decide("", ["TERM": "xterm-256color"])?.mode == .blocks)
        #expect(Self.decide(Self.kitty, ["TERM": "xterm-kitty", "NO_COLOR": "1"]) == nil)
        #expect(Self.decide(Self.kitty, ["TERM": "dumb"]) == nil)
        #expect(Self.decide(Self.kitty, setting: .off) == nil)
        #expect(Self.decide(Self.plainXterm, setting: .sixel)?.mode == .sixel)
    }

    @Test func placingKeepsTheCursorAndWrapsForTmux() {
        let graphics = TerminalGraphics(mode: .sixel, colors: .truecolor, cell: .usual, passthrough: true)
        let drawing = Drawing(mode: .sixel, text: "\u{1B}Pq#0~\u{1B}\\", columns: 2, rows: 1)
        let placed = graphics.place(drawing, rowsUp: 3, column: 5)
        #expect(placed == "\u{1B}7\u{1B}[3A\u{1B}[5G\u{1B}Ptmux;\u{1B}\u{1B}Pq#0~\u{1B}\u{1B}\\\u{1B}\\\u{1B}8")
        let blocks = Drawing(mode: .blocks, text: "ab\ncd\n", columns: 2, rows: 2)
        #expect(graphics.place(blocks, rowsUp: 2, column: 1) == "\u{1B}7\u{1B}[2A\rab\u{1B}[1B\rcd\u{1B}[0m\u{1B}8")
    }
}
