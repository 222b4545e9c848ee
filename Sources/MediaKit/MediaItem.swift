import Basics
import FoundationEssentials
import Glibc

/// One thing a provider can show: a video, channel, movie, podcast, episode, post or user.
///
/// Providers fill what they know; every field but id, provider, kind and title is optional, so a
/// missing field in an API response is a missing value, not a failure. The host fills `favorite`
/// and `download`.
public struct MediaItem: Codable, Sendable, Equatable {
    public var id: ItemID
    public var provider: String
    public var kind: MediaKind
    public var title: String
    /// A secondary line: channel name, show name, author.
    public var subtitle: String?
    /// Plain text, no markup.
    public var summary: String?
    /// Where a person can see it on the web.
    public var url: String?
    /// The best image for it.
    public var artwork: String?
    /// ISO 8601 date and time.
    public var published: String?
    /// Length in seconds.
    public var duration: Double?
    public var creator: String?
    /// Counts: views, likes, comments, episodes, followers, votes...
    public var stats: [String: Int]?
    /// The media file for podcasts and other downloadable items.
    public var enclosure: Enclosure?
    /// Hashtags, mentions, URLs and media inside `summary` (posts).
    public var entities: [TextEntity]?
    /// The feed the item is read from (a podcast's RSS or Atom): what an OPML export and a
    /// subscription keep.
    public var feed: String?
    /// What plays for the item when it is not media itself (a movie's trailer).
    public var plays: MediaLink?
    /// Filled by the host: whether the item is a local favorite.
    public var favorite: Bool?
    /// Filled by the host: the download state when there is one.
    public var download: DownloadInfo?
    /// Filled by the host for items played: seconds in where playback stopped (absent once played).
    public var position: Double?
    /// Filled by the host for items played: whether it was played to the end (within the last
    /// 30 seconds or 5 %), or marked so.
    public var played: Bool?
    /// Filled by the host: the names of the lists that hold the item, when any do.
    public var lists: [String]?
    /// Provider-specific facts worth showing, as text.
    public var extra: [String: String]?
    /// What the feed says in the Podcasting 2.0 namespace (people, funding, podroll, soundbites,
    /// live state…); nil when nothing.
    public var namespace: PodcastNamespace?

    public init(
        id: ItemID, title: String, subtitle: String? = nil, summary: String? = nil,
        url: String? = nil, artwork: String? = nil, published: String? = nil,
        duration: Double? = nil, creator: String? = nil, stats: [String: Int]? = nil,
        enclosure: Enclosure? = nil, entities: [TextEntity]? = nil, extra: [String: String]? = nil
    ) {
        self.id = id
        self.provider = id.provider
        self.kind = id.kind
        self.title = title
        self.subtitle = subtitle
        self.summary = summary
        self.url = url
        self.artwork = artwork
        self.published = published
        self.duration = duration
        self.creator = creator
        self.stats = stats
        self.enclosure = enclosure
        self.entities = entities
        self.extra = extra
    }
}

extension MediaItem {
    /// The item without what the host fills in (favorite, download, playback, lists): what a
    /// favorite, a list or an export keeps, since the rest changes after it is stored.
    public var snapshot: MediaItem {
        var item = self
        item.favorite = nil
        item.download = nil
        item.position = nil
        item.played = nil
        item.lists = nil
        return item
    }
}

/// A downloadable media file attached to an item.
/// Another item this one stands for, with a page that plays it when that item cannot be asked
/// for (its provider is not configured): a movie's trailer.
public struct MediaLink: Codable, Sendable, Equatable, Hashable {
    public var id: ItemID
    /// A page a player opens for it (mpv resolves video pages).
    public var url: String?
    /// What it is, in words: "the first trailer".
    public var label: String?

    public init(id: ItemID, url: String? = nil, label: String? = nil) {
        self.id = id
        self.url = url
        self.label = label
    }
}

public struct Enclosure: Codable, Sendable, Equatable {
    public var url: String
    public var type: String?
    public var length: Int64?

    public init(url: String, type: String? = nil, length: Int64? = nil) {
        self.url = url
        self.type = type
        self.length = length
    }
}

