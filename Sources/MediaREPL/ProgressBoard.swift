@preconcurrency import CReadline
import Foundation
import JSONRPC
import MediaHost
import Synchronization

/// The latest progress of every running download, fed by the host's notifications and drawn by
/// the REPL: bars above the prompt on a terminal, periodic plain lines otherwise.
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
        (entries: [String: Entry], order: [String], dirty: Bool, events: [String], titles: [String: String])
    >(
        ([:], [], false, [], [:]))

    /// Names a download for its bar (notifications carry only ids).
    func setTitle(_ title: String, for id: String) {
        state.withLock { state in
            state.titles[id] = title
            state.entries[id]?.title = title
        }
    }

    func receive(_ event: HostEvent) {
        state.withLock { state in
            switch event {
            case .downloadProgress(let progress):
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
            case .downloadState(let change):
                let id = change.id
                let isActive = change.state == "running" || change.state == "queued"
                if state.entries[id] == nil, isActive {
                    state.entries[id] = Entry(title: state.titles[id] ?? id)
                    state.order.append(id)
                }
                let title = state.entries[id]?.title ?? state.titles[id] ?? id
                switch change.state {
                case "completed": state.events.append("✓ \(title): done → \(change.path ?? "")")
                case "failed": state.events.append("✗ \(title): failed: \(change.error ?? "")")
                case "paused", "cancelled", "removed": state.events.append("• \(title): \(change.state)")
                default: break
                }
                if isActive {
                    state.entries[id]?.state = change.state
                } else {
                    state.entries[id] = nil
                    state.order.removeAll { $0 == id }
                }
            case .authPrompt:
                return
            }
            state.dirty = true
        }
    }

    var hasActive: Bool { state.withLock { !$0.order.isEmpty } }

    /// Lines to show if anything changed since the last call, and finished-download messages.
    func takeUpdate(width: Int, color: Bool) -> (bars: [String], events: [String])? {
        state.withLock { state in
            guard state.dirty || !state.events.isEmpty else { return nil }
            state.dirty = false
            let events = state.events
            state.events = []
            let bars = state.order.compactMap { id in state.entries[id].map { Self.bar($0, width: width) } }
            return (bars, events)
        }
    }

    static func bar(_ entry: Entry, width: Int) -> String {
        let fraction = entry.total.map { $0 > 0 ? min(1, Double(entry.bytes) / Double($0)) : 0 }
        let size = entry.total.map { "\(Renderer.bytes(entry.bytes))/\(Renderer.bytes($0))" } ?? Renderer.bytes(entry.bytes)
        var tail = "  \(size)"
        if entry.state == "queued" {
            tail += "  queued"
        } else if entry.rate > 0 {
            tail += "  \(Renderer.bytes(Int64(Int(finite: entry.rate) ?? 0)))/s"
        }
        if let eta = entry.eta, entry.state == "running" { tail += "  eta \(Renderer.duration(eta))" }
        let barWidth = 20
        let filled = Int((fraction ?? 0) * Double(barWidth))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "]"
        let percent = fraction.map { String(format: "%3d%%", Int($0 * 100)) } ?? "  ?%"
        let titleWidth = max(10, width - tail.count - barWidth - 12)
        let title = Renderer.clean(entry.title)
        let shortTitle = title.count > titleWidth ? String(title.prefix(titleWidth - 1)) + "…" : title
        return "⬇ \(shortTitle.padding(toLength: titleWidth, withPad: " ", startingAt: 0)) \(bar) \(percent)\(tail)"
    }
}

/// Redraws progress bars just above the prompt, in place: it runs on readline's thread (from
/// its event hook), the only place where the prompt may be redrawn safely.
final class InPlaceProgress: @unchecked Sendable {
    private let board: ProgressBoard
    private let color: Bool
    /// Bar lines currently drawn above the prompt.
    private var shown = 0

    /// Where the bars go: stdout, or stderr when stdout is redirected.
    private let fd: Int32

    init(board: ProgressBoard, color: Bool, fd: Int32 = 1) {
        self.board = board
        self.color = color
        self.fd = fd
    }

    /// After a command printed, the old bars scrolled away: draw anew below its output.
    func forget() { shown = 0 }

    func draw() {
        guard let update = board.takeUpdate(width: Renderer.terminalColumns(fd), color: color) else { return }
        var out = "\r"
        if shown > 0 { out += "\u{1B}[\(shown)A" }
        out += "\u{1B}[J"
        for line in update.events { out += line + "\n" }
        for line in update.bars { out += line + "\n" }
        shown = update.bars.count
        FileHandle(fileDescriptor: fd, closeOnDealloc: false).write(Data(out.utf8))
        rl_on_new_line()
        rl_redisplay()
    }
}
