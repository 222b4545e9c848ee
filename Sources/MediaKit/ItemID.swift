import Basics
import FoundationEssentials
import Glibc

/// What an item is, across every provider.
public enum MediaKind: String, Codable, Sendable, CaseIterable, Hashable {
    case video, channel, playlist, movie, podcast, episode, post, user

    /// Kinds whose `media.children` lists other items (a channel's videos, a podcast's episodes).
    public var isContainer: Bool {
        switch self {
        case .channel, .playlist, .podcast, .user: true
        case .video, .movie, .episode, .post: false
        }
    }
}

/// A globally unique item id: `<provider>:<kind>:<native id>`, e.g. `youtube:video:dQw4w9WgXcQ`.
///
/// The native id may itself contain ':'; only the first two separators split the id.
public struct ItemID: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let provider: String
    public let kind: MediaKind
    public let nativeID: String

    /// The longest id accepted from outside, in UTF-8 bytes.
    public static let maxLength = 1024

    public init(provider: String, kind: MediaKind, nativeID: String) {
        self.provider = provider
        self.kind = kind
        self.nativeID = nativeID
    }

    /// Parses and validates an id string.
    /// - Throws: `ItemIDError` saying what is wrong with it.
    public init(parsing string: String) throws(ItemIDError) {
        let utf8 = string.utf8
        guard utf8.count <= Self.maxLength else { throw .tooLong }
        // Split at the first two ':' (ASCII, so the indices are the string's own).
        guard let first = utf8.firstIndex(of: UInt8(ascii: ":")),
            let second = utf8[utf8.index(after: first)...].firstIndex(of: UInt8(ascii: ":"))
        else { throw .malformed(string) }
        let provider = String(string[..<first])
        guard ProviderDescriptor.isValidID(provider) else { throw .badProvider(provider) }
        let kindText = String(string[utf8.index(after: first)..<second])
        guard let kind = MediaKind(rawValue: kindText) else { throw .badKind(kindText) }
        let native = String(string[utf8.index(after: second)...])
        guard !native.isEmpty else { throw .malformed(string) }
        guard !DisplayText.hasControl(native) else { throw .controlCharacters }
        self.init(provider: provider, kind: kind, nativeID: native)
    }

    public var description: String { "\(provider):\(kind.rawValue):\(nativeID)" }

    public static func < (lhs: ItemID, rhs: ItemID) -> Bool { lhs.description < rhs.description }
}

extension ItemID: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        do {
            try self.init(parsing: string)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// Why a string is not a valid `ItemID`.
public enum ItemIDError: Error, Sendable, CustomStringConvertible, Equatable {
    case malformed(String)
    case badProvider(String)
    case badKind(String)
    case controlCharacters
    case tooLong

    public var description: String {
        switch self {
        case .malformed(let s):
            "'\(s.prefix(80))' is not an item id; ids look like provider:kind:native-id, e.g. podcasts:podcast:1200361736"
        case .badProvider(let p):
            "'\(p.prefix(40))' is not a provider id (lower-case letters, digits, '-' and '_')"
        case .badKind(let k):
            "'\(k.prefix(40))' is not a kind; kinds are \(MediaKind.allCases.map(\.rawValue).joined(separator: ", "))"
        case .controlCharacters: "item ids may not contain control characters"
        case .tooLong: "item ids are at most \(ItemID.maxLength) bytes"
        }
    }
}

extension ItemID {
    /// The prefix of a show's native id when the show is known by its feed URL alone (an OPML
    /// import of a feed that no directory lists): `podcasts:podcast:feed-<base64url of the URL>`.
    public static let feedPrefix = "feed-"

    /// Whether `url` can be a feed's address: http or https with a host, and nothing a URL cannot
    /// hold (Foundation would encode a space or a control character; such a URL came from a
    /// hostile or broken file and is refused).
    public static func isFeedURL(_ url: String) -> Bool {
        if let plain = plainWebURL(url) { return plain }
        return parsedAsFeedURL(url)
    }

