import Foundation
import Logging
import Synchronization

/// Replaces known secret values in text before it is logged.
public final class Redactor: Sendable {
    private let secrets = Mutex<[String]>([])
    public init() {}

    public func update(_ values: [String]) { secrets.withLock { $0 = values.sorted { $0.count > $1.count } } }

    public func redact(_ text: String) -> String {
        let values = secrets.withLock { $0 }
        var text = text
        for value in values where text.contains(value) { text = text.replacingOccurrences(of: value, with: "***") }
        return text
    }
}

/// Log lines on stderr, never stdout (stdout carries protocol only), with secrets redacted.
public struct StderrLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let redactor: Redactor

    public init(label: String, level: Logger.Level, redactor: Redactor) {
        self.label = label
        self.logLevel = level
        self.redactor = redactor
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let meta = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        let line = redactor.redact("\(label) \(event.level): \(event.message)\(meta)\n")
        FileHandle.standardError.write(Data(line.utf8))
    }
}
