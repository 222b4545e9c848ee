import JSONRPC

/// Settings with their effective values and sources; secrets are shown as "********".
public struct ConfigGet: APIMethod {
    public static let method = "config.get"
    public static let effect = MethodEffect(.reads)
    public typealias Response = [ConfigEntry]
    /// One setting, e.g. "providers.podcasts.base_url"; omitted: all of them.
    public var key: String?

    public init(key: String? = nil) {
        self.key = key
    }
}

/// Stores a setting in the database (above config.toml, below env vars); null removes it.
public struct ConfigSet: APIMethod {
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
}

/// A setting's effective value and where it came from, as `config.get` shows it.
public struct ConfigEntry: Codable, Sendable, Equatable {
    public enum Source: String, Codable, Sendable, CaseIterable { case `default`, file, store, environment, unset }
    public var key: String
    /// The value; "********" for a secret that is set.
    public var value: String?
    public var source: Source
    public var secret: Bool
    public var summary: String
    /// The env vars that override it.
    public var environment: [String]
    /// The built-in default, when there is one.
    public var `default`: String?
    /// The values it takes ("1–32", "trace | debug | …"), when limited.
    public var range: String?
    /// Why a value is shadowed by the environment or ignored (out of range).
    public var note: String?

    public init(
        key: String, value: String? = nil, source: Source, secret: Bool, summary: String, environment: [String],
        default: String? = nil, range: String? = nil, note: String? = nil
    ) {
        self.key = key
        self.value = value
        self.source = source
        self.secret = secret
        self.summary = summary
        self.environment = environment
        self.default = `default`
        self.range = range
        self.note = note
    }
}
