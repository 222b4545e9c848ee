// A TOML 1.0 reader: the config file and plugin manifests. It replaces TOMLKit, whose
// `import struct Foundation.Data` had every module using it ask the linker for full Foundation
// (34 MB of ICU data in the binary), and whose toml++ core was the only C++ the build compiled.
// Tested against the official toml-test suite's TOML 1.0 cases (Tests/BasicsTests/toml-test).

/// A TOML value. Date and time values keep their text as written (the host reads none of them).
public enum TOMLValue: Sendable, Equatable, CustomStringConvertible {
    case string(String)
    case integer(Int64)
    case float(Double)
    case bool(Bool)
    /// An offset date-time (`1979-05-27T07:32:00Z`).
    case dateTime(String)
    case localDateTime(String)
    case localDate(String)
    case localTime(String)
    case array([TOMLValue])
    case table(TOMLTable)

    public var string: String? { if case .string(let value) = self { value } else { nil } }
    public var int: Int? { if case .integer(let value) = self { Int(exactly: value) } else { nil } }
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    public var double: Double? { if case .float(let value) = self { value } else { nil } }
    public var array: [TOMLValue]? { if case .array(let value) = self { value } else { nil } }
    public var table: TOMLTable? { if case .table(let value) = self { value } else { nil } }

    /// The value as TOML writes it (inline).
    public var description: String {
        switch self {
        case .string(let text): TOMLValue.quoted(text)
        case .integer(let number): String(number)
        case .float(let number): number.isNaN ? "nan" : number.isInfinite ? (number < 0 ? "-inf" : "inf") : String(number)
        case .bool(let flag): String(flag)
        case .dateTime(let text), .localDateTime(let text), .localDate(let text), .localTime(let text): text
        case .array(let values): "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .table(let table): "{" + table.map { "\(TOMLValue.key($0.key)) = \($0.value)" }.joined(separator: ", ") + "}"
        }
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static func key(_ key: String) -> String {
        let bare = !key.isEmpty && key.utf8.allSatisfy { TOMLReader.isBareKeyByte($0) }
        return bare ? key : quoted(key)
    }
}

/// A TOML table: its keys in the order the document gives them.
public struct TOMLTable: Sendable, Equatable, Sequence {
    public private(set) var keys: [String] = []
    private var values: [String: TOMLValue] = [:]

    public init() {}

    /// Reads a TOML document.
    /// - Throws: `TOMLError` saying what is wrong and where.
    public init(string: String) throws(TOMLError) {
        var reader = TOMLReader(Array(string.utf8))
        self = try reader.document()
    }

    /// Reads a TOML document's bytes, which must be UTF-8.
    public init(bytes: [UInt8]) throws(TOMLError) {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw TOMLError(message: "the document is not UTF-8", line: 1, column: 1)
        }
        var reader = TOMLReader(bytes)
        self = try reader.document()
    }

    public subscript(key: String) -> TOMLValue? { values[key] }

    mutating func set(_ key: String, _ value: TOMLValue) {
        if values.updateValue(value, forKey: key) == nil { keys.append(key) }
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    public func makeIterator() -> some IteratorProtocol<(key: String, value: TOMLValue)> {
        keys.lazy.map { (key: $0, value: values[$0]!) }.makeIterator()
    }
}

/// Why a TOML document could not be read, and where (1-based).
public struct TOMLError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public let line: Int
    public let column: Int
    public var description: String { "\(message) at line \(line), column \(column)" }
}

/// The parser: one pass over the document's bytes, building a tree that knows how each table
/// was made (a header, a dotted key, implicitly, inline), which decides what may extend it.
struct TOMLReader {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    init(_ bytes: [UInt8]) {
        var bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        self.bytes = bytes
    }

    /// A table while it is being read.
    final class Node {
        enum Origin { case header, dotted, implicit, inline }
        enum Entry {
            case value(TOMLValue)
            case table(Node)
            case tables([Node])
        }
        var origin: Origin
        var entries: [(key: String, entry: Entry)] = []
        var positions: [String: Int] = [:]

