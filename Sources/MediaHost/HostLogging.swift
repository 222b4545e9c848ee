import Foundation
import JSONRPC
import Logging
import MediaKit
import Synchronization

/// Removes the secret values in effect (API keys, tokens, session tokens) from everything that
/// leaves the host: RPC results and errors, notifications, REPL output, stderr, stored errors.
/// A server that echoes a request (proxies and some APIs do) puts the key in its error body; this
/// is what keeps it from reaching a person, a log or a file.
///
/// Each secret is looked for as it is, percent-encoded (as it sat in a URL) and JSON-escaped.
public final class Redactor: Sendable {
    public static let mask = "***"
    /// Shorter values are not secrets worth masking (and would mask ordinary words).
    static let minimumLength = 4

    private let patterns = Mutex<[String]>([])
    public init() {}

    public func update(_ values: [String]) {
        var forms = Set<String>()
        for value in values where value.utf8.count >= Self.minimumLength {
            forms.insert(value)
            if let encoded = value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) { forms.insert(encoded) }
            if let encoded = value.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) { forms.insert(encoded) }
            forms.insert(String(decoding: JSONWriter.bytes(.string(value)).dropFirst().dropLast(), as: UTF8.self))
        }
        patterns.withLock { $0 = forms.sorted { $0.utf8.count > $1.utf8.count } }
    }

    public var isEmpty: Bool { patterns.withLock { $0.isEmpty } }

    public func redact(_ text: String) -> String {
        let values = patterns.withLock { $0 }
        var text = text
        for value in values where text.contains(value) { text = text.replacingOccurrences(of: value, with: Self.mask) }
        return text
    }

    /// Secrets removed and control characters dropped: for a line a person reads.
    public func scrub(_ text: String, keepNewlines: Bool = true) -> String {
        redact(DisplayText.clean(text, keepNewlines: keepNewlines))
    }

    /// JSON text with every secret replaced (inside strings; a secret is never a whole token).
    public func redact(bytes: [UInt8]) -> [UInt8] {
        let values = patterns.withLock { $0 }
        guard !values.isEmpty else { return bytes }
        var bytes = bytes
        for value in values { bytes = Self.replace(Array(value.utf8), in: bytes) }
        return bytes
    }

    /// A JSON value with every string redacted.
    public func redact(_ value: JSONValue) -> JSONValue {
        guard !isEmpty else { return value }
        switch value {
        case .string(let text): return .string(redact(text))
        case .array(let elements): return .array(elements.map(redact))
        case .object(let members): return .object(members.mapValues(redact))
        default: return value
        }
    }

    private static func replace(_ needle: [UInt8], in haystack: [UInt8]) -> [UInt8] {
        guard let first = needle.first, haystack.count >= needle.count else { return haystack }
        var out: [UInt8] = []
        var copied = 0
        var i = 0
        let last = haystack.count - needle.count
        haystack.withUnsafeBufferPointer { h in
            while i <= last {
                if h[i] == first, memcmp(h.baseAddress! + i, needle, needle.count) == 0 {
                    if out.isEmpty { out.reserveCapacity(haystack.count) }
                    out.append(contentsOf: h[copied..<i])
                    out.append(contentsOf: Self.mask.utf8)
                    i += needle.count
                    copied = i
                } else {
                    i += 1
                }
            }
        }
        guard copied > 0 else { return haystack }
        out.append(contentsOf: haystack[copied...])
        return out
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
        let line = redactor.scrub("\(label) \(event.level): \(event.message)\(meta)", keepNewlines: false) + "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
