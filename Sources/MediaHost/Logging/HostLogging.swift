import Basics
import FoundationEssentials
import Glibc
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
public final class Redactor: Redacting {
    public static let mask = "***"
    /// Shorter values are not secrets worth masking (and would mask ordinary words).
    static let minimumLength = 4

    /// Secrets of the call being served that are no setting (a login's password), masked as
    /// the others while it runs: in its log lines, its answer, its error and what it stores.
    @TaskLocal public static var inFlight: [String] = []

    private struct Patterns {
        /// The secrets these are the forms of.
        var values: [String] = []
        /// Every form of every secret, longest first.
        var forms: [[UInt8]] = []
        /// The forms' starts, for texts cut inside a secret.
        var starts = PrefixAutomaton([])
    }
    private let patterns = Mutex(Patterns())
    public init() {}

    public func update(_ values: [String]) {
        let made = Self.patterns(values)
        patterns.withLock { $0 = made }
    }

    /// The patterns in effect, with the call's own secrets when it has some.
    private var current: Patterns {
        let set = patterns.withLock { $0 }
        let extra = Self.inFlight.filter { $0.utf8.count >= Self.minimumLength && !set.values.contains($0) }
        return extra.isEmpty ? set : Self.patterns(set.values + extra)
    }

    private static func patterns(_ values: [String]) -> Patterns {
        var forms = Set<String>()
        for value in values where value.utf8.count >= Self.minimumLength {
            forms.insert(value)
            for allowed in [Self.unreserved, Self.alphanumerics, Self.urlQueryAllowed] {
                let encoded = value.percentEncoded(allowing: allowed)
                forms.insert(encoded)
                forms.insert(Self.lowercasingHex(encoded))
            }
            let escaped = String(decoding: JSONWriter.bytes(.string(value)).dropFirst().dropLast(), as: UTF8.self)
            forms.insert(escaped)
            forms.insert(escaped.replacing("/", with: "\\/"))  // encoders that escape slashes
        }
        let sorted = forms.map { Array($0.utf8) }.sorted {
            $0.count != $1.count ? $0.count > $1.count : $0.lexicographicallyPrecedes($1)
        }
        return Patterns(values: values, forms: sorted, starts: PrefixAutomaton(sorted))
    }

    public var isEmpty: Bool { current.forms.isEmpty }

