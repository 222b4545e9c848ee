import Basics
import FoundationEssentials
import Glibc
import JSONRPC
import MediaKit
import MediaStore
import Synchronization

/// The runtime: providers, store and configuration behind one dispatcher.
///
/// Both front ends (the REPL and `mediahost rpc`) reach everything through `dispatcher`; nothing
/// else touches providers, the store or the config.
public final class HostRuntime: Sendable {
    public static let name = "mediahost"
    public static let version = "0.1.0"

    public let paths: HostPaths
    public let store: MediaStore
    public let logger: Logger
    public let redactor: Redactor
    let registry: ProviderRegistry
    /// Plugins listed but broken (a missing command, a bad manifest), with what is wrong.
    private let brokenPlugins: [String: String]
    /// What is wrong with the plugins that could not be loaded (`host.info`, `plugin list`).
    public let pluginProblems: [String]
    public let http: any HTTPClient
    private let configBox: ConfigBox
    /// Server notifications for RPC clients and the REPL.
    public let events: EventHub
    public let downloads: DownloadManager
    /// Where a refresh in this process says how far it got (`mediahost refresh` on a terminal
    /// draws it on stderr): shows read so far, of how many. (Not a task-local: a task-local of a
    /// closure crashed in swift_task_localValuePush in the release build, Swift 6.3.1.)
    public let refreshProgress = Mutex<(@Sendable (_ done: Int, _ total: Int) -> Void)?>(nil)
    public let artwork: ArtworkCache
    /// The methods served: the runtime's and its modules'.
    let methodTable: Dispatcher.Table

    /// What the method named does to the user's things (its x-effect); nil for no such method.
    public func effect(of method: String) -> MethodEffect? {
        methodTable.methods.first { $0.method == method }?.effect
    }
    /// The concerns built on the runtime in this build (the player, sharing).
    let modules: [any HostModule.Type]
    /// What modules keep for this host (`HostComponent`).
    let components = HostComponents()
    /// Artwork URLs of items lately returned, so their images load without the provider.
    let recentArtwork = RecentArtwork()
    private let service = Mutex<(any HostConnection)?>(nil)
    private let session = Mutex(false)

    /// Whether a person's session (the REPL, an editor, MCP) or the service runs in this
    /// process: work that must outlive a call (a sleep timer) is kept only where one does.
    public var inSession: Bool { session.withLock { $0 } }

    func markSession() { session.withLock { $0 = true } }

    /// The background service this process's session sends its calls to, if it is attached to
    /// one: work a module does for the session (a sync round at start and quit) is asked of it,
    /// so its changes are made where every client hears them.
    public var attachedService: (any HostConnection)? {
        get { service.withLock { $0 } }
        set { service.withLock { $0 = newValue } }
    }

