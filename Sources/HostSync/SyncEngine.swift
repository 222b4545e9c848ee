import Basics
import FoundationEssentials
import Glibc
import JSONRPC
import Logging
import MediaHost
import MediaKit
import MediaStore
import Synchronization

/// Runs sync rounds for one host, one at a time in the process and, through a lock file, in
/// the data dir (the REPL and the service must not send the same queue twice).
public final class SyncEngine: HostComponent {
    private weak let hostRef: HostRuntime?
    private let paths: HostPaths
    private let logger: Logger
    private let running = Mutex<Task<SyncReport, any Error>?>(nil)
    private let periodic = Mutex<Task<Void, Never>?>(nil)
    /// The account the server refused: no rounds on the timer for it.
    private let refused = Mutex<SyncAccount?>(nil)

    public init(host: HostRuntime) {
        hostRef = host
        paths = host.paths
        logger = host.logger
    }

    /// A round; a call while one runs waits for that one.
    public func run() async throws -> SyncReport {
        let task = running.withLock { current -> Task<SyncReport, any Error> in
            if let current { return current }
            let task = Task { [self] in
                defer { running.withLock { $0 = nil } }
                return try await round()
            }
            current = task
            return task
        }
        return try await task.value
    }

    /// In the service: a round every `sync.interval_minutes` while an account is set.
    func syncPeriodically() {
        periodic.withLock { periodic in
            guard periodic == nil else { return }
            periodic = Task { [weak self] in
                while !Task.isCancelled {
                    guard let self, let host = self.hostRef else { return }
                    let minutes = host.config.minutes(HostSettings.syncIntervalMinutes)
                    if let account = SyncAccount.load(host), self.refused.withLock({ $0 }) != account {
                        await self.runQuietly("every \(minutes) minutes")
                    }
                    try? await Task.sleep(for: .seconds(minutes * 60))
                }
            }
        }
    }

    /// An error as a person reads it in `sync status` and `doctor`.
    static func text(_ error: any Error) -> String {
        if let failure = error as? ProviderFailure { return failure.error.message }
        if let failure = error as? RPCError { return failure.message }
        return "\(error)"
    }

    /// Told in words when a round at start or quit fails (the REPL shows it above its prompt).
    public let failureNote = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// A round whose failure is logged, not thrown (at start, at quit, on a timer); the round
    /// keeps why it failed for `sync status`.
    /// - Parameter service: the background service a session is attached to: the round runs
    ///   there (where its changes reach every client), not in this process.
    func runQuietly(_ why: String, via service: (any HostConnection)? = nil) async {
        do {
            let report: SyncReport
            if let service {
                report = try await service.run(SyncNow())
            } else {
                report = try await run()
            }
            logger.info(
                "sync (\(why)\(service == nil ? "" : ", by the background service")): \(report.followed) followed, \(report.unfollowed) unfollowed, \(report.actionsNewer) positions moved, \(report.actionsSent) actions sent"
            )
        } catch {
            // A refused password stops the timer's rounds until the next login (each would
            // count as a failed login on the server, which throttles the address).
            if let failure = error as? ProviderFailure, case .unauthorized = failure.error, let host = hostRef {
                refused.withLock { $0 = SyncAccount.load(host) }
            }
            // Said once: to the person when one is told, else in the log.
            if let note = failureNote.withLock({ $0 }) {
                logger.info("sync (\(why)) failed: \(Self.text(error))")
                note("the sync \(why) failed: \(Self.text(error)); `sync status` says what waits")
            } else {
                logger.notice("sync (\(why)) failed: \(Self.text(error)); the changes wait for the next sync")
            }
        }
    }

    public func hostWillStop() async {
        periodic.withLock { $0?.cancel() }
    }

    // MARK: The round

