import Foundation

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
        guard string.utf8.count <= Self.maxLength else { throw .tooLong }
        let parts = string.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed(string) }
        let provider = String(parts[0])
        guard ProviderDescriptor.isValidID(provider) else { throw .badProvider(provider) }
        guard let kind = MediaKind(rawValue: String(parts[1])) else { throw .badKind(String(parts[1])) }
        let native = String(parts[2])
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
        // base64url, without padding.
        let encoded = String(
            decoding: Data(url.utf8).base64EncodedString().utf8.compactMap { byte -> UInt8? in
                switch byte {
                case UInt8(ascii: "+"): UInt8(ascii: "-")
                case UInt8(ascii: "/"): UInt8(ascii: "_")
                case UInt8(ascii: "="): nil
                default: byte
                }
            }, as: UTF8.self)
        let id = ItemID(provider: provider, kind: .podcast, nativeID: feedPrefix + encoded)
        return id.description.utf8.count <= maxLength ? id : nil
    }

    /// The feed URL a `feed(_:)` native id (or its prefix before a ':') carries.
    public static func feedURL(nativeID: String) -> String? {
        let show = nativeID.prefix { $0 != ":" }
        guard show.hasPrefix(feedPrefix) else { return nil }
        var base64 = show.dropFirst(feedPrefix.count).replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let url = String(data: data, encoding: .utf8),
            isFeedURL(url)
        else { return nil }
        return url
    }
}
