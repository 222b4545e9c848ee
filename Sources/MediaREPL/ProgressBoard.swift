import Basics
@preconcurrency import CReadline
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit
import Pictures
import Synchronization

/// The latest progress of every running download and what plays, fed by the host's
/// notifications and drawn by the REPL: bars and a "now playing" line above the prompt on a
/// terminal, periodic plain lines otherwise.
final class ProgressBoard: Sendable {
    struct Entry: Sendable {
        var title: String
        var bytes: Int64 = 0
        var total: Int64?
        var rate: Double = 0
        var eta: Double?
        var state = "running"
    }

    private let state = Mutex<
        (
            entries: [String: Entry], order: [String], dirty: Bool, events: [String], titles: [String: String],
            playing: PlayerStatus?, playerDirty: Bool, asked: Set<String>, problem: String?, failed: String?
        )
    >(
        ([:], [], false, [], [:], nil, false, [], nil, nil))

    /// `transcript <n> --follow`: the transcript whose lines are shown as playback passes them.
    private let following = Mutex<(id: ItemID, cues: [TranscriptCue], next: Int, at: Double)?>(nil)

    /// Shows `cues` of `id` above the prompt as playback reaches each (from where it is now);
    /// a seek moves with it. Ends when something else plays or playback stops.
    func follow(_ id: ItemID, cues: [TranscriptCue]) {
        following.withLock { $0 = (id, cues, 0, -1) }
        if let status = playing { followPlayback(status) }
    }

    var isFollowing: Bool { following.withLock { $0 != nil } }

    private func followPlayback(_ status: PlayerStatus) {
        let lines = following.withLock { follow -> [String] in
            guard var current = follow else { return [] }
            guard status.state != .stopped, status.item?.id == current.id, let position = status.position else {
                if status.state == .stopped || (status.item != nil && status.item?.id != current.id) { follow = nil }
                return []
            }
            // From what is said now (begun at most 3 s ago): on the first status, and after a
            // seek either way; a line said long before is not news.
            if current.at < 0 || position < current.at - 2 || position > current.at + 30 {
                current.next = current.cues.firstIndex { $0.start >= position - 3 } ?? current.cues.count
            }
            var out: [String] = []
            while current.next < current.cues.count, current.cues[current.next].start <= position + 0.5 {
                let cue = current.cues[current.next]
                let speaker = cue.speaker.map { Renderer.clean($0) + ": " } ?? ""
                out.append("  \(Renderer.duration(cue.start.rounded(.down)))  \(speaker)\(Renderer.clean(cue.text))")
                current.next += 1
            }
            current.at = position
            follow = current
            return out
        }
        for line in lines { post(line) }
    }

    /// A change this front end asks for (`pause 2`): its command's answer says it, so the
    /// notification that follows adds no second line. Changes made elsewhere (another client,
    /// the service) still get theirs.
    func expect(_ id: String, _ change: String) {
        state.withLock { _ = $0.asked.insert(id + "|" + change) }
    }

    /// The title a download is known by here, if any.
    func title(for id: String) -> String? { state.withLock { $0.titles[id] ?? $0.entries[id]?.title } }

    /// Names a download for its bar (notifications carry only ids).
    func setTitle(_ title: String, for id: String) {
        state.withLock { state in
            state.titles[id] = title
            state.entries[id]?.title = title
        }
    }

    func receive(_ event: HostEvent) {
        if let progress = event.payload(DownloadProgress.self) {
            receive(progress)
        } else if let change = event.payload(DownloadStateChange.self) {
            receive(change)
        } else if let status = event.payload(PlayerStatus.self) {
            receive(status)
        } else if let skip = event.payload(PlayerSkip.self) {
            // "» skipped sponsor 0:45-1:30" (SponsorBlock), above the prompt.
            post("» \(skip.action) \(skip.category) \(Renderer.duration(skip.start))-\(Renderer.duration(skip.end))")
        }
    }

    func receive(_ progress: DownloadProgress) {
        state.withLock { state in
            let id = progress.id
            if state.entries[id] == nil {
                state.entries[id] = Entry(title: state.titles[id] ?? id)
                state.order.append(id)
            }
            state.entries[id]?.bytes = progress.bytes
            state.entries[id]?.total = progress.total
            state.entries[id]?.rate = progress.rate
            state.entries[id]?.eta = progress.eta
            state.entries[id]?.state = "running"
            state.dirty = true
        }
    }

    func receive(_ change: DownloadStateChange) {
        state.withLock { state in
            let id = change.id
            let isActive = change.state == "running" || change.state == "queued"
            if state.entries[id] == nil, isActive {
                state.entries[id] = Entry(title: state.titles[id] ?? id)
                state.order.append(id)
            }
            let title = state.entries[id]?.title ?? state.titles[id] ?? id
            switch change.state {
            case "completed":
                // The path on a line of its own: whole where it fits, not broken at a space of its name.
                state.events.append("✓ \(title): done\n  → \(Renderer.home(change.path ?? ""))")
            case "failed": state.events.append("✗ \(title): failed: \(change.error ?? "")")
            case "paused", "cancelled", "removed":
                if state.asked.remove(id + "|" + change.state) == nil { state.events.append("• \(title): \(change.state)") }
            default: break
            }
            if isActive {
                state.entries[id]?.state = change.state
            } else {
                state.entries[id] = nil
                state.order.removeAll { $0 == id }
            }
            state.dirty = true
        }
    }

