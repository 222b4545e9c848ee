import Foundation
import MediaHost
import MediaKit
import Synchronization

/// Knobs a test turns on its own catalog provider: delays, failures, and a log of calls.
public final class CatalogControl: Sendable {
    private let state = Mutex<(delay: Duration, failure: ProviderError?, calls: [String])>((.zero, nil, []))
    public init() {}

    public var delay: Duration {
        get { state.withLock { $0.delay } }
        set { state.withLock { $0.delay = newValue } }
    }
    /// When set, every call throws it.
    public var failure: ProviderError? {
        get { state.withLock { $0.failure } }
        set { state.withLock { $0.failure = newValue } }
    }
    public var calls: [String] { state.withLock { $0.calls } }

    func enter(_ call: String) async throws {
        let (delay, failure) = state.withLock { s in
            s.calls.append(call)
            return (s.delay, s.failure)
        }
        if delay > .zero { try await Task.sleep(for: delay) }
        if let failure { throw failure }
    }
}

/// A deterministic in-memory provider: 5 channels, 120 videos, 2 categories, pages of 20.
public struct CatalogProvider: CompiledProvider {
    public static let descriptor = ProviderDescriptor(
        id: "catalog", name: "Test Catalog", kinds: [.channel, .video],
        capabilities: [.categories, .browse, .search, .item, .children],
        configKeys: [
            .init(name: "api_key", summary: "A key the catalog does not need", secret: true, environment: ["CATALOG_API_KEY"]),
            .init(name: "region", summary: "Region code", defaultValue: "US"),
            .init(name: "media_base", summary: "Where video files are served, e.g. a sandbox's /_sandbox/file"),
            .init(name: "artwork_base", summary: "Where thumbnails are served, e.g. a sandbox's /_sandbox/bytes"),
        ])

    public static let pageSize = 20
    public static let videoCount = 120
    let control: CatalogControl
    public let region: String?
    let mediaBase: String?
    let artworkBase: String?

    public init(context: ProviderContext) throws { self.init(context: context, control: CatalogControl()) }

    public init(context: ProviderContext, control: CatalogControl) {
        self.control = control
        self.region = context.config["region"]
        self.mediaBase = context.config["media_base"]
        self.artworkBase = context.config["artwork_base"]
    }

    public static func registration(_ control: CatalogControl) -> ProviderRegistration {
        ProviderRegistration(descriptor: descriptor) { CatalogProvider(context: $0, control: control) }
    }

    static let topics = ["swift", "rust", "music", "science", "cooking"]

    public static func video(_ n: Int) -> MediaItem {
        MediaItem(
            id: ItemID(provider: "catalog", kind: .video, nativeID: "v\(n)"),
            title: "Video \(n) about \(topics[n % 5])", subtitle: "Channel \(n % 5 + 1)",
            summary: "All about \(topics[n % 5]).", url: "https://catalog.invalid/v\(n)",
            published: String(format: "2026-01-%02dT10:00:00Z", n % 28 + 1), duration: Double(60 + n),
            stats: ["views": n * 100], extra: ["channel": "catalog:channel:c\(n % 5 + 1)"])
    }

    public static func channel(_ n: Int) -> MediaItem {
        MediaItem(
            id: ItemID(provider: "catalog", kind: .channel, nativeID: "c\(n)"), title: "Channel \(n)",
            summary: "Channel number \(n)")
    }

    public func categories() async throws -> [MediaCategory] {
        try await control.enter("categories")
        return [MediaCategory(id: "music", name: "Music"), MediaCategory(id: "science", name: "Science & Tech")]
    }

    public func browse(category: String, cursor: Cursor?) async throws -> Page {
        try await control.enter("browse \(category)")
        let topic: String
        switch category {
        case "music": topic = "music"
        case "science": topic = "science"
        default: throw ProviderError.notFound("no category \(category)")
        }
        return try Self.page((0..<Self.videoCount).map(Self.video).filter { $0.title.hasSuffix(topic) }, cursor: cursor)
    }

    public func search(_ query: SearchQuery) async throws -> Page {
        try await control.enter("search \(query.text)")
        let all = (1...5).map(Self.channel) + (0..<Self.videoCount).map(Self.video)
        let matches = all.filter {
            $0.title.localizedCaseInsensitiveContains(query.text) && (query.kind == nil || $0.kind == query.kind)
        }
        return try Self.page(matches, cursor: query.cursor)
    }

