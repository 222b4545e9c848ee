/// Why text is not acceptable JSON.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    /// Byte offset of the problem.
    public var offset: Int
    public var description: String { "\(message) at byte \(offset)" }
}

/// A strict RFC 8259 parser over UTF-8 bytes.
///
/// It validates UTF-8, refuses nesting deeper than `maxDepth` (so hostile input cannot exhaust the
/// stack) and keeps number literals as text.
public struct JSONParser {
    public static let maxDepth = 512

    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONParseError) -> JSONValue in
            try parse(buffer)
        }
    }

    public static func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(buffer: buffer)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.index == buffer.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    private let buffer: UnsafeBufferPointer<UInt8>
    private var index = 0

    private init(buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

    private func error(_ message: String) -> JSONParseError { JSONParseError(message: message, offset: index) }

    private mutating func skipWhitespace() {
        while index < buffer.count {
            switch buffer[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < buffer.count else { throw error("unexpected end of input") }
        switch buffer[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= buffer.count else { throw error("unexpected end of input") }
        let start = literal.utf8Start
        for i in 0..<count where buffer[index + i] != start[i] { throw error("invalid literal") }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            members[key] = try parseValue(depth: depth)
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of input") }
            if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
            if buffer[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw error("expected ',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth) levels") }
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < buffer.count else { throw error("unexpected end of input") }
            if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
            if buffer[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw error("expected ',' or ']'")
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        if buffer[index] == UInt8(ascii: "-") { index += 1 }
        guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number") }
        if buffer[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            index += 1
            guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number") }
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
            index += 1
            if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") { index += 1 }
            guard index < buffer.count, isDigit(buffer[index]) else { throw error("invalid number") }
            while index < buffer.count, isDigit(buffer[index]) { index += 1 }
        }
        return .number(String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self))
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        while index < buffer.count {
            let byte = buffer[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: buffer[start..<index])
                index += 1
                guard let string = String(validating: slice, as: UTF8.self) else {
                    throw JSONParseError(message: "invalid UTF-8 in string", offset: start)
                }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in string") }
            index += 1
        }
        var bytes = Array(UnsafeBufferPointer(rebasing: buffer[start..<index]))
        while index < buffer.count {
            let byte = buffer[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: bytes, as: UTF8.self) else {
                    throw JSONParseError(message: "invalid UTF-8 in string", offset: start)
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < buffer.count else { throw error("unexpected end of input") }
                let escape = buffer[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): bytes.append(0x22)
                case UInt8(ascii: "\\"): bytes.append(0x5C)
                case UInt8(ascii: "/"): bytes.append(0x2F)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard index + 1 < buffer.count, buffer[index] == UInt8(ascii: "\\"),
                            buffer[index + 1] == UInt8(ascii: "u")
                        else { throw error("unpaired surrogate in \\u escape") }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate in \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw error("unpaired surrogate in \\u escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                    bytes.append(contentsOf: UTF8.encode(unicode)!)
                default: throw error("invalid escape")
                }
            default:
                if byte < 0x20 { throw error("control character in string") }
                bytes.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= buffer.count else { throw error("unexpected end of input") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = buffer[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }
}
