import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit
import MediaStore
import Synchronization

extension RefreshRun: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        try await host.refresh(self)
    }
}

extension NewList: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let limit = limit ?? 100
        guard (1...500).contains(limit) else { throw HostError.invalidArgument("limit must be between 1 and 500") }
        let (items, total) = try await host.store.inbox(limit: limit)
        if keep != true { try await host.store.markSeen(items.map(\.id)) }
        let refreshed = try await host.store.lastRefresh()
        return Response(
            items: try await host.annotate(items), total: total, refreshed: refreshed.map { ISODate.string(from: $0) })
    }
}

extension NewSeen: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let marked: Int
        switch (ids, all) {
        case (let ids?, nil) where !ids.isEmpty: marked = try await host.store.markSeen(ids)
        case (nil, true?): marked = try await host.store.markAllSeen()
        default: throw HostError.invalidArgument("give ids, or all: true, to mark seen (one of them)")
        }
        let left = try await host.store.inbox(limit: 0).total
        return Response(marked: marked, left: left)
    }
}

extension HostRuntime {
    /// Shows read at once in a refresh, and at most from one host (a feed's server, else a
    /// provider's service): a few per host, as a well-behaved feed reader asks.
    static let refreshConcurrency = (total: 16, perHost: 4)

    /// The shows and channels followed here: favorites of a kind that has episodes, of the
    /// providers registered, in the order they were followed.
    func followedShows(provider: String? = nil, limit: Int = 100_000) async throws -> [MediaItem] {
        var followed: [MediaItem] = []
        var cursor: Cursor?
        repeat {
            let page = try await store.favorites(provider: provider, limit: 500, after: cursor)
            followed += page.items.filter { $0.id.kind.isContainer && providerIDs.contains($0.id.provider) }
            cursor = page.next
        } while cursor != nil && followed.count < limit
        return Array(followed.prefix(limit))
    }

    /// One refresh: every followed show read (a few at a time per host), what arrived kept as
    /// each is read (a refresh killed halfway keeps what it read), failures kept with why; a
    /// dry run keeps nothing.
    func refresh(_ request: RefreshRun) async throws -> RefreshRun.Response {
        let started = ContinuousClock.now
        let dryRun = request.dryRun == true
        if let provider = request.provider, !providerIDs.contains(provider) {
            throw HostError.unknownProvider(provider, known: providerIDs)
        }
        let lock = dryRun ? nil : try RefreshLock(dataDir: paths.dataDir)
        defer { lock?.release() }
        var shows = try await followedShows(provider: request.provider)
        if let show = request.show {
            if let provider = request.provider, provider != show.provider {
                throw HostError.invalidArgument("\(show) is of \(show.provider), not of \(provider): give one of them")
            }
            shows = shows.filter { $0.id == show }
            guard !shows.isEmpty else {
                throw HostError.invalidArgument("\(show) is not followed here: `fav` it, then refresh")
            }
        }
        let states = try await store.feedStates(shows.map(\.id))
        let outcomes = await Self.eachShow(shows, limits: Self.refreshConcurrency, progress: refreshProgress.withLock { $0 }) {
            show in
            do {
                // Each show within http.timeout, as opening it would be: one slow feed costs its own
                // time, not the whole refresh's (and the lock's).
                let episodes = try await self.withDeadline(true) {
                    try await FetchPolicy.$requireFresh.withValue(true) {
                        try await self.withProvider(show.id.provider) { try await $0.children(of: show.id, cursor: nil).items }
                    }
                }
                let kept = try await self.keepRefresh(of: show, episodes: episodes, dryRun: dryRun)
                return .success(kept)
            } catch {
                return .failure(error)
            }
        }
        var arrived: [MediaItem] = []
        var byShow: [(show: MediaItem, items: [MediaItem])] = []
        var readUnchanged: [ItemID] = []
        var failed: [RefreshRun.Failure] = []
        for (show, outcome) in zip(shows, outcomes) {
            switch outcome {
            case .success(let (items, unchanged)):
                if unchanged { readUnchanged.append(show.id) }
                let named = items.map { item in
                    var item = item
                    if item.subtitle == nil { item.subtitle = show.title }
                    return item
                }
                arrived += named
                if !named.isEmpty { byShow.append((show, named)) }
            case .failure(let error):
                if error is CancellationError || Task.isCancelled { throw CancellationError() }
                let rpc = outgoing(Dispatcher.rpcError(for: error, method: RefreshRun.method, logger: logger))
                if !dryRun {
                    do {
                        try await store.recordRefreshFailure(of: show.id, rpc.message)
                    } catch {
                        logger.error("refresh: cannot keep that \(show.id) failed: \(error)")
                    }
                }
                failed.append(
                    RefreshRun.Failure(
                        id: show.id, title: show.title, code: rpc.code, message: rpc.message,
                        since: states[show.id]?.failingSince.map { ISODate.string(from: $0) }))
            }
        }
        try await store.recordUnchanged(readUnchanged)
        var (downloads, skipped) = try await autoDownloads(byShow, dryRun: dryRun)
        downloads += try await retryAutoDownloads(followed: shows, dryRun: dryRun)
        let deletions = try await tidyDownloads(followed: shows, dryRun: dryRun)
        let annotated = try await annotate(arrived)
        let response = RefreshRun.Response(
            shows: shows.count, arrived: Self.newestFirst(annotated), failed: failed, downloads: downloads,
            deletions: deletions, skipped: skipped.isEmpty ? nil : skipped, dryRun: dryRun ? true : nil,
            seconds: Double((ContinuousClock.now - started).milliseconds) / 1000)
        logger.info(
            "refresh\(dryRun ? " (dry run)" : ""): \(shows.count) shows read, \(response.arrived.count) arrived, \(failed.count) failed, in \(Int(response.seconds * 1000)) ms"
        )
        if !dryRun { for module in modules { await module.refreshDidFinish(self, response) } }
        return response
    }

