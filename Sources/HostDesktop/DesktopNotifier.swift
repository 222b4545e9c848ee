import Basics
import FoundationEssentials
import Glibc
import MediaHost
import MediaKit
import MediaStore

/// Desktop notifications (org.freedesktop.Notifications), when `desktop.notifications` is on:
/// a download completed (or failed), and new episodes and videos a refresh found.
public actor DesktopNotifier: HostComponent {
    private weak var host: HostRuntime?
    private let logger: Logger
    private var subscription: Int?
    /// Said once: why notifications cannot be shown here.
    private var unavailable = false

    public init(host: HostRuntime) {
        self.host = host
        logger = host.logger
    }

    private var enabled: Bool { host?.config.string(HostSettings.desktopNotifications) == "on" }

    /// Downloads that end are told of (the setting is read when one ends, so turning it on
    /// takes effect at once).
    func followDownloads() {
        guard subscription == nil, let host else { return }
        subscription = host.events.subscribe { [weak self] event in
            guard let change = event.payload(DownloadStateChange.self) else { return }
            Task { await self?.downloadChanged(change) }
        }
    }

    private func downloadChanged(_ change: DownloadStateChange) async {
        guard enabled, let host else { return }
        let title = await downloadTitle(change.id, on: host)
        switch change.state {
        case "completed":
            send(
                summary: "Downloaded",
                body: title ?? change.path.flatMap { $0.split(separator: "/").last.map(String.init) } ?? change.id)
        case "failed":
            send(summary: "Download failed", body: [title ?? change.id, change.error].compactMap { $0 }.joined(separator: ": "))
        default:
            break
        }
    }

    private func downloadTitle(_ id: String, on host: HostRuntime) async -> String? {
        guard let itemID = try? ItemID(parsing: id) else { return nil }
        do {
            return try await host.store.download(itemID)?.title
        } catch {
            logger.debug("notifications: cannot read download \(id): \(error)")
            return nil
        }
    }

    /// A refresh kept what arrived: told of once (the inbox remembers what arrived, so a
    /// restart neither repeats nor loses a notification).
    func refreshed(_ refresh: RefreshRun.Response) {
        guard enabled, !refresh.arrived.isEmpty else { return }
        send(summary: Self.newSummary(refresh.arrived.count), body: Self.newBody(refresh.arrived))
    }

    static func newSummary(_ count: Int) -> String { count == 1 ? "New in what you follow" : "\(count) new in what you follow" }

    /// The first three titles, each with its show or channel, and how many more.
    static func newBody(_ items: [MediaItem]) -> String {
        let lines = items.prefix(3).map { item in
            [item.subtitle ?? item.creator, item.title].compactMap { $0 }.joined(separator: ": ")
        }
        let more = items.count > 3 ? ["and \(items.count - 3) more (`new` in the REPL)"] : []
        return (lines + more).joined(separator: "\n")
    }

    private func send(summary: String, body: String) {
        do {
            try desktopNotify(summary: summary, body: body)
            logger.debug("notifications: \(summary)")
        } catch {
            if !unavailable { logger.info("notifications: cannot be shown here: \(error)") }
            unavailable = true
        }
    }
}
