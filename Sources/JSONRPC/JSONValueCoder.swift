import Basics
import FoundationEssentials
import Glibc

/// Decodes a `Decodable` straight from a parsed `JSONValue`, as swift-tools-protocols decodes a
/// request's params: no JSON text is written and read again in between. It reads what
/// `JSONDecoder` reads (numbers into any numeric type they fit exactly, unknown keys ignored,
/// null or a missing key as nil for optionals) and throws the same `DecodingError`s, with the
/// same coding paths.
public struct JSONValueDecoder {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        if let value = value as? T { return value }
        return try T(from: ValueDecoder(value: value, codingPath: []))
    }
}

/// Encodes an `Encodable` straight into a `JSONValue` (the notification params, a request sent
/// in process), as `JSONEncoder` would write it, without JSON text in between.
public struct JSONValueEncoder {
    public init() {}

    public func encode(_ value: some Encodable) throws -> JSONValue {
        try ValueEncoder.box(value, codingPath: [])
    }
}

// MARK: Decoding

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw DecodingError.typeMismatch(
                [String: Any].self, .init(codingPath: codingPath, debugDescription: "Expected an object, found \(value.kind)"))
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw DecodingError.typeMismatch(
                [Any].self, .init(codingPath: codingPath, debugDescription: "Expected an array, found \(value.kind)"))
        }
        return UnkeyedContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleContainer(value: value, codingPath: codingPath)
    }
}