    /// Opens the store and reads the configuration.
    /// - Parameters:
    ///   - providers: the providers to offer; `BuiltinProviders.all` in the shipped binary.
    ///   - http: the client providers use.
    ///   - discovery: where providers found at start come from (plugins).
    ///   - modules: the concerns built on the runtime in this build (the player, sharing).
    ///   - oneShot: the process makes one call and exits (`mediahost call`): the store is one
    ///     connection that writes nothing unless the call does.
    /// - Throws: `HostError` or `StoreError` saying which file is at fault.
    public init(
        paths: HostPaths, providers: [ProviderRegistration], http: any HTTPClient, discovery: [any ProviderDiscovery] = [],
        modules: [any HostModule.Type] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment,
        logLevel: Logger.Level? = nil, oneShot: Bool = false
    ) throws {
        self.paths = paths
        self.http = http
        methodTable = Dispatcher.Table(Dispatcher.runtimeMethods + modules.flatMap { $0.methods })
        self.modules = modules
        // Plugins are read from their manifests here and started at their first call.
        var found = DiscoveredProviders()
        for source in discovery {
            found.append(source.discover(paths: paths, taken: Set((providers + found.registrations).map(\.descriptor.id))))
        }
        let providers = providers + found.registrations
        registry = ProviderRegistry(providers)
        pluginProblems = found.problems
        brokenPlugins = found.broken
        store = try MediaStore(path: paths.database, use: oneShot ? .oneShot : .shared)
        let descriptors = providers.map(\.descriptor)
        let storeValues = try Self.storedSettings(
            store: store, secrets: SecretSettings(path: paths.secretSettings), providers: descriptors)
        let config = try HostConfig(
            file: paths.configFile, providers: descriptors, storeValues: storeValues, environment: environment)
        let store = self.store
        configBox = ConfigBox(config, watching: [paths.configFile, paths.settingsStamp]) {
            let values = try Self.storedSettings(
                store: store, secrets: SecretSettings(path: paths.secretSettings), providers: descriptors)
            return try HostConfig(file: paths.configFile, providers: descriptors, storeValues: values, environment: environment)
        }
        for source in discovery { source.configure(config) }
        let redactor = Redactor()
        self.redactor = redactor
        events = EventHub(redactor: redactor)
        let level = logLevel ?? Logger.Level(rawValue: config.string(HostSettings.logLevel)) ?? .warning
        logger = Logger(label: HostRuntime.name) { StderrLogHandler(label: $0, level: level, redactor: redactor) }
        for key in config.unknownFileKeys {
            logger.warning("ignoring unknown setting '\(key)' in \(paths.configFile)")
        }
        for problem in config.allProblems { logger.warning("\(problem)") }
        for problem in found.problems { logger.warning("\(problem)") }
        let configBox = self.configBox
        let sources = SourceLookup()
        downloads = DownloadManager(
            store: store, http: http, events: events, logger: logger, redactor: redactor, root: paths.downloads,
            concurrency: { configBox.current.integer(HostSettings.downloadsConcurrency) },
            refreshSource: { id in await sources.host?.freshSource(id) },
            completed: { id in await sources.host?.fetchTranscriptAhead(id) })
        artwork = ArtworkCache(
            store: store, http: http, root: paths.cacheDir + "/artwork",
            limit: { Int64(configBox.current.integer(HostSettings.cacheMaxMB)) * 1_000_000 })
        self.environment = environment
        sources.host = self
        dropSessionsMadeElsewhere()
        refreshSecrets()
        // A change to the library is told where it is made, the store's writes, whoever made
        // it: a call, a sync round, an import, a rule.
        store.observeChanges { [events] change in
            for part in StoreChange.Part.allCases where change.parts.contains(part) {
                let list = part == .lists && change.lists.count == 1 ? change.lists.first : nil
                events.publish(HostEvent(LibraryChange(what: part.rawValue, list: list)))
            }
        }
        // No secret in effect is written into a favorite's or list item's snapshot.
        store.secretFilter.withLock { $0 = { [redactor] in redactor.redact(bytes: $0) } }
        configBox.onReloadFailure.withLock {
            $0 = { [logger] reason in
                logger.warning("\(reason); the settings before the change stay in effect")
            }
        }
        configBox.onReload.withLock {
            $0 = { [weak self] config in
                for source in discovery { source.configure(config) }
                self?.refreshSecrets()
                self?.registry.invalidate()
            }
        }
    }

    /// Tells the redactor every secret now in effect: secret settings and login sessions' tokens.
    func refreshSecrets() {
        var values = config.secretValues
        for id in registry.ids + Self.moduleSessions {
            guard let session = sessions.load(id) else { continue }
            // A token sent as a password (the sync server's) is also in Basic headers.
            values += SecretForms.password(session.accessToken, user: session.account)
            if let refresh = session.refreshToken { values.append(refresh) }
        }
        redactor.update(values)
    }

    /// Settings made with `config.set`: plain ones from the database, secret ones from the 0600
    /// file beside the sessions. A secret an older version left in the database moves to the file.
    private static func storedSettings(
        store: MediaStore, secrets: SecretSettings, providers: [ProviderDescriptor]
    ) throws -> [String: String] {
        let secretKeys = Set(
            providers.flatMap { descriptor in
                descriptor.configKeys.filter(\.secret).map { "providers.\(descriptor.id).\($0.name)" }
            })
        var values = try store.settingsNow()
        for (key, value) in values where secretKeys.contains(key) {
            try secrets.set(key, value)
            try store.deleteSettingNow(key)
            values[key] = nil
        }
        for (key, value) in secrets.load() where secretKeys.contains(key) { values[key] = value }
        return values
    }

    var secretSettings: SecretSettings { SecretSettings(path: paths.secretSettings) }

    /// The one entry point of both front ends.
    public var dispatcher: Dispatcher { Dispatcher(host: self) }

    /// The environment the host was made with (what settings and sockets were read from).
    public let environment: [String: String]

    /// The settings in effect: read again when another process of the data dir changed them.
    public var config: HostConfig { configBox.current }

    /// Why the settings as changed since they were read cannot be read (those before stay in
    /// effect), until they can.
    public var configProblem: String? {
        _ = configBox.current
        return configBox.problem.withLock { $0 }
    }

    /// Changes configuration and re-creates providers so the change applies at once; the other
    /// processes of the data dir (the service, front ends) read it again at their next use.
    func updateConfig(_ change: (inout HostConfig) -> Void) {
        configBox.state.withLock { change(&$0) }
        configBox.announceChange(stamp: paths.settingsStamp)
        refreshSecrets()
        registry.invalidate()
    }

    /// The registered providers' ids, in registration order.
    public var providerIDs: [String] { registry.ids }