    func receive(_ status: PlayerStatus) {
        followPlayback(status)
        state.withLock { state in
            let wasPlaying = state.playing?.item
            state.playing = status.state == .stopped ? nil : status
            // A player that failed says so once, and why; its stop that follows is no news.
            if let problem = status.problem, problem != state.problem {
                state.events.append("✗ " + Renderer.clean(problem))
                state.failed = status.item?.title ?? wasPlaying?.title
            }
            state.problem = status.problem
            if status.state == .stopped, let wasPlaying {
                if state.failed != wasPlaying.title {
                    state.events.append("■ \(Renderer.clean(wasPlaying.title)): stopped")
                }
                state.failed = nil
            }
            state.playerDirty = true
        }
    }

    /// A line to show above the prompt at the next redraw (something that happened meanwhile).
    func post(_ line: String) {
        state.withLock { $0.events.append(line) }
    }

    var hasActive: Bool { state.withLock { !$0.order.isEmpty } }

    /// What plays, as the REPL last heard.
    var playing: PlayerStatus? { state.withLock { $0.playing } }

    /// Lines to show if anything changed since the last call, and finished-download messages.
    /// - Parameter playing: with the "now playing" line (on a terminal, where it is redrawn in place).
    func takeUpdate(width: Int, color: Bool, playing: Bool = true) -> (bars: [String], events: [String])? {
        state.withLock { state in
            guard state.dirty || !state.events.isEmpty || (playing && state.playerDirty) else { return nil }
            state.dirty = false
            if playing { state.playerDirty = false }
            let events = state.events
            state.events = []
            let entries = state.order.compactMap { state.entries[$0] }
            // One title column for all, so the bars start together.
            let titles = entries.map { min(Renderer.columns(Renderer.clean($0.title)), 20) }.max()
            var bars = entries.map { Self.bar($0, width: width, titleColumns: titles) }
            if playing, let playing = state.playing { bars.insert(Self.nowPlaying(playing, width: width), at: 0) }
            return (bars, events)
        }
    }

    /// "▶ Title  12:04 / 45:10  vol 80  +2 queued", in the width (the title is cut first).
    static func nowPlaying(_ status: PlayerStatus, width: Int) -> String {
        var tail = ""
        if let position = status.position {
            tail += "  " + Renderer.duration(position)
            // A soundbite plays to its own end.
            if let end = status.item?.clip?.end ?? status.duration { tail += " / " + Renderer.duration(end) }
        }
        if let volume = status.volume, volume != 100 { tail += "  vol \(Int(finite: volume.rounded()) ?? 0)" }
        if !status.queue.isEmpty { tail += "  +\(status.queue.count) queued" }
        // Glyphs every common terminal font has (⏸ is an empty box in DejaVu Sans Mono).
        let mark = status.state == .paused ? "‖" : "▶"
        // The chapter after the title: "Episode 4 · Soil and roots"; or that a soundbite plays.
        let part = status.item?.clip != nil ? "soundbite" : status.chapter.map { Renderer.clean($0) }
        let title = Renderer.clean(status.item?.title ?? "") + (part.map { " · " + $0 } ?? "")
        let room = max(10, width - Renderer.columns(tail) - 2)
        return Renderer.fit("\(mark) \(Renderer.fit(title, room))\(tail)", width)
    }

