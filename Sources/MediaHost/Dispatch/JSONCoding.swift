import Foundation
import JSONRPC

/// The one way the host turns a Codable value into JSON: method responses, notification params.
public enum JSONCoding {
    /// JSON text with sorted keys and unescaped slashes.
    public static func bytes(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// The same as a `JSONValue`, for params built from a typed value (no JSON text between).
    public static func value(_ value: some Encodable) throws -> JSONValue { try JSONValueEncoder().encode(value) }
}