        init(_ origin: Origin) { self.origin = origin }

        subscript(key: String) -> Entry? {
            get { positions[key].map { entries[$0].entry } }
            set {
                guard let newValue else { return }
                if let position = positions[key] {
                    entries[position].entry = newValue
                } else {
                    positions[key] = entries.count
                    entries.append((key, newValue))
                }
            }
        }

        var table: TOMLTable {
            var table = TOMLTable()
            for (key, entry) in entries {
                switch entry {
                case .value(let value): table.set(key, value)
                case .table(let node): table.set(key, .table(node.table))
                case .tables(let nodes): table.set(key, .array(nodes.map { .table($0.table) }))
                }
            }
            return table
        }
    }

    mutating func document() throws(TOMLError) -> TOMLTable {
        let root = Node(.header)
        var current = root
        while true {
            skipWhitespace()
            guard let byte = peek else { break }
            switch byte {
            case UInt8(ascii: "#"), 0x0A, 0x0D: break
            case UInt8(ascii: "["):
                if peek(at: 1) == UInt8(ascii: "[") {
                    index += 2
                    let path = try keyPath()
                    try expect("]")
                    try expect("]")
                    current = try appendTable(path, to: root)
                } else {
                    index += 1
                    let path = try keyPath()
                    try expect("]")
                    current = try defineTable(path, in: root)
                }
            default:
                try keyValue(into: current)
            }
            try endOfLine()
        }
        return root.table
    }

    // MARK: Tables

    private func fail(_ message: String) -> TOMLError {
        TOMLError(message: message, line: line, column: index - lineStart + 1)
    }

    private static func dotted(_ path: [String]) -> String { path.map(TOMLValue.key).joined(separator: ".") }

    /// The table a header's path leads through (tables, the last of an array of tables); implicit
    /// tables are made where there are none.
    private func walk(_ path: ArraySlice<String>, from root: Node, whole: [String]) throws(TOMLError) -> Node {
        var node = root
        for key in path {
            switch node[key] {
            case nil:
                let child = Node(.implicit)
                node[key] = .table(child)
                node = child
            case .table(let child):
                guard child.origin != .inline else { throw fail("\(Self.dotted(whole)) extends an inline table") }
                node = child
            case .tables(let children):
                node = children[children.count - 1]
            case .value:
                throw fail("\(Self.dotted(whole)) extends \(key), which is a value")
            }
        }
        return node
    }

    private func defineTable(_ path: [String], in root: Node) throws(TOMLError) -> Node {
        let parent = try walk(path.dropLast(), from: root, whole: path)
        let key = path[path.count - 1]
        switch parent[key] {
        case nil:
            let node = Node(.header)
            parent[key] = .table(node)
            return node
        case .table(let node) where node.origin == .implicit:
            node.origin = .header
            return node
        default:
            throw fail("[\(Self.dotted(path))] is defined twice")
        }
    }

    private func appendTable(_ path: [String], to root: Node) throws(TOMLError) -> Node {
        let parent = try walk(path.dropLast(), from: root, whole: path)
        let key = path[path.count - 1]
        let node = Node(.header)
        switch parent[key] {
        case nil: parent[key] = .tables([node])
        case .tables(let nodes): parent[key] = .tables(nodes + [node])
        default: throw fail("[[\(Self.dotted(path))]] names something that is not an array of tables")
        }
        return node
    }

    /// `key = value` into `table`: a dotted key makes (or extends) tables of its own, never one a
    /// header or another document part made.
    private mutating func keyValue(into table: Node) throws(TOMLError) {
        let path = try keyPath()
        skipWhitespace()
        try expect("=")
        skipWhitespace()
        let value = try self.value()
        var node = table
        for key in path.dropLast() {
            switch node[key] {
            case nil:
                let child = Node(.dotted)
                node[key] = .table(child)
                node = child
            case .table(let child) where child.origin == .dotted:
                node = child
            default:
                throw fail("\(Self.dotted(path)) extends a table or value defined elsewhere")
            }
        }
        let key = path[path.count - 1]
        guard node[key] == nil else { throw fail("\(Self.dotted(path)) is defined twice") }
        node[key] = value
    }