/// A span of an item's text that means something: a hashtag, mention, link or media reference.
public struct TextEntity: Codable, Sendable, Equatable {
    public enum EntityType: String, Codable, Sendable, CaseIterable { case hashtag, mention, url, media }
    public var type: EntityType
    /// Offsets in Unicode scalars into the item's plain text, end exclusive.
    public var start: Int
    public var end: Int
    /// What the text shows, e.g. "#swift" or "example.com/a…".
    public var text: String
    /// What it stands for: the tag, the handle, the expanded URL, the media URL.
    public var value: String

    public init(type: EntityType, start: Int, end: Int, text: String, value: String) {
        self.type = type
        self.start = start
        self.end = end
        self.text = text
        self.value = value
    }
}

/// The host's record of an item's download, attached to items it returns.
public struct DownloadInfo: Codable, Sendable, Equatable {
    public var state: String
    public var path: String?
    public var bytes: Int64?
    public var total: Int64?

    public init(state: String, path: String? = nil, bytes: Int64? = nil, total: Int64? = nil) {
        self.state = state
        self.path = path
        self.bytes = bytes
        self.total = total
    }
}

/// A named group of items a provider can browse: a video category, a genre, a trending tag.
public struct MediaCategory: Codable, Sendable, Equatable {
    /// What `media.browse` takes.
    public var id: String
    public var name: String
    /// Set when categories nest (Apple's podcast sub-genres).
    public var parent: String?

    public init(id: String, name: String, parent: String? = nil) {
        self.id = id
        self.name = name
        self.parent = parent
    }
}

/// An opaque position in a paged listing, made by the provider that returned it.
public struct Cursor: Codable, Sendable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
    public var description: String { rawValue }
}

/// One page of a listing.
public struct Page: Codable, Sendable, Equatable {
    public var items: [MediaItem]
    public var next: Cursor?
    public var prev: Cursor?
    /// The total number of items when the service says.
    public var total: Int?

    public init(items: [MediaItem], next: Cursor? = nil, prev: Cursor? = nil, total: Int? = nil) {
        self.items = items
        self.next = next
        self.prev = prev
        self.total = total
    }
}

/// What to search for.
public struct SearchQuery: Codable, Sendable, Equatable {
    public var text: String
    /// Only items of this kind, when the provider can filter (videos, channels, playlists...).
    public var kind: MediaKind?
    public var cursor: Cursor?

    public init(text: String, kind: MediaKind? = nil, cursor: Cursor? = nil) {
        self.text = text
        self.kind = kind
        self.cursor = cursor
    }
}

/// Where a provider's downloadable media lives.
/// A download a program makes: its words, `{output}` standing for the final file's path. It
/// resumes what an earlier run left (yt-dlp's `.part` files), prints `progress <bytes> <total>`
/// lines on stdout as it goes (total `NA` when unknown), exits 0 with the file in place, and may
/// be killed at any point (pause, cancel, the process ending).
public struct ProgramDownload: Codable, Sendable, Equatable {
    public var program: String
    public var arguments: [String]

    public init(program: String, arguments: [String]) {
        self.program = program
        self.arguments = arguments
    }
}

public struct DownloadSource: Sendable, Equatable {
    public var url: URL
    /// A file name without extension that describes the item, before sanitizing.
    public var suggestedName: String
    /// The show or channel it belongs to, used as a folder.
    public var collection: String?
    public var fileExtension: String?
    public var expectedLength: Int64?
    public var headers: [String: String]
    /// A program that makes the file itself (yt-dlp downloading and merging a video's formats),
    /// instead of the host fetching `url`.
    public var program: ProgramDownload?
    /// The item's title, when finding the media read it (yt-dlp's info has it): the host then
    /// does not ask the provider for the item again (for yt-dlp, a second run of a second or more).
    public var title: String?

    public init(
        url: URL, suggestedName: String, collection: String? = nil, fileExtension: String? = nil,
        expectedLength: Int64? = nil, headers: [String: String] = [:], program: ProgramDownload? = nil, title: String? = nil
    ) {
        self.url = url
        self.suggestedName = suggestedName
        self.collection = collection
        self.fileExtension = fileExtension
        self.expectedLength = expectedLength
        self.headers = headers
        self.program = program
        self.title = title
    }
}

extension MediaItem {
    /// A title for an untitled text (a post): its first line, cut to `limit` characters with "…".
    public static func headline(_ text: String, limit: Int = 80) -> String {
        let line = text.split(separator: "\n").first.map(String.init) ?? ""
        return line.count > limit ? String(line.prefix(limit - 1)) + "…" : line
    }
}

