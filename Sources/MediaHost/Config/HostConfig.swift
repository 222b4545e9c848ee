import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// One setting the host knows: a host key like `log.level` or a provider key like
/// `providers.podcasts.base_url`. Its default and its range are declared here and nowhere else.
public struct ConfigKeyInfo: Sendable {
    /// What values a setting takes; `config.set`, config.toml and the environment are all checked
    /// against it, and the text of a refusal names the range.
    public enum Kind: Sendable, Equatable {
        case text
        /// A whole number in the range.
        case integer(ClosedRange<Int>)
        /// A number of seconds in the range (fractions allowed).
        case seconds(ClosedRange<Double>)
        /// A number of minutes in the range (fractions allowed).
        case minutes(ClosedRange<Double>)
        /// 0 (off), or a number of minutes in the range.
        case minutesOrOff(ClosedRange<Double>)
        /// One of these words.
        case choice([String])
        /// A program and its arguments, split like a shell does (quotes group words).
        case command
    }

    public var key: String
    public var summary: String
    public var secret: Bool
    public var defaultValue: String?
    /// Env vars that override it, first found wins.
    public var environment: [String]
    public var kind: Kind

    public init(
        key: String, summary: String, secret: Bool = false, defaultValue: String? = nil,
        environment: [String] = [], kind: Kind = .text
    ) {
        self.key = key
        self.summary = summary
        self.secret = secret
        self.defaultValue = defaultValue
        self.environment = environment
        self.kind = kind
    }

    /// Why `value` is not acceptable, or nil when it is.
    public func problem(with value: String) -> String? {
        switch kind {
        case .text:
            return nil
        case .integer(let range):
            guard let number = Int(value.trimming(.whitespaces)), range.contains(number) else {
                return "must be a whole number from \(range.lowerBound) to \(range.upperBound)"
            }
            return nil
        case .seconds(let range), .minutes(let range):
            let unit = if case .minutes = kind { "minutes" } else { "seconds" }
            guard let number = Double(value.trimming(.whitespaces)), number.isFinite, range.contains(number) else {
                return "must be a number of \(unit) from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))"
            }
            return nil
        case .minutesOrOff(let range):
            guard let number = Double(value.trimming(.whitespaces)), number.isFinite, number == 0 || range.contains(number)
            else {
                return
                    "must be 0 (off) or a number of minutes from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))"
            }
            return nil
        case .choice(let words):
            return words.contains(value) ? nil : "must be one of \(words.joined(separator: ", "))"
        case .command:
            switch ShellWords.split(value) {
            case .success(let words) where !words.isEmpty: return nil
            case .success: return "must name a program"
            case .failure(let error): return "must be a command line as a shell reads it: \(error.description)"
            }
        }
    }

