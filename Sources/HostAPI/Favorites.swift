import JSONRPC
import MediaKit

/// Keeps an item as a favorite, with a snapshot so `favorites.list` works offline.
public struct FavoritesAdd: APIMethod {
    public static let method = "favorites.add"
    public static let effect = MethodEffect(.changes, library: .favorites, reachesOut: true)
    public typealias Response = MediaItem
    /// The item to keep, e.g. "podcasts:podcast:1200361736".
    public var id: ItemID

    public init(id: ItemID) {
        self.id = id
    }
}

/// Forgets a favorite. Works offline and for providers no longer registered.
public struct FavoritesRemove: APIMethod {
    public static let method = "favorites.remove"
    public static let effect = MethodEffect(.removes, library: .favorites, reachesOut: true)
    public var id: ItemID

    public init(id: ItemID) {
        self.id = id
    }

    public struct Response: Codable, Sendable, Equatable {
        public var id: ItemID
        /// False when it was not a favorite.
        public var removed: Bool
        /// What happened on the provider's account, when logged in.
        public var account: String?

        public init(id: ItemID, removed: Bool, account: String? = nil) {
            self.id = id
            self.removed = removed
            self.account = account
        }
    }
}

/// Adds the favorites kept here to the provider's account (likes, account favorites), for those
/// made while logged out; `auth.login` says how many there are.
public struct FavoritesSync: APIMethod {
    public static let method = "favorites.sync"
    public static let effect = MethodEffect(.changes, library: .favorites, reachesOut: true)
    public var provider: String

    public init(provider: String) {
        self.provider = provider
    }

    public struct Response: Codable, Sendable, Equatable {
        public var provider: String
        /// Favorites added to the account.
        public var synced: Int
        /// Those the account refused, each with why.
        public var failed: [Failure]

        public struct Failure: Codable, Sendable, Equatable {
            public var id: ItemID
            public var message: String

            public init(id: ItemID, message: String) {
                self.id = id
                self.message = message
            }
        }

        public init(provider: String, synced: Int, failed: [Failure]) {
            self.provider = provider
            self.synced = synced
            self.failed = failed
        }
    }
}

/// Favorites, newest first, from their stored snapshots (no network).
public struct FavoritesList: APIMethod {
    public static let method = "favorites.list"
    public static let effect = MethodEffect(.reads)
    public typealias Response = Page
    /// Only this provider's favorites.
    public var provider: String?
    public var kind: MediaKind?
    /// Items per page, 1 to 500; 50 when omitted.
    public var limit: Int?
    /// The `next` of an earlier page.
    public var cursor: Cursor?
    /// The favorites kept on the provider's account (needs `provider` and a login).
    public var remote: Bool?

    public init(provider: String? = nil, kind: MediaKind? = nil, limit: Int? = nil, cursor: Cursor? = nil, remote: Bool? = nil) {
        self.provider = provider
        self.kind = kind
        self.limit = limit
        self.cursor = cursor
        self.remote = remote
    }
}

/// What is new from the favorites that are followed rather than watched (podcasts, channels,
/// playlists, people): the first page of each, fetched concurrently, merged newest first, with
/// what was played marked as in every listing. A favorite whose provider fails costs only its own
/// items; it is reported beside the others, as a search across providers reports a provider.
public struct FavoritesLatest: APIMethod {
    public static let method = "favorites.latest"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    /// Only this provider's favorites.
    public var provider: String?
    /// Items at most, 1 to 500; 100 when omitted.
    public var limit: Int?
    /// Leave out what was played.
    public var unplayed: Bool?
    /// False: leave out Shorts (items marked `extra.short`).
    public var shorts: Bool?
    /// Only live streams (`podcast:liveItem`): live now, then upcoming by their start, then
    /// ended, the latest first.
    public var live: Bool?

    public init(provider: String? = nil, limit: Int? = nil, unplayed: Bool? = nil, shorts: Bool? = nil, live: Bool? = nil) {
        self.provider = provider
        self.limit = limit
        self.unplayed = unplayed
        self.shorts = shorts
        self.live = live
    }

    public struct Response: Codable, Sendable, Equatable {
        /// Newest first; items without a date last.
        public var items: [MediaItem]
        /// How many followed favorites were asked.
        public var followed: Int
        /// The favorites that could not be read, each with why.
        public var errors: [Failure]?

        public init(items: [MediaItem], followed: Int, errors: [Failure]? = nil) {
            self.items = items
            self.followed = followed
            self.errors = errors
        }
    }

    public struct Failure: Codable, Sendable, Equatable {
        public var id: ItemID
        public var code: Int
        public var message: String

        public init(id: ItemID, code: Int, message: String) {
            self.id = id
            self.code = code
            self.message = message
        }
    }

}