    // MARK: Keys

    static func isBareKeyByte(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 95 || byte == 45
    }

    private mutating func keyPath() throws(TOMLError) -> [String] {
        var path: [String] = []
        while true {
            skipWhitespace()
            switch peek {
            case UInt8(ascii: "\""):
                index += 1
                path.append(try basicString())
            case UInt8(ascii: "'"):
                index += 1
                path.append(try literalString())
            case let byte? where Self.isBareKeyByte(byte):
                let start = index
                while let byte = peek, Self.isBareKeyByte(byte) { index += 1 }
                path.append(String(decoding: bytes[start..<index], as: UTF8.self))
            default:
                throw fail(path.isEmpty ? "a key is missing" : "a key is missing after the dot")
            }
            skipWhitespace()
            guard peek == UInt8(ascii: ".") else { return path }
            index += 1
        }
    }

    // MARK: Values

    private mutating func value() throws(TOMLError) -> Node.Entry {
        switch peek {
        case UInt8(ascii: "\""):
            if peek(at: 1) == UInt8(ascii: "\""), peek(at: 2) == UInt8(ascii: "\"") {
                index += 3
                return .value(.string(try multilineString(literal: false)))
            }
            index += 1
            return .value(.string(try basicString()))
        case UInt8(ascii: "'"):
            if peek(at: 1) == UInt8(ascii: "'"), peek(at: 2) == UInt8(ascii: "'") {
                index += 3
                return .value(.string(try multilineString(literal: true)))
            }
            index += 1
            return .value(.string(try literalString()))
        case UInt8(ascii: "["):
            index += 1
            return .value(.array(try arrayValues()))
        case UInt8(ascii: "{"):
            index += 1
            return .table(try inlineTable())
        case nil, 0x0A, 0x0D, UInt8(ascii: "#"):
            throw fail("a value is missing")
        default:
            return .value(try scalar())
        }
    }

    /// The value of an array's element or an inline table's entry.
    private mutating func plainValue() throws(TOMLError) -> TOMLValue {
        switch try value() {
        case .value(let value): return value
        case .table(let node): return .table(node.table)
        case .tables: throw fail("an array of tables cannot be a value")
        }
    }

