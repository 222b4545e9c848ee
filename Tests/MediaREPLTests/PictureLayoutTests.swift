import HostAPI
import MediaKit
import Pictures
import Testing

@testable import MediaREPL

/// Where `show` puts its picture, for the terminals people have: 80x24 is every terminal's
/// default, and a picture that fits at all is drawn, scaled to the room left by the details.
@Suite struct PictureLayoutTests {
    /// xterm's default font's cells (6x13), kitty's and most others' (8x16 or 10x20).
    static let cells = [CellSize(width: 6, height: 13), CellSize(width: 8, height: 16), CellSize(width: 10, height: 20)]

    /// Details of `count` words wrapped at a width: what a real `show` does to a long note.
    static func lines(words count: Int, fixed: Int) -> (Int) -> Int {
        { width in fixed + (count * 6 + width - 1) / max(1, width) }
    }

    /// Whatever the picture's room, it is on the screen when the picture comes (it is drawn after the text).
    static func check(_ layout: REPL.PictureLayout?, width: Int, rows: Int, lines: (Int) -> Int) {
        guard let layout else {
            Issue.record("no picture at \(width)x\(rows)")
            return
        }
        switch layout {
        case .beside(let box):
            #expect(box.columns + 2 + REPL.textBesidePicture <= width)
            #expect(max(box.rows, lines(width - box.columns - 2)) <= rows - 1, "\(layout) at \(width)x\(rows)")
        case .above(let box):
            #expect(box.columns <= width)
            #expect(box.rows + lines(width) <= rows - 1, "\(layout) at \(width)x\(rows)")
        case .below(let box):
            #expect(box.columns <= width && box.rows <= rows - 1, "\(layout) at \(width)x\(rows)")
        }
    }

    @Test(arguments: [MediaKind.video, .episode, .movie, .post])
    func aPictureAtEveryUsualSize(kind: MediaKind) {
        for cell in Self.cells {
            for (width, rows) in [(80, 24), (60, 32), (60, 24), (100, 30), (132, 43), (40, 12), (80, 10)] {
                for lines in [Self.lines(words: 10, fixed: 14), Self.lines(words: 120, fixed: 17)] {
                    let layout = REPL.pictureLayout(kind: kind, width: width, screenRows: rows, cell: cell, textLines: lines)
                    Self.check(layout, width: width, rows: rows, lines: lines)
                }
            }
        }
    }

    @Test func besideWhenTheColumnsAllowScaledToTheRoom() throws {
        // A 16:9 thumbnail at 80x24 with xterm's cells: beside the 17 lines of a video's details,
        // as large as leaves 40 columns for them.
        let layout = REPL.pictureLayout(
            kind: .video, width: 80, screenRows: 24, cell: CellSize(width: 6, height: 13), textLines: { $0 >= 40 ? 17 : 30 })
        guard case .beside(let box) = layout else {
            Issue.record("\(String(describing: layout))")
            return
        }
        #expect(box.columns <= 38 && box.rows >= 8, "\(box)")
        // At 60 columns the details need the width: above, smaller, when they leave room.
        let narrow = REPL.pictureLayout(
            kind: .video, width: 60, screenRows: 32, cell: CellSize(width: 8, height: 16), textLines: { _ in 17 })
        #expect(narrow == .above(REPL.pictureBox(kind: .video, rows: 12, cell: CellSize(width: 8, height: 16))))
        // Details taller than the screen: the picture after them, still drawn.
        let tall = REPL.pictureLayout(
            kind: .episode, width: 60, screenRows: 24, cell: CellSize(width: 8, height: 16), textLines: { _ in 40 })
        guard case .below = tall else {
            Issue.record("\(String(describing: tall))")
            return
        }
        // No room at all: no picture, rather than one that is never seen.
        #expect(REPL.pictureLayout(kind: .video, width: 80, screenRows: 4, cell: .usual, textLines: { _ in 3 }) == nil)
    }
}

/// Download bars line up whatever their state: the bar starts at the same column for a queued
/// download (no rate, no eta) as for running ones.
@Suite struct ProgressBarTests {
    @Test(arguments: [80, 60, 120])
    func barsLineUp(width: Int) {
        let running = ProgressBoard.Entry(
            title: "Episode 26: Tiny Houses", bytes: 1_200_000, total: 3_000_000, rate: 300_000, eta: 6)
        let long = ProgressBoard.Entry(
            title: "A much longer title of a video", bytes: 10, total: 3_000_000_000, rate: 3_000, eta: 3_700)
        let queued = ProgressBoard.Entry(title: "Episode 27: Soil", bytes: 0, total: nil, state: "queued")
        let bars = [running, long, queued].map { ProgressBoard.bar($0, width: width, titleColumns: 20) }
        let starts = bars.map { bar in bar.firstIndex(of: "[").map { Renderer.columns(String(bar[..<$0])) } }
        #expect(Set(starts).count == 1, "\(bars.joined(separator: "\n"))")
        for bar in bars { #expect(Renderer.columns(bar) <= width) }
    }

    /// A soundbite says so, and counts to its own end, not the episode's.
    @Test func aSoundbiteSaysSoAndItsEnd() {
        var entry = PlayerStatus.Entry(id: nil, title: "Tone 2", target: "https://example.com/2.wav", local: false)
        entry.clip = .init(start: 40, end: 46)
        let status = PlayerStatus(
            state: .playing, item: entry, position: 43, duration: 120, paused: false, queue: [], player: "mpv",
            chapter: "Forty seconds in")
        #expect(ProgressBoard.nowPlaying(status, width: 80) == "▶ Tone 2 · soundbite  0:43 / 0:46")
        entry.clip = nil
        let whole = PlayerStatus(
            state: .playing, item: entry, position: 43, duration: 120, paused: false, queue: [], player: "mpv",
            chapter: "Forty seconds in")
        #expect(ProgressBoard.nowPlaying(whole, width: 80) == "▶ Tone 2 · Forty seconds in  0:43 / 2:00")
    }
}
