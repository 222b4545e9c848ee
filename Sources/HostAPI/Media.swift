import JSONRPC
import MediaKit

/// One page of a category's items.
public struct MediaBrowse: APIMethod {
    public static let method = "media.browse"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public typealias Response = Page
    public var provider: String
    /// A category id from `providers.categories`.
    public var category: String
    /// The `next` or `prev` of an earlier page.
    public var cursor: Cursor?

    public init(provider: String, category: String, cursor: Cursor? = nil) {
        self.provider = provider
        self.category = category
        self.cursor = cursor
    }
}

/// Searches one provider, or every configured provider at once.
public struct MediaSearch: APIMethod {
    public static let method = "media.search"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    /// The words to search for; `#tag` and `@user` where the provider understands them.
    public var query: String
    /// Omitted: every configured provider, concurrently.
    public var provider: String?
    /// Only items of this kind, where the provider can filter.
    public var kind: MediaKind?
    /// The `next` or `prev` of an earlier page of the same search.
    public var cursor: Cursor?
    /// Across providers over RPC: each provider's items are also sent as a `media.searchResults`
    /// notification as soon as it answers, before the final result (which has them all).
    public var stream: Bool?

    public init(query: String, provider: String? = nil, kind: MediaKind? = nil, cursor: Cursor? = nil, stream: Bool? = nil) {
        self.query = query
        self.provider = provider
        self.kind = kind
        self.cursor = cursor
        self.stream = stream
    }

    public struct Response: Codable, Sendable, Equatable {
        public var items: [MediaItem]
        public var next: Cursor?
        public var prev: Cursor?
        public var total: Int?
        /// Providers that failed in a search across providers; the others' items are kept.
        public var errors: [Failure]?

        public init(items: [MediaItem], next: Cursor? = nil, prev: Cursor? = nil, total: Int? = nil, errors: [Failure]? = nil) {
            self.items = items
            self.next = next
            self.prev = prev
            self.total = total
            self.errors = errors
        }
    }

    public struct Failure: Codable, Sendable, Equatable {
        public var provider: String
        public var code: Int
        public var message: String

        public init(provider: String, code: Int, message: String) {
            self.provider = provider
            self.code = code
            self.message = message
        }
    }
}

/// Full details of one item.
public struct MediaGet: APIMethod {
    public static let method = "media.get"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public typealias Response = MediaItem
    /// e.g. "podcasts:podcast:1200361736".
    public var id: ItemID

    public init(id: ItemID) {
        self.id = id
    }
}

/// The items inside a container: a channel's videos, a podcast's episodes, a user's posts.
public struct MediaChildren: APIMethod {
    public static let method = "media.children"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public typealias Response = Page
    public var id: ItemID
    public var cursor: Cursor?

    public init(id: ItemID, cursor: Cursor? = nil) {
        self.id = id
        self.cursor = cursor
    }
}
