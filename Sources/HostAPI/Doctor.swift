import JSONRPC
import MediaKit

/// What works on this machine and what does not, each with the exact command or setting that
/// fixes it: the data dir, the background service, the player, every provider (configured or
/// not, what its programs need), plugins. Offline, the checks that need the network are named;
/// `online` runs them. `ok` is false when something configured does not work.
public struct HostDoctor: APIMethod {
    public static let method = "host.doctor"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    /// Also reach each configured provider's service.
    public var online: Bool?

    public init(online: Bool? = nil) { self.online = online }

    public struct Response: Codable, Sendable, Equatable {
        public var checks: [HealthCheck]
        /// Nothing configured failed.
        public var ok: Bool

        public init(checks: [HealthCheck], ok: Bool) {
            self.checks = checks
            self.ok = ok
        }
    }
}
