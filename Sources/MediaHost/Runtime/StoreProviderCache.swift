import MediaKit
import MediaStore

/// A provider's cache, kept in the host's database under the provider's id.
struct StoreProviderCache: ProviderCache {
    let store: MediaStore
    let provider: String
    let logger: Logger

    func value(for key: String) async -> CachedValue? {
        do {
            return try await store.cachedValue(provider: provider, key: key)
        } catch {
            logger.warning("cannot read the \(provider) cache: \(error)")
            return nil
        }
    }

    func store(_ value: CachedValue, for key: String) async {
        do {
            try await store.storeCachedValue(value, provider: provider, key: key)
        } catch {
            logger.warning("cannot keep \(provider) data: \(error)")
        }
    }

    func replaceList(_ key: String, _ produce: (_ append: ([CachedRow]) async throws -> Void) async throws -> Void) async throws {
        let generation = try await store.beginList(provider: provider, key: key)
        let written = Counter()
        do {
            try await produce { rows in
                try await store.appendRows(rows, provider: provider, key: key, generation: generation, firstSeq: written.value)
                written.value += rows.count
            }
            try await store.commitList(provider: provider, key: key, generation: generation, count: written.value)
        } catch {
            try? await store.discardList(provider: provider, key: key, generation: generation)
            throw error
        }
    }

    func listRows(_ key: String, offset: Int, limit: Int) async -> [CachedRow]? {
        do {
            return try await store.listRows(provider: provider, key: key, offset: offset, limit: limit)
        } catch {
            logger.warning("cannot read the \(provider) cache: \(error)")
            return nil
        }
    }

    func listRow(_ key: String, id: String) async -> CachedRow? {
        try? await store.listRow(provider: provider, key: key, id: id)
    }

    func listCount(_ key: String) async -> Int? {
        try? await store.listCount(provider: provider, key: key)
    }
}

/// Rows appended so far to a list being written (one writer at a time).
private final class Counter: @unchecked Sendable {
    var value = 0
}