    /// The downloads each show's `auto_download` starts (or would) of what arrived: its filters
    /// passed, not downloaded already, the newest N or all; and what it leaves, with why.
    private func autoDownloads(
        _ arrived: [(show: MediaItem, items: [MediaItem])], dryRun: Bool
    ) async throws -> (downloads: [RefreshRun.Action], skipped: [RefreshRun.Action]) {
        var actions: [RefreshRun.Action] = []
        var skipped: [RefreshRun.Action] = []
        for (show, items) in arrived {
            let rules = try await effectiveRules(of: show.id)
            guard rules.autoDownload != .off else { continue }
            var chosen: [MediaItem] = []
            for item in Self.newestFirst(try await annotate(items)) {
                guard item.kind == .episode || item.kind == .video, item.download == nil else { continue }
                if let why = rules.filteredOut(item) {
                    skipped.append(RefreshRun.Action(id: item.id, title: item.title, show: show.title, reason: why))
                } else {
                    chosen.append(item)
                }
            }
            let reason: String
            switch rules.autoDownload {
            case .off: continue
            case .all: reason = "auto_download all"
            case .newest(let count):
                reason = "auto_download \(count): the newest \(count) of what arrived"
                for item in chosen.dropFirst(count) {
                    skipped.append(
                        RefreshRun.Action(
                            id: item.id, title: item.title, show: show.title,
                            reason: "beyond the newest \(count) of what arrived (auto_download \(count))"))
                }
                chosen = Array(chosen.prefix(count))
            }
            for item in chosen {
                var action = RefreshRun.Action(id: item.id, title: item.title, show: show.title, reason: reason)
                if !dryRun {
                    do {
                        _ = try await dispatcher.run(DownloadsStart(id: item.id))
                    } catch {
                        action.reason += "; it could not start: \(error.message)"
                    }
                }
                actions.append(action)
            }
        }
        return (actions, skipped)
    }