    private func round() async throws -> SyncReport {
        guard let host = hostRef else { throw CancellationError() }
        guard let account = SyncAccount.load(host) else {
            throw ProviderFailure(
                provider: "sync",
                error: .notConfigured("no sync server is set; `login sync <server URL> <user>` (sync.login) sets one"))
        }
        let lock = try await DataDirLock.acquire(paths.dataDir + "/run/sync.lock")
        defer { lock.release() }
        let clock = ContinuousClock.now
        let store = host.store
        try await store.beginSync(account: account.storeName)
        let server = try SyncServer.of(account, host: host)
        var report = SyncReport(
            server: account.server.absoluteString, dialect: account.dialect, device: account.device, followed: 0, unfollowed: 0,
            subscriptionsSent: 0, renamed: 0, actionsReceived: 0, actionsNewer: 0, actionsSent: 0, skipped: [], queued: 0,
            seconds: 0)
        do {
            // Each request within http.timeout (retries included): a round has no deadline of
            // its own (it may send thousands of actions), its requests do.
            report = try await CallDeadline.$perRequest.withValue(host.config.seconds(HostSettings.httpTimeout)) {
                var report = report
                try await exchange(server, host: host, account: account, report: &report)
                return report
            }
        } catch {
            do {
                // Redacted before it is stored: the database and its WAL keep no secret.
                try await store.setSyncValues([
                    "lastError": host.redactor.redact(Self.text(error)), "lastErrorAt": ISODate.string(from: Date()),
                ])
            } catch let storing {
                logger.warning("sync: cannot keep why the round failed: \(storing)")
            }
            throw error
        }
        report.queued = try await store.syncOutboxCount()
        report.seconds = (ContinuousClock.now - clock).seconds
        try await store.setSyncValues([
            "lastSync": ISODate.string(from: Date()), "lastError": "",
            "lastReport": String(decoding: host.redactor.redact(bytes: Array(try JSONEncoder().encode(report))), as: UTF8.self),
        ])
        return report
    }

    /// One round's requests, in order.
    private func exchange(_ server: SyncServer, host: HostRuntime, account: SyncAccount, report: inout SyncReport)
        async throws
    {
        let store = host.store
        try await server.login()
        if try await store.syncValue("device") != account.device {
            try await server.registerDevice()
            try await store.setSyncValues(["device": account.device])
        }
        // This machine's changes first: a pull after them sees them as done (Nextcloud's one
        // list, linked gpodder.net devices), not as changes that undo what came since.
        try await pushSubscriptions(server, store: store, report: &report)
        try await pullSubscriptions(server, host: host, report: &report)
        // What the pull followed here is this machine's too: sent in the same round, so a
        // round leaves nothing of its own making waiting for the next.
        try await pushSubscriptions(server, store: store, report: &report)
        let delivered = try await pullActions(server, store: store, report: &report)
        try await pushActions(server, host: host, delivered: delivered, report: &report)
    }

    /// The server's subscription changes since the last round: the other devices' (gpodder.net:
    /// each device has its own list) or the account's (Nextcloud). Followed and unfollowed here;
    /// what is followed anew is then this machine's too (queued for its own list). When one
    /// device dropped a show another added since, the drop wins: the API says what changed,
    /// not when, and a show comes back with one `fav` where a wrong follow would stay unseen.
    private func pullSubscriptions(_ server: SyncServer, host: HostRuntime, report: inout SyncReport) async throws {
        let store = host.store
        let nextcloud = server.account.dialect == .nextcloud
        let devices: [String?] = nextcloud ? [nil] : try await server.otherDevices()
        var added: [String] = []
        var removed = Set<String>()
        var cursors: [String: String] = [:]
        for device in devices {
            let key = "subscriptions:" + (device ?? "account")
            let since = Int64(try await store.syncValue(key) ?? "0") ?? 0
            // Nextcloud compares whole seconds after the cursor, its server time: a change later
            // in the same second as the last answer comes only by asking from the second
            // before (its one list says how each show stands, so reading a change twice is
            // harmless).
            let changes = try await server.subscriptionChanges(device: device, since: nextcloud ? max(0, since - 1) : since)
            added += changes.add
            // At the first look at a list its removals are history (a show unsubscribed on the
            // phone years ago), not news: what is followed here stays.
            if since > 0 { removed.formUnion(changes.remove.filter { !changes.add.contains($0) }) }
            cursors[key] = String(changes.timestamp)
        }
        var followed = try await store.followedSyncURLs()
        var newItems: [MediaItem] = []
        var refused = 0
        for url in added where followed[url] == nil && !removed.contains(url) {
            // A URL carrying a secret (the Basic header a server echoed into it) is no feed to
            // keep: it would be stored and shown.
            guard let id = SyncKeys.followedID(forSubscription: url), host.redactor.redact(url) == url else {
                refused += 1
                continue
            }
            var item = MediaItem(id: id, title: Self.placeholderTitle(url))
            if id.kind == .podcast { item.feed = url }
            item.url = id.kind == .channel ? "https://www.youtube.com/channel/\(id.nativeID)" : nil
            newItems.append(item)
            followed[url] = id
        }
        for url in removed.sorted() {
            guard let id = followed[url] else { continue }
            if try await store.removeFavorite(id) { report.unfollowed += 1 }
            followed[url] = nil
        }
        if !newItems.isEmpty {
            try await store.addFavorites(newItems)
            report.followed = newItems.count
            refreshTitles(newItems.map(\.id))
        }
        if refused > 0 {
            report.skipped.append(
                "\(refused) subscription\(refused == 1 ? " is" : "s are") no feed (another scheme or not a URL)")
        }
        try await store.setSyncValues(cursors)
    }

