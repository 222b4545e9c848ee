import Foundation
import MediaKit
import TOMLKit

/// One setting the host knows: a host key like `log.level` or a provider key like
/// `providers.podcasts.base_url`.
public struct ConfigKeyInfo: Sendable {
    public var key: String
    public var summary: String
    public var secret: Bool
    public var defaultValue: String?
    /// Env vars that override it, first found wins.
    public var environment: [String]
    /// Returns why a value is unacceptable, or nil.
    public var validate: @Sendable (String) -> String?

    public init(
        key: String, summary: String, secret: Bool = false, defaultValue: String? = nil,
        environment: [String] = [], validate: @escaping @Sendable (String) -> String? = { _ in nil }
    ) {
        self.key = key
        self.summary = summary
        self.secret = secret
        self.defaultValue = defaultValue
        self.environment = environment
        self.validate = validate
    }
}

/// A setting's effective value and where it came from, as `config.get` shows it.
public struct ConfigEntry: Codable, Sendable, Equatable {
    public enum Source: String, Codable, Sendable { case `default`, file, store, environment, unset }
    public var key: String
    /// The value; "********" for a secret that is set.
    public var value: String?
    public var source: Source
    public var secret: Bool
    public var summary: String
    /// The env vars that override it.
    public var environment: [String]
    /// Set when a stored value is shadowed by the environment.
    public var note: String?
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

    public static let hostKeys: [ConfigKeyInfo] = [
        ConfigKeyInfo(
            key: "log.level", summary: "Log level on stderr: trace, debug, info, notice, warning, error, critical",
            defaultValue: "warning", environment: ["MEDIAHOST_LOG_LEVEL"],
            validate: { Logger.Level(rawValue: $0) == nil ? "must be one of trace, debug, info, notice, warning, error, critical" : nil }),
        ConfigKeyInfo(
            key: "downloads.concurrency", summary: "Downloads running at once; the rest wait in order", defaultValue: "3",
            environment: ["MEDIAHOST_DOWNLOADS_CONCURRENCY"],
            validate: { Int($0).map { (1...32).contains($0) } == true ? nil : "must be a whole number from 1 to 32" }),
        ConfigKeyInfo(
            key: "cache.max_mb", summary: "Artwork cache size in MB; the least recently used images go first", defaultValue: "500",
            environment: ["MEDIAHOST_CACHE_MAX_MB"],
            validate: { Int($0).map { $0 >= 1 } == true ? nil : "must be a whole number of megabytes, at least 1" }),
        ConfigKeyInfo(
            key: "player.command", summary: "The media player `play` hands files and stream URLs to (words split on spaces)",
            defaultValue: "mpv", environment: ["MEDIAHOST_PLAYER"],
            validate: { $0.trimmingCharacters(in: .whitespaces).isEmpty ? "must name a program" : nil }),
    ]

    /// - Throws: `HostError.badConfigFile` when config.toml exists but cannot be read.
    public init(
        file: String?, providers: [ProviderDescriptor], storeValues: [String: String] = [:],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        var keys: [String: ConfigKeyInfo] = [:]
        for info in Self.hostKeys { keys[info.key] = info }
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
                throw HostError.badConfigFile(path: file, reason: error.localizedDescription)
            }
            let table: TOMLTable
            do {
                table = try TOMLTable(string: text)
            } catch let error as TOMLParseError {
                throw HostError.badConfigFile(
                    path: file, reason: "\(error.description) at line \(error.source.begin.line)")
            } catch {
                throw HostError.badConfigFile(path: file, reason: "\(error)")
            }
            Self.flatten(table, prefix: "", into: &fileValues)
            unknownFileKeys = fileValues.keys.filter { keys[$0] == nil }.sorted()
        }
    }

    private static func flatten(_ table: TOMLTable, prefix: String, into out: inout [String: String]) {
        for (key, value) in table {
            let path = prefix.isEmpty ? key : prefix + "." + key
            if let nested = value.table { flatten(nested, prefix: path, into: &out) }
            else if let string = value.string { out[path] = string }
            else if let int = value.int { out[path] = String(int) }
            else if let bool = value.bool { out[path] = String(bool) }
            else if let double = value.double { out[path] = String(double) }
            else { out[path] = value.debugDescription }
        }
    }

    /// The effective value of a key and its source.
    public func resolve(_ key: String) -> (value: String?, source: ConfigEntry.Source) {
        if let info = keys[key] {
            for name in info.environment { if let value = environment[name], !value.isEmpty { return (value, .environment) } }
        }
        if let value = storeValues[key] { return (value, .store) }
        if let value = fileValues[key] { return (value, .file) }
        if let value = keys[key]?.defaultValue { return (value, .default) }
        return (nil, .unset)
    }

    public subscript(key: String) -> String? { resolve(key).value }

    /// The entry `config.get` shows, with secrets redacted.
    public func entry(_ key: String) -> ConfigEntry? {
        guard let info = keys[key] else { return nil }
        let (value, source) = resolve(key)
        var note: String?
        if source == .environment, storeValues[key] != nil || fileValues[key] != nil {
            let name = info.environment.first { environment[$0]?.isEmpty == false } ?? ""
            note = "\(name) is set in the environment and takes precedence over the stored value"
        }
        return ConfigEntry(
            key: key, value: info.secret && value != nil ? Self.redacted : value, source: source, secret: info.secret,
            summary: info.summary, environment: info.environment, note: note)
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
        return ProviderConfig(values)
    }
}
