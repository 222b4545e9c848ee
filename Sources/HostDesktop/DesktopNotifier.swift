import Basics
import FoundationEssentials
import Glibc
import MediaHost
import MediaKit
import MediaStore

/// Desktop notifications (org.freedesktop.Notifications), when `desktop.notifications` is on:
/// a download completed (or failed), and, in the background service, new episodes and videos of
/// what is followed, checked every `desktop.check_minutes`.
public actor DesktopNotifier: HostComponent {
    private weak var host: HostRuntime?
    private let logger: Logger
    private var subscription: Int?
    private var checking: Task<Void, Never>?
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

    /// In the service: what is followed is checked every `desktop.check_minutes`, and what was
    /// published since the last check is told of, once. The time of the last check is kept in
    /// the data dir, so a restart neither repeats nor loses a notification.
    func checkFollowed() {
        guard checking == nil else { return }
        checking = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                let minutes = await self.checkNow()
                try? await Task.sleep(for: .seconds(minutes * 60))
            }
        }
    }

    /// Checks once; returns the minutes until the next check.
    func checkNow() async -> Double {
        guard let host else { return 60 }
        let minutes = host.config.minutes(HostSettings.desktopCheckMinutes)
        guard enabled else { return minutes }
        let marker = host.paths.dataDir + "/run/notified-since"
        let now = Date()
        let since = (try? String(contentsOfFile: marker, encoding: .utf8)).flatMap {
            try? Date.ISO8601FormatStyle().parse($0.trimming(.whitespacesAndNewlines))
        }
        do {
            let latest = try await host.dispatcher.run(FavoritesLatest(limit: 50))
            if let since {
                let new = latest.items.filter { item in
                    guard let published = item.published.flatMap(Self.date) else { return false }
                    return published > since && published <= now
                }
                if !new.isEmpty { send(summary: Self.newSummary(new.count), body: Self.newBody(new)) }
            }
            try FileManager.default.createDirectory(
                atPath: host.paths.dataDir + "/run", withIntermediateDirectories: true)
            try now.formatted(.iso8601).write(toFile: marker, atomically: true, encoding: .utf8)
        } catch {
            logger.warning("notifications: cannot check what is followed: \(error)")
        }
        return minutes
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

    static func date(_ text: String) -> Date? {
        (try? Date.ISO8601FormatStyle().parse(text))
            ?? (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
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