    /// RFC 3986's unreserved characters: what every encoder leaves as it is.
    static let unreserved = ScalarSet.asciiAlphanumerics(plus: "-._~")
    /// Letters, marks and digits of any script (what Foundation's `.alphanumerics` leaves).
    static let alphanumerics = ScalarSet {
        switch $0.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .nonspacingMark,
            .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            true
        default: false
        }
    }
    /// What a query may hold as it is (Foundation's `.urlQueryAllowed`).
    static let urlQueryAllowed = ScalarSet.asciiAlphanumerics(plus: "!$&'()*+,-./:;=?@_~")

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
        let current = self.current
        guard !current.forms.isEmpty else { return text }
        let bytes = Array(text.utf8)
        let redacted = Self.redact(bytes, current)
        return redacted == bytes ? text : String(decoding: redacted, as: UTF8.self)
    }

    /// Secrets removed and control characters dropped: for a line a person reads.
    public func scrub(_ text: String, keepNewlines: Bool = true) -> String {
        redact(DisplayText.clean(text, keepNewlines: keepNewlines))
    }

    /// JSON text with every secret replaced (inside strings; a secret is never a whole token).
    public func redact(bytes: [UInt8]) -> [UInt8] {
        let current = self.current
        guard !current.forms.isEmpty else { return bytes }
        return Self.redact(bytes, current)
    }

    /// Whole forms, longest first, then the starts of forms cut short: each a pass over the text.
    private static func redact(_ bytes: [UInt8], _ patterns: Patterns) -> [UInt8] {
        var bytes = bytes
        for form in patterns.forms { bytes = Self.replace(form, in: bytes) }
        return redactCut(bytes, patterns.starts)
    }

    /// The shortest start of a secret worth masking when text was cut inside it: before a "…",
    /// and (since ordinary words end texts too) a longer one at the very end.
    static let minimumCut = 6
    static let minimumCutAtEnd = 12

    /// A secret cut short by a shortened message ("…" or the end of the text) would otherwise
    /// pass the whole-value match: the start of a secret right before a cut is masked too.
    ///
    /// One pass, whatever the text (a text of nothing but "…" once took 49 s for 8 MB, looking
    /// back at every one): the automaton's state after each byte is the longest end of the text
    /// read that starts a secret's form.
    static func redactCut(_ bytes: [UInt8], _ starts: PrefixAutomaton) -> [UInt8] {
        var masked: [Range<Int>] = []
        func cut(at index: Int, state: Int32) {
            let length = starts.longestStart(state)
            guard length >= (index == bytes.count ? minimumCutAtEnd : minimumCut) else { return }
            let range = (index - length)..<index
            if let last = masked.last, last.upperBound > range.lowerBound {
                masked[masked.count - 1] = min(last.lowerBound, range.lowerBound)..<index
            } else {
                masked.append(range)
            }
        }
        var state: Int32 = 0
        bytes.withUnsafeBufferPointer { text in
            var i = 0
            while i < text.count {
                if text[i] == 0xE2, i + 2 < text.count, text[i + 1] == 0x80, text[i + 2] == 0xA6 { cut(at: i, state: state) }
                state = starts.step(state, text[i])
                i += 1
            }
        }
        cut(at: bytes.count, state: state)
        guard !masked.isEmpty else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var copied = 0
        for range in masked {
            out.append(contentsOf: bytes[copied..<range.lowerBound])
            out.append(contentsOf: mask.utf8)
            copied = range.upperBound
        }
        out.append(contentsOf: bytes[copied...])
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

/// The starts of a set of byte strings as one automaton (Aho-Corasick's trie with its failure
/// links): stepped over a text a byte at a time, its state says how long the longest end of the
/// text read so far is that starts one of the strings. Linear in the text, whatever it holds.
struct PrefixAutomaton: Sendable {
    /// Each node's edges, by byte; node 0 is the empty start.
    private var edges: [[UInt8: Int32]] = [[:]]
    private var failure: [Int32] = [0]
    /// The longest start of a string that ends at this node and is shorter than every string
    /// it starts (a whole string was masked by the whole-value pass).
    private var proper: [Int32] = [0]
    /// Bytes found in no string: from them the automaton goes straight back to its start.
    private var used = [Bool](repeating: false, count: 256)

    init(_ strings: [[UInt8]]) {
        var depth: [Int32] = [0]
        for string in strings {
            var node: Int32 = 0
            for byte in string {
                used[Int(byte)] = true
                if let next = edges[Int(node)][byte] {
                    node = next
                } else {
                    let next = Int32(edges.count)
                    edges.append([:])
                    failure.append(0)
                    proper.append(0)
                    depth.append(depth[Int(node)] + 1)
                    edges[Int(node)][byte] = next
                    node = next
                }
            }
        }
        // Breadth first, so a node's failure link is settled before its children need it.
        var queue: [Int32] = Array(edges[0].values)
        var head = 0
        while head < queue.count {
            let node = queue[head]
            head += 1
            let n = Int(node)
            proper[n] = edges[n].isEmpty ? proper[Int(failure[n])] : depth[n]
            for (byte, child) in edges[n].sorted(by: { $0.key < $1.key }) {
                var link = failure[n]
                while true {
                    if let next = edges[Int(link)][byte], next != child {
                        failure[Int(child)] = next
                        break
                    }
                    if link == 0 { break }
                    link = failure[Int(link)]
                }
                queue.append(child)
            }
        }
    }

    /// The state after `byte`.
    @inline(__always) func step(_ state: Int32, _ byte: UInt8) -> Int32 {
        guard used[Int(byte)] else { return 0 }
        var node = state
        while true {
            if let next = edges[Int(node)][byte] { return next }
            if node == 0 { return 0 }
            node = failure[Int(node)]
        }
    }

    /// How many bytes before this state start one of the strings (0: none).
    @inline(__always) func longestStart(_ state: Int32) -> Int { Int(proper[Int(state)]) }
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
