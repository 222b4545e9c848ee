import FoundationEssentials
import JSONRPC
import MediaKit

/// The one way the host turns a Codable value into JSON: method responses, notification params.
public enum JSONCoding {
    /// JSON text with sorted keys and unescaped slashes.
    public static func bytes(_ value: some Encodable) throws -> [UInt8] {
        // Pages and items, the answers that carry hundreds of items, are written directly.
        if let page = value as? Page, let bytes = MediaItemJSON.encode(page, escapingSlashes: false) { return bytes }
        if let item = value as? MediaItem, let bytes = MediaItemJSON.encode(item, escapingSlashes: false) { return bytes }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// The same as a `JSONValue`, for params built from a typed value (no JSON text between).
    public static func value(_ value: some Encodable) throws -> JSONValue { try JSONValueEncoder().encode(value) }
}