    /// How long a failed automatic download is tried again at each refresh.
    static let autoDownloadRetryDays = 7.0

    /// Downloads of what arrived that failed (a server down for an hour), tried again at each
    /// refresh for a week while the show still downloads by its rules: a passing error does not
    /// lose the episode.
    private func retryAutoDownloads(followed: [MediaItem], dryRun: Bool) async throws -> [RefreshRun.Action] {
        let failed = try await store.downloads(in: [.failed]).filter {
            Date().timeIntervalSince($0.createdAt) < Self.autoDownloadRetryDays * 86_400
        }
        guard !failed.isEmpty else { return [] }
        let seen = try await store.shows(of: failed.map(\.id))
        let titles = Dictionary(followed.map { ($0.id, $0.title) }) { first, _ in first }
        var actions: [RefreshRun.Action] = []
        for record in failed {
            guard let show = seen[record.id]?.show, let title = titles[show],
                try await effectiveRules(of: show).autoDownload != .off
            else { continue }
            var action = RefreshRun.Action(
                id: record.id, title: record.title, show: title,
                reason: "auto_download: trying again (it failed: \(record.error ?? "no reason kept"))")
            if !dryRun {
                do {
                    _ = try await dispatcher.run(DownloadsResume(id: record.id))
                } catch {
                    action.reason += "; it could not start: \(error.message)"
                }
            }
            actions.append(action)
        }
        return actions
    }

    /// The downloads the rules no longer keep, deleted (or would be): per show, played ones
    /// beyond `keep_downloads` and played more than `delete_played_after_days` ago; then, over
    /// `downloads.max_gb`, the oldest played anywhere. Never a favorite, an item in a list or the
    /// queue, one the player or a module uses, nor anything not played.
    private func tidyDownloads(followed: [MediaItem], dryRun: Bool) async throws -> [RefreshRun.Action] {
        let completed = try await store.downloads(in: [.completed])
        guard !completed.isEmpty else { return [] }
        let ids = completed.map(\.id)
        let playbacks = try await store.playbacks(for: ids)
        let annotations = try await store.annotations(for: ids)
        var inUse = Set<ItemID>()
        for module in modules { inUse.formUnion(await module.itemsInUse(self)) }
        let queued = Set(try await store.queue().items.map(\.id))
        // Only what was played may go, and nothing a person keeps or uses.
        let deletable = completed.filter { record in
            playbacks[record.id]?.played == true && !annotations.favorites.contains(record.id)
                && annotations.lists[record.id]?.isEmpty ?? true && !queued.contains(record.id) && !inUse.contains(record.id)
        }
        let seen = try await store.shows(of: ids)
        let showOf = seen.mapValues(\.show)
        let titles = Dictionary(followed.map { ($0.id, $0.title) }) { first, _ in first }
        let now = Date()
        var chosen: [(record: DownloadRecord, reason: String)] = []
        var taken = Set<ItemID>()
        let byShow = Dictionary(grouping: completed.filter { showOf[$0.id].map { titles[$0] != nil } ?? false }) {
            showOf[$0.id]!
        }
        for (show, records) in byShow.sorted(by: { $0.key.description < $1.key.description }) {
            let rules = try await effectiveRules(of: show)
            let mayGo = Set(deletable.map(\.id))
            if rules.deletePlayedAfterDays > 0 {
                for record in records where mayGo.contains(record.id) && !taken.contains(record.id) {
                    guard let played = playbacks[record.id]?.updatedAt else { continue }
                    let days = now.timeIntervalSince(played) / 86_400
                    if days > rules.deletePlayedAfterDays {
                        chosen.append(
                            (
                                record,
                                "played \(Int(days)) days ago (delete_played_after_days \(Self.number(rules.deletePlayedAfterDays)))"
                            ))
                        taken.insert(record.id)
                    }
                }
            }
            if rules.keepDownloads > 0 {
                // The newest by publication (as the refresh saw it), not by when downloaded.
                let newestFirst = records.sorted {
                    (seen[$0.id]?.published ?? $0.createdAt) > (seen[$1.id]?.published ?? $1.createdAt)
                }
                for record in newestFirst.dropFirst(rules.keepDownloads)
                where mayGo.contains(record.id) && !taken.contains(record.id) {
                    chosen.append(
                        (record, "beyond the newest \(rules.keepDownloads) kept (keep_downloads \(rules.keepDownloads))"))
                    taken.insert(record.id)
                }
            }
        }
        let budget = Int64(config.integer(HostSettings.downloadsMaxGB)) * 1_000_000_000
        if budget > 0 {
            var total = completed.filter { !taken.contains($0.id) }.reduce(Int64(0)) { $0 + $1.bytes }
            let oldestPlayedFirst = deletable.filter { !taken.contains($0.id) }.sorted {
                (playbacks[$0.id]?.updatedAt ?? .distantPast) < (playbacks[$1.id]?.updatedAt ?? .distantPast)
            }
            for record in oldestPlayedFirst where total > budget {
                chosen.append((record, "downloads over \(budget / 1_000_000_000) GB (downloads.max_gb): the oldest played first"))
                taken.insert(record.id)
                total -= record.bytes
            }
        }
        var actions: [RefreshRun.Action] = []
        for (record, reason) in chosen {
            var action = RefreshRun.Action(
                id: record.id, title: record.title, show: showOf[record.id].flatMap { titles[$0] }, reason: reason,
                path: record.path, bytes: record.bytes)
            if !dryRun {
                do {
                    _ = try await dispatcher.run(DownloadsRemove(id: record.id))
                } catch {
                    action.reason += "; it could not be deleted: \(error.message)"
                }
            }
            actions.append(action)
        }
        return actions
    }