    /// This machine's subscription changes: the queued ones, and at the first round every show
    /// followed here.
    private func pushSubscriptions(_ server: SyncServer, store: MediaStore, report: inout SyncReport) async throws {
        let queued = try await store.syncOutbox().filter { $0.change == .subscribe || $0.change == .unsubscribe }
        var add = Set(queued.filter { $0.change == .subscribe }.compactMap(\.url))
        var remove = Set(queued.filter { $0.change == .unsubscribe }.compactMap(\.url))
        let first = try await store.syncValue("subscriptionsSent") == nil
        if first { add.formUnion(try await store.followedSyncURLs().keys) }
        remove.subtract(add)
        guard !add.isEmpty || !remove.isEmpty else {
            if first { try await store.setSyncValues(["subscriptionsSent": "1"]) }
            return
        }
        let renamed = try await server.uploadSubscriptions(add: add.sorted(), remove: remove.sorted())
        try await store.removeFromSyncOutbox(queued.map(\.seq))
        try await store.renameSyncURLs(renamed)
        try await store.setSyncValues(["subscriptionsSent": "1"])
        report.subscriptionsSent += add.count + remove.count
        report.renamed += renamed.filter { $0.old != $0.new && !$0.new.isEmpty }.count
    }

    /// How far behind the last cursor actions are asked for again: an action reaches the
    /// server after its time when its device was offline, and both servers filter on that
    /// time (mygpo and Nextcloud alike), so a cursor right at the last one would never see it.
    static let overlap: Int64 = 7 * 86_400

    /// The actions of every device since the last round (with `overlap`), kept when newer.
    /// - Returns: the keys of this machine's own actions the server has (not to be sent again).
    private func pullActions(_ server: SyncServer, store: MediaStore, report: inout SyncReport) async throws -> Set<String> {
        let cursor = Int64(try await store.syncValue("actions") ?? "") ?? 0
        let (actions, skipped, next, more) = try await server.actions(since: cursor > 0 ? max(0, cursor - Self.overlap) : 0)
        report.actionsReceived = actions.count
        if more {
            report.skipped.append(
                "the server has more episode actions than one round reads (\(SyncServer.maxPages * SyncServer.pageSize)); the next round reads on"
            )
        }
        let device = server.account.dialect == .gpodder ? server.account.device : nil
        // What moves a position: a play that says where, a mark as new; not a download or a
        // deletion (AntennaPod deletes what was played), nor this machine's own actions.
        let moving = actions.filter { action in
            (action.action == "new" || (action.action == "play" && action.position != nil))
                && (device == nil || action.device != device)
        }
        let remote = moving.map { action in
            RemoteEpisode(
                episode: action.episode, podcast: action.podcast, guid: action.guid, action: action.action,
                position: action.position.map(Double.init), started: action.started.map(Double.init),
                total: action.total.map(Double.init), at: action.at, device: action.device)
        }
        report.actionsNewer = try await store.keepRemoteEpisodes(remote)
        if skipped > 0 {
            report.skipped.append("\(skipped) episode action\(skipped == 1 ? " was" : "s were") malformed and passed over")
        }
        // A clock far ahead (a phone set to 2030) must not carry the cursor past every real action.
        let ceiling = Int64(Date().timeIntervalSince1970) + 86_400
        try await store.setSyncValues(["actions": String(min(max(cursor, next), ceiling))])
        let own = device.map { device in actions.filter { $0.device == device } } ?? actions
        return Set(own.map(\.key))
    }

