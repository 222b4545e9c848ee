import MediaKit
import Synchronization

/// The artwork URLs of items the host recently returned, so `media.artwork` on a row just listed
/// fetches the image alone instead of asking the provider for the item again (for a podcast that
/// means its whole feed: artwork must never wait on a feed).
final class RecentArtwork: Sendable {
    private struct State {
        var urls: [ItemID: (url: String, generation: Int)] = [:]
        var generation = 0
    }
    private let state = Mutex(State())
    /// Entries kept; the least recently seen half goes when it is exceeded.
    static let capacity = 4096

    func remember(_ items: [MediaItem]) {
        state.withLock { state in
            for item in items {
                guard let url = item.artwork else { continue }
                state.generation += 1
                state.urls[item.id] = (url, state.generation)
            }
            if state.urls.count > Self.capacity {
                let cutoff = state.generation - Self.capacity / 2
                state.urls = state.urls.filter { $0.value.generation > cutoff }
            }
        }
    }

    func url(for id: ItemID) -> String? { state.withLock { $0.urls[id]?.url } }
}
