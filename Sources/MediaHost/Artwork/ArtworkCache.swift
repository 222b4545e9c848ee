import Basics
import FoundationEssentials
import MediaKit
import MediaStore

#if canImport(Glibc)
    import Glibc
#endif

/// Thumbnails, posters and avatars fetched on demand and kept on disk by content hash, with an
/// index in the store, bounded by size with least-recently-used eviction. Concurrent requests
/// for one URL share one transfer, and every answer names the URL it is for, so a client that
/// reuses a view for another row can check that the image it got is still the one it wants.
public actor ArtworkCache {
    let store: MediaStore
    let http: any HTTPClient
    public nonisolated let root: String
    let limit: @Sendable () -> Int64
    private var inFlight: [String: Task<Entry, any Error>] = [:]
    private var hits = 0
    private var misses = 0

    /// The largest image accepted.
    static let maxImageSize = 20 << 20

    public struct Entry: Sendable, Equatable {
        /// The artwork URL this file holds.
        public var url: String
        public var path: String
        public var contentType: String?
        public var size: Int64
    }

    init(store: MediaStore, http: any HTTPClient, root: String, limit: @escaping @Sendable () -> Int64) {
        self.store = store
        self.http = http
        self.root = root
        self.limit = limit
    }

    /// The local file for `url`, fetching it once however many ask at the same time.
    /// - Returns: the entry and whether it came from the cache.
    public func file(for url: String) async throws -> (entry: Entry, cached: Bool) {
        if let known = try await store.artwork(url: url) {
            let path = self.path(for: known.hash, contentType: known.contentType)
            if FileManager.default.fileExists(atPath: path) {
                try await store.touchArtwork(url: url)
                hits += 1
                return (Entry(url: url, path: path, contentType: known.contentType, size: known.size), true)
            }
        }
        if let running = inFlight[url] {
            hits += 1
            return (try await running.value, false)
        }
        misses += 1
        let task = Task { try await fetch(url) }
        inFlight[url] = task
        defer { inFlight[url] = nil }
        return (try await task.value, false)
    }

    private func fetch(_ text: String) async throws -> Entry {
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else {
            throw ProviderError.invalidArgument("artwork URL '\(URLRedaction.redact(text))' is not http or https")
        }
        let response: HTTPResponse
        do {
            response = try await http.send(HTTPRequest(url: url, headers: ["Accept": "image/*"], maxBodySize: Self.maxImageSize))
        } catch let error as HTTPClientError {
            throw ProviderError.network("cannot fetch artwork: \(error)")
        }
        guard response.status == 200 else {
            throw ProviderError.upstream(status: response.status, message: "artwork \(URLRedaction.redact(text))")
        }
        let contentType = response.header("content-type")?.split(separator: ";").first.map {
            String($0).trimming(.whitespaces)
        }
        let hash = SHA256.hex(response.body)
        let path = self.path(for: hash, contentType: contentType)
        if !FileManager.default.fileExists(atPath: path) {
            try FileManager.default.createDirectory(
                atPath: Path.directory(of: path), withIntermediateDirectories: true)
            // Written whole, then renamed: a reader never sees half an image.
            let temporary = path + ".tmp-\(UUID().uuidString)"
            guard FileManager.default.createFile(atPath: temporary, contents: response.body) else {
                throw ProviderError.invalidResponse("cannot write the artwork cache in \(root)")
            }
            guard rename(temporary, path) == 0 else {
                try? FileManager.default.removeItem(atPath: temporary)
                throw ProviderError.invalidResponse("cannot write the artwork cache in \(root)")
            }
        }
        let entry = ArtworkEntry(
            url: text, hash: hash, size: Int64(response.body.count), contentType: contentType, lastAccess: Date())
        for orphan in try await store.storeArtwork(entry, limit: limit()) {
            try? FileManager.default.removeItem(atPath: self.path(for: orphan, contentType: nil))
            for ext in ["jpg", "png", "gif", "webp", "bin", "svg"] {
                try? FileManager.default.removeItem(atPath: self.path(for: orphan, ext: ext))
            }
        }
        return Entry(url: text, path: path, contentType: contentType, size: Int64(response.body.count))
    }

    /// `<root>/ab/abcdef….png`: by content, so identical images are stored once.
    nonisolated func path(for hash: String, contentType: String?) -> String {
        path(for: hash, ext: Self.fileExtension(contentType))
    }

    nonisolated func path(for hash: String, ext: String) -> String {
        "\(root)/\(hash.prefix(2))/\(hash).\(ext)"
    }

    static func fileExtension(_ contentType: String?) -> String {
        switch contentType?.lowercased() {
        case "image/jpeg", "image/jpg": "jpg"
        case "image/png": "png"
        case "image/gif": "gif"
        case "image/webp": "webp"
        case "image/svg+xml": "svg"
        default: "bin"
        }
    }

    public typealias Stats = ArtworkStats

    public func stats() async throws -> Stats {
        let (entries, bytes) = try await store.artworkStats()
        return Stats(entries: entries, bytes: bytes, limit: limit(), hits: hits, misses: misses, directory: root)
    }

    /// - Returns: how many images were removed.
    public func clear() async throws -> Int {
        let hashes = try await store.clearArtwork()
        try? FileManager.default.removeItem(atPath: root)
        return hashes.count
    }
}