    /// This machine's queued episode actions (at the first round every position kept here is
    /// queued first), each named by its show's feed and its media URL.
    private func pushActions(_ server: SyncServer, host: HostRuntime, delivered: Set<String>, report: inout SyncReport)
        async throws
    {
        let store = host.store
        try await store.queueKeptPlaybacks()
        let entries = try await store.syncOutbox().filter { $0.change != .subscribe && $0.change != .unsubscribe }
        let nextcloud = server.account.dialect == .nextcloud
        var dropped: [Int64] = []
        var noFeed = 0
        var unreadable = 0
        var superseded = 0
        // Only what can be sent is read (Nextcloud is sent no downloads or deletions).
        let readable = entries.filter { !(nextcloud && ($0.change == .download || $0.change == .delete)) }
        let (items, failures) = await resolve(Set(readable.compactMap(\.item)), host: host)
        var candidates: [(entry: SyncOutboxEntry, action: EpisodeAction)] = []
        for entry in entries {
            guard let id = entry.item else {
                dropped.append(entry.seq)
                continue
            }
            // Nextcloud keeps one action per episode and (since 3.13.3) only plays: a download
            // or a deletion would replace the play there, or be dropped.
            if nextcloud, entry.change == .download || entry.change == .delete {
                dropped.append(entry.seq)
                continue
            }
            guard let item = items[id] else {
                // Not readable now (a feed down, a directory refusing): kept for the next
                // round, unless the item is gone for good.
                if case .notFound = failures[id]?.error {
                    noFeed += 1
                    dropped.append(entry.seq)
                } else {
                    unreadable += 1
                }
                continue
            }
            guard let episode = SyncKeys.episodeURL(of: item), let podcast = SyncKeys.podcastURL(of: item) else {
                noFeed += 1
                dropped.append(entry.seq)
                continue
            }
            let seconds = Self.seconds
            let position = seconds(entry.position) ?? (entry.change == .play ? seconds(item.duration) : nil)
            let action = EpisodeAction(
                podcast: podcast, episode: episode, guid: SyncKeys.guid(of: item), action: entry.change.rawValue, at: entry.at,
                started: seconds(entry.started), position: position, total: seconds(entry.total ?? item.duration),
                device: server.account.device)
            if delivered.contains(action.key) {
                dropped.append(entry.seq)
                continue
            }
            candidates.append((entry, action))
        }
        // An action older than what another device did to the episode since is news to no one
        // (and Nextcloud would let it replace the newer one).
        let newest = try await store.remoteEpisodes(urls: candidates.map(\.action.episode))
        var actions: [EpisodeAction] = []
        var seqs: [Int64] = []
        for (entry, action) in candidates {
            if let told = newest[action.episode], told.at > action.at {
                superseded += 1
                dropped.append(entry.seq)
                continue
            }
            actions.append(action)
            seqs.append(entry.seq)
        }
        try await store.removeFromSyncOutbox(dropped)
        if noFeed > 0 {
            report.skipped.append(
                noFeed == 1
                    ? "1 played item is gone from its feed or has none a sync server knows"
                    : "\(noFeed) played items are gone from their feeds or have none a sync server knows")
        }
        if unreadable > 0 {
            report.skipped.append(
                unreadable == 1
                    ? "1 played item could not be read now; it waits for the next sync"
                    : "\(unreadable) played items could not be read now; they wait for the next sync")
        }
        if superseded > 0 {
            report.skipped.append(
                "\(superseded) action\(superseded == 1 ? " was" : "s were") older than what another device did since, and not sent"
            )
        }
        var refused: [String] = []
        try await server.upload(actions) { range in
            try await store.removeFromSyncOutbox(Array(seqs[range]))
            report.actionsSent += range.count
        } refused: { index, why in
            try await store.removeFromSyncOutbox([seqs[index]])
            logger.warning("sync: the server refused the \(actions[index].action) of \(actions[index].episode): \(why)")
            refused.append(why)
        }
        if let why = refused.first {
            report.skipped.append(
                "the server refused \(refused.count) action\(refused.count == 1 ? "" : "s") (\(why)); not sent again")
        }
    }