    /// The range as people read it, for `config` and errors ("1–32", "one of …").
    public var rangeText: String? {
        switch kind {
        case .text, .command: nil
        case .integer(let range): "\(range.lowerBound)–\(range.upperBound)"
        case .seconds(let range): "\(Self.format(range.lowerBound))–\(Self.format(range.upperBound)) s"
        case .minutes(let range): "\(Self.format(range.lowerBound))–\(Self.format(range.upperBound)) min"
        case .minutesOrOff(let range): "0 (off) or \(Self.format(range.lowerBound))–\(Self.format(range.upperBound)) min"
        case .choice(let words): words.joined(separator: " | ")
        }
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// The host's own settings. Read them with `HostConfig.integer(_:)` and friends, which return
/// the declared default when nothing valid is set.
public enum HostSettings {
    public static let logLevel = ConfigKeyInfo(
        key: "log.level", summary: "Log level on stderr", defaultValue: "warning", environment: ["MEDIAHOST_LOG_LEVEL"],
        kind: .choice(["trace", "debug", "info", "notice", "warning", "error", "critical"]))
    public static let downloadsConcurrency = ConfigKeyInfo(
        key: "downloads.concurrency", summary: "Downloads running at once; the rest wait in order", defaultValue: "3",
        environment: ["MEDIAHOST_DOWNLOADS_CONCURRENCY"], kind: .integer(1...32))
    public static let cacheMaxMB = ConfigKeyInfo(
        key: "cache.max_mb", summary: "Artwork cache size in MB; the least recently used images go first", defaultValue: "500",
        environment: ["MEDIAHOST_CACHE_MAX_MB"], kind: .integer(1...1_000_000))
    public static let playerCommand = ConfigKeyInfo(
        key: "player.command",
        summary: "The media player `play` hands files and stream URLs to (split like a shell: quote words with spaces)",
        defaultValue: "mpv", environment: ["MEDIAHOST_PLAYER"], kind: .command)
    public static let playerFormat = ConfigKeyInfo(
        key: "player.format",
        summary:
            "What an episode offered in several formats (podcast:alternateEnclosure) plays: the feed's own file, audio or video",
        defaultValue: "feed", environment: ["MEDIAHOST_PLAYER_FORMAT"], kind: .choice(["feed", "audio", "video"]))
    public static let playerBitrate = ConfigKeyInfo(
        key: "player.bitrate",
        summary:
            "Of an episode's formats of player.format's kind, the highest bitrate up to this many kb/s plays, else the lowest (0: no limit)",
        defaultValue: "0", environment: ["MEDIAHOST_PLAYER_BITRATE"], kind: .integer(0...100_000))
    public static let httpTimeout = ConfigKeyInfo(
        key: "http.timeout",
        summary: "Longest a call waits on the network, retries included, in seconds (downloads are not bounded by it)",
        defaultValue: "20", environment: ["MEDIAHOST_HTTP_TIMEOUT"], kind: .seconds(1...600))

    public static let pluginIdle = ConfigKeyInfo(
        key: "plugin.idle", summary: "Seconds a plugin's process is kept running after its last call",
        defaultValue: "300", environment: ["MEDIAHOST_PLUGIN_IDLE"], kind: .seconds(1...86_400))
    public static let background = ConfigKeyInfo(
        key: "host.background",
        summary: "Use the background service: auto (when one runs), always (start one when none runs), never",
        defaultValue: BackgroundUse.auto.rawValue, environment: ["MEDIAHOST_HOST_BACKGROUND"],
        kind: .choice(BackgroundUse.allCases.map(\.rawValue)))

    public static let mcpReadOnly = ConfigKeyInfo(
        key: "mcp.read_only",
        summary: "`mediahost mcp` offers assistants only the tools that change nothing (search, details, lists, status)",
        defaultValue: "false", environment: ["MEDIAHOST_MCP_READ_ONLY"], kind: .choice(["false", "true"]))

    public static let replImages = ConfigKeyInfo(
        key: "repl.images",
        summary:
            "Pictures in the REPL: auto (ask the terminal), kitty, sixel, iterm, blocks (Unicode in colour), or off",
        defaultValue: "auto", environment: ["MEDIAHOST_REPL_IMAGES"],
        kind: .choice(["auto", "kitty", "sixel", "iterm", "blocks", "off"]))
    public static let replListingImages = ConfigKeyInfo(
        key: "repl.listing_images",
        summary: "Listings end with a grid of their thumbnails (as `--pictures` asks once): on or off",
        defaultValue: "off", environment: ["MEDIAHOST_REPL_LISTING_IMAGES"], kind: .choice(["off", "on"]))

    public static let mediaKeys = ConfigKeyInfo(
        key: "desktop.media_keys",
        summary: "While this host plays, it is a media player on the session bus (MPRIS): media keys, playerctl, widgets",
        defaultValue: "on", environment: ["MEDIAHOST_DESKTOP_MEDIA_KEYS"], kind: .choice(["on", "off"]))
    public static let desktopNotifications = ConfigKeyInfo(
        key: "desktop.notifications",
        summary: "Desktop notifications: a download done or failed, and new episodes a refresh of what you follow found",
        defaultValue: "off", environment: ["MEDIAHOST_DESKTOP_NOTIFICATIONS"], kind: .choice(["off", "on"]))

    public static let transcriptsLanguage = ConfigKeyInfo(
        key: "transcripts.language",
        summary: "The language of transcripts when an episode has several (en, de-DE…); empty: the first listed",
        defaultValue: "", environment: ["MEDIAHOST_TRANSCRIPTS_LANGUAGE"], kind: .text)

    public static let transcriptsPrefetch = ConfigKeyInfo(
        key: "transcripts.prefetch",
        summary:
            "Fetch transcripts ahead of time: with each download (downloads), and also the newest episodes of what you follow, from the service (new), or only when asked (off)",
        defaultValue: "downloads", environment: ["MEDIAHOST_TRANSCRIPTS_PREFETCH"], kind: .choice(["downloads", "new", "off"]))
    public static let sponsorBlock = ConfigKeyInfo(
        key: "sponsorblock.enabled",
        summary: "SponsorBlock for YouTube videos: on (segments asked by a 4-digit hash prefix; skipped, muted or marked) or off",
        defaultValue: "on", environment: ["MEDIAHOST_SPONSORBLOCK"], kind: .choice(["on", "off"]))
    public static let sponsorBlockServer = ConfigKeyInfo(
        key: "sponsorblock.server", summary: "The SponsorBlock server (people run mirrors)",
        defaultValue: "https://sponsor.ajay.app", environment: ["MEDIAHOST_SPONSORBLOCK_SERVER"], kind: .text)
    public static let sponsorBlockSkip = ConfigKeyInfo(
        key: "sponsorblock.skip",
        summary:
            "Categories skipped while playing (sponsor, selfpromo, interaction, intro, outro, preview, music_offtopic, filler)",
        defaultValue: "sponsor", environment: ["MEDIAHOST_SPONSORBLOCK_SKIP"], kind: .text)
    public static let sponsorBlockMute = ConfigKeyInfo(
        key: "sponsorblock.mute", summary: "Categories muted while playing; the others are marked as chapters",
        defaultValue: "", environment: ["MEDIAHOST_SPONSORBLOCK_MUTE"], kind: .text)

    public static let syncIntervalMinutes = ConfigKeyInfo(
        key: "sync.interval_minutes",
        summary: "How often the service syncs with the podcast sync server (`login sync`), in minutes",
        defaultValue: "15", environment: ["MEDIAHOST_SYNC_INTERVAL_MINUTES"], kind: .minutes(0.1...1440))

    public static let refreshIntervalMinutes = ConfigKeyInfo(
        key: "refresh.interval_minutes",
        summary: "How often the service refreshes what you follow (new episodes, then each show's rules), in minutes; 0: never",
        defaultValue: "60", environment: ["MEDIAHOST_REFRESH_INTERVAL_MINUTES"], kind: .minutesOrOff(1...10_080))
    public static let downloadsMaxGB = ConfigKeyInfo(
        key: "downloads.max_gb",
        summary:
            "Most gigabytes downloads may take: a refresh deletes the oldest played ones beyond it (never favorites, kept or unplayed ones); 0: no limit",
        defaultValue: "0", environment: ["MEDIAHOST_DOWNLOADS_MAX_GB"], kind: .integer(0...100_000))

    public static let webListen = ConfigKeyInfo(
        key: "web.listen",
        summary:
            "The service's web remote: host:port to answer on (0.0.0.0:8733 for the home network, 127.0.0.1:8733 for this machine only); empty: off",
        defaultValue: "", environment: ["MEDIAHOST_WEB_LISTEN"], kind: .text)

    public static let webTLSCert = ConfigKeyInfo(
        key: "web.tls_cert",
        summary: "The web remote's certificate chain (a PEM file): with web.tls_key, it answers HTTPS and WSS only",
        defaultValue: "", environment: ["MEDIAHOST_WEB_TLS_CERT"], kind: .text)
    public static let webTLSKey = ConfigKeyInfo(
        key: "web.tls_key", summary: "The private key of web.tls_cert (a PEM file)", defaultValue: "",
        environment: ["MEDIAHOST_WEB_TLS_KEY"], kind: .text)

    /// host.background's values.
    public enum BackgroundUse: String, CaseIterable, Sendable {
        /// The service when one runs.
        case auto
        /// A service started when none runs.
        case always
        /// Every command in its own process.
        case never
    }
    public static let all = [
        logLevel, downloadsConcurrency, cacheMaxMB, playerCommand, playerFormat, playerBitrate, httpTimeout, pluginIdle,
        background, mcpReadOnly,
        replImages, replListingImages, mediaKeys, desktopNotifications,
        transcriptsLanguage, transcriptsPrefetch, sponsorBlock, sponsorBlockServer, sponsorBlockSkip, sponsorBlockMute,
        syncIntervalMinutes, refreshIntervalMinutes, downloadsMaxGB, webListen, webTLSCert, webTLSKey,
    ]
}

/// Configuration in layers: defaults < config.toml < `config.set` (the store) < environment.
public struct HostConfig: Sendable {
    public static let redacted = "********"

    public private(set) var keys: [String: ConfigKeyInfo]
    public private(set) var fileValues: [String: String]
    public var storeValues: [String: String]
    public let environment: [String: String]
    /// Keys in config.toml that no one reads, reported at start-up.
    public private(set) var unknownFileKeys: [String] = []

    /// - Throws: `HostError.badConfigFile` when config.toml exists but cannot be read.
    public init(
        file: String?, providers: [ProviderDescriptor], storeValues: [String: String] = [:],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        var keys: [String: ConfigKeyInfo] = [:]
        for info in HostSettings.all { keys[info.key] = info }
        for descriptor in providers {
            for configKey in descriptor.configKeys {
                let key = "providers.\(descriptor.id).\(configKey.name)"
                keys[key] = ConfigKeyInfo(
                    key: key, summary: configKey.summary, secret: configKey.secret, defaultValue: configKey.defaultValue,
                    environment: configKey.environment + [descriptor.environmentName(for: configKey.name)])
            }
        }
        self.keys = keys
        self.storeValues = storeValues
        self.environment = environment
        self.fileValues = [:]
        if let file, FileManager.default.fileExists(atPath: file) {
            let text: String
            do {
                text = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw HostError.badConfigFile(path: file, reason: describe(error))
            }
            let table: TOMLTable
            do {
                table = try TOMLTable(string: text)
            } catch {
                throw HostError.badConfigFile(path: file, reason: error.description)
            }
            Self.flatten(table, prefix: "", into: &fileValues)
            // [plugins.<id>] tables are plugins' declarations, read by PluginManifest.
            unknownFileKeys = fileValues.keys.filter { keys[$0] == nil && !$0.hasPrefix("plugins.") }.sorted()
        }
    }

    private static func flatten(_ table: TOMLTable, prefix: String, into out: inout [String: String]) {
        for (key, value) in table {
            let path = prefix.isEmpty ? key : prefix + "." + key
            if let nested = value.table {
                flatten(nested, prefix: path, into: &out)
            } else if let string = value.string {
                out[path] = string
            } else if let int = value.int {
                out[path] = String(int)
            } else if let bool = value.bool {
                out[path] = String(bool)
            } else if let double = value.double {
                out[path] = String(double)
            } else {
                out[path] = value.description
            }
        }
    }

    /// The effective value of a key and its source. A value outside the setting's range, from any
    /// layer, is passed over (a lower layer or the default applies); `problems(_:)` says why.
    public func resolve(_ key: String) -> (value: String?, source: ConfigEntry.Source) {
        for candidate in candidates(key) where keys[key]?.problem(with: candidate.value) == nil {
            return (candidate.value, candidate.source)
        }
        return (nil, .unset)
    }

    /// Every value set for `key`, highest layer first, with where each came from.
    private func candidates(_ key: String) -> [(value: String, source: ConfigEntry.Source, origin: String)] {
        var found: [(value: String, source: ConfigEntry.Source, origin: String)] = []
        if let info = keys[key] {
            for name in info.environment {
                if let value = environment[name], !value.isEmpty { found.append((value, .environment, name)) }
            }
        }
        if let value = storeValues[key] { found.append((value, .store, "the stored value")) }
        if let value = fileValues[key] { found.append((value, .file, "config.toml")) }
        if let value = keys[key]?.defaultValue { found.append((value, .default, "the default")) }
        return found
    }

    /// Why values set for `key` are being ignored (out of range, wrong type), one sentence each.
    public func problems(_ key: String) -> [String] {
        guard let info = keys[key] else { return [] }
        return candidates(key).compactMap { candidate in
            info.problem(with: candidate.value).map { reason in
                let shown = info.secret ? "" : " ('\(Self.shorten(candidate.value))')"
                return "\(candidate.origin) of \(key)\(shown) is ignored: \(reason)"
            }
        }
    }

    /// Every ignored value of every setting, for a warning at start-up.
    public var allProblems: [String] { sortedKeys.flatMap(problems) }

    private static func shorten(_ value: String) -> String {
        value.count > 40 ? String(value.prefix(40)) + "…" : value
    }

    public subscript(key: String) -> String? { resolve(key).value }

    /// A host setting's text, or its declared default.
    public func string(_ info: ConfigKeyInfo) -> String { self[info.key] ?? info.defaultValue ?? "" }

    /// An integer setting, always inside its declared range.
    public func integer(_ info: ConfigKeyInfo) -> Int {
        guard case .integer(let range) = info.kind else { preconditionFailure("\(info.key) is not an integer setting") }
        let value =
            self[info.key].flatMap { Int($0.trimming(.whitespaces)) } ?? info.defaultValue.flatMap { Int($0) }
            ?? range.lowerBound
        return min(max(value, range.lowerBound), range.upperBound)
    }

    /// A minutes setting, always inside its declared range (0 for one that is off).
    public func minutes(_ info: ConfigKeyInfo) -> Double {
        switch info.kind {
        case .minutes(let range): return number(info, in: range)
        case .minutesOrOff(let range):
            let value =
                self[info.key].flatMap { Double($0.trimming(.whitespaces)) } ?? info.defaultValue.flatMap { Double($0) } ?? 0
            return value.isFinite && value > 0 ? min(max(value, range.lowerBound), range.upperBound) : 0
        default: preconditionFailure("\(info.key) is not a minutes setting")
        }
    }

    /// A seconds setting, always inside its declared range.
    public func seconds(_ info: ConfigKeyInfo) -> Double {
        guard case .seconds(let range) = info.kind else { preconditionFailure("\(info.key) is not a seconds setting") }
        return number(info, in: range)
    }

    private func number(_ info: ConfigKeyInfo, in range: ClosedRange<Double>) -> Double {
        let value =
            self[info.key].flatMap { Double($0.trimming(.whitespaces)) } ?? info.defaultValue.flatMap { Double($0) }
            ?? range.lowerBound
        return value.isFinite ? min(max(value, range.lowerBound), range.upperBound) : range.lowerBound
    }

    /// A command setting split into the program and its arguments.
    public func command(_ info: ConfigKeyInfo) -> [String] {
        let text = self[info.key] ?? info.defaultValue ?? ""
        return (try? ShellWords.split(text).get()) ?? []
    }

    /// The entry `config.get` shows, with secrets redacted.
    public func entry(_ key: String) -> ConfigEntry? {
        guard let info = keys[key] else { return nil }
        let (value, source) = resolve(key)
        var notes = problems(key)
        if source == .environment, storeValues[key] != nil || fileValues[key] != nil {
            let name =
                info.environment.first { environment[$0]?.isEmpty == false && info.problem(with: environment[$0]!) == nil } ?? ""
            notes.insert("\(name) is set in the environment and takes precedence over the stored value", at: 0)
        }
        let note = notes.isEmpty ? nil : notes.joined(separator: "; ")
        return ConfigEntry(
            key: key, value: info.secret && value != nil ? Self.redacted : value, source: source, secret: info.secret,
            summary: info.summary, environment: info.environment, default: info.secret ? nil : info.defaultValue,
            range: info.rangeText, note: note)
    }

    public var sortedKeys: [String] { keys.keys.sorted() }

    /// Every secret value in effect, so logs can redact them.
    public var secretValues: [String] {
        keys.values.filter(\.secret).compactMap { self[$0.key] }.filter { $0.count >= 4 }
    }

    /// The settings of one provider, by its own key names.
    public func providerConfig(_ descriptor: ProviderDescriptor) -> ProviderConfig {
        var values: [String: String] = [:]
        for configKey in descriptor.configKeys {
            if let value = self["providers.\(descriptor.id).\(configKey.name)"] { values[configKey.name] = value }
        }
        return ProviderConfig(values, declaredBy: descriptor)
    }
}
