import FoundationEssentials
import Logging

/// What a front end asks of the process it runs in, beside the API's calls (which go through
/// `connection`, to this process's host or to the service): its own files, the secrets it
/// masks, the downloads this process runs, where log lines go while it draws. The runtime
/// (`HostRuntime`) is one; the REPL sees nothing else of it.
public protocol LocalSession: AnyObject, Sendable {
    /// The program's name and version, for a banner.
    var programName: String { get }
    var programVersion: String { get }
    /// Calls to the host in this process.
    var connection: any HostConnection { get }
    /// This process's notifications (the service's come through its connection).
    var events: EventHub { get }
    var logger: Logger { get }
    /// Masks the secrets in effect in what is shown.
    var redacting: any Redacting { get }
    /// The REPL's history file, and the data dir (for a banner).
    var historyFile: String { get }
    var dataDir: String { get }
    /// The providers and methods this process knows, when asking the host fails.
    var providerIDs: [String] { get }
    var methodNames: [String] { get }
    var settingKeys: [String] { get }
    /// Whether a setting's value is secret (kept out of history files).
    func isSecretSetting(_ key: String) -> Bool
    /// Whether logging in to `provider` takes a password.
    func needsPassword(_ provider: String) -> Bool
    /// The message for a provider that is not there, in the host's own words.
    func unknownProvider(_ id: String, known: [String]) -> String
    /// Sends log lines to `handler` instead of stderr (nil: stderr again).
    func divertLog(_ handler: (@Sendable (Logger.Level, String) -> Void)?)
    /// Hands the downloads running in this process over to the service, which resumes them.
    func handOverDownloads() async
    /// Waits until this process's downloads have ended.
    func downloadsIdle() async
    /// This process's downloads that completed or failed since `date`.
    func downloadsEnded(since date: Date) async throws -> [Download]
}