extension MediaItem {
    /// The longest duration or position believed, in seconds (about 30 years): more is noise.
    public static let maxSeconds: Double = 1e9

    /// The item as the host lets it in and passes it on, whoever made it (a provider, a plugin,
    /// an imported or received list): a number that is not finite or not in range is dropped
    /// (so no later `Int(_:)` can trap on it), a link with a space or a control character is
    /// dropped, text carries no control character (plain text keeps "\n" and tabs; "\r\n" becomes
    /// "\n", and entity offsets follow), and an entity outside its text is dropped.
    public func checked() -> MediaItem {
        var item = self
        item.title = DisplayText.clean(title)
        item.subtitle = subtitle.map { DisplayText.clean($0) }
        item.creator = creator.map { DisplayText.clean($0) }
        item.published = published.map { DisplayText.clean($0) }
        item.url = url.flatMap(Self.checkedLink)
        item.artwork = artwork.flatMap(Self.checkedLink)
        item.feed = feed.flatMap(Self.checkedLink)
        if var plays {
            plays.url = plays.url.flatMap(Self.checkedLink)
            plays.label = plays.label.map { DisplayText.clean($0) }
            item.plays = plays
        }
        item.duration = duration?.within(0...Self.maxSeconds)
        item.position = position?.within(0...Self.maxSeconds)
        if let stats { item.stats = stats.filter { $0.value >= 0 } }
        if var enclosure {
            if let link = Self.checkedLink(enclosure.url) {
                enclosure.url = link
                enclosure.type = enclosure.type.map { DisplayText.clean($0) }
                if let length = enclosure.length, length < 0 { enclosure.length = nil }
                item.enclosure = enclosure
            } else {
                item.enclosure = nil
            }
        }
        if let extra { item.extra = extra.mapValues { DisplayText.clean($0, keepNewlines: true) } }
        guard let summary else {
            item.entities = nil
            return item
        }
        let offsets: [Int]?
        if summary.unicodeScalars.contains(where: Self.isRemoved) {
            let cleaned = Self.cleanedWithOffsets(summary)
            item.summary = cleaned.text
            offsets = cleaned.offsets
        } else {
            offsets = nil
        }
        if let entities {
            let count = offsets.map { $0.count - 1 } ?? summary.unicodeScalars.count
            item.entities = entities.compactMap { entity in
                guard entity.start >= 0, entity.start <= entity.end, entity.end <= count else { return nil }
                var entity = entity
                if let offsets {
                    entity.start = offsets[entity.start]
                    entity.end = offsets[entity.end]
                }
                entity.text = DisplayText.clean(entity.text)
                entity.value = DisplayText.clean(entity.value)
                return entity
            }
        }
        return item
    }

    /// Whether plain text loses this scalar: a control character but "\n" and tab, or the
    /// right-to-left override.
    static func isRemoved(_ scalar: Unicode.Scalar) -> Bool {
        scalar != "\n" && scalar != "\t" && (scalar.properties.generalCategory == .control || scalar.value == 0x202E)
    }

    /// A link as given when it is absolute and has no space or control character in it.
    public static func checkedLink(_ text: String) -> String? {
        // A plain http(s) URL is decided from its bytes (an import checks thousands); the rest
        // is parsed.
        if text.utf8.count <= 8192, ItemID.plainWebURL(text) == true { return text }
        guard !text.isEmpty, text.utf8.count <= 8192,
            !DisplayText.hasControlOrSpace(text), let scheme = URL(string: text)?.scheme, !scheme.isEmpty
        else { return nil }
        return text
    }

    /// Plain text without the scalars `isRemoved` names, and where each Unicode scalar offset of
    /// the original lands in it (one more entry than the original has scalars).
    static func cleanedWithOffsets(_ text: String) -> (text: String, offsets: [Int]) {
        var offsets: [Int] = []
        var out = String.UnicodeScalarView()
        var kept = 0
        for scalar in text.unicodeScalars {
            offsets.append(kept)
            if !isRemoved(scalar) {
                out.append(scalar)
                kept += 1
            }
        }
        offsets.append(kept)
        return (String(out), offsets)
    }
}

extension MediaItem {
    /// `extra` key marking a short vertical video (YouTube's Shorts), "true" when it is one.
    public static let shortKey = "short"

    /// Whether this is a Short (marked by its provider), so people and clients can tell or
    /// leave them out.
    public var isShort: Bool { extra?[Self.shortKey] == "true" }
}