    public func item(_ id: ItemID) async throws -> MediaItem {
        try await control.enter("item \(id)")
        let native = id.nativeID
        if id.kind == .video, native.hasPrefix("v"), let n = Int(native.dropFirst()), (0..<Self.videoCount).contains(n) {
            var video = Self.video(n)
            // Thumbnail n is n + 1000 bytes: every item's image is different.
            if let artworkBase { video.artwork = "\(artworkBase)/\(1000 + n)" }
            return video
        }
        if id.kind == .channel, native.hasPrefix("c"), let n = Int(native.dropFirst()), (1...5).contains(n) {
            return Self.channel(n)
        }
        throw ProviderError.notFound("no item \(id)")
    }

    public func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        try await control.enter("children \(id)")
        // Videos v10, v20, ... have related videos (the next two), like a movie's similar movies.
        if id.kind == .video, let n = Int(id.nativeID.dropFirst()), n % 10 == 0, n + 2 < Self.videoCount {
            return try Self.page([n + 1, n + 2].map(Self.video), cursor: cursor)
        }
        guard id.kind == .channel, let n = Int(id.nativeID.dropFirst()), (1...5).contains(n) else {
            throw ProviderError.unsupported("\(id) has no children")
        }
        return try Self.page((0..<Self.videoCount).filter { $0 % 5 == n - 1 }.map(Self.video), cursor: cursor)
    }

    /// Video n is a file of `videoSize(n)` bytes at `<media_base>/<size>`.
    public static func videoSize(_ n: Int) -> Int { 200_000 + n * 10_000 }

    public func downloadSource(for id: ItemID) async throws -> DownloadSource {
        try await control.enter("downloadSource \(id)")
        let item = try await item(id)
        guard id.kind == .video, let base = mediaBase, let n = Int(id.nativeID.dropFirst()) else {
            throw ProviderError.unsupported("nothing to download for \(id)")
        }
        return DownloadSource(
            url: URL(string: "\(base)/\(Self.videoSize(n))")!, suggestedName: "\(item.published?.prefix(10) ?? "") \(item.title)",
            collection: item.subtitle, fileExtension: "bin", expectedLength: Int64(Self.videoSize(n)))
    }

    static func page(_ all: [MediaItem], cursor: Cursor?) throws -> Page {
        let offset: Int
        if let cursor {
            guard let parsed = Int(cursor.rawValue), parsed >= 0 else { throw ProviderError.invalidArgument("bad cursor") }
            offset = parsed
        } else {
            offset = 0
        }
        let end = min(offset + pageSize, all.count)
        let items = offset < end ? Array(all[offset..<end]) : []
        return Page(
            items: items, next: end < all.count ? Cursor(String(end)) : nil,
            prev: offset > 0 ? Cursor(String(max(0, offset - pageSize))) : nil, total: all.count)
    }
}

/// A provider whose every call fails the way a test says.
public struct BrokenProvider: CompiledProvider {
    public static let descriptor = ProviderDescriptor(
        id: "broken", name: "Always Failing", kinds: [.video], capabilities: [.search, .item, .segments])
    public init(context: ProviderContext) throws {}
    public func search(_ query: SearchQuery) async throws -> Page { throw ProviderError.network("connection refused") }
    public func item(_ id: ItemID) async throws -> MediaItem { throw ProviderError.rateLimited(retryAfter: 30) }
}

/// Stands for a provider that opens feeds by their URL (the `feeds` capability): where the host
/// keeps an imported OPML's podcasts. It reads nothing.
public struct FeedsProvider: CompiledProvider {
    public static let descriptor = ProviderDescriptor(
        id: "feeds", name: "Feeds", kinds: [.podcast, .episode], capabilities: [.feeds])
    public init(context: ProviderContext) throws {}
    public func item(_ id: ItemID) async throws -> MediaItem { throw ProviderError.notFound("\(id): no feed is read here") }
}

/// A provider that needs an API key before it can be used.
public struct LockedProvider: CompiledProvider {
    public static let descriptor = ProviderDescriptor(
        id: "locked", name: "Needs A Key", kinds: [.movie], capabilities: [.search, .item],
        configKeys: [.init(name: "api_key", summary: "API key", secret: true, required: true, environment: ["LOCKED_API_KEY"])],
        auth: .apiKey)
    public init(context: ProviderContext) throws {}
    public func search(_ query: SearchQuery) async throws -> Page { Page(items: []) }
    public func item(_ id: ItemID) async throws -> MediaItem { MediaItem(id: id, title: "Locked \(id.nativeID)") }
}

/// For hosts in tests that never reach the network.
public struct NoNetwork: HTTPClient {
    public init() {}
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        throw ProviderError.network("tests have no network")
    }
}
