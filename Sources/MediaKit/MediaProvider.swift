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
    /// The current time; tests replace it.
    public var now: @Sendable () -> Date

    public init(
        config: ProviderConfig, http: any HTTPClient, logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.config = config
        self.http = http
        self.logger = logger
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
