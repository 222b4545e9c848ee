import MediaKit
import MediaStore
import Synchronization

/// A provider's cache, kept in the host's database under the provider's id.
///
/// What a provider cached depends on where it fetched it from and how it was set up: a page of
/// the sandbox on yesterday's port holds links to that port. The keys are namespaced by the
/// provider's settings (base URL, instance, any other that is not a secret), so after a change
/// (the sandbox on a new port, another instance) nothing cached under the old ones is used;
/// those entries age out like any other.
struct StoreProviderCache: ProviderCache {
    let store: MediaStore
    let provider: String
    let logger: Logger
    /// Put before every key: empty for a provider with no settings made.
    var namespace = ""

    /// "" with no settings made, else a short digest of them ("@1a2b3c4d:").
    static func namespace(_ config: ProviderConfig, _ descriptor: ProviderDescriptor) -> String {
        let secret = Set(descriptor.configKeys.filter(\.secret).map(\.name))
        let settings = config.values.filter { !secret.contains($0.key) && !$0.value.isEmpty }.sorted { $0.key < $1.key }
        guard !settings.isEmpty else { return "" }
        let text = settings.map { "\($0.key)=\($0.value)" }.joined(separator: "\n")
        return "@" + SHA256.hex(Array(text.utf8)).prefix(8) + ":"
    }

    func value(for key: String) async -> CachedValue? {
        do {
            return try await store.cachedValue(provider: provider, key: namespace + key)
        } catch {
            logger.warning("cannot read the \(provider) cache: \(error)")
            return nil
        }
    }

    func store(_ value: CachedValue, for key: String) async {
        do {
            try await store.storeCachedValue(value, provider: provider, key: namespace + key)
        } catch {
            logger.warning("cannot keep \(provider) data: \(error)")
        }
    }

    /// Rows are written while the provider makes the next ones: one write is in flight at a
    /// time, and rows appended meanwhile gather for the next (the provider waits only when
    /// `gatherLimit` rows or bytes are waiting), so the writes are as large as the parse is ahead of
    /// the database, and the last one, after the provider's last rows, stays small.
    func replaceList(_ key: String, _ produce: (_ append: ([CachedRow]) async throws -> Void) async throws -> Void) async throws {
        let key = namespace + key
        let generation = try await store.beginList(provider: provider, key: key)
        var written = 0
        var gathered: [CachedRow] = []
        var gatheredBytes = 0
        var inFlight: (task: Task<Void, any Error>, done: WriteDone)?
        let store = self.store
        let provider = self.provider
        func send() {
            let rows = gathered
            let first = written
            written += rows.count
            gathered = []
            gatheredBytes = 0
            let done = WriteDone()
            inFlight = (
                Task {
                    defer { done.flag.store(true, ordering: .releasing) }
                    try await store.appendRows(rows, provider: provider, key: key, generation: generation, firstSeq: first)
                }, done
            )
        }
        do {
            try await produce { rows in
                gathered += rows
                gatheredBytes += rows.reduce(0) { $0 + $1.data.count }
                if let running = inFlight {
                    if !running.done.flag.load(ordering: .acquiring), gathered.count < Self.gatherLimit.rows,
                        gatheredBytes < Self.gatherLimit.bytes
                    {
                        return
                    }
                    try await running.task.value
                }
                send()
            }
            try await inFlight?.task.value
            try await store.commitList(
                provider: provider, key: key, generation: generation, count: written + gathered.count, appending: gathered)
        } catch {
            inFlight?.task.cancel()
            _ = try? await inFlight?.task.value
            try? await store.discardList(provider: provider, key: key, generation: generation)
            throw error
        }
    }

    /// How many rows (and bytes of them) may wait for the write in flight before the provider
    /// waits for it.
    static let gatherLimit = (rows: 4096, bytes: 8 << 20)

    func listRows(_ key: String, offset: Int, limit: Int) async -> [CachedRow]? {
        do {
            return try await store.listRows(provider: provider, key: namespace + key, offset: offset, limit: limit)
        } catch {
            logger.warning("cannot read the \(provider) cache: \(error)")
            return nil
        }
    }

    func listRow(_ key: String, id: String) async -> CachedRow? {
        try? await store.listRow(provider: provider, key: namespace + key, id: id)
    }

    func listCount(_ key: String) async -> Int? {
        try? await store.listCount(provider: provider, key: namespace + key)
    }
}

/// Set once a write of rows has ended, however it ended.
private final class WriteDone: Sendable {
    let flag = Atomic<Bool>(false)
}
