import MediaKit

/// An item's artwork, or one of a post's attached images, as a local file (fetched once, then
/// served from the cache).
public struct MediaArtwork: APIMethod {
    public static let method = "media.artwork"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public var id: ItemID
    /// The item's nth attached image (1 first) instead of its artwork.
    public var image: Int?
    /// The picture's width in pixels where it is drawn: of the sizes the feed offers
    /// (`podcast:images`), the smallest at least this wide, else the widest.
    public var width: Int?

    public init(id: ItemID, image: Int? = nil, width: Int? = nil) {
        self.id = id
        self.image = image
        self.width = width
    }

    public struct Response: Codable, Sendable, Equatable {
        /// The item it is for, and the image URL that file holds: check both before showing it.
        public var id: ItemID
        public var url: String
        public var path: String
        public var contentType: String?
        public var size: Int64
        /// Whether it came from the cache without a transfer.
        public var cached: Bool

        public init(id: ItemID, url: String, path: String, contentType: String? = nil, size: Int64, cached: Bool) {
            self.id = id
            self.url = url
            self.path = path
            self.contentType = contentType
            self.size = size
            self.cached = cached
        }
    }
}

/// How full the artwork cache is.
public struct CacheStats: APIMethod {
    public static let method = "cache.stats"
    public static let effect = MethodEffect(.reads)

    public init() {}
    public typealias Response = ArtworkStats
}

/// Empties the artwork cache.
public struct CacheClear: APIMethod {
    public static let method = "cache.clear"
    public static let effect = MethodEffect(.removes)

    public init() {}
    public struct Response: Codable, Sendable, Equatable {
        /// Images removed.
        public var removed: Int

        public init(removed: Int) {
            self.removed = removed
        }
    }
}

/// The artwork cache's figures.
public struct ArtworkStats: Codable, Sendable, Equatable {
    public var entries: Int
    public var bytes: Int64
    public var limit: Int64
    /// Answers from the cache (or from a transfer already running) since start.
    public var hits: Int
    public var misses: Int
    public var directory: String

    public init(entries: Int, bytes: Int64, limit: Int64, hits: Int, misses: Int, directory: String) {
        self.entries = entries
        self.bytes = bytes
        self.limit = limit
        self.hits = hits
        self.misses = misses
        self.directory = directory
    }
}

extension MediaArtwork {
    /// A post's attached photos, in order (its videos and audio are not pictures).
    public static func attachedImages(of item: MediaItem) -> [String] {
        (item.entities ?? []).filter { $0.type == .media && $0.text.hasPrefix("[image") }.map(\.value)
    }
}
