import HostAPI
import MediaKit

extension MediaArtwork: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let url: String
        if let width, !(1...10_000).contains(width) { throw HostError.invalidArgument("width is from 1 to 10000 pixels") }
        if let image {
            guard (1...100).contains(image) else { throw HostError.invalidArgument("image is from 1 to 100") }
            guard width == nil else { throw HostError.invalidArgument("width is for the artwork, not an attached image") }
            let images = Self.attachedImages(of: try await host.itemOrSnapshot(id))
            guard image <= images.count else {
                let has = images.isEmpty ? "no attached images" : "\(images.count) attached image\(images.count == 1 ? "" : "s")"
                throw ProviderFailure(provider: id.provider, error: .notFound("\(id) has \(has)"))
            }
            url = images[image - 1]
        } else {
            // An item just listed: its image alone, without asking the provider again. Else the
            // provider, and offline a favorite's snapshot.
            // Of the sizes a feed offers (podcast:images), the one for the picture's width.
            var found = host.recentArtwork.url(for: id, width: width)
            if found == nil {
                let item = try await host.itemOrSnapshot(id)
                found =
                    width.flatMap { item.namespace?.artwork(forWidth: $0, else: item.artwork) } ?? item.artwork
                    ?? item.namespace?.images?.first?.url
            }
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

extension CacheStats: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response { try await host.artwork.stats() }
}

extension CacheClear: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response { Response(removed: try await host.artwork.clear()) }
}