    /// The answer for the URLs feeds almost always have, read from the bytes without parsing a
    /// URL (an OPML import of 10,000 shows asks 20,000 times): `http(s)://` and a host of
    /// letters, digits, dots and dashes (a numeric port allowed), then a path, query and
    /// fragment of characters a URL may hold as they are (valid %-escapes). Nil for anything
    /// else, which the full parse decides (`parsedAsFeedURL`).
    static func plainWebURL(_ url: String) -> Bool? {
        var url = url
        return url.withUTF8 { bytes -> Bool? in
            let count = bytes.count
            var i = 0
            func lower(_ byte: UInt8) -> UInt8 { byte | 0x20 }
            guard count > 7, lower(bytes[0]) == UInt8(ascii: "h"), lower(bytes[1]) == UInt8(ascii: "t"),
                lower(bytes[2]) == UInt8(ascii: "t"), lower(bytes[3]) == UInt8(ascii: "p")
            else { return nil }
            i = 4
            if lower(bytes[i]) == UInt8(ascii: "s") { i += 1 }
            guard i + 3 <= count, bytes[i] == UInt8(ascii: ":"), bytes[i + 1] == UInt8(ascii: "/"),
                bytes[i + 2] == UInt8(ascii: "/")
            else { return nil }
            i += 3
            let hostStart = i
            while i < count, isHostByte(bytes[i]) { i += 1 }
            guard i > hostStart, bytes[hostStart] != UInt8(ascii: "."), bytes[hostStart] != UInt8(ascii: "-") else { return nil }
            if i < count, bytes[i] == UInt8(ascii: ":") {
                i += 1
                let portStart = i
                while i < count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
                guard i > portStart, i - portStart <= 5 else { return nil }
            }
            guard i == count || bytes[i] == UInt8(ascii: "/") || bytes[i] == UInt8(ascii: "?") || bytes[i] == UInt8(ascii: "#")
            else { return nil }
            var fragment = false
            while i < count {
                let byte = bytes[i]
                if byte == UInt8(ascii: "%") {
                    guard i + 2 < count, isHex(bytes[i + 1]), isHex(bytes[i + 2]) else { return nil }
                    i += 3
                    continue
                }
                if byte == UInt8(ascii: "#") {
                    // A second '#' is not a URL character.
                    guard !fragment else { return nil }
                    fragment = true
                } else if !isPathByte(byte) {
                    return nil
                }
                i += 1
            }
            return true
        }
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == UInt8(ascii: ".")
            || byte == UInt8(ascii: "-")
    }

    /// RFC 3986's unreserved and sub-delimiter characters, and ':', '@', '/', '?'.
    private static func isPathByte(_ byte: UInt8) -> Bool {
        if (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || (byte >= 0x30 && byte <= 0x39) { return true }
        switch byte {
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"), UInt8(ascii: "$"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"),
            UInt8(ascii: "?"):
            return true
        default: return false
        }
    }

    /// `isFeedURL` the long way: a URL parsed, http or https, with a host.
    static func parsedAsFeedURL(_ url: String) -> Bool {
        guard !DisplayText.hasControlOrSpace(url), let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
            ["http", "https"].contains(scheme),
            parsed.host?.isEmpty == false
        else { return false }
        return true
    }

    /// The id of the show whose feed is at `url` (http or https), for `provider` (one with the
    /// `feeds` capability); nil when the URL cannot be a feed's or the id would be too long.
    public static func feed(_ url: String, provider: String) -> ItemID? {
        guard isFeedURL(url) else { return nil }
        let encoded = base64URL(url)
        let id = ItemID(provider: provider, kind: .podcast, nativeID: feedPrefix + encoded)
        return provider.utf8.count + MediaKind.podcast.rawValue.utf8.count + feedPrefix.utf8.count + encoded.utf8.count + 2
            <= maxLength ? id : nil
    }

    /// `text`'s UTF-8 in base64url without padding (RFC 4648 §5), written straight into the string.
    static func base64URL(_ text: String) -> String {
        var text = text
        return text.withUTF8 { bytes in
            let count = (bytes.count * 4 + 2) / 3
            return String(unsafeUninitializedCapacity: count) { out in
                let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                let table = alphabet.utf8Start
                var i = 0
                var o = 0
                while i + 3 <= bytes.count {
                    let word = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
                    out[o] = table[Int(word >> 18)]
                    out[o + 1] = table[Int(word >> 12 & 63)]
                    out[o + 2] = table[Int(word >> 6 & 63)]
                    out[o + 3] = table[Int(word & 63)]
                    i += 3
                    o += 4
                }
                let left = bytes.count - i
                if left > 0 {
                    let word = UInt32(bytes[i]) << 16 | (left == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
                    out[o] = table[Int(word >> 18)]
                    out[o + 1] = table[Int(word >> 12 & 63)]
                    o += 2
                    if left == 2 {
                        out[o] = table[Int(word >> 6 & 63)]
                        o += 1
                    }
                }
                return o
            }
        }
    }

    /// The feed URL a `feed(_:)` native id (or its prefix before a ':') carries.
    public static func feedURL(nativeID: String) -> String? {
        let show = nativeID.prefix { $0 != ":" }
        guard show.hasPrefix(feedPrefix) else { return nil }
        var base64 = String(show.dropFirst(feedPrefix.count)).replacing("-", with: "+")
            .replacing("_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let url = String(data: data, encoding: .utf8),
            isFeedURL(url)
        else { return nil }
        return url
    }
}
