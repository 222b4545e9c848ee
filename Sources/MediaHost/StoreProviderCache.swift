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
}
