import Basics
@_exported import Basics
import FoundationEssentials
import Glibc
@_exported import Logging
import Synchronization

@_exported import struct JSONRPC.JSONNull
// JSON values for what a provider reads without a Codable type (a service's error body, a
// program's output): the host's own parser, not full Foundation's JSONSerialization.
@_exported import enum JSONRPC.JSONValue
@_exported import enum JSONRPC.JSONWriter

/// A source of media behind the host: YouTube, TMDB, podcasts, Twitter, Mastodon.
///
/// Providers turn API responses into `MediaItem`s. They never touch the store, the terminal or
/// stdout: the host owns persistence and presentation. Operations a provider does not offer throw
/// `ProviderError.unsupported`, which the default implementations below do.
public protocol MediaProvider: Sendable {
    /// What it is and what it can do.
    var descriptor: ProviderDescriptor { get }
    func categories() async throws -> [MediaCategory]
    func browse(category: String, cursor: Cursor?) async throws -> Page
    func search(_ query: SearchQuery) async throws -> Page
    /// Full details of one item.
    func item(_ id: ItemID) async throws -> MediaItem
    /// The items inside a container: channel -> videos, podcast -> episodes, user -> posts.
    func children(of id: ItemID, cursor: Cursor?) async throws -> Page
    func downloadSource(for id: ItemID) async throws -> DownloadSource
    /// Where a player streams an item that names no media file of its own (a video, whose URL
    /// is a page): one URL a player opens as it is, found as the provider finds its downloads,
    /// so it plays where the player could not read the page itself (no network for mpv's own
    /// yt-dlp, a stand-in site). Nil when the provider has none: the player is given the page.
    func streamSource(for id: ItemID) async throws -> DownloadSource?
    /// The item a feed URL of this service stands for (a YouTube channel's Atom feed is that
    /// channel), so a list imported from OPML keeps it under this provider; nil for others.
    func itemID(forFeed url: String) -> ItemID?
}

/// A provider compiled into the host: what it is is known before one is made (its descriptor
/// is its type's), and one is made from its settings. (A plugin is a `MediaProvider` whose
/// descriptor comes from its manifest.)
public protocol CompiledProvider: MediaProvider {
    static var descriptor: ProviderDescriptor { get }
    /// The host creates a provider only once its required settings (`required` keys,
    /// `requiredAnyOf` groups) are set; until then calls answer how to set them, without it.
    /// - Throws: `ProviderError.notConfigured` when a setting it was given is unusable (a base
    ///   URL that is not a URL).
    init(context: ProviderContext) throws
}

extension CompiledProvider {
    public var descriptor: ProviderDescriptor { Self.descriptor }
}

extension MediaProvider {
    public func categories() async throws -> [MediaCategory] {
        throw ProviderError.unsupported("\(descriptor.name) has no categories")
    }
    public func browse(category: String, cursor: Cursor?) async throws -> Page {
        throw ProviderError.unsupported("\(descriptor.name) cannot browse categories")
    }
    public func search(_ query: SearchQuery) async throws -> Page {
        throw ProviderError.unsupported("\(descriptor.name) cannot search")
    }
    public func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        throw ProviderError.unsupported("\(id.kind.rawValue) items of \(descriptor.name) have no children")
    }
    public func downloadSource(for id: ItemID) async throws -> DownloadSource {
        throw ProviderError.unsupported("\(descriptor.name) has nothing to download for \(id)")
    }
    public func streamSource(for id: ItemID) async throws -> DownloadSource? { nil }
    public func itemID(forFeed url: String) -> ItemID? { nil }
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
    /// Runs helper programs (yt-dlp).
    public var programs: any ProgramRunner
    /// The account's session, for calls that need one (`AccountProvider`s).
    public var sessions: any SessionKeeper

    public init(
        config: ProviderConfig, http: any HTTPClient, logger: Logger, cache: any ProviderCache = MemoryProviderCache(),
        now: @escaping @Sendable () -> Date = { Date() }, programs: any ProgramRunner = NoProgramRunner(),
        sessions: any SessionKeeper = NoSessions()
    ) {
        self.config = config
        self.http = http
        self.logger = logger
        self.cache = cache
        self.now = now
        self.programs = programs
        self.sessions = sessions
    }
}

/// A provider's resolved settings: what config.toml, `config.set` and the environment gave, and
/// otherwise the default its descriptor declares.
public struct ProviderConfig: Sendable, Equatable {
    public var values: [String: String]
    /// Declared defaults, by key.
    public var defaults: [String: String]
    /// The provider's id, for messages that name a setting.
    public var provider: String

