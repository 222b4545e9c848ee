import Foundation
import MediaHTTP
import MediaKit
import Sandbox

extension SandboxServer {
    /// A provider's context against this started sandbox: its replica's base URL plus `config`,
    /// and the real libcurl client with `retries` retries (none by default, so faults surface).
    public func providerContext(
        _ replica: String, _ config: [String: String] = [:], retries: Int = 0, cache: any ProviderCache = MemoryProviderCache()
    ) -> ProviderContext {
        var configuration = MediaHTTPClient.Configuration()
        configuration.maxRetries = retries
        configuration.baseDelay = 0.01
        return ProviderContext(
            config: ProviderConfig(config.merging(["base_url": baseURL(for: replica)!]) { $1 }),
            http: MediaHTTPClient(configuration: configuration), logger: Logger(label: "test"), cache: cache)
    }
}
