import MediaKit

/// An item's artwork, or one of a post's attached images, as a local file (fetched once, then
/// served from the cache).
public struct MediaArtwork: RPCMethod {
    public static let method = "media.artwork"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public var id: ItemID
    /// The item's nth attached image (1 first) instead of its artwork.
    public var image: Int?

    public init(id: ItemID, image: Int? = nil) {
        self.id = id
        self.image = image
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
    }

    public func run(on host: HostRuntime) async throws -> Response {
        let url: String
        if let image {
            guard (1...100).contains(image) else { throw HostError.invalidArgument("image is from 1 to 100") }
            let images = Self.attachedImages(of: try await host.itemOrSnapshot(id))
            guard image <= images.count else {
                let has = images.isEmpty ? "no attached images" : "\(images.count) attached image\(images.count == 1 ? "" : "s")"
                throw ProviderFailure(provider: id.provider, error: .notFound("\(id) has \(has)"))
            }
            url = images[image - 1]
        } else {
            // An item just listed: its image alone, without asking the provider again. Else the
            // provider, and offline a favorite's snapshot.
            var found = host.recentArtwork.url(for: id)
            if found == nil { found = try await host.itemOrSnapshot(id).artwork }
            guard let found else {
                throw ProviderFailure(provider: id.provider, error: .notFound("\(id) has no artwork"))
            }
            url = found
        }
        let (entry, cached) = try await host.tagging(id.provider) { try await host.artwork.file(for: url) }
        return Response(
            id: id, url: entry.url, path: entry.path, contentType: entry.contentType, size: entry.size, cached: cached)
    }
}

extension MediaArtwork {
    /// A post's attached photos, in order (its videos and audio are not pictures).
    public static func attachedImages(of item: MediaItem) -> [String] {
        (item.entities ?? []).filter { $0.type == .media && $0.text.hasPrefix("[image") }.map(\.value)
    }
}

/// How full the artwork cache is.
public struct CacheStats: RPCMethod {
    public static let method = "cache.stats"
    public static let effect = MethodEffect(.reads)

    public init() {}
    public typealias Response = ArtworkCache.Stats
    public func run(on host: HostRuntime) async throws -> Response { try await host.artwork.stats() }
}

/// Empties the artwork cache.
public struct CacheClear: RPCMethod {
    public static let method = "cache.clear"
    public static let effect = MethodEffect(.removes)

    public init() {}
    public struct Response: Codable, Sendable, Equatable {
        /// Images removed.
        public var removed: Int
    }
    public func run(on host: HostRuntime) async throws -> Response { Response(removed: try await host.artwork.clear()) }
}
