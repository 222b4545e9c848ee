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
/// Each secret is looked for as it is, percent-encoded as URLs carry it (every character but
/// RFC 3986's unreserved ones, or all but letters and digits, or as a query allows; with upper or
/// lower case hex) and JSON-escaped.
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
            for allowed in [Self.unreserved, .alphanumerics, .urlQueryAllowed] {
                guard let encoded = value.addingPercentEncoding(withAllowedCharacters: allowed) else { continue }
                forms.insert(encoded)
                forms.insert(Self.lowercasingHex(encoded))
            }
            let escaped = String(decoding: JSONWriter.bytes(.string(value)).dropFirst().dropLast(), as: UTF8.self)
            forms.insert(escaped)
            forms.insert(escaped.replacingOccurrences(of: "/", with: "\\/"))  // encoders that escape slashes
        }
        patterns.withLock { $0 = forms.sorted { $0.utf8.count > $1.utf8.count } }
    }

    public var isEmpty: Bool { patterns.withLock { $0.isEmpty } }

    /// RFC 3986's unreserved characters: what every encoder leaves as it is.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// "%2F" as "%2f" (both are the same byte to a server).
    static func lowercasingHex(_ encoded: String) -> String {
        var out = ""
        var afterPercent = 0
        for character in encoded {
            if character == "%" {
                afterPercent = 2
                out.append(character)
            } else if afterPercent > 0 {
                afterPercent -= 1
                out += character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }

    public func redact(_ text: String) -> String {
        let values = patterns.withLock { $0 }
        guard !values.isEmpty else { return text }
        var text = text
        for value in values where text.contains(value) { text = text.replacingOccurrences(of: value, with: Self.mask) }
        return String(decoding: Self.redactCut(Array(text.utf8), values.map { Array($0.utf8) }), as: UTF8.self)
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
        let forms = values.map { Array($0.utf8) }
        for form in forms { bytes = Self.replace(form, in: bytes) }
        return Self.redactCut(bytes, forms)
    }

    /// The shortest start of a secret worth masking when text was cut inside it: before a "…",
    /// and (since ordinary words end texts too) a longer one at the very end.
    static let minimumCut = 6
    static let minimumCutAtEnd = 12
    private static let ellipsis: [UInt8] = [0xE2, 0x80, 0xA6]

    /// A secret cut short by a shortened message ("…" or the end of the text) would otherwise
    /// pass the whole-value match: the start of a secret right before a cut is masked too.
    static func redactCut(_ bytes: [UInt8], _ forms: [[UInt8]]) -> [UInt8] {
        var cuts: [Int] = []
        var i = 0
        while i + 3 <= bytes.count {
            if bytes[i] == 0xE2, bytes[i + 1] == 0x80, bytes[i + 2] == 0xA6 { cuts.append(i) }
            i += 1
        }
        cuts.append(bytes.count)
        var out = bytes
        // From the last cut back, so earlier offsets stay valid.
        for cut in cuts.reversed() {
            let minimum = cut == bytes.count ? minimumCutAtEnd : minimumCut
            var longest = 0
            for form in forms {
                var k = min(form.count - 1, cut)
                while k >= minimum {
                    if out[(cut - k)..<cut].elementsEqual(form[0..<k]) { break }
                    k -= 1
                }
                if k >= minimum { longest = max(longest, k) }
            }
            if longest > 0 { out.replaceSubrange((cut - longest)..<cut, with: Array(mask.utf8)) }
        }
        return out
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

    private static let diverted = Mutex<(@Sendable (Logger.Level, String) -> Void)?>(nil)

    /// Sends log lines to `handler` instead of stderr (nil: back to stderr). The interactive
    /// REPL shows them above its prompt: written to the terminal they would land on the line
    /// being typed.
    public static func divert(_ handler: (@Sendable (Logger.Level, String) -> Void)?) {
        diverted.withLock { $0 = handler }
    }

    public func log(event: LogEvent) {
        if let handler = Self.diverted.withLock({ $0 }) {
            return handler(event.level, redactor.scrub("\(event.message)", keepNewlines: false))
        }
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let meta = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        let line = redactor.scrub("\(label) \(event.level): \(event.message)\(meta)", keepNewlines: false) + "\n"
        Descriptor.standardError(line)
    }
}
