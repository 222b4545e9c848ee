import HostAPI
import MediaKit

extension MediaArtwork: RPCMethod {
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

extension CacheStats: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response { try await host.artwork.stats() }
}

extension CacheClear: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response { Response(removed: try await host.artwork.clear()) }
}