    private mutating func arrayValues() throws(TOMLError) -> [TOMLValue] {
        var values: [TOMLValue] = []
        while true {
            try skipBlank()
            if peek == UInt8(ascii: "]") {
                index += 1
                return values
            }
            values.append(try plainValue())
            try skipBlank()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return values
            default: throw fail("an array's values are separated by commas and end with ]")
            }
        }
    }

    private mutating func inlineTable() throws(TOMLError) -> Node {
        let node = Node(.inline)
        skipWhitespace()
        if peek == UInt8(ascii: "}") {
            index += 1
            return node
        }
        while true {
            skipWhitespace()
            // Dotted keys inside make tables of this one, sealed with it at its end.
            try keyValue(into: node)
            skipWhitespace()
            switch peek {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                Self.seal(node)
                return node
            default: throw fail("an inline table's entries are separated by commas and end with } on the same line")
            }
        }
    }

    /// An inline table and the tables its dotted keys made are complete.
    private static func seal(_ node: Node) {
        node.origin = .inline
        for (_, entry) in node.entries { if case .table(let child) = entry { seal(child) } }
    }

    private mutating func scalar() throws(TOMLError) -> TOMLValue {
        let start = index
        while let byte = peek, !Self.endsScalar(byte) { index += 1 }
        // A date, a space and a time are one value.
        if index - start == 10, peek == UInt8(ascii: " "), let next = peek(at: 1), (48...57).contains(next),
            let colon = peek(at: 3), colon == UInt8(ascii: ":")
        {
            index += 1
            while let byte = peek, !Self.endsScalar(byte) { index += 1 }
        }
        let token = String(decoding: bytes[start..<index], as: UTF8.self)
        switch token {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "inf", "+inf": return .float(.infinity)
        case "-inf": return .float(-.infinity)
        case "nan", "+nan", "-nan": return .float(.nan)
        default: break
        }
        if let value = TOMLScalars.dateTime(token) { return value }
        if let value = TOMLScalars.integer(token) { return .integer(value) }
        if let value = TOMLScalars.float(token) { return .float(value) }
        index = start
        throw fail("'\(token)' is not a TOML value")
    }

    private static func endsScalar(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: "#"): true
        default: false
        }
    }

    // MARK: Strings

    private mutating func basicString() throws(TOMLError) -> String {
        var out: [UInt8] = []
        while true {
            guard let byte = peek else { throw fail("a string is not closed") }
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return try text(out)
            case UInt8(ascii: "\\"): try escape(into: &out)
            case 0x0A, 0x0D: throw fail("a string is not closed on its line")
            default:
                guard Self.allowedInString(byte) else { throw fail("a control character in a string") }
                out.append(byte)
            }
        }
    }

    private mutating func literalString() throws(TOMLError) -> String {
        var out: [UInt8] = []
        while true {
            guard let byte = peek else { throw fail("a string is not closed") }
            index += 1
            switch byte {
            case UInt8(ascii: "'"): return try text(out)
            case 0x0A, 0x0D: throw fail("a string is not closed on its line")
            default:
                guard Self.allowedInString(byte) else { throw fail("a control character in a string") }
                out.append(byte)
            }
        }
    }

    private mutating func multilineString(literal: Bool) throws(TOMLError) -> String {
        let quote = literal ? UInt8(ascii: "'") : UInt8(ascii: "\"")
        // A newline right after the opening quotes is not part of the string.
        if peek == 0x0A {
            newline()
        } else if peek == 0x0D, peek(at: 1) == 0x0A {
            index += 1
            newline()
        }
        var out: [UInt8] = []
        while true {
            guard let byte = peek else { throw fail("a multi-line string is not closed") }
            if byte == quote, peek(at: 1) == quote, peek(at: 2) == quote {
                var run = 3
                while peek(at: run) == quote { run += 1 }
                guard run <= 5 else { throw fail("too many quotes close a multi-line string") }
                out += repeatElement(quote, count: run - 3)
                index += run
                return try text(out)
            }
            index += 1
            switch byte {
            case 0x0A:
                out.append(0x0A)
                lineStart = index
                line += 1
            case 0x0D:
                guard peek == 0x0A else { throw fail("a carriage return without a line feed") }
                index += 1
                out += [0x0D, 0x0A]
                lineStart = index
                line += 1
            case UInt8(ascii: "\\") where !literal:
                // A backslash ending a line joins it to the next, white space between removed.
                var probe = index
                while probe < bytes.count, bytes[probe] == 0x20 || bytes[probe] == 0x09 { probe += 1 }
                if probe < bytes.count,
                    bytes[probe] == 0x0A || (bytes[probe] == 0x0D && probe + 1 < bytes.count && bytes[probe + 1] == 0x0A)
                {
                    index = probe
                    while let next = peek, next == 0x20 || next == 0x09 || next == 0x0A || next == 0x0D {
                        if next == 0x0D, peek(at: 1) != 0x0A { throw fail("a carriage return without a line feed") }
                        index += 1
                        if next == 0x0A { newlineCounted() }
                    }
                } else {
                    try escape(into: &out)
                }
            default:
                guard Self.allowedInString(byte) else { throw fail("a control character in a string") }
                out.append(byte)
            }
        }
    }

    private mutating func escape(into out: inout [UInt8]) throws(TOMLError) {
        guard let code = peek else { throw fail("a string is not closed") }
        index += 1
        switch code {
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = code == UInt8(ascii: "u") ? 4 : 8
            guard index + count <= bytes.count,
                let value = UInt32(String(decoding: bytes[index..<(index + count)], as: UTF8.self), radix: 16),
                bytes[index..<(index + count)].allSatisfy({ Self.isHex($0) }), let scalar = Unicode.Scalar(value)
            else { throw fail("\\\(Character(Unicode.Scalar(code))) needs \(count) hex digits of a Unicode scalar") }
            index += count
            out += Array(String(Character(scalar)).utf8)
        default:
            throw fail("\\\(Character(Unicode.Scalar(code))) is not an escape TOML knows")
        }
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }

    /// Tab and anything from space up but DEL (bytes of UTF-8 sequences included).
    private static func allowedInString(_ byte: UInt8) -> Bool { byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }

    private func text(_ bytes: [UInt8]) throws(TOMLError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw fail("a string that is not UTF-8") }
        return text
    }

    // MARK: Layout

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func peek(at offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }

    private mutating func expect(_ character: Unicode.Scalar) throws(TOMLError) {
        guard peek == UInt8(ascii: character) else { throw fail("'\(character)' expected") }
        index += 1
    }

    private mutating func skipWhitespace() {
        while let byte = peek, byte == 0x20 || byte == 0x09 { index += 1 }
    }

    private mutating func newline() {
        index += 1
        newlineCounted()
    }

    private mutating func newlineCounted() {
        line += 1
        lineStart = index
    }

    /// White space, newlines and comments (inside an array).
    private mutating func skipBlank() throws(TOMLError) {
        while let byte = peek {
            switch byte {
            case 0x20, 0x09: index += 1
            case 0x0A: newline()
            case 0x0D:
                guard peek(at: 1) == 0x0A else { throw fail("a carriage return without a line feed") }
                index += 1
                newline()
            case UInt8(ascii: "#"): try comment()
            default: return
            }
        }
    }

    private mutating func comment() throws(TOMLError) {
        while let byte = peek, byte != 0x0A {
            if byte == 0x0D {
                guard peek(at: 1) == 0x0A else { throw fail("a carriage return without a line feed") }
                return
            }
            guard Self.allowedInString(byte) else { throw fail("a control character in a comment") }
            index += 1
        }
    }

    /// Nothing but white space and a comment before the line ends.
    private mutating func endOfLine() throws(TOMLError) {
        skipWhitespace()
        if peek == UInt8(ascii: "#") { try comment() }
        switch peek {
        case nil: return
        case 0x0A: newline()
        case 0x0D where peek(at: 1) == 0x0A:
            index += 1
            newline()
        default: throw fail("the line goes on after its value")
        }
    }
}