    /// The provider that opens feeds by URL (the `feeds` capability): an imported OPML's
    /// podcasts are kept under it. Nil when none is registered.
    var feedProvider: String? { providers(with: .feeds).first }

    /// Whether `id` has SponsorBlock segments: a video of a provider with the `segments`
    /// capability (the runtime knows no provider by name).
    public func hasSegments(_ id: ItemID) -> Bool {
        id.kind == .video && provider(id.provider, has: .segments)
    }

    /// The providers with `capability`.
    func providers(with capability: ProviderDescriptor.Capability) -> [String] {
        registry.ids.filter { provider($0, has: capability) }
    }

    /// Whether provider `id` is registered and declares `capability`.
    func provider(_ id: String, has capability: ProviderDescriptor.Capability) -> Bool {
        (try? registry.registration(id))?.descriptor.capabilities.contains(capability) == true
    }

    func isConfigured(_ descriptor: ProviderDescriptor) -> Bool { configureHint(descriptor) == nil }

    /// How to configure a provider that is missing required settings.
    func configureHint(_ descriptor: ProviderDescriptor) -> String? {
        if let problem = brokenPlugins[descriptor.id] { return "fix the plugin: \(problem)" }
        let config = config
        func isSet(_ name: String) -> Bool { config["providers.\(descriptor.id).\(name)"] != nil }
        func how(_ key: ProviderDescriptor.ConfigKey) -> String {
            let env = (key.environment + [descriptor.environmentName(for: key.name)]).first!
            return "set \(env) or run `config providers.\(descriptor.id).\(key.name) <value>`"
        }
        var hints = descriptor.configKeys.filter { $0.required && !isSet($0.name) }.map(how)
        for group in descriptor.requiredAnyOf where !group.contains(where: isSet) {
            let keys = descriptor.configKeys.filter { group.contains($0.name) }
            hints.append(keys.map(how).joined(separator: ", or "))
        }
        return hints.isEmpty ? nil : hints.joined(separator: "; ")
    }

    /// The configured provider `id`, ready to call.
    /// - Throws: `HostError.unknownProvider`, `HostError.notConfigured`.
    func provider(_ id: String) throws -> any MediaProvider {
        let registration = try registry.registration(id)
        if let hint = configureHint(registration.descriptor) {
            throw HostError.notConfigured(provider: id, hint: hint)
        }
        let config = config
        return try registry.instance(id) {
            let providerLogger = Logger(label: "\(HostRuntime.name).\(id)") { [redactor, logger] in
                StderrLogHandler(label: $0, level: logger.logLevel, redactor: redactor)
            }
            let providerConfig = config.providerConfig(registration.descriptor)
            return ProviderContext(
                config: providerConfig, http: http, logger: providerLogger,
                cache: StoreProviderCache(
                    store: store, provider: id, logger: providerLogger,
                    namespace: StoreProviderCache.namespace(providerConfig, registration.descriptor)),
                programs: SpawnedProgramRunner(),
                sessions: StoredSessions(store: sessions, provider: id) { [weak self] in self?.refreshSecrets() })
        }
    }

    /// The item from its provider, or when that fails (offline, say) a favorite's snapshot.
    public func itemOrSnapshot(_ id: ItemID) async throws -> MediaItem {
        do {
            return try await withProvider(id.provider) { try await $0.item(id) }
        } catch {
            guard let snapshot = try await store.favorite(id) else { throw error }
            return snapshot
        }
    }

    /// Where an item's media is now, or nil when the provider cannot say (offline, say).
    func freshSource(_ id: ItemID) async -> DownloadSource? {
        try? await withProvider(id.provider) { try await $0.downloadSource(for: id) }
    }

    /// Fills in what the host knows about items: whether each is a favorite, its download, and
    /// where its playback was left.
    /// - Parameter allFavorites: the items are favorites already (their snapshots): skip that lookup.
    func annotate(_ items: [MediaItem], allFavorites: Bool = false) async throws -> [MediaItem] {
        guard !items.isEmpty else { return items }
        recentArtwork.remember(items)
        var known = try await store.annotations(for: items.map(\.id), allFavorites: allFavorites)
        known.playbacks = try await syncedPlaybacks(items, known: known.playbacks)
        return items.map { item in
            // Whatever made it (a provider, a plugin, a list from elsewhere), it leaves checked.
            var item = item.checked()
            item.lists = known.lists[item.id]
            item.favorite = known.favorites.contains(item.id)
            item.download = known.downloads[item.id].map(\.info)
            // Marked not played (back at the start) reads as never played: new.
            if let playback = known.playbacks[item.id], playback.played || playback.position > 0 {
                item.played = playback.played
                item.position = playback.played ? nil : playback.position
            }
            return item
        }
    }