    /// "⬇ Title  [####------]  40%  1.2 MB/3.0 MB  300 KB/s  eta 0:06", in the width: the title
    /// keeps at least 20 columns (where it has them), then the bar takes up to 20; what does not
    /// fit goes, eta first, then the rate, then the bar.
    /// - Parameter titleColumns: the title column every bar drawn together keeps (the widest
    ///   of their titles, up to 20), so they line up.
    static func bar(_ entry: Entry, width: Int, titleColumns: Int? = nil) -> String {
        let fraction = entry.total.map { $0 > 0 ? min(1, Double(entry.bytes) / Double($0)) : 0 }
        // Each part padded to its widest, so every bar has the same layout and they line up.
        var tail = [
            Renderer.pad(
                entry.total.map { "\(Renderer.bytes(entry.bytes))/\(Renderer.bytes($0))" } ?? Renderer.bytes(entry.bytes), 17)
        ]
        if entry.state == "queued" {
            tail.append(Renderer.pad("queued", 10))
        } else {
            tail.append(Renderer.pad(entry.rate > 0 ? "\(Renderer.bytes(Int64(Int(finite: entry.rate) ?? 0)))/s" : "", 10))
        }
        // Padded too: a queued bar (no eta) sat 6 columns right of the running ones.
        tail.append(Renderer.pad(entry.eta.map { entry.state == "running" ? "eta \(Renderer.duration($0))" : "" } ?? "", 11))
        let title = Renderer.clean(entry.title)
        let wanted = titleColumns ?? min(Renderer.columns(title), 20)
        let percent = fraction.map { String(printf: "%3d%%", Int($0 * 100)) } ?? "  ?%"
        // "⬇ " + title + " " + percent, then each tail part after two spaces.
        func tailColumns() -> Int { tail.reduce(0) { $0 + 2 + Renderer.columns($1) } }
        while tail.count > 1, 2 + wanted + 1 + 4 + tailColumns() + 8 > width { tail.removeLast() }
        let room = width - 2 - 1 - 4 - tailColumns()
        // The bar ("[" + cells + "] ") takes what the title leaves, up to 20 cells; under 6, none.
        var cells = min(20, max(0, room - max(wanted, room * 3 / 5) - 3))
        if cells < 6 { cells = 0 }
        let titleWidth = max(1, room - (cells > 0 ? cells + 3 : 0))
        var line = "⬇ " + Renderer.pad(Renderer.fit(title, titleWidth), titleWidth) + " "
        if cells > 0 {
            let filled = Int(min(1, max(0, fraction ?? 0)) * Double(cells))
            line += "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "] "
        }
        line += percent + tail.map { "  " + $0 }.joined()
        return Renderer.fit(String(line.reversed().drop { $0 == " " }.reversed()), width)
    }
}

/// Redraws progress bars just above the prompt, in place: it runs on readline's thread (from
/// its event hook), the only place where the prompt may be redrawn safely.
final class InPlaceProgress: @unchecked Sendable {
    private let board: ProgressBoard
    private let color: Bool
    /// The columns of each bar line drawn above the prompt, to move back over them.
    private var shown: [Int] = []
    /// Pictures waiting for their room in the output, and how the terminal draws them.
    private let pictures: PictureSlots?
    /// How the terminal draws pictures now (`config repl.images` changes it while the REPL runs).
    private let graphics: @Sendable () -> TerminalGraphics?

    /// Where the bars go: stdout, or stderr when stdout is redirected.
    private let fd: Int32

    init(
        board: ProgressBoard, color: Bool, fd: Int32 = 1, pictures: PictureSlots? = nil,
        graphics: @escaping @Sendable () -> TerminalGraphics? = { nil }
    ) {
        self.board = board
        self.color = color
        self.fd = fd
        self.pictures = fd == 1 ? pictures : nil
        if fd == 1 { self.graphics = graphics } else { self.graphics = { nil } }
    }

    /// After a command printed, the old bars scrolled away: draw anew below its output. The
    /// last command's pictures not drawn yet are not drawn now.
    func forget() {
        shown = []
        pictures?.clear()
    }

    func draw() {
        let width = Renderer.terminalColumns(fd)
        let update = board.takeUpdate(width: width, color: color)
        let ready = pictures?.takeReady() ?? []
        guard update != nil || !ready.isEmpty else { return }
        var out = "\r"
        if let update {
            // Rows the old bars take now: after a resize to fewer columns the terminal wrapped them.
            let rows = Self.rows(shown, width: width)
            if rows > 0 { out += "\u{1B}[\(rows)A" }
            out += "\u{1B}[J"
            for line in update.events {
                let fitted = Renderer.fitLines(line, width: width)
                out += fitted + "\n"
                pictures?.wrote(rows: fitted.split(separator: "\n", omittingEmptySubsequences: false).count)
            }
            for line in update.bars { out += line + "\n" }
            shown = update.bars.map { Renderer.columns($0) }
        }
        if let pictures, let graphics = graphics() {
            // Each picture's room is where its command left it: that many rows above the prompt,
            // with the bars between. One that scrolled off the screen is not drawn.
            let above = Self.rows(shown, width: width)
            let screen = Renderer.terminalRows(fd)
            for (slot, content) in ready {
                let up = pictures.rowsWritten - slot.topRow + above
                guard up >= 1, up < screen else { continue }
                let drawing: Drawing
                switch content {
                case .drawing(let made): drawing = made
                case .note(let note):
                    let lines = Renderer.fitLines(note, width: max(8, slot.box.columns)).split(separator: "\n")
                    drawing = Drawing(
                        mode: .blocks,
                        text: lines.prefix(slot.box.rows).map { color ? "\u{1B}[2m\($0)\u{1B}[0m" : String($0) }
                            .joined(separator: "\n"), columns: slot.box.columns, rows: min(lines.count, slot.box.rows))
                }
                out += graphics.place(drawing, rowsUp: up, column: slot.column)
            }
        }
        Descriptor.writeAll(fd, Array(out.utf8))
        rl_on_new_line()
        rl_redisplay()
    }

    private static func rows(_ shown: [Int], width: Int) -> Int {
        shown.reduce(0) { $0 + max(1, ($1 + width) / (width + 1)) }
    }
}
