import MediaKit
import MediaStore

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

    /// Rows are written while the provider makes the next ones: one batch is in flight at a
    /// time (the provider waits only when it is ahead by a whole batch), so a feed's parse and
    /// its database writes overlap.
    func replaceList(_ key: String, _ produce: (_ append: ([CachedRow]) async throws -> Void) async throws -> Void) async throws {
        let key = namespace + key
        let generation = try await store.beginList(provider: provider, key: key)
        var written = 0
        var inFlight: Task<Void, any Error>?
        let store = self.store
        let provider = self.provider
        do {
            try await produce { rows in
                try await inFlight?.value
                let first = written
                written += rows.count
                inFlight = Task {
                    try await store.appendRows(rows, provider: provider, key: key, generation: generation, firstSeq: first)
                }
            }
            try await inFlight?.value
            try await store.commitList(provider: provider, key: key, generation: generation, count: written)
        } catch {
            inFlight?.cancel()
            _ = try? await inFlight?.value
            try? await store.discardList(provider: provider, key: key, generation: generation)
            throw error
        }
    }

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
