import JSONRPC
import MediaStore

/// Settings with their effective values and sources; secrets are shown as "********".
public struct ConfigGet: RPCMethod {
    public static let method = "config.get"
    public static let effect = MethodEffect(.reads)
    public typealias Response = [ConfigEntry]
    /// One setting, e.g. "providers.podcasts.base_url"; omitted: all of them.
    public var key: String?

    public init(key: String? = nil) {
        self.key = key
    }

    public func run(on host: HostRuntime) async throws -> Response {
        let config = host.config
        if let key {
            guard let entry = config.entry(key) else { throw HostError.unknownConfigKey(key) }
            return [entry]
        }
        return config.sortedKeys.compactMap(config.entry)
    }
}

/// Stores a setting in the database (above config.toml, below env vars); null removes it.
public struct ConfigSet: RPCMethod {
    public static let method = "config.set"
    public static let effect = MethodEffect(.changes)
    public typealias Response = ConfigEntry
    public var key: String
    /// A string, number or boolean; null removes the stored value.
    public var value: JSONValue?

    public init(key: String, value: JSONValue? = nil) {
        self.key = key
        self.value = value
    }

    public func run(on host: HostRuntime) async throws -> ConfigEntry {
        guard let info = host.config.keys[key] else { throw HostError.unknownConfigKey(key) }
        let text: String?
        switch value {
        case nil, .null?: text = nil
        case .string(let s)?: text = s
        case .number(let n)?: text = n
        case .bool(let b)?: text = String(b)
        default: throw HostError.invalidConfigValue(key: key, reason: "must be a string, number or boolean")
        }
        if let text, let reason = info.problem(with: text) { throw HostError.invalidConfigValue(key: key, reason: reason) }
        // Secrets stay out of the database (a copied or shared database must carry none).
        if info.secret { try host.secretSettings.set(key, text) } else { try await host.store.setSetting(key, value: text) }
        host.updateConfig { $0.storeValues[key] = text }
        guard let entry = host.config.entry(key) else { throw HostError.unknownConfigKey(key) }
        return entry
    }
}
