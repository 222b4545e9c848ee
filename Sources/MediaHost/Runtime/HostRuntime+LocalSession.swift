import FoundationEssentials
import HostAPI
import Logging
import MediaStore

/// The runtime as the front end in its process sees it (the REPL knows it only as this).
extension HostRuntime: LocalSession {
    public var programName: String { Self.name }
    public var programVersion: String { Self.version }
    public var connection: any HostConnection { LocalConnection(host: self) }
    public var redacting: any Redacting { redactor }
    public var historyFile: String { paths.replHistory }
    public var dataDir: String { paths.dataDir }
    public var methodNames: [String] { dispatcher.methodNames }
    public var settingKeys: [String] { config.sortedKeys }

    public func isSecretSetting(_ key: String) -> Bool { config.keys[key]?.secret == true }

    public func unknownProvider(_ id: String, known: [String]) -> String {
        HostError.unknownProvider(id, known: known).description
    }

    public func divertLog(_ handler: (@Sendable (Logger.Level, String) -> Void)?) { StderrLogHandler.divert(handler) }

    public func handOverDownloads() async { await downloads.handOver() }

    public func downloadsIdle() async { await downloads.idle() }

    public func downloadsEnded(since date: Date) async throws -> [Download] {
        try await store.downloads(in: [.completed, .failed]).filter { $0.updatedAt > date }.map(Download.init)
    }
}
