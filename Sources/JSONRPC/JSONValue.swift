/// A JSON value. Numbers keep their literal text so ids and large integers round-trip exactly.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number's literal text as it appeared (or as written by `init(_: Int)` / `init(_: Double)`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(_ int: Int) { self = .number(String(int)) }
    public init(_ double: Double) {
        self =
            double.isFinite
            ? .number(double == double.rounded() && abs(double) < 1e15 ? String(Int64(double)) : "\(double)") : .null
    }

    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    public var intValue: Int? {
        if case .number(let n) = self { return Int(n) ?? Double(n).flatMap { $0 == $0.rounded() ? Int(exactly: $0) : nil } }
        return nil
    }
    public var doubleValue: Double? {
        if case .number(let n) = self { return Double(n) }
        return nil
    }
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The value as compact JSON text.
    public var jsonString: String { String(decoding: JSONWriter.bytes(self), as: UTF8.self) }

    /// Parses JSON text.
    public init(parsing text: String) throws(JSONParseError) {
        self = try JSONParser.parse(Array(text.utf8))
    }

    /// Parses JSON bytes.
    public init(parsing bytes: some Collection<UInt8>) throws(JSONParseError) {
        self = try JSONParser.parse(Array(bytes))
    }
}

extension JSONValue: Codable {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .number(String(i))
        } else if let d = try? c.decode(Double.self) {
            self = JSONValue(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n):
            if let i = Int64(n) { try c.encode(i) } else { try c.encode(Double(n) ?? 0) }
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(String(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(nilLiteral: ()) { self = .null }
}

/// JSON's null inside a plain value (`JSONValue.plainValue`), so arrays keep their positions.
public struct JSONNull: Sendable, Hashable {}

extension JSONValue {
    /// The value as Swift's own types, for code that reads JSON by casting (`as? [String: Any]`,
    /// `as? String`, `as? Double`, `as? Bool`): every number is a Double, null is `JSONNull`.
    public var plainValue: Any {
        switch self {
        case .null: JSONNull()
        case .bool(let value): value
        case .number(let text): Double(text) ?? Double.nan
        case .string(let text): text
        case .array(let values): values.map(\.plainValue)
        case .object(let members): members.mapValues(\.plainValue)
        }
    }
}

extension JSONValue {
    /// The JSON of a plain value (String, Bool, an integer, Double, arrays and string-keyed
    /// dictionaries of them, `JSONNull`); nil when it holds anything else.
    public init?(plain value: Any) {
        switch value {
        case let text as String: self = .string(text)
        case let flag as Bool: self = .bool(flag)
        case let number as Int: self = .number(String(number))
        case let number as Int64: self = .number(String(number))
        case let number as Double:
            guard number.isFinite else { return nil }
            self = JSONValue(number)
        case let values as [Any]:
            var array: [JSONValue] = []
            for element in values {
                guard let value = JSONValue(plain: element) else { return nil }
                array.append(value)
            }
            self = .array(array)
        case let members as [String: Any]:
            var object: [String: JSONValue] = [:]
            for (key, element) in members {
                guard let value = JSONValue(plain: element) else { return nil }
                object[key] = value
            }
            self = .object(object)
        case is JSONNull: self = .null
        default: return nil
        }
    }
}