/// One value: the scalar decoding every container uses.
private struct SingleContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value == .null }

    private func mismatch<T>(_ type: T.Type) -> DecodingError {
        if value == .null {
            return .valueNotFound(type, .init(codingPath: codingPath, debugDescription: "Expected \(type) but found null"))
        }
        return .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "Expected \(type), found \(value.kind)"))
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let bool) = value else { throw mismatch(type) }
        return bool
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let string) = value else { throw mismatch(type) }
        return string
    }

    func decode(_ type: Double.Type) throws -> Double {
        guard case .number(let text) = value, let number = Double(text) else { throw mismatch(type) }
        return number
    }

    func decode(_ type: Float.Type) throws -> Float {
        guard case .number(let text) = value, let number = Float(text) else { throw mismatch(type) }
        return number
    }

    /// An integer as JSONDecoder reads one: its text, or a number with no fraction that fits.
    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard case .number(let text) = value else { throw mismatch(type) }
        if let exact = T(text) { return exact }
        guard let number = Double(text), number.isFinite, number == number.rounded(.towardZero) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath, debugDescription: "Parsed JSON number <\(text)> does not fit in \(type)."))
        }
        guard let fitting = T(exactly: number) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath, debugDescription: "Parsed JSON number <\(text)> does not fit in \(type)."))
        }
        return fitting
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if T.self == JSONValue.self, let value = value as? T { return value }
        // JSONDecoder reads a URL from its string.
        if T.self == URL.self {
            guard let url = URL(string: try decode(String.self)) as? T else {
                throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "Invalid URL string."))
            }
            return url
        }
        return try T(from: ValueDecoder(value: value, codingPath: codingPath))
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func value(_ key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key.stringValue)."))
        }
        return value
    }

    private func single(_ key: Key) throws -> SingleContainer {
        SingleContainer(value: try value(key), codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key) == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try single(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try single(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try single(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try single(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try single(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try single(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try single(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try single(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try single(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try single(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try single(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try single(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try single(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try single(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try single(key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try ValueDecoder(value: try value(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: try value(key), codingPath: codingPath + [key]).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: members["super"] ?? .null, codingPath: codingPath + [AnyKey("super")])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next<T>(_ type: T.Type) throws -> SingleContainer {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type,
                .init(codingPath: codingPath + [AnyKey(index: currentIndex)], debugDescription: "Unkeyed container is at end."))
        }
        defer { currentIndex += 1 }
        return SingleContainer(value: elements[currentIndex], codingPath: codingPath + [AnyKey(index: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type).decode(type) }
    mutating func decode(_ type: String.Type) throws -> String { try next(type).decode(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type).decode(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type).decode(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type).decode(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type).decode(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type).decode(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type).decode(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type).decode(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type).decode(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type).decode(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type).decode(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type).decode(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type).decode(type) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type).decode(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey>
    {
        let element = try next([String: Any].self)
        return try ValueDecoder(value: element.value, codingPath: element.codingPath).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let element = try next([Any].self)
        return try ValueDecoder(value: element.value, codingPath: element.codingPath).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let element = try next(Any.self)
        return ValueDecoder(value: element.value, codingPath: element.codingPath)
    }
}

/// A coding key for a position or a name not known as a type.
private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init(index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { self.init(index: intValue) }
}

extension JSONValue {
    /// "an object", "a string"...: what a value is, for messages.
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

// MARK: Encoding

/// Collects what an `Encodable` encodes; a container writes into a reference, so nested
/// containers fill their parent's value when they are done.
private final class ValueEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// What was encoded: a value, or a container being filled.
    var storage: Storage = .none

    enum Storage {
        case none
        case value(JSONValue)
        case object(ObjectBox)
        case array(ArrayBox)
    }

    init(codingPath: [any CodingKey]) { self.codingPath = codingPath }

    var result: JSONValue {
        switch storage {
        case .none: .object([:])
        case .value(let value): value
        case .object(let box): box.value
        case .array(let box): box.value
        }
    }

    static func box(_ value: some Encodable, codingPath: [any CodingKey]) throws -> JSONValue {
        switch value {
        case let value as JSONValue: return value
        case let url as URL: return .string(url.absoluteString)
        case let double as Double: return JSONValue(double)
        case let float as Float: return JSONValue(Double(float))
        case let string as String: return .string(string)
        case let bool as Bool: return .bool(bool)
        case let int as Int: return JSONValue(int)
        default:
            let encoder = ValueEncoder(codingPath: codingPath)
            try value.encode(to: encoder)
            return encoder.result
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let box: ObjectBox
        if case .object(let existing) = storage {
            box = existing
        } else {
            box = ObjectBox()
            storage = .object(box)
        }
        return KeyedEncodingContainer(KeyedEncoder<Key>(box: box, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let box: ArrayBox
        if case .array(let existing) = storage {
            box = existing
        } else {
            box = ArrayBox()
            storage = .array(box)
        }
        return UnkeyedEncoder(box: box, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleEncoder(encoder: self) }
}

/// An object being filled; members that are containers are read when the object is.
private final class ObjectBox {
    var members: [String: Slot] = [:]
    var value: JSONValue { .object(members.mapValues(\.value)) }
}

private final class ArrayBox {
    var elements: [Slot] = []
    var value: JSONValue { .array(elements.map(\.value)) }
}

/// A member or element: a value, or a nested container filled later.
private enum Slot {
    case value(JSONValue)
    case object(ObjectBox)
    case array(ArrayBox)
    case encoder(ValueEncoder)

    var value: JSONValue {
        switch self {
        case .value(let value): value
        case .object(let box): box.value
        case .array(let box): box.value
        case .encoder(let encoder): encoder.result
        }
    }
}

private struct KeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let box: ObjectBox
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { box.members[key.stringValue] = .value(.null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { box.members[key.stringValue] = .value(.bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) throws { box.members[key.stringValue] = .value(.string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) throws { box.members[key.stringValue] = .value(JSONValue(value)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { box.members[key.stringValue] = .value(JSONValue(value)) }
    mutating func encode(_ value: Float, forKey key: Key) throws {
        box.members[key.stringValue] = .value(JSONValue(Double(value)))
    }
    mutating func encode(_ value: Int8, forKey key: Key) throws { box.members[key.stringValue] = .value(.number(String(value))) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { box.members[key.stringValue] = .value(.number(String(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { box.members[key.stringValue] = .value(.number(String(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { box.members[key.stringValue] = .value(.number(String(value))) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { box.members[key.stringValue] = .value(.number(String(value))) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { box.members[key.stringValue] = .value(.number(String(value))) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws {
        box.members[key.stringValue] = .value(.number(String(value)))
    }
    mutating func encode(_ value: UInt32, forKey key: Key) throws {
        box.members[key.stringValue] = .value(.number(String(value)))
    }
    mutating func encode(_ value: UInt64, forKey key: Key) throws {
        box.members[key.stringValue] = .value(.number(String(value)))
    }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        box.members[key.stringValue] = .value(try ValueEncoder.box(value, codingPath: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        let nested = ObjectBox()
        box.members[key.stringValue] = .object(nested)
        return KeyedEncodingContainer(KeyedEncoder<NestedKey>(box: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = ArrayBox()
        box.members[key.stringValue] = .array(nested)
        return UnkeyedEncoder(box: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder { superEncoder(forKey: Key(stringValue: "super")!) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let encoder = ValueEncoder(codingPath: codingPath + [key])
        box.members[key.stringValue] = .encoder(encoder)
        return encoder
    }
}

private struct UnkeyedEncoder: UnkeyedEncodingContainer {
    let box: ArrayBox
    let codingPath: [any CodingKey]
    var count: Int { box.elements.count }

    private var nextKey: AnyKey { AnyKey(index: box.elements.count) }

    mutating func encodeNil() throws { box.elements.append(.value(.null)) }
    mutating func encode(_ value: Bool) throws { box.elements.append(.value(.bool(value))) }
    mutating func encode(_ value: String) throws { box.elements.append(.value(.string(value))) }
    mutating func encode(_ value: Double) throws { box.elements.append(.value(JSONValue(value))) }
    mutating func encode(_ value: Int) throws { box.elements.append(.value(JSONValue(value))) }
    mutating func encode(_ value: Float) throws { box.elements.append(.value(JSONValue(Double(value)))) }
    mutating func encode(_ value: Int8) throws { box.elements.append(.value(.number(String(value)))) }
    mutating func encode(_ value: Int16) throws { box.elements.append(.value(.number(String(value)))) }
    mutating func encode(_ value: Int32) throws { box.elements.append(.value(.number(String(value)))) }
    mutating func encode(_ value: Int64) throws { box.elements.append(.value(.number(String(value)))) }
    mutating func encode(_ value: UInt) throws { box.elements.append(.value(.number(String(value)))) }
    mutating func encode(_ value: UInt8) throws { box.elements.append(.value(.number(String(value)))) }
    mutating func encode(_ value: UInt16) throws { box.elements.append(.value(.number(String(value)))) }
    mutating func encode(_ value: UInt32) throws { box.elements.append(.value(.number(String(value)))) }
    mutating func encode(_ value: UInt64) throws { box.elements.append(.value(.number(String(value)))) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        box.elements.append(.value(try ValueEncoder.box(value, codingPath: codingPath + [nextKey])))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let nested = ObjectBox()
        let key = nextKey
        box.elements.append(.object(nested))
        return KeyedEncodingContainer(KeyedEncoder<NestedKey>(box: nested, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = ArrayBox()
        let key = nextKey
        box.elements.append(.array(nested))
        return UnkeyedEncoder(box: nested, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        let encoder = ValueEncoder(codingPath: codingPath + [nextKey])
        box.elements.append(.encoder(encoder))
        return encoder
    }
}

private struct SingleEncoder: SingleValueEncodingContainer {
    let encoder: ValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    func encodeNil() throws { encoder.storage = .value(.null) }
    func encode(_ value: Bool) throws { encoder.storage = .value(.bool(value)) }
    func encode(_ value: String) throws { encoder.storage = .value(.string(value)) }
    func encode(_ value: Double) throws { encoder.storage = .value(JSONValue(value)) }
    func encode(_ value: Int) throws { encoder.storage = .value(JSONValue(value)) }
    func encode(_ value: Float) throws { encoder.storage = .value(JSONValue(Double(value))) }
    func encode(_ value: Int8) throws { encoder.storage = .value(.number(String(value))) }
    func encode(_ value: Int16) throws { encoder.storage = .value(.number(String(value))) }
    func encode(_ value: Int32) throws { encoder.storage = .value(.number(String(value))) }
    func encode(_ value: Int64) throws { encoder.storage = .value(.number(String(value))) }
    func encode(_ value: UInt) throws { encoder.storage = .value(.number(String(value))) }
    func encode(_ value: UInt8) throws { encoder.storage = .value(.number(String(value))) }
    func encode(_ value: UInt16) throws { encoder.storage = .value(.number(String(value))) }
    func encode(_ value: UInt32) throws { encoder.storage = .value(.number(String(value))) }
    func encode(_ value: UInt64) throws { encoder.storage = .value(.number(String(value))) }
    func encode<T: Encodable>(_ value: T) throws {
        encoder.storage = .value(try ValueEncoder.box(value, codingPath: codingPath))
    }
}
