import MediaKit

/// Keeps an item as a favorite, with a snapshot so `favorites.list` works offline.
public struct FavoritesAdd: RPCMethod {
    public static let method = "favorites.add"
    public typealias Result = MediaItem
    /// The item to keep, e.g. "podcasts:podcast:1200361736".
    public var id: ItemID

    public func run(on host: HostRuntime) async throws -> MediaItem {
        var item = try await host.withProvider(id.provider) { try await $0.item(id) }
        try await host.store.addFavorite(item)
        item = try await host.annotate(item)
        return item
    }
}

/// Forgets a favorite. Works offline and for providers no longer registered.
public struct FavoritesRemove: RPCMethod {
    public static let method = "favorites.remove"
    public var id: ItemID

    public struct Result: Codable, Sendable, Equatable {
        public var id: ItemID
        /// False when it was not a favorite.
        public var removed: Bool
    }

    public func run(on host: HostRuntime) async throws -> Result {
        Result(id: id, removed: try await host.store.removeFavorite(id))
    }
}

/// Favorites, newest first, from their stored snapshots (no network).
public struct FavoritesList: RPCMethod {
    public static let method = "favorites.list"
    public typealias Result = Page
    /// Only this provider's favorites.
    public var provider: String?
    public var kind: MediaKind?
    /// Items per page, 1 to 500; 50 when omitted.
    public var limit: Int?
    /// The `next` of an earlier page.
    public var cursor: Cursor?

    public func run(on host: HostRuntime) async throws -> Page {
        let limit = limit ?? 50
        guard (1...500).contains(limit) else { throw HostError.invalidArgument("limit must be between 1 and 500") }
        if let cursor, !cursor.rawValue.hasPrefix("fav|") {
            throw HostError.invalidArgument("cursor does not belong to favorites.list")
        }
        // Snapshots are favorites by definition; annotating adds their download state.
        return try await host.annotate(
            host.store.favorites(provider: provider, kind: kind, limit: limit, after: cursor), allFavorites: true)
    }
}