    /// Seconds as the APIs carry them; a length no episode has (a hostile feed's 1e40, NaN) is
    /// none (`Int(_: Double)` would trap).
    static func seconds(_ value: Double?) -> Int? {
        value.flatMap { $0 >= 0 && $0 < 1e9 ? Int(finite: $0.rounded()) : nil }
    }

    /// The items behind queued actions, four at a time: from the provider (a podcast episode
    /// comes from the kept feed), else the favorite's snapshot.
    /// - Returns: the items read, and why the others could not be.
    private func resolve(_ ids: Set<ItemID>, host: HostRuntime) async -> ([ItemID: MediaItem], [ItemID: ProviderFailure]) {
        var found: [ItemID: MediaItem] = [:]
        var failures: [ItemID: ProviderFailure] = [:]
        var pending = Array(ids)
        await withTaskGroup(of: (ItemID, Result<MediaItem, any Error>).self) { group in
            func next() {
                guard let id = pending.popLast() else { return }
                group.addTask {
                    do {
                        let item = try await host.itemOrSnapshot(id)
                        return (id, .success(item))
                    } catch {
                        return (id, .failure(error))
                    }
                }
            }
            for _ in 0..<4 { next() }
            while let (id, result) = await group.next() {
                switch result {
                case .success(let item): found[id] = item
                case .failure(let error):
                    logger.debug("sync: cannot read \(id): \(error)")
                    failures[id] =
                        error as? ProviderFailure ?? ProviderFailure(provider: id.provider, error: .network(Self.text(error)))
                }
                next()
            }
        }
        return (found, failures)
    }

    /// Shows followed from the server have only their URL: their titles come from their feeds,
    /// in the background (a first sync of 500 shows does not wait for 500 feeds).
    func refreshTitles(_ ids: [ItemID]) {
        guard let host = hostRef else { return }
        Task.detached { [logger] in
            var pending = ids
            await withTaskGroup(of: Void.self) { group in
                func next() {
                    guard let id = pending.popLast() else { return }
                    group.addTask {
                        do {
                            let item = try await host.itemOrSnapshot(id)
                            // A feed that could not be read has no title to give.
                            guard item.extra?["feedError"] == nil else { return }
                            // Still followed: a newer snapshot with the feed's title.
                            try await host.store.refreshFavorite(item)
                            // A show another device follows at its new address, followed here
                            // at the old one (the same podcast:guid, and the old feed says it
                            // moved): one show, at the new one.
                            _ = try await host.replaceMovedShow(by: item)
                        } catch {
                            logger.debug("sync: no title for \(id): \(error)")
                        }
                    }
                }
                for _ in 0..<4 { next() }
                while await group.next() != nil { next() }
            }
        }
    }

    /// `example.com/feed.rss` for a show known only by its URL.
    static func placeholderTitle(_ url: String) -> String {
        var text = Substring(url)
        if let scheme = text.firstRange(of: "://") { text = text[scheme.upperBound...] }
        return String(text.prefix(80))
    }
}

/// An exclusive lock on a file in the data dir, held across processes while a round runs.
struct DataDirLock: Sendable {
    let fd: Int32

    static func acquire(_ path: String, waiting seconds: Double = 120) async throws -> DataDirLock {
        try? FileManager.default.createDirectory(
            atPath: Path.directory(of: path), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw ProviderFailure(provider: "sync", error: .network("cannot open \(path): \(String(cString: strerror(errno)))"))
        }
        let deadline = ContinuousClock.now + .seconds(seconds)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard ContinuousClock.now < deadline else {
                close(fd)
                throw ProviderFailure(
                    provider: "sync", error: .network("another process of this data dir has been syncing for \(Int(seconds)) s"))
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return DataDirLock(fd: fd)
    }

    func release() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
