import Basics
import FoundationEssentials
import Glibc

/// One finding of `mediahost doctor` (`host.doctor`): something a provider or the host needs,
/// whether it works, and the exact command or setting that fixes it when it does not.
public struct HealthCheck: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable, CaseIterable {
        /// Works.
        case ok
        /// Works, with less than it could (an old yt-dlp, a missing optional program).
        case warning
        /// Configured but does not work: `doctor` exits non-zero.
        case failed
        /// Not checked: needs the network (`doctor --online`), or not used.
        case skipped
    }

    /// What it belongs to: a provider's id, or "host", "player", "service", "plugin:<id>".
    public var area: String
    /// What was checked ("yt-dlp", "JavaScript runtime", "data dir").
    public var name: String
    public var status: Status
    /// What was found, in words.
    public var detail: String
    /// The command or setting that fixes it.
    public var fix: String?

    public init(area: String, name: String, status: Status, detail: String, fix: String? = nil) {
        self.area = area
        self.name = name
        self.status = status
        self.detail = detail
        self.fix = fix
    }
}

/// A provider that can say whether what it needs is there (programs, files, the service).
public protocol DiagnosableProvider: MediaProvider {
    /// Its checks; with `network`, also those that reach the service.
    func healthChecks(network: Bool) async -> [HealthCheck]
}
