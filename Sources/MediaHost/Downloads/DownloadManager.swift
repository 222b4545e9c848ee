import Basics
import FoundationEssentials
import JSONRPC
import MediaKit
import MediaStore

#if canImport(Glibc)
    import Glibc
#endif

/// Queues and runs downloads: a FIFO queue with a concurrency limit, bytes streamed to
/// `<name>.part` (memory stays flat), fsync and an atomic rename at the end, resume with Range +
/// If-Range after a pause or a crash, retries of transient failures, and notifications of
/// progress and every state change.
public actor DownloadManager {
    let store: MediaStore
    let http: any HTTPClient
    let events: EventHub
    let logger: Logger
    /// Errors are kept without secrets (a server may echo the request's key back).
    let redactor: Redactor
    /// The downloads folder; nothing is written outside it.
    public nonisolated let root: String
    let concurrency: @Sendable () -> Int
    /// Asks the item's provider again where its media is: media URLs expire, hosts move.
    let refreshSource: @Sendable (ItemID) async -> DownloadSource?

    /// Running downloads' latest progress.
    public nonisolated let live: LiveDownloads
    private var tasks: [ItemID: Task<Void, Never>] = [:]
    /// What a pause or cancel asked for, read when the transfer stops.
    private var stopReasons: [ItemID: DownloadRecord.State] = [:]
    /// Set by `handOver`: this process starts no more downloads.
    private var handingOver = false
    /// Downloads another process of the data dir runs (it holds their lock): left to it, looked
    /// at again now and then in case that process went away.
    private var elsewhere: Set<ItemID> = []

    /// How often a download another process runs is looked at again.
    static let elsewhereRecheck: Duration = .seconds(5)

    static let transientRetries = 3
    /// What follows a completed download (its transcript is fetched), beside the next one.
    private let completed: @Sendable (ItemID) async -> Void

    init(
        store: MediaStore, http: any HTTPClient, events: EventHub, logger: Logger, redactor: Redactor = Redactor(), root: String,
        concurrency: @escaping @Sendable () -> Int,
        refreshSource: @escaping @Sendable (ItemID) async -> DownloadSource? = { _ in nil },
        completed: @escaping @Sendable (ItemID) async -> Void = { _ in }
    ) {
        self.refreshSource = refreshSource
        self.completed = completed
        self.store = store
        self.http = http
        self.events = events
        self.logger = logger
        self.redactor = redactor
        self.root = root
        self.concurrency = concurrency
        live = LiveDownloads(events: events, store: store)
    }

    // MARK: Commands

    /// Queues a download, or returns the existing one (a failed or cancelled one is queued again).
    func start(_ id: ItemID, source: DownloadSource, title: String) async throws -> DownloadRecord {
        if var existing = try await store.download(id) {
            if existing.state == .failed || existing.state == .cancelled {
                existing.state = .queued
                existing.error = nil
                existing.use(source)
                try await save(existing, announce: true)
                pump()
                return try await store.download(id) ?? existing
            }
            return existing
        }
        let store = self.store
        let path = try await DownloadNaming.path(
            root: root, provider: id.provider, collection: source.collection, name: source.suggestedName,
            fileExtension: source.fileExtension
        ) { candidate in
            if FileManager.default.fileExists(atPath: candidate) || FileManager.default.fileExists(atPath: candidate + ".part") {
                return true
            }
            return try await store.downloadPathTaken(candidate)
        }
        var new = DownloadRecord(
            id: id, title: title, url: source.url.absoluteString, path: path,
            expectedLength: ByteCount.checked(source.expectedLength))
        new.program = source.program.flatMap(Self.encoded)
        let record = try await store.insertDownload(new)
        publishState(record)
        pump()
        return try await store.download(id) ?? record
    }

    func pause(_ id: ItemID) async throws -> DownloadRecord {
        var record = try await existing(id)
        switch record.state {
        case .running:
            // The transfer records where it stopped (bytes, validators) and the new state.
            stopReasons[id] = .paused
            tasks[id]?.cancel()
            await tasks[id]?.value
        case .queued:
            record.state = .paused
            try await save(record, announce: true)
        case .paused: break
        case .completed, .failed, .cancelled:
            throw HostError.invalidArgument("\(id) is \(record.state.rawValue); only queued or running downloads pause")
        }
        return try await existing(id)
    }

    func resume(_ id: ItemID) async throws -> DownloadRecord {
        var record = try await existing(id)
        switch record.state {
        case .paused, .failed, .cancelled:
            record.state = .queued
            record.error = nil
            if let source = await refreshSource(id) { record.use(source) }
            try await save(record, announce: true)
            pump()
        case .queued, .running, .completed: break
        }
        return try await existing(id)
    }

    func cancel(_ id: ItemID) async throws -> DownloadRecord {
        var record = try await existing(id)
        guard record.state != .completed else {
            throw HostError.invalidArgument(
                "\(id) is complete; to delete it, remove it (downloads.remove; `remove <n>` in the REPL)")
        }
        if record.state == .running {
            stopReasons[id] = .cancelled
            tasks[id]?.cancel()
            await tasks[id]?.value
            record = try await existing(id)
        }
        try? FileManager.default.removeItem(atPath: record.partPath)
        if record.program != nil { ProgramDownloadAttempt.removeLeftovers(of: record.path) }
        record.state = .cancelled
        record.bytes = 0
        record.etag = nil
        record.lastModified = nil
        try await save(record, announce: true)
        return try await existing(id)
    }

    /// Forgets a download; deletes its file too unless `keepFile`.
    func remove(_ id: ItemID, keepFile: Bool) async throws -> Bool {
        guard let record = try await store.download(id) else { return false }
        if record.state == .running {
            stopReasons[id] = .cancelled
            tasks[id]?.cancel()
            await tasks[id]?.value
        }
        try? FileManager.default.removeItem(atPath: record.partPath)
        if !keepFile { try? FileManager.default.removeItem(atPath: record.path) }
        let removed = try await store.deleteDownload(id)
        events.publish(HostEvent(DownloadStateChange(id: id.description, state: "removed")))
        pump()
        return removed
    }

    /// Picks up what a previous process left running or queued; front ends call it at start.
    public func resumeInterrupted() async {
        do {
            for var record in try await store.downloads(in: [.running, .queued]) where tasks[record.id] == nil {
                // Running in another process (the service, a front end): it is that one's.
                guard !DownloadLock.isHeldElsewhere(record.partPath) else { continue }
                record.state = .queued
                if let source = await refreshSource(record.id) { record.use(source) }
                try await save(record, announce: true)
            }
        } catch {
            logger.warning("cannot read interrupted downloads: \(error)")
        }
        pump()
    }

    /// Stops every running transfer where it got to and starts no more, leaving them queued
    /// with their .part files (and their locks released) for another process to take over: the
    /// REPL handing its downloads to the background service.
    public func handOver() async {
        handingOver = true
        let running = tasks
        for (id, task) in running {
            stopReasons[id] = .queued
            task.cancel()
        }
        for task in running.values { await task.value }
    }

    /// Waits until nothing runs or waits here (tests and scripts).
    public func idle() async {
        while true {
            if let task = tasks.values.first {
                await task.value
                continue
            }
            // Let a pending pump start what is queued before deciding.
            await fill()
            if tasks.isEmpty { return }
        }
    }

    // MARK: Scheduling

    /// Starts queued downloads, oldest first, up to the concurrency limit.
    private func pump() {
        Task { await self.fill() }
    }

    private func fill() async {
        guard !handingOver else { return }
        let limit = max(1, concurrency())
        guard tasks.count < limit, let queued = try? await store.downloads(in: [.queued]) else { return }
        // No suspension from the check to the insertion: two fills cannot start one download twice.
        for record in queued where tasks.count < limit && tasks[record.id] == nil && !elsewhere.contains(record.id) {
            let manager = self
            tasks[record.id] = Task.detached { await manager.run(record) }
        }
    }

    /// Every queued download paused, saying why.
    private func pauseQueued(because reason: String) async {
        do {
            for var queued in try await store.downloads(in: [.queued]) {
                queued.state = .paused
                queued.error = reason
                try await save(queued, announce: true)
            }
        } catch {
            logger.error("cannot pause the queued downloads (\(reason)): \(error)")
        }
    }

    private func finished(_ id: ItemID) {
        tasks[id] = nil
        stopReasons[id] = nil
        pump()
    }

    /// Leaves a download to the process that holds its lock, and looks again later: if that
    /// process has gone (killed mid-download), this one takes it over.
    private func leaveToAnotherProcess(_ id: ItemID) {
        elsewhere.insert(id)
        tasks[id] = nil
        stopReasons[id] = nil
        Task {
            try? await Task.sleep(for: Self.elsewhereRecheck)
            await self.lookAgain(id)
        }
    }

    private func lookAgain(_ id: ItemID) async {
        elsewhere.remove(id)
        guard var record = try? await store.download(id) else { return }
        guard !DownloadLock.isHeldElsewhere(record.partPath) else {
            leaveToAnotherProcess(id)
            return
        }
        // Its process is gone: what it left running is queued here.
        if record.state == .running {
            record.state = .queued
            try? await save(record, announce: true)
        }
        pump()
    }

    // MARK: Running one download

    private func run(_ start: DownloadRecord) async {
        var record = start
        // Someone may have paused or cancelled it since it was listed as queued.
        guard let current = try? await store.download(record.id), current.state == .queued else {
            finished(record.id)
            return
        }
        // Another process runs it: nothing here changes its record or says anything about it.
        guard !DownloadLock.isHeldElsewhere(current.partPath) else {
            leaveToAnotherProcess(record.id)
            return
        }
        record = current
        record.state = .running
        record.error = nil
        try? await save(record, announce: true)
        var attempt = 0
        while true {
            let store = self.store
            let id = record.id
            let outcome: DownloadAttempt.Outcome
            if let program = record.program.flatMap(Self.decoded) {
                outcome = await ProgramDownloadAttempt(record: record, download: program, events: events).run()
            } else {
                outcome = await DownloadAttempt(record: record, http: http, events: events) { etag, lastModified, total in
                    // Stored at once: after a crash, the .part can only be resumed if they are known.
                    // Only these columns: a whole-record write could land after "completed".
                    Task.detached {
                        try? await store.updateDownloadValidators(id, etag: etag, lastModified: lastModified, total: total)
                    }
                }.run()
            }
            // Keep what the transfer learnt (validators, sizes) whatever happened next.
            record.bytes = outcome.bytes
            record.total = outcome.total ?? record.total
            record.etag = outcome.etag ?? record.etag
            record.lastModified = outcome.lastModified ?? record.lastModified
            if let stop = stopReasons[record.id] {
                // Paused or cancelled: keep where it got to; cancel() then deletes the .part.
                // This task is cancelled, and the store refuses work from cancelled tasks.
                record.state = stop
                discardUnresumablePart(&record)
                let stopped = record
                // cancel() announces the cancellation itself, once the .part is gone.
                await Task.detached { try? await self.save(stopped, announce: stop != .cancelled) }.value
                break
            }
            switch outcome.result {
            case .completed(let note):
                record.state = .completed
                record.error = nil
                record.note = note
                try? await save(record, announce: true)
                let id = record.id
                Task.detached { [completed] in await completed(id) }
            case .busy:
                // Another process took its lock meanwhile: it is that one's (which says so).
                leaveToAnotherProcess(record.id)
                return
            case .transient(let reason) where attempt < Self.transientRetries:
                attempt += 1
                logger.notice("download \(record.id) will retry (\(attempt)/\(Self.transientRetries)): \(reason)")
                try? await store.updateDownload(record)
                try? await Task.sleep(for: .milliseconds(500 * (1 << (attempt - 1))))
                if Task.isCancelled, stopReasons[record.id] != nil { break }
                continue
            case .diskFull(let reason):
                // Paused, with what it has so far, and every queued one with it: each would fail
                // the same way (an automatic download after a refresh, one after another). Nothing
                // is deleted to make room; `resume` goes on once there is.
                record.state = .paused
                record.error = "\(reason): paused with the others; free some space, then `resume`"
                try? await save(record, announce: true)
                await pauseQueued(because: "paused: the disk is full; free some space, then `resume`")
            case .transient(let reason), .permanent(let reason):
                record.state = .failed
                record.error = redactor.scrub(reason, keepNewlines: false)
                discardUnresumablePart(&record)
                try? await save(record, announce: true)
            }
            break
        }
        finished(record.id)
    }

    static func encoded(_ program: ProgramDownload) -> String? {
        (try? JSONEncoder().encode(program)).map { String(decoding: $0, as: UTF8.self) }
    }

    static func decoded(_ text: String) -> ProgramDownload? {
        try? JSONDecoder().decode(ProgramDownload.self, from: Data(text.utf8))
    }

    /// A `.part` that cannot be resumed (nothing in it, or no validator to ask the server whether
    /// it is still the same file) is only wasted disk: remove it. A program's partial files are
    /// its own to resume.
    private func discardUnresumablePart(_ record: inout DownloadRecord) {
        guard record.program == nil else { return }
        guard record.bytes == 0 || (record.etag == nil && record.lastModified == nil) else { return }
        try? FileManager.default.removeItem(atPath: record.partPath)
        record.bytes = 0
    }

    private func existing(_ id: ItemID) async throws -> DownloadRecord {
        guard let record = try await store.download(id) else {
            throw ProviderFailure(
                provider: id.provider, error: .notFound("no download for \(id); start one with downloads.start"))
        }
        return record
    }

    private func save(_ record: DownloadRecord, announce: Bool) async throws {
        try await store.updateDownload(record)
        if announce { publishState(record) }
    }

    private func publishState(_ record: DownloadRecord) {
        let change = DownloadStateChange(
            id: record.id.description, state: record.state.rawValue, path: record.state == .completed ? record.path : nil,
            error: record.error)
        events.publish(HostEvent(change))
    }
}

extension DownloadRecord {
    /// Where the media is now, as the provider says again: its URL, or the program that makes it
    /// (whose words hold the address it reads).
    mutating func use(_ source: DownloadSource) {
        url = source.url.absoluteString
        program = source.program.flatMap(DownloadManager.encoded)
    }
}
