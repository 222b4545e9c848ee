import Foundation
@_exported import Logging

/// A source of media behind the host: YouTube, TMDB, podcasts, Twitter, Mastodon.
///
/// Providers turn API responses into `MediaItem`s. They never touch the store, the terminal or
/// stdout: the host owns persistence and presentation. Operations a provider does not offer throw
/// `ProviderError.unsupported`, which the default implementations below do.
public protocol MediaProvider: Sendable {
    static var descriptor: ProviderDescriptor { get }
    /// - Throws: `ProviderError.notConfigured` is not thrown here; a provider missing required
    ///   config is created anyway and says how to configure it when called.
    init(context: ProviderContext) throws
    func categories() async throws -> [MediaCategory]
    func browse(category: String, cursor: Cursor?) async throws -> Page
    func search(_ query: SearchQuery) async throws -> Page
    /// Full details of one item.
    func item(_ id: ItemID) async throws -> MediaItem
    /// The items inside a container: channel -> videos, podcast -> episodes, user -> posts.
    func children(of id: ItemID, cursor: Cursor?) async throws -> Page
    func downloadSource(for id: ItemID) async throws -> DownloadSource
}

extension MediaProvider {
    public var descriptor: ProviderDescriptor { Self.descriptor }

    public func categories() async throws -> [MediaCategory] {
        throw ProviderError.unsupported("\(Self.descriptor.name) has no categories")
    }
    public func browse(category: String, cursor: Cursor?) async throws -> Page {
        throw ProviderError.unsupported("\(Self.descriptor.name) cannot browse categories")
    }
    public func search(_ query: SearchQuery) async throws -> Page {
        throw ProviderError.unsupported("\(Self.descriptor.name) cannot search")
    }
    public func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        throw ProviderError.unsupported("\(id.kind.rawValue) items of \(Self.descriptor.name) have no children")
    }
    public func downloadSource(for id: ItemID) async throws -> DownloadSource {
        throw ProviderError.unsupported("\(Self.descriptor.name) has nothing to download for \(id)")
    }
}

/// What the host hands a provider when it creates it.
public struct ProviderContext: Sendable {
    /// The provider's settings: config.toml `[providers.<id>]` overridden by env vars.
    public var config: ProviderConfig
    public var http: any HTTPClient
    public var logger: Logger
    /// Responses kept by the host between runs (feeds with their validators, say).
    public var cache: any ProviderCache
    /// The current time; tests replace it.
    public var now: @Sendable () -> Date

    public init(
        config: ProviderConfig, http: any HTTPClient, logger: Logger, cache: any ProviderCache = NoProviderCache(),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.config = config
        self.http = http
        self.logger = logger
        self.cache = cache
        self.now = now
    }
}

/// A provider's resolved settings.
public struct ProviderConfig: Sendable, Equatable {
    public var values: [String: String]
    public init(_ values: [String: String] = [:]) { self.values = values }
    public subscript(key: String) -> String? {
        guard let value = values[key], !value.isEmpty else { return nil }
        return value
    }
}

/// A provider's persistent cache, kept by the host (providers never touch the store).
public protocol ProviderCache: Sendable {
    func value(for key: String) async -> CachedValue?
    func store(_ value: CachedValue, for key: String) async
}

/// What a provider keeps: its own encoding of something it fetched, with the HTTP validators
/// that let it ask the server whether it changed.
public struct CachedValue: Sendable, Equatable {
    public var data: Data
    public var etag: String?
    public var lastModified: String?
    public var storedAt: Date

    public init(data: Data, etag: String? = nil, lastModified: String? = nil, storedAt: Date = Date()) {
        self.data = data
        self.etag = etag
        self.lastModified = lastModified
        self.storedAt = storedAt
    }
}

/// A cache that keeps nothing, for providers created outside a host.
public struct NoProviderCache: ProviderCache {
    public init() {}
    public func value(for key: String) async -> CachedValue? { nil }
    public func store(_ value: CachedValue, for key: String) async {}
}
