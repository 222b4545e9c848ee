import MediaKit

/// Every registered provider, what it can do and whether it is configured.
public struct ProvidersList: APIMethod {
    public static let method = "providers.list"
    public static let effect = MethodEffect(.reads)

    public init() {}

    public struct ProviderInfo: Codable, Sendable, Equatable {
        public var id: String
        public var name: String
        public var kinds: [MediaKind]
        public var capabilities: [ProviderDescriptor.Capability]
        public var auth: ProviderDescriptor.AuthKind
        /// Whether every required setting is present.
        public var configured: Bool
        /// How to configure it, when it is not.
        public var configure: String?
        public var notes: String?

        public init(
            id: String, name: String, kinds: [MediaKind], capabilities: [ProviderDescriptor.Capability],
            auth: ProviderDescriptor.AuthKind, configured: Bool, configure: String? = nil, notes: String? = nil
        ) {
            self.id = id
            self.name = name
            self.kinds = kinds
            self.capabilities = capabilities
            self.auth = auth
            self.configured = configured
            self.configure = configure
            self.notes = notes
        }
    }
    public typealias Response = [ProviderInfo]
}

/// A provider's categories: video categories, genres, trending tags.
public struct ProvidersCategories: APIMethod {
    public static let method = "providers.categories"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public typealias Response = [MediaCategory]
    /// The provider id, e.g. "podcasts".
    public var provider: String

    public init(provider: String) {
        self.provider = provider
    }
}