/// Numbers, dates and times as TOML writes them.
enum TOMLScalars {
    private static func isDecimal(_ character: Character) -> Bool { ("0"..."9").contains(character) }
    private static func isHexadecimal(_ character: Character) -> Bool {
        ("0"..."9").contains(character) || ("a"..."f").contains(character) || ("A"..."F").contains(character)
    }
    /// Digits with single underscores between them.
    private static func digits(_ text: Substring, _ isDigit: (Character) -> Bool) -> String? {
        guard let first = text.first, let last = text.last, isDigit(first), isDigit(last) else { return nil }
        var out = ""
        var afterUnderscore = false
        for character in text {
            if character == "_" {
                guard !afterUnderscore else { return nil }
                afterUnderscore = true
            } else {
                guard isDigit(character) else { return nil }
                afterUnderscore = false
                out.append(character)
            }
        }
        return out
    }

    static func integer(_ token: String) -> Int64? {
        let prefixes: [(String, Int, (Character) -> Bool)] = [
            ("0x", 16, isHexadecimal), ("0o", 8, { ("0"..."7").contains($0) }), ("0b", 2, { $0 == "0" || $0 == "1" }),
        ]
        for (prefix, radix, isDigit) in prefixes where token.hasPrefix(prefix) {
            guard let clean = digits(token.dropFirst(2), isDigit) else { return nil }
            return Int64(clean, radix: radix)
        }
        var body = Substring(token)
        var negative = false
        if let sign = body.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            body = body.dropFirst()
        }
        guard let clean = digits(body, isDecimal), clean == "0" || !clean.hasPrefix("0") || clean.count == 1,
            !(body.hasPrefix("0") && body.count > 1)
        else { return nil }
        return Int64((negative ? "-" : "") + clean)
    }

    static func float(_ token: String) -> Double? {
        var body = Substring(token)
        var sign = ""
        if let first = body.first, first == "+" || first == "-" {
            sign = first == "-" ? "-" : ""
            body = body.dropFirst()
        }
        let exponentAt = body.firstIndex { $0 == "e" || $0 == "E" }
        let mantissa = exponentAt.map { body[..<$0] } ?? body
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, exponentAt != nil || parts.count == 2,
            let whole = digits(parts[0], isDecimal), whole == "0" || !whole.hasPrefix("0")
        else { return nil }
        var text = sign + whole
        if parts.count == 2 {
            guard let fraction = digits(parts[1], isDecimal) else { return nil }
            text += "." + fraction
        }
        if let exponentAt {
            var exponent = body[body.index(after: exponentAt)...]
            var exponentSign = ""
            if let first = exponent.first, first == "+" || first == "-" {
                exponentSign = String(first)
                exponent = exponent.dropFirst()
            }
            guard let clean = digits(exponent, isDecimal) else { return nil }
            text += "e" + exponentSign + clean
        }
        return Double(text)
    }

    static func dateTime(_ token: String) -> TOMLValue? {
        let text = Array(token.utf8)
        func number(_ range: Range<Int>) -> Int? {
            guard range.upperBound <= text.count, text[range].allSatisfy({ (48...57).contains($0) }) else { return nil }
            return Int(String(decoding: text[range], as: UTF8.self))
        }
        func time(from start: Int) -> Int? {
            guard let hour = number(start..<(start + 2)), text.count > start + 2, text[start + 2] == UInt8(ascii: ":"),
                let minute = number((start + 3)..<(start + 5)), text.count > start + 5, text[start + 5] == UInt8(ascii: ":"),
                let second = number((start + 6)..<(start + 8)), hour < 24, minute < 60, second <= 60
            else { return nil }
            var end = start + 8
            if end < text.count, text[end] == UInt8(ascii: ".") {
                end += 1
                let digitsStart = end
                while end < text.count, (48...57).contains(text[end]) { end += 1 }
                guard end > digitsStart else { return nil }
            }
            return end
        }
        if text.count >= 8, text[2] == UInt8(ascii: ":") {
            return time(from: 0) == text.count ? .localTime(token) : nil
        }
        guard text.count >= 10, text[4] == UInt8(ascii: "-"), text[7] == UInt8(ascii: "-"), let year = number(0..<4),
            let month = number(5..<7), let day = number(8..<10), (1...12).contains(month), day >= 1
        else { return nil }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard day <= days else { return nil }
        if text.count == 10 { return .localDate(token) }
        guard [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(text[10]), let end = time(from: 11) else {
            return nil
        }
        if end == text.count { return .localDateTime(token) }
        if end + 1 == text.count, text[end] == UInt8(ascii: "Z") || text[end] == UInt8(ascii: "z") { return .dateTime(token) }
        guard end + 6 == text.count, text[end] == UInt8(ascii: "+") || text[end] == UInt8(ascii: "-"),
            let hours = number((end + 1)..<(end + 3)), text[end + 3] == UInt8(ascii: ":"),
            let minutes = number((end + 4)..<(end + 6)), hours < 24, minutes < 60
        else { return nil }
        return .dateTime(token)
    }
}
