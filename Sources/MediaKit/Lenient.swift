/// Decoding that forgives what real services send: a field of the wrong type, a number written
/// as a string (or the reverse), null, or an unknown shape is a missing value, not a failed page.
/// Provider models mark their fields with these wrappers, so a bad element costs that element.
///
/// ```swift
/// struct Movie: Decodable {
///     @Lenient var id: Int?              // 550, "550", null, absent, or {"odd": 1} -> nil
///     @LossyList var genres: [Genre]?    // bad elements dropped; a lone object is a list of one
///     @LossyMap var stats: [String: Int]?
/// }
/// ```
@propertyWrapper
public struct Lenient<Value: Decodable>: Decodable {
    public var wrappedValue: Value?

    public init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        wrappedValue = Self.value(from: decoder)
    }

    static func value(from decoder: any Decoder) -> Value? {
        guard let container = try? decoder.singleValueContainer(), !container.decodeNil() else { return nil }
        if let value = try? container.decode(Value.self) { return value }
        if let scalar = Value.self as? any LenientScalar.Type { return scalar.converted(from: container) as? Value }
        return nil
    }
}

extension Lenient: Encodable where Value: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

extension Lenient: Sendable where Value: Sendable {}
extension Lenient: Equatable where Value: Equatable {}

/// A list whose bad elements are dropped (and a single object read as a list of one).
@propertyWrapper
public struct LossyList<Element: Decodable>: Decodable {
    public var wrappedValue: [Element]?

    public init(wrappedValue: [Element]?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        if var list = try? decoder.unkeyedContainer() {
            var elements: [Element] = []
            while !list.isAtEnd {
                let before = list.currentIndex
                // Lenient never fails, so the container moves on whatever the element holds.
                if let element = (try? list.decode(Lenient<Element>.self))?.wrappedValue { elements.append(element) }
                if list.currentIndex == before {
                    _ = try? list.decode(Skip.self)
                    if list.currentIndex == before { break }
                }
            }
            wrappedValue = elements
        } else {
            wrappedValue = Lenient<Element>.value(from: decoder).map { [$0] }
        }
    }
}

extension LossyList: Encodable where Element: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

extension LossyList: Sendable where Element: Sendable {}
extension LossyList: Equatable where Element: Equatable {}

/// A string-keyed map whose bad values are dropped (numbers and strings converted as above).
@propertyWrapper
public struct LossyMap<Value: Decodable>: Decodable {
    public var wrappedValue: [String: Value]?

    public init(wrappedValue: [String: Value]?) { self.wrappedValue = wrappedValue }

    public init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: AnyKey.self) else {
            wrappedValue = nil
            return
        }
        var values: [String: Value] = [:]
        for key in container.allKeys {
            if let value = try? container.decode(Lenient<Value>.self, forKey: key).wrappedValue {
                values[key.stringValue] = value
            }
        }
        wrappedValue = values
    }
}

extension LossyMap: Encodable where Value: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

extension LossyMap: Sendable where Value: Sendable {}
extension LossyMap: Equatable where Value: Equatable {}

extension KeyedDecodingContainer {
    // An absent key is a nil value, not an error.
    public func decode<T>(_ type: Lenient<T>.Type, forKey key: Key) throws -> Lenient<T> {
        (try? decodeIfPresent(type, forKey: key)) ?? Lenient(wrappedValue: nil)
    }

    public func decode<T>(_ type: LossyList<T>.Type, forKey key: Key) throws -> LossyList<T> {
        (try? decodeIfPresent(type, forKey: key)) ?? LossyList(wrappedValue: nil)
    }

    public func decode<T>(_ type: LossyMap<T>.Type, forKey key: Key) throws -> LossyMap<T> {
        (try? decodeIfPresent(type, forKey: key)) ?? LossyMap(wrappedValue: nil)
    }
}

/// Scalars read from the other kind: "42" as 42, 42 as "42", "true" as true.
protocol LenientScalar {
    static func converted(from container: any SingleValueDecodingContainer) -> Self?
}

extension Int: LenientScalar {
    static func converted(from container: any SingleValueDecodingContainer) -> Int? {
        if let text = try? container.decode(String.self) { return Int(text.trimming(.whitespaces)) }
        if let number = try? container.decode(Double.self) { return Int(exactly: number) }
        return nil
    }
}

extension Int64: LenientScalar {
    static func converted(from container: any SingleValueDecodingContainer) -> Int64? {
        if let text = try? container.decode(String.self) { return Int64(text.trimming(.whitespaces)) }
        if let number = try? container.decode(Double.self) { return Int64(exactly: number) }
        return nil
    }
}

extension Double: LenientScalar {
    static func converted(from container: any SingleValueDecodingContainer) -> Double? {
        guard let text = try? container.decode(String.self), let number = Double(text.trimming(.whitespaces)) else {
            return nil
        }
        return number.isFinite ? number : nil
    }
}

extension String: LenientScalar {
    static func converted(from container: any SingleValueDecodingContainer) -> String? {
        if let number = try? container.decode(Int64.self) { return String(number) }
        if let number = try? container.decode(Double.self) { return String(number) }
        if let flag = try? container.decode(Bool.self) { return String(flag) }
        return nil
    }
}

extension Bool: LenientScalar {
    static func converted(from container: any SingleValueDecodingContainer) -> Bool? {
        if let text = try? container.decode(String.self) {
            return ["true", "1", "yes"].contains(text.lowercased())
                ? true : ["false", "0", "no"].contains(text.lowercased()) ? false : nil
        }
        if let number = try? container.decode(Int.self) { return number != 0 }
        return nil
    }
}

/// Any JSON value, read and thrown away.
private struct Skip: Decodable {
    init(from decoder: any Decoder) throws {}
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}