    static func number(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }

    /// What arrived of `show` (kept, unless a dry run). Episodes played already (on another
    /// device) are known but not new.
    /// - Returns: what arrived, and whether the show is left to be kept as read with nothing new
    ///   (`recordUnchanged`, once for all of them).
    private func keepRefresh(of show: MediaItem, episodes: [MediaItem], dryRun: Bool) async throws -> (
        arrived: [MediaItem], unchanged: Bool
    ) {
        let arriving = try await store.arrivals(of: show.id, in: episodes)
        if dryRun || arriving.isEmpty { return (arriving, !dryRun) }
        let played = Set(try await annotate(arriving).filter { $0.played == true }.map(\.id))
        let arrived = try await store.recordRefresh(of: show.id, episodes: episodes, seen: played, expected: arriving)
        return (arrived, false)
    }

    /// `work` for each show, at most `limits.total` at once and `limits.perHost` for one host;
    /// the results in the shows' order.
    static func eachShow<T: Sendable>(
        _ shows: [MediaItem], limits: (total: Int, perHost: Int), progress: (@Sendable (Int, Int) -> Void)? = nil,
        _ work: @escaping @Sendable (MediaItem) async -> Swift.Result<T, any Error>
    ) async -> [Swift.Result<T, any Error>] {
        let hosts = shows.map(refreshHost)
        var results = [Swift.Result<T, any Error>?](repeating: nil, count: shows.count)
        await withTaskGroup(of: (Int, Swift.Result<T, any Error>).self) { group in
            var waiting = Array(shows.indices)
            var running: [String: Int] = [:]
            var inFlight = 0
            func startWhatMay() {
                var index = 0
                while inFlight < limits.total, index < waiting.count {
                    let candidate = waiting[index]
                    let host = hosts[candidate]
                    guard running[host, default: 0] < limits.perHost else {
                        index += 1
                        continue
                    }
                    waiting.remove(at: index)
                    running[host, default: 0] += 1
                    inFlight += 1
                    let show = shows[candidate]
                    group.addTask {
                        // Awaited into a `let` before the tuple is made (the tuple-await miscompile).
                        let result = await work(show)
                        return (candidate, result)
                    }
                }
            }
            startWhatMay()
            var done = 0
            for await (index, result) in group {
                results[index] = result
                done += 1
                progress?(done, shows.count)
                running[hosts[index], default: 1] -= 1
                inFlight -= 1
                startWhatMay()
            }
        }
        return results.enumerated().map { index, result in
            // Every task answers with its index: one missing is a defect, never "nothing new".
            result ?? .failure(HostError.storage("reading \(shows[index].id) gave no result (a defect: please report it)"))
        }
    }

