import JSONRPC
import MediaKit

/// The shape of a Codable type as JSON carries it (which keys, which are required, what each
/// holds), read from the type itself by decoding it from a decoder that answers every question
/// with a sample and notes what was asked. It is how rpc-spec.json is checked against the API's
/// types (`APISpec.disagreements`): the document describes what these types read and write,
/// not a third copy kept by hand.
public indirect enum APIShape: Equatable, Sendable {
    case string
    /// A string of these values (an enum).
    case oneOf([String])
    case integer
    case number
    case boolean
    case array(APIShape)
    /// An object of any keys with values of one shape (`[String: T]`).
    case dictionary(APIShape)
    case object([String: Field])
    /// Any JSON (`JSONValue`), or a type met again inside itself.
    case any
    /// A type that cannot be traced (its decoding checks what it is given): named only.
    case opaque(String)

    public struct Field: Equatable, Sendable {
        public var shape: APIShape
        /// Not optional: always there in an answer, needed in params.
        public var required: Bool

        public init(shape: APIShape, required: Bool) {
            self.shape = shape
            self.required = required
        }
    }

    /// The shape of `type`.
    public static func of(_ type: any Decodable.Type) -> APIShape {
        let tracer = Tracer()
        return tracer.shape(of: type)
    }
}

/// A type whose decoding checks its input (an id's syntax), given a sample the tracer can hand it.
public protocol APISampled: Decodable {
    static var apiSample: Self { get }
    static var apiShape: APIShape { get }
}

extension ItemID: APISampled {
    public static var apiSample: ItemID { ItemID(provider: "p", kind: .episode, nativeID: "1") }
    public static var apiShape: APIShape { .string }
}

extension JSONValue: APISampled {
    public static var apiSample: JSONValue { .null }
    public static var apiShape: APIShape { .any }
}

/// `[String: T]`, told from a struct (both decode from a keyed container).
private protocol StringKeyedDictionary {
    static var valueType: any Decodable.Type { get }
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Decodable {
    fileprivate static var valueType: any Decodable.Type { Value.self }
}

private final class Tracer {
    /// The types being traced, outermost first: one met again inside itself is `.any`.
    var stack: [ObjectIdentifier] = []

    struct Untraceable: Error {}

    func shape(of type: any Decodable.Type) -> APIShape {
        (try? sample(type))?.shape ?? .opaque(String(describing: type))
    }

    /// A value of `T` and its shape.
    func sample<T: Decodable>(_ type: T.Type) throws -> (value: T, shape: APIShape) {
        switch type {
        case is String.Type: return ("" as! T, .string)
        case is Bool.Type: return (false as! T, .boolean)
        case is Int.Type: return (0 as! T, .integer)
        case is Int64.Type: return (Int64(0) as! T, .integer)
        case is Int32.Type: return (Int32(0) as! T, .integer)
        case is UInt.Type: return (UInt(0) as! T, .integer)
        case is Int8.Type: return (Int8(0) as! T, .integer)
        case is Int16.Type: return (Int16(0) as! T, .integer)
        case is UInt8.Type: return (UInt8(0) as! T, .integer)
        case is UInt16.Type: return (UInt16(0) as! T, .integer)
        case is UInt32.Type: return (UInt32(0) as! T, .integer)
        case is UInt64.Type: return (UInt64(0) as! T, .integer)
        case is Double.Type: return (0.0 as! T, .number)
        case is Float.Type: return (Float(0) as! T, .number)
        default: break
        }
        if let sampled = type as? any APISampled.Type {
            return (sampled.apiSample as! T, sampled.apiShape)
        }
        if let cases = type as? any (CaseIterable & RawRepresentable).Type, let named = Self.names(cases) {
            guard let first = named.first as? T else { throw Untraceable() }
            return (first, .oneOf(named.names))
        }
        let id = ObjectIdentifier(type)
        guard !stack.contains(id) else { throw Untraceable() }
        stack.append(id)
        defer { stack.removeLast() }
        let decoder = TracingDecoder(tracer: self)
        let value = try T(from: decoder)
        if let dictionary = type as? any StringKeyedDictionary.Type {
            return (value, .dictionary(shape(of: dictionary.valueType)))
        }
        return (value, decoder.traced ?? .any)
    }

    private static func names<E: CaseIterable & RawRepresentable>(_ type: E.Type) -> (names: [String], first: Any?)? {
        let values = type.allCases.map(\.rawValue)
        let names = values.compactMap { $0 as? String }
        guard names.count == values.count else { return nil }
        return (names, type.allCases.first)
    }
}

private final class TracingDecoder: Decoder {
    let tracer: Tracer
    var traced: APIShape?
    var fields: [String: APIShape.Field] = [:]
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]

    init(tracer: Tracer) { self.tracer = tracer }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        traced = .object(fields)
        return KeyedDecodingContainer(KeyedTracer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { UnkeyedTracer(decoder: self) }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleTracer(decoder: self) }

    func note(_ key: String, _ shape: APIShape, required: Bool) {
        // A key asked twice (an alias tried after it) keeps what it was first.
        if fields[key] == nil { fields[key] = APIShape.Field(shape: shape, required: required) }
        traced = .object(fields)
    }
}

private struct KeyedTracer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: TracingDecoder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let (value, shape) = try decoder.tracer.sample(type)
        decoder.note(key.stringValue, shape, required: true)
        return value
    }

    // The protocol's own `decodeIfPresent` of each primitive would ask `decode`, which notes a
    // required key: each is answered here.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(type, key) }

    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        guard let (value, shape) = try? decoder.tracer.sample(type) else {
            decoder.note(key.stringValue, .opaque(String(describing: type)), required: false)
            return nil
        }
        decoder.note(key.stringValue, shape, required: false)
        return value
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw Tracer.Untraceable()
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { throw Tracer.Untraceable() }
    func superDecoder() throws -> any Decoder { throw Tracer.Untraceable() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw Tracer.Untraceable() }
}

/// An array of one element: its shape is the elements'.
private struct UnkeyedTracer: UnkeyedDecodingContainer {
    let decoder: TracingDecoder
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 1 }
    var currentIndex = 0
    var isAtEnd: Bool { currentIndex > 0 }

    init(decoder: TracingDecoder) {
        self.decoder = decoder
        decoder.traced = .array(.any)
    }

    mutating func decodeNil() throws -> Bool { false }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        currentIndex += 1
        let (value, shape) = try decoder.tracer.sample(type)
        decoder.traced = .array(shape)
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        throw Tracer.Untraceable()
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Tracer.Untraceable() }
    mutating func superDecoder() throws -> any Decoder { throw Tracer.Untraceable() }
}

private struct SingleTracer: SingleValueDecodingContainer {
    let decoder: TracingDecoder
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, shape) = try decoder.tracer.sample(type)
        decoder.traced = shape
        return value
    }
}
