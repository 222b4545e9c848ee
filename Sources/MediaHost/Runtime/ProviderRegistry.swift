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