    /// Where a show is read from: its feed's host, else its provider's service.
    static func refreshHost(_ show: MediaItem) -> String {
        if let feed = show.feed, let host = URL(string: feed)?.host(), !host.isEmpty { return host.lowercased() }
        return show.id.provider
    }

    /// Newest first by date; undated ones keep their order, last.
    static func newestFirst(_ items: [MediaItem]) -> [MediaItem] {
        let dates = items.map { $0.published.flatMap(ISODate.parse) }
        return items.indices.sorted { a, b in
            switch (dates[a], dates[b]) {
            case let (x?, y?): x != y ? x > y : a < b
            case (_?, nil): true
            case (nil, _?): false
            case (nil, nil): a < b
            }
        }.map { items[$0] }
    }
}

/// One refresh at a time on a data dir, across processes (the service's timer, cron's
/// `mediahost refresh`, a person's): an exclusive `flock` on run/refresh.lock, which names its
/// holder so a refusal says who. The kernel lets go of it when its process dies (kill -9 too).
final class RefreshLock: Sendable {
    private let descriptor: Int32

    init(dataDir: String) throws {
        let folder = dataDir + "/run"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let path = folder + "/refresh.lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw HostError.storage("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = Self.holder(descriptor)
            close(descriptor)
            throw HostError.busy(
                "a refresh is already running\(holder.map { " (\($0))" } ?? ""); this one was not started: try again when it ends"
            )
        }
        self.descriptor = descriptor
        let note = "process \(getpid()), since \(ISODate.string(from: Date()))"
        _ = ftruncate(descriptor, 0)
        _ = Descriptor.writeAll(descriptor, Array(note.utf8))
    }

    /// Lets the next refresh run.
    func release() {
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    private static func holder(_ descriptor: Int32) -> String? {
        var buffer = [UInt8](repeating: 0, count: 200)
        let count = pread(descriptor, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }
}

extension HostRuntime {
    /// In the service: what is followed is refreshed at its start, then whenever the last refresh
    /// (its own, cron's or a person's) is `refresh.interval_minutes` old; looked at every minute at
    /// most, so a changed interval takes effect soon. A refresh that fails is logged.
    func refreshPeriodically() {
        Task.detached { [weak self] in
            var first = true
            // This timer's own last run: with nothing followed the store keeps no time of it.
            var ranAt: Date?
            while let self, !Task.isCancelled {
                let interval = self.config.minutes(HostSettings.refreshIntervalMinutes) * 60
                var wait = 60.0
                if interval > 0 {
                    let kept = (try? await self.store.lastRefresh()) ?? nil
                    let last = [kept, ranAt].compactMap { $0 }.max()
                    let age = last.map { Date().timeIntervalSince($0) } ?? .infinity
                    if first || age >= interval - 0.5 {
                        ranAt = Date()
                        await self.refreshQuietly()
                        wait = interval
                    } else {
                        wait = interval - age
                    }
                }
                first = false
                try? await Task.sleep(for: .seconds(min(max(wait, 0.5), 60)))
            }
        }
    }

    /// A refresh whose failure is logged, not thrown.
    func refreshQuietly() async {
        do {
            _ = try await dispatcher.run(RefreshRun())
        } catch  where error.data?["kind"]?.stringValue == "busy" {
            logger.info("refresh: \(error.message)")
        } catch {
            logger.warning("refresh failed: \(error.message)")
        }
    }
}
