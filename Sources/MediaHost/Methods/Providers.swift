import MediaKit

/// Every registered provider, what it can do and whether it is configured.
public struct ProvidersList: RPCMethod {
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
    }
    public typealias Response = [ProviderInfo]

    public func run(on host: HostRuntime) async throws -> Response {
        host.registry.registrations.map { registration in
            let d = registration.descriptor
            return ProviderInfo(
                id: d.id, name: d.name, kinds: d.kinds, capabilities: d.capabilities, auth: d.auth,
                configured: host.isConfigured(d), configure: host.configureHint(d), notes: d.notes)
        }
    }
}

/// A provider's categories: video categories, genres, trending tags.
public struct ProvidersCategories: RPCMethod {
    public static let method = "providers.categories"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public typealias Response = [MediaCategory]
    /// The provider id, e.g. "podcasts".
    public var provider: String

    public init(provider: String) {
        self.provider = provider
    }

    public func run(on host: HostRuntime) async throws -> Response {
        try await host.withProvider(provider) { try await $0.categories() }
    }
}