    /// Where playback of `items` stands: as kept here or, when a sync server told of a newer
    /// action on another device (the newest action wins, by when it happened), as it says.
    func syncedPlaybacks(_ items: [MediaItem], known: [ItemID: PlaybackRecord]) async throws -> [ItemID: PlaybackRecord] {
        let urls = items.compactMap(SyncKeys.episodeURL)
        guard !urls.isEmpty else { return known }
        let guids = items.compactMap { item in
            SyncKeys.guid(of: item).flatMap { guid in SyncKeys.podcastURL(of: item).map { (guid: guid, podcast: $0) } }
        }
        let remote = try await store.remoteEpisodes(urls: urls, guids: guids)
        guard !remote.isEmpty else { return known }
        var merged = known
        for item in items {
            let byGUID = SyncKeys.guid(of: item).flatMap { guid in
                SyncKeys.podcastURL(of: item).flatMap { remote[MediaStore.guidKey(guid, podcast: $0)] }
            }
            guard let told = SyncKeys.episodeURL(of: item).flatMap({ remote[$0] }) ?? byGUID,
                told.at > known[item.id]?.updatedAt ?? .distantPast
            else { continue }
            if let record = told.playback(for: item.id) { merged[item.id] = record }
        }
        return merged
    }

    /// Where playback of `id` was left, here or (newer) on another device through the sync server.
    public func playback(of id: ItemID, item: MediaItem?) async throws -> PlaybackRecord? {
        let kept = try await store.playback(id)
        guard let item else { return kept }
        return try await syncedPlaybacks([item], known: kept.map { [id: $0] } ?? [:])[id]
    }

    func annotate(_ item: MediaItem) async throws -> MediaItem {
        try await annotate([item])[0]
    }

    func annotate(_ page: Page, allFavorites: Bool = false) async throws -> Page {
        var page = page
        page.items = try await annotate(page.items, allFavorites: allFavorites)
        return page
    }
}

/// The configuration, shared with what reads it later (the download manager's limit), and read
/// again when another process of the data dir changed it: `config.set` touches the data dir's
/// settings stamp, and config.toml may be edited by hand. One `stat` of each, at most ten times a
/// second, tells.
final class ConfigBox: Sendable {
    struct Stamp: Equatable {
        var seconds: Int
        var nanoseconds: Int
        var size: Int

        init?(_ path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            seconds = info.st_mtim.tv_sec
            nanoseconds = info.st_mtim.tv_nsec
            size = Int(info.st_size)
        }
    }

    let state: Mutex<HostConfig>
    /// What the watched files looked like when last read, and when they were last looked at.
    private let seen: Mutex<(stamps: [Stamp?], checked: ContinuousClock.Instant)>
    private let files: [String]
    private let reload: @Sendable () throws -> HostConfig?
    /// Told of each configuration read again.
    let onReload = Mutex<(@Sendable (HostConfig) -> Void)?>(nil)
    /// Told when the files changed and cannot be read: the configuration before stays.
    let onReloadFailure = Mutex<(@Sendable (String) -> Void)?>(nil)
    /// Why the last change could not be read, until a change that can be.
    let problem = Mutex<String?>(nil)

    static let checkInterval: Duration = .milliseconds(100)

    init(_ config: HostConfig, watching files: [String] = [], reload: @escaping @Sendable () throws -> HostConfig? = { nil }) {
        state = Mutex(config)
        self.files = files
        self.reload = reload
        seen = Mutex((files.map(Stamp.init), .now))
    }

    /// The configuration, read again first when a watched file changed.
    var current: HostConfig {
        let changed = seen.withLock { seen -> Bool in
            guard ContinuousClock.now - seen.checked >= Self.checkInterval else { return false }
            seen.checked = .now
            let stamps = files.map(Stamp.init)
            defer { seen.stamps = stamps }
            return stamps != seen.stamps
        }
        if changed {
            do {
                if let config = try reload() {
                    problem.withLock { $0 = nil }
                    state.withLock { $0 = config }
                    onReload.withLock { $0 }?(config)
                }
            } catch {
                // A broken edit is said once per change, and the settings before it stay.
                let reason = "\(error)"
                problem.withLock { $0 = reason }
                onReloadFailure.withLock { $0 }?(reason)
            }
        }
        return state.withLock { $0 }
    }

    /// Tells the other processes that the settings changed (this one has them already).
    func announceChange(stamp: String) {
        try? Data("\(Date().timeIntervalSince1970)\n".utf8).write(to: URL(fileURLWithPath: stamp), options: .atomic)
        seen.withLock { $0.stamps = files.map(Stamp.init) }
    }
}

/// Lets the download manager ask the host for fresh media URLs without owning it.
final class SourceLookup: @unchecked Sendable {
    weak var host: HostRuntime?
}
