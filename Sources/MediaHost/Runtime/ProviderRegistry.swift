import MediaKit
import Synchronization

/// How the host creates one provider: its descriptor and a factory.
public struct ProviderRegistration: Sendable {
    public let descriptor: ProviderDescriptor
    public let make: @Sendable (ProviderContext) throws -> any MediaProvider

    /// A compiled-in provider. Account capabilities (`login`, `remoteFavorites`) follow from
    /// whether it conforms to `AccountProvider`, whatever its descriptor lists: a provider that
    /// conforms and forgets the capability, or lists it without conforming, cannot reach a path
    /// that expects the other.
    public static func of<P: CompiledProvider>(_ type: P.Type) -> ProviderRegistration {
        var descriptor = P.descriptor
        let accounts: [ProviderDescriptor.Capability] = [.login, .remoteFavorites]
        if P.self is any AccountProvider.Type {
            for capability in accounts where !descriptor.capabilities.contains(capability) {
                descriptor.capabilities.append(capability)
            }
        } else {
            descriptor.capabilities.removeAll { accounts.contains($0) }
        }
        return ProviderRegistration(descriptor: descriptor, make: { try P(context: $0) })
    }

    public init(descriptor: ProviderDescriptor, make: @escaping @Sendable (ProviderContext) throws -> any MediaProvider) {
        self.descriptor = descriptor
        self.make = make
    }
}

/// The registered providers, created lazily with the current configuration and re-created after
/// `config.set` changes it.
final class ProviderRegistry: Sendable {
    let registrations: [ProviderRegistration]
    private let instances = Mutex<[String: any MediaProvider]>([:])

    init(_ registrations: [ProviderRegistration]) {
        var seen = Set<String>()
        for registration in registrations {
            precondition(
                seen.insert(registration.descriptor.id).inserted, "provider \(registration.descriptor.id) registered twice")
        }
        self.registrations = registrations
    }

    var ids: [String] { registrations.map(\.descriptor.id) }

    func registration(_ id: String) throws(HostError) -> ProviderRegistration {
        guard let registration = registrations.first(where: { $0.descriptor.id == id }) else {
            throw .unknownProvider(id, known: ids)
        }
        return registration
    }

    /// The instance for `id`, creating it with `context` when there is none yet.
    func instance(_ id: String, context: () -> ProviderContext) throws -> any MediaProvider {
        if let existing = instances.withLock({ $0[id] }) { return existing }
        let created = try registration(id).make(context())
        return instances.withLock { instances in
            if let raced = instances[id] { return raced }
            instances[id] = created
            return created
        }
    }

    /// Forgets every instance so the next call sees new configuration.
    func invalidate() { instances.withLock { $0.removeAll() } }
}

/// Providers found when a host starts rather than compiled in (plugins, from their manifests).
public protocol ProviderDiscovery: Sendable {
    /// The providers found, and what is wrong with those that could not be loaded.
    /// - Parameter taken: the ids registered already, which a found provider may not reuse.
    func discover(paths: HostPaths, taken: Set<String>) -> DiscoveredProviders
    /// Told the settings in effect at start and whenever they are read again.
    func configure(_ config: HostConfig)
}

/// What a `ProviderDiscovery` found.
public struct DiscoveredProviders: Sendable {
    public var registrations: [ProviderRegistration]
    /// Providers listed but broken (a missing command, a bad manifest), by id, with what is wrong:
    /// their calls fail with it and `providers.list` says how to fix them.
    public var broken: [String: String]
    /// Every problem, for `host.info` and the log.
    public var problems: [String]

    public init(registrations: [ProviderRegistration] = [], broken: [String: String] = [:], problems: [String] = []) {
        self.registrations = registrations
        self.broken = broken
        self.problems = problems
    }

    mutating func append(_ other: DiscoveredProviders) {
        registrations += other.registrations
        broken.merge(other.broken) { first, _ in first }
        problems += other.problems
    }
}
