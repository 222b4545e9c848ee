/// What a provider is and can do, known before it is created.
public struct ProviderDescriptor: Codable, Sendable, Equatable {
    /// The id used in item ids, config sections and env vars: lower-case letters, digits, '-' and '_'.
    public var id: String
    public var name: String
    public var kinds: [MediaKind]
    public var capabilities: [Capability]
    public var configKeys: [ConfigKey]
    public var auth: AuthKind
    /// Anything a user should know about the provider's limits, shown in `providers.list`.
    public var notes: String?
    /// Groups of config keys of which at least one must be set (e.g. an API key or a token).
    public var requiredAnyOf: [[String]]

    public init(
        id: String, name: String, kinds: [MediaKind], capabilities: [Capability],
        configKeys: [ConfigKey] = [], auth: AuthKind = .none, notes: String? = nil, requiredAnyOf: [[String]] = []
    ) {
        self.requiredAnyOf = requiredAnyOf
        precondition(Self.isValidID(id), "provider id '\(id)' is not valid")
        self.id = id
        self.name = name
        self.kinds = kinds
        self.capabilities = capabilities
        self.configKeys = configKeys
        self.auth = auth
        self.notes = notes
    }

    public static func isValidID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 32
            && id.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d || $0 == 0x5f }
    }

    /// The env var that overrides a config key: `MEDIAHOST_<ID>_<KEY>`, e.g. MEDIAHOST_PODCASTS_BASE_URL.
    public func environmentName(for key: String) -> String { Self.environmentName(provider: id, key: key) }

    /// The one rule for a provider setting's env var, used by the host and the sandbox alike:
    /// upper case, and every character that is not a letter or digit (`-` in an id, `.`) becomes `_`.
    public static func environmentName(provider: String, key: String) -> String {
        String("MEDIAHOST_\(provider)_\(key)".uppercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    }

    public enum Capability: String, Codable, Sendable, CaseIterable {
        case categories, browse, search, item, children, download, login, remoteFavorites
        /// Opens any feed (RSS, Atom) by its URL as a show (`ItemID.feed`): an imported OPML's
        /// podcasts are kept under the provider that has it.
        case feeds
        /// Its videos are known to SponsorBlock by their native ids: their segments (sponsors,
        /// intros, a highlight) are asked for there (`media.segments`).
        case segments
    }

    public enum AuthKind: String, Codable, Sendable, CaseIterable {
        /// Works without credentials.
        case none
        /// Needs an API key or token from config or the environment.
        case apiKey
        /// Works without credentials and does more with them.
        case optionalToken
        /// An OAuth 2.0 device-code login for account features.
        case oauthDevice
        /// A username and password login that yields a session.
        case sessionLogin
    }

    /// One setting a provider reads, under `[providers.<id>]` in config.toml.
    public struct ConfigKey: Codable, Sendable, Equatable {
        public var name: String
        public var summary: String
        /// Never printed, logged or returned.
        public var secret: Bool
        /// Without it the provider is not configured.
        public var required: Bool
        public var defaultValue: String?
        /// Well-known env vars that set it besides MEDIAHOST_<ID>_<KEY> (e.g. YOUTUBE_API_KEY).
        public var environment: [String]

        public init(
            name: String, summary: String, secret: Bool = false, required: Bool = false,
            defaultValue: String? = nil, environment: [String] = []
        ) {
            self.name = name
            self.summary = summary
            self.secret = secret
            self.required = required
            self.defaultValue = defaultValue
            self.environment = environment
        }
    }
}
