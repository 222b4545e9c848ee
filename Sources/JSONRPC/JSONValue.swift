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
