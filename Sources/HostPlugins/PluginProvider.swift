import Basics
import FoundationEssentials
import Glibc
import JSONRPC
import MediaHost
import MediaKit

/// A plugin as a `MediaProvider`: each call is a request to its process (provider-spec.json),
/// each answer read into the host's types and checked (an item of another provider, or one the
/// plugin did not finish, is an `invalidResponse` naming the plugin, never passed on).
/// The provider protocol as the host speaks it.
public enum PluginProtocol {
    /// The methods the host calls, as provider-spec.json describes them (a test checks).
    public static let methods = [
        "initialize", "shutdown", "provider.categories", "provider.browse", "provider.search", "provider.item",
        "provider.children", "provider.downloadSource",
    ]
}

final class PluginProvider: MediaProvider {
    /// Its manifest's.
    let descriptor: ProviderDescriptor
    let process: PluginProcess
    private let id: String
    private let timeout: Double

    init(manifest: PluginManifest, context: ProviderContext, timeout: Double, idle: Double) {
        descriptor = manifest.descriptor
        id = manifest.id
        self.timeout = timeout
        process = PluginProcess(manifest: manifest, settings: context.config.values, logger: context.logger, idle: idle)
    }

    deinit { process.stop() }

    /// The registration of a plugin: listed from its manifest, started at its first call.
    static func registration(_ manifest: PluginManifest, idle: PluginIdle, timeout: Double = 30) -> ProviderRegistration {
        ProviderRegistration(descriptor: manifest.descriptor) { context in
            PluginProvider(manifest: manifest, context: context, timeout: timeout, idle: idle.seconds)
        }
    }

    /// A plugin whose manifest is wrong: listed with what is wrong, every call answering it.
    static func broken(_ problem: PluginProblem) -> ProviderRegistration? {
        guard let id = problem.id, ProviderDescriptor.isValidID(id) else { return nil }
        let descriptor = ProviderDescriptor(
            id: id, name: "\(id) (broken plugin)", kinds: [], capabilities: [], notes: problem.message)
        return ProviderRegistration(descriptor: descriptor) { _ in throw ProviderError.notConfigured(problem.message) }
    }

    func categories() async throws -> [MediaCategory] {
        let reply = try await process.call("provider.categories", [:], timeout: timeout)
        return try PluginReply.decode([MediaCategory].self, reply, plugin: id, method: "provider.categories")
    }

    func browse(category: String, cursor: Cursor?) async throws -> Page {
        try await page(
            "provider.browse", ["category": .string(category), "cursor": cursor.map { .string($0.rawValue) } ?? .null])
    }

    func search(_ query: SearchQuery) async throws -> Page {
        try await page(
            "provider.search",
            [
                "text": .string(query.text), "kind": query.kind.map { .string($0.rawValue) } ?? .null,
                "cursor": query.cursor.map { .string($0.rawValue) } ?? .null,
            ])
    }

    func item(_ id: ItemID) async throws -> MediaItem {
        let reply = try await process.call("provider.item", ["id": .string(id.description)], timeout: timeout)
        let item = try PluginReply.decode(MediaItem.self, reply, plugin: self.id, method: "provider.item")
        try check([item], method: "provider.item")
        return item.checked()
    }

    func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        try await page(
            "provider.children", ["id": .string(id.description), "cursor": cursor.map { .string($0.rawValue) } ?? .null])
    }

    func downloadSource(for id: ItemID) async throws -> DownloadSource {
        let reply = try await process.call("provider.downloadSource", ["id": .string(id.description)], timeout: timeout)
        let source = try PluginReply.decode(PluginSource.self, reply, plugin: self.id, method: "provider.downloadSource")
        guard let url = URL(string: source.url), let scheme = url.scheme?.lowercased(),
            ["http", "https"].contains(scheme)
        else {
            throw ProviderError.invalidResponse(
                "plugin \(self.id) gave a download URL that is not http or https: \(source.url)")
        }
        return DownloadSource(
            url: url, suggestedName: source.suggestedName, collection: source.collection, fileExtension: source.fileExtension,
            expectedLength: source.expectedLength)
    }

    private func page(_ method: String, _ params: JSONValue) async throws -> Page {
        let reply = try await process.call(method, params, timeout: timeout)
        let page = try PluginReply.decode(Page.self, reply, plugin: id, method: method)
        try check(page.items, method: method)
        var checked = page
        checked.items = page.items.map { $0.checked() }
        return checked
    }

    /// Items must be the plugin's own (`<id>:<kind>:<native id>` with `provider` = its id).
    private func check(_ items: [MediaItem], method: String) throws {
        for item in items where item.id.provider != id || item.provider != id {
            throw ProviderError.invalidResponse(
                "plugin \(id) answered \(method) with an item of another provider (\(item.id)); its items' ids start with \(id):")
        }
    }
}

/// `provider.downloadSource`'s answer.
struct PluginSource: Decodable {
    var url: String
    var suggestedName: String
    var collection: String?
    var fileExtension: String?
    var expectedLength: Int64?
}

/// `plugin.idle` as the host read it, for plugins made after (the registry makes providers again
/// when the configuration changes).
final class PluginIdle: @unchecked Sendable {
    private let lock = Lock()
    private var value: Double = 300
    var seconds: Double {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// Plugins as providers: found from their manifests (the plugins folder and config.toml's
/// `[plugins.<id>]` tables) when a host starts, each started at its first call. A plugin whose
/// manifest is wrong is listed with what is wrong, and every call to it answers that.
public final class PluginDiscovery: ProviderDiscovery {
    private let idle = PluginIdle()

    public init() {}

    public func discover(paths: HostPaths, taken: Set<String>) -> DiscoveredProviders {
        let found = PluginManifest.discover(pluginsDirectory: paths.plugins, configFile: paths.configFile, taken: taken)
        return DiscoveredProviders(
            registrations: found.plugins.map { PluginProvider.registration($0, idle: idle) }
                + found.broken.compactMap(PluginProvider.broken),
            broken: Dictionary(
                found.broken.compactMap { problem in problem.id.map { ($0, problem.message) } },
                uniquingKeysWith: { first, _ in first }),
            problems: found.problems)
    }

    public func configure(_ config: HostConfig) { idle.seconds = config.seconds(HostSettings.pluginIdle) }
}
