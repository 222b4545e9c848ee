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

    private let state = Mutex<(entries: [String: Entry], order: [String], dirty: Bool, events: [String], titles: [String: String])>(
        ([:], [], false, [], [:]))

    /// Names a download for its bar (notifications carry only ids).
    func setTitle(_ title: String, for id: String) {
        state.withLock { state in
            state.titles[id] = title
            state.entries[id]?.title = title
        }
    }

    func receive(_ method: String, _ params: JSONValue) {
        guard let id = params["id"]?.stringValue else { return }
        state.withLock { state in
            let isActive = method == "downloads.progress" || ["running", "queued"].contains(params["state"]?.stringValue ?? "")
            if state.entries[id] == nil, isActive {
                state.entries[id] = Entry(title: state.titles[id] ?? id)
                state.order.append(id)
            }
            switch method {
            case "downloads.progress":
                state.entries[id]?.bytes = Int64(params["bytes"]?.intValue ?? 0)
                state.entries[id]?.total = params["total"]?.intValue.map(Int64.init)
                state.entries[id]?.rate = params["rate"]?.doubleValue ?? 0
                state.entries[id]?.eta = params["eta"]?.doubleValue
                state.entries[id]?.state = "running"
            case "downloads.state":
                let new = params["state"]?.stringValue ?? "?"
                let title = state.entries[id]?.title ?? state.titles[id] ?? id
                switch new {
                case "completed": state.events.append("✓ \(title): done → \(params["path"]?.stringValue ?? "")")
                case "failed": state.events.append("✗ \(title): failed: \(params["error"]?.stringValue ?? "")")
                case "paused", "cancelled", "removed": state.events.append("• \(title): \(new)")
                default: break
                }
                if new == "running" || new == "queued" {
                    state.entries[id]?.state = new
                } else {
                    state.entries[id] = nil
                    state.order.removeAll { $0 == id }
                }
            default: return
            }
            state.dirty = true
        }
    }

    /// The latest rate of a download, for the downloads table.
    func rate(of id: String) -> Double? { state.withLock { $0.entries[id]?.rate } }

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
        if entry.state == "queued" { tail += "  queued" } else if entry.rate > 0 { tail += "  \(Renderer.bytes(Int64(Int(finite: entry.rate) ?? 0)))/s" }
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
