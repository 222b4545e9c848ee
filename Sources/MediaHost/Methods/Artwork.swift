import MediaKit

/// An item's artwork as a local file (fetched once, then served from the cache).
public struct MediaArtwork: RPCMethod {
    public static let method = "media.artwork"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public var id: ItemID

    public init(id: ItemID) {
        self.id = id
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
        // An item just listed: its image alone, without asking the provider again. Else the
        // provider, and offline a favorite's snapshot.
        var url = host.recentArtwork.url(for: id)
        if url == nil { url = try await host.itemOrSnapshot(id).artwork }
        guard let url else {
            throw ProviderFailure(provider: id.provider, error: .notFound("\(id) has no artwork"))
        }
        let (entry, cached) = try await host.tagging(id.provider) { try await host.artwork.file(for: url) }
        return Response(
            id: id, url: entry.url, path: entry.path, contentType: entry.contentType, size: entry.size, cached: cached)
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
