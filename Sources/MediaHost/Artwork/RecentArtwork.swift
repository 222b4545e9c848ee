import MediaKit
import Synchronization

/// The artwork URLs of items the host recently returned, so `media.artwork` on a row just listed
/// fetches the image alone instead of asking the provider for the item again (for a podcast that
/// means its whole feed: artwork must never wait on a feed).
final class RecentArtwork: Sendable {
    private struct State {
        var urls: [ItemID: (url: String, artwork: String?, sizes: [PodcastNamespace.Image], generation: Int)] = [:]
        var generation = 0
    }
    private let state = Mutex(State())
    /// Entries kept; the least recently seen half goes when it is exceeded.
    static let capacity = 4096

    func remember(_ items: [MediaItem]) {
        state.withLock { state in
            for item in items {
                let sizes = item.namespace?.images ?? []
                guard let url = item.artwork ?? sizes.first?.url else { continue }
                state.generation += 1
                state.urls[item.id] = (url, item.artwork, sizes, state.generation)
            }
            if state.urls.count > Self.capacity {
                let cutoff = state.generation - Self.capacity / 2
                state.urls = state.urls.filter { $0.value.generation > cutoff }
            }
        }
    }

    /// The artwork of an item just listed: of the sizes its feed offers, the one for a picture
    /// `width` pixels wide when asked.
    func url(for id: ItemID, width: Int? = nil) -> String? {
        state.withLock { state in
            guard let known = state.urls[id] else { return nil }
            guard let width, !known.sizes.isEmpty else { return known.url }
            var namespace = PodcastNamespace()
            namespace.images = known.sizes
            return namespace.artwork(forWidth: width, else: known.artwork) ?? known.url
        }
    }
}
