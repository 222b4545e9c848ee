import HostAPI
import MediaKit

extension ProvidersList: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        host.registry.registrations.map { registration in
            let d = registration.descriptor
            return ProviderInfo(
                id: d.id, name: d.name, kinds: d.kinds, capabilities: d.capabilities, auth: d.auth,
                configured: host.isConfigured(d), configure: host.configureHint(d), notes: d.notes)
        }
    }
}

extension ProvidersCategories: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        try await host.withProvider(provider) { try await $0.categories() }
    }
}