    public init(_ values: [String: String] = [:], declaredBy descriptor: ProviderDescriptor? = nil) {
        self.values = values
        provider = descriptor?.id ?? ""
        defaults = [:]
        for key in descriptor?.configKeys ?? [] { defaults[key.name] = key.defaultValue }
    }

    /// The same values, with the defaults `descriptor` declares (providers call this on what
    /// they are given, so values built by hand in tests get the defaults too).
    public func declared(by descriptor: ProviderDescriptor) -> ProviderConfig { ProviderConfig(values, declaredBy: descriptor) }

    /// The value set, or the declared default; nil when neither (an empty value counts as unset).
    public subscript(key: String) -> String? {
        if let value = values[key], !value.isEmpty { return value }
        return defaults[key]
    }

    /// A URL setting (a base URL), without its trailing slash.
    /// - Throws: `ProviderError.notConfigured` naming the setting when it is unset or not an
    ///   absolute URL.
    public func url(_ key: String) throws(ProviderError) -> URL {
        let name = provider.isEmpty ? key : "providers.\(provider).\(key)"
        guard let text = self[key] else { throw ProviderError.notConfigured("\(name) is not set") }
        let trimmed = text.hasSuffix("/") ? String(text.dropLast()) : text
        guard let url = URL(string: trimmed), url.scheme != nil, url.host != nil else {
            throw ProviderError.notConfigured("\(name) '\(text)' is not a URL")
        }
        return url
    }
}

/// A provider's persistent cache, kept by the host (providers never touch the store): single
/// values, and lists of rows (a feed's episodes) that are written and read page by page, so a
/// provider never needs a whole list in memory.
public protocol ProviderCache: Sendable {
    func value(for key: String) async -> CachedValue?
    func store(_ value: CachedValue, for key: String) async
    /// Replaces the list `key` with the rows `produce` appends (in batches, as they are made),
    /// atomically: readers see the old list until `produce` returns, and keep it if it throws.
    func replaceList(_ key: String, _ produce: (_ append: ([CachedRow]) async throws -> Void) async throws -> Void) async throws
    /// Rows of a list, highest `order` first, ties in the order they were appended; nil when
    /// there is no such list.
    func listRows(_ key: String, offset: Int, limit: Int) async -> [CachedRow]?
    /// The first row of a list with this id.
    func listRow(_ key: String, id: String) async -> CachedRow?
    func listCount(_ key: String) async -> Int?
}

/// One row of a cached list.
public struct CachedRow: Sendable, Equatable {
    /// How the provider finds the row again (an episode's key).
    public var id: String
    /// Rows are read highest first; nil sorts after every number.
    public var order: Double?
    /// The provider's own encoding of the row.
    public var data: Data

    public init(id: String, order: Double?, data: Data) {
        self.id = id
        self.order = order
        self.data = data
    }
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

/// A cache in memory, for providers created outside a host (tests, tools): what it keeps lasts
/// as long as the provider.
public final class MemoryProviderCache: ProviderCache {
    private struct State {
        var values: [String: CachedValue] = [:]
        var lists: [String: [CachedRow]] = [:]
    }
    private let state = Mutex(State())

    public init() {}

    public func value(for key: String) async -> CachedValue? { state.withLock { $0.values[key] } }
    public func store(_ value: CachedValue, for key: String) async { state.withLock { $0.values[key] = value } }

    public func replaceList(_ key: String, _ produce: (_ append: ([CachedRow]) async throws -> Void) async throws -> Void)
        async throws
    {
        let rows = Mutex<[CachedRow]>([])
        try await produce { batch in rows.withLock { $0 += batch } }
        // Highest order first; the sort is stable, so ties keep their order.
        let sorted = rows.withLock { $0 }.enumerated().sorted { a, b in
            switch (a.element.order, b.element.order) {
            case let (x?, y?) where x != y: return x > y
            case (.some, nil): return true
            case (nil, .some): return false
            default: return a.offset < b.offset
            }
        }.map(\.element)
        state.withLock { $0.lists[key] = sorted }
    }

    public func listRows(_ key: String, offset: Int, limit: Int) async -> [CachedRow]? {
        state.withLock { state in
            guard let rows = state.lists[key] else { return nil }
            guard offset < rows.count, offset >= 0 else { return [] }
            return Array(rows[offset..<min(rows.count, offset + max(0, limit))])
        }
    }

    public func listRow(_ key: String, id: String) async -> CachedRow? {
        state.withLock { $0.lists[key]?.first { $0.id == id } }
    }

    public func listCount(_ key: String) async -> Int? { state.withLock { $0.lists[key]?.count } }
}
