import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// A podcast feed, parsed: the show and (when collected) its episodes in feed order.
public struct ParsedFeed: Codable, Sendable, Equatable {
    public var title: String?
    public var author: String?
    public var summary: String?
    public var artwork: String?
    public var link: String?
    public var categories: [String] = []
    public var episodes: [ParsedEpisode] = []
    /// The show's Podcasting 2.0 elements (guid, people, funding, podroll, trailers…).
    public var namespace: PodcastNamespace?
    /// Where the feed says it lives now (`itunes:new-feed-url`), and its own address (Atom's
    /// `rel="self"` link): what proves a show moved.
    public var newFeedURL: String?
    public var selfURL: String?
}

public struct ParsedEpisode: Codable, Sendable, Equatable {
    public var guid: String?
    public var title: String?
    public var published: Date?
    public var duration: Double?
    public var enclosureURL: String?
    public var enclosureType: String?
    public var enclosureLength: Int64?
    public var season: Int?
    public var episode: Int?
    public var artwork: String?
    /// The show notes as the feed has them (often HTML); `summary` is their plain text. Kept raw
    /// so parsing a feed of thousands of episodes does not convert notes no one reads.
    public var notes: String?
    public var link: String?
    public var transcript: String?
    /// The Podcasting 2.0 chapters file (`<podcast:chapters url>`).
    public var chapters: String?
    /// Podlove Simple Chapters in the item, a line each: start, title, href, image, split by tabs.
    public var simpleChapters: String?
    /// Every `<podcast:transcript>`, a line each: url, type, language, rel, split by tabs.
    public var transcripts: String?
    /// The episode's other Podcasting 2.0 elements (people, soundbites, live state…).
    public var namespace: PodcastNamespace?

    /// The notes as plain text.
    public var summary: String? { notes.map(HTMLText.plain) }
}

/// Why a feed could not be read.
public struct FeedError: Error, CustomStringConvertible {
    var feed: String
    var reason: String
    public var description: String { "the feed \(feed) cannot be read: \(reason)" }
}

/// Reads RSS 2.0, RSS 1.0 and Atom feeds with the iTunes, content, Dublin Core, Media RSS and
/// Podcasting 2.0 namespaces, streaming: bytes go in as they arrive, in chunks of any size, and
/// each episode comes out when its element ends, so a 100 MB feed needs no more memory than one
/// episode (`XMLStream` underneath; any encoding through `XMLTextDecoder`).
///
/// Namespaces are recognised by URI, case-insensitively, and the well-known prefixes (`itunes:`,
/// `content:`, `media:`…) also when a feed uses them without declaring them. A bad element costs
/// that element: an unreadable date is no date, an episode cut off by the end of the document
/// is dropped, a stray end tag is ignored. Items without a media file are kept (listed, not
/// downloadable).
public final class FeedParser: XMLStreamDelegate {
    /// Called with each episode as its element ends.
    public typealias EpisodeHandler = (ParsedEpisode) throws -> Void

    private var stream: XMLStream?
    private var decoder: XMLTextDecoder
    private var utf8: [UInt8] = []
    private let name: String
    /// Everything the reading keeps, in one value: each event is one access to it. Not checked
    /// for exclusive access at run time (a class's properties are, at every access: 4 % of a
    /// big feed's parse): the reader calls one event at a time, and an event's work (the
    /// episode handler included) never reaches back into the parser.
    @exclusivity(unchecked) private var state: Reading
    /// Episodes handed over so far.
    public var episodeCount: Int { state.episodeCount }

    /// The longest text kept for one field; the rest of a hostile field is dropped.
    static let maxFieldBytes = 1 << 20

    /// - Parameters:
    ///   - url: where the feed came from, for relative links and for naming it in errors.
    ///   - charset: the HTTP Content-Type's charset, if any.
    public init(url: URL?, charset: String? = nil, onEpisode: @escaping EpisodeHandler) {
        name = url.map { URLRedaction.redact($0.absoluteString) } ?? "(data)"
        decoder = XMLTextDecoder(httpCharset: charset)
        state = Reading(baseURL: url, onEpisode: onEpisode)
    }

    /// Parses a whole feed held in memory, episodes included.
    public static func parse(_ data: Data, url: URL?, charset: String? = nil) throws -> ParsedFeed {
        var episodes: [ParsedEpisode] = []
        let parser = FeedParser(url: url, charset: charset) { episodes.append($0) }
        try data.withUnsafeBytes { try parser.feed($0) }
        var feed = try parser.finish()
        feed.episodes = episodes
        return feed
    }

    /// Reads the next chunk of the document.
    /// - Throws: `FeedError` when the document cannot be a feed, or what the episode handler threw.
    public func feed(_ chunk: UnsafeRawBufferPointer) throws {
        let stream = self.stream ?? XMLStream(delegate: self)
        self.stream = stream
        utf8.removeAll(keepingCapacity: true)
        decoder.decode(chunk, into: &utf8)
        do {
            try stream.feed(utf8)
        } catch let error as XMLStreamError {
            throw FeedError(feed: name, reason: error.description)
        }
        try check()
    }

    /// Ends the document and returns the channel's fields (episodes went to the handler).
    public func finish() throws -> ParsedFeed {
        let stream = self.stream ?? XMLStream(delegate: self)
        self.stream = stream
        utf8.removeAll(keepingCapacity: true)
        decoder.finish(into: &utf8)
        state.finishing = false
        do {
            try stream.feed(utf8)
            state.finishing = true
            try stream.finish()
        } catch let error as XMLStreamError {
            throw FeedError(feed: name, reason: error.description)
        }
        try check()
        guard state.root != nil else {
            throw FeedError(
                feed: name,
                reason: state.rootName.map { "it is neither RSS nor Atom (the document is <\($0)>)" }
                    ?? "it is not XML (no element in it)")
        }
        var feed = state.feed
        feed.link = feed.link.flatMap { state.resolve($0, against: state.baseURL) }
        feed.artwork = feed.artwork.flatMap { state.resolve($0, against: state.baseURL) }
        return feed
    }

    private func check() throws {
        if let error = state.handlerError { throw error }
        if stream?.stopped == true, state.root == nil, let root = state.rootName {
            throw FeedError(feed: name, reason: "it is neither RSS nor Atom (the document is <\(root)>)")
        }
    }

    // MARK: Events

    public func xmlStart(_ name: XMLName, attributes: XMLAttributes) {
        if state.start(name, attributes: attributes) { stream?.stop() }
    }

    public func xmlEnd(_ name: XMLName, explicit: Bool) {
        if state.end(name, explicit: explicit) { stream?.stop() }
    }

    public func xmlText(_ bytes: UnsafeBufferPointer<UInt8>) { state.take(bytes) }

    /// Only the fields being captured: the rest of a feed's text is skipped unread.
    public var wantsText: Bool { state.wantsText }

    // MARK: Text

    /// Trims ASCII white space on UTF-8 (Foundation's trimming bridges through UTF-16).
    static func trim(_ text: String) -> String {
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(where: { !isSpace($0) }), let last = utf8.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        if first == utf8.startIndex, last == utf8.index(before: utf8.endIndex) { return text }
        return String(text[first...last])
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
}

extension FeedParser {
    /// The reading's state and what each event does to it.
    struct Reading {
        let baseURL: URL?
        let onEpisode: EpisodeHandler
        /// The channel's fields (and, when collecting, its episodes).
        var feed = ParsedFeed()
        var root: Root?
        var rootName: String?
        /// The open elements, by what they are to a feed.
        private var names: [Tag] = []
        var episode: ParsedEpisode?
        /// The depth of the episode element being read, 0 outside one (checked at every tag: reading
        /// `episode` itself to test it would copy the whole struct).
        var episodeDepth = 0
        /// What episode links are resolved against: the channel's link (as of `link`), else the feed's URL.
        var channelBase: (link: String?, url: URL?)?
        private var capture: Field?
        var captureDepth = 0
        var text: [UInt8] = []
        /// How good the episode's notes are so far: content:encoded 3, description 2, itunes:summary 1.
        var notesRank = 0
        var channelSummaryFromDescription = false
        var itunesTitle: String?
        var mediaContent: (url: String, type: String?, length: Int64?)?
        var mediaThumbnail: String?
        var finishing = false
        var handlerError: (any Error)?
        /// Episodes handed over so far.
        var episodeCount = 0
        /// The stream should stop (the document is not a feed, the handler failed).
        var stopRequested = false

        enum Root { case rss, atom, rdf }

        init(baseURL: URL?, onEpisode: @escaping EpisodeHandler) {
            self.baseURL = baseURL
            self.onEpisode = onEpisode
        }

        // MARK: Names

        private enum Namespace { case core, itunes, content, dc, podcast, media, googleplay, psc, other }

        private static let namespaces: [String: Namespace] = [
            "http://www.itunes.com/dtds/podcast-1.0.dtd": .itunes, "https://www.itunes.com/dtds/podcast-1.0.dtd": .itunes,
            "http://purl.org/rss/1.0/modules/content/": .content, "http://purl.org/rss/1.0/modules/content": .content,
            "http://purl.org/dc/elements/1.1/": .dc, "http://purl.org/dc/elements/1.1": .dc,
            "https://podcastindex.org/namespace/1.0": .podcast, "http://podcastindex.org/namespace/1.0": .podcast,
            "https://github.com/podcastindex-org/podcast-namespace/blob/main/docs/1.0.md": .podcast,
            "http://search.yahoo.com/mrss/": .media, "http://search.yahoo.com/mrss": .media,
            "http://www.google.com/schemas/play-podcasts/1.0": .googleplay,
            "http://podlove.org/simple-chapters": .psc, "https://podlove.org/simple-chapters": .psc,
            "http://www.w3.org/2005/atom": .core, "http://purl.org/rss/1.0/": .core, "http://purl.org/rss/1.0": .core,
            "http://backend.userland.com/rss2": .core, "http://blogs.law.harvard.edu/tech/rss": .core,
            // RSS 0.90, Netscape's RDF: the same elements as RSS 1.0's (heise online served it into 2018).
            "http://my.netscape.com/rdf/simple/0.9/": .core, "http://my.netscape.com/rdf/simple/0.9": .core,
        ]
        private static let prefixes: [String: Namespace] = [
            "itunes": .itunes, "content": .content, "dc": .dc, "podcast": .podcast, "media": .media, "googleplay": .googleplay,
            "psc": .psc,
            "atom": .core,
        ]

        private static func namespace(of name: XMLName) -> Namespace {
            if let uri = name.namespace { return Self.namespaces[uri.lowercased()] ?? .other }
            if name.prefix.isEmpty { return .core }
            return Self.prefixes[name.prefix.lowercased()] ?? .other
        }

        /// What an element is to a feed: its namespace and name, worked out once per name.
        private enum Tag: UInt8 {
            case other
            // RSS, Atom and RDF, in any of their namespaces.
            case rss, feed, rdf, channel, item, entry, image, url, name, author, title, guid, id, pubDate, published, updated,
                modified, content, description, summary, subtitle, managingEditor, enclosure, icon, logo
            /// A link in no namespace: Atom's (attributes) in an Atom feed, RSS's (text) in others.
            case link
            case atomLink, rssLink
            case itunesTitle, itunesDuration, itunesSeason, itunesEpisode, itunesSummary, itunesSubtitle, itunesImage,
                itunesCategory, itunesAuthor, itunesNewFeedURL
            case podcastSeason, podcastEpisode, podcastTranscript, podcastChapters, pscChapter
            case podcastGuid, podcastPerson, podcastFunding, podcastPodroll, podcastRemoteItem, podcastSoundbite,
                podcastLiveItem, podcastTrailer, podcastAlternateEnclosure, podcastSource, podcastImages, podcastLocked,
                podcastLicense, podcastLocation, podcastValue, podcastValueRecipient, podcastImage
            case contentEncoded, dcDate, dcCreator, mediaContent, mediaThumbnail
            case googleplayDescription, googleplayImage, googleplayAuthor

            static let core: [String: Tag] = [
                "rss": .rss, "feed": .feed, "channel": .channel, "item": .item, "entry": .entry, "image": .image, "url": .url,
                "name": .name, "author": .author, "title": .title, "guid": .guid, "id": .id, "pubDate": .pubDate,
                "published": .published, "updated": .updated, "modified": .modified, "content": .content,
                "description": .description, "summary": .summary, "subtitle": .subtitle, "managingEditor": .managingEditor,
                "enclosure": .enclosure, "icon": .icon, "logo": .logo,
            ]
            static let podcast: [String: Tag] = [
                "guid": .podcastGuid, "person": .podcastPerson, "funding": .podcastFunding, "podroll": .podcastPodroll,
                "remoteItem": .podcastRemoteItem, "soundbite": .podcastSoundbite, "liveItem": .podcastLiveItem,
                "trailer": .podcastTrailer, "alternateEnclosure": .podcastAlternateEnclosure, "source": .podcastSource,
                "images": .podcastImages, "locked": .podcastLocked, "license": .podcastLicense, "location": .podcastLocation,
                "value": .podcastValue, "valueRecipient": .podcastValueRecipient, "image": .podcastImage,
            ]
            static let itunes: [String: Tag] = [
                "title": .itunesTitle, "duration": .itunesDuration, "season": .itunesSeason, "episode": .itunesEpisode,
                "summary": .itunesSummary, "subtitle": .itunesSubtitle, "image": .itunesImage, "category": .itunesCategory,
                "author": .itunesAuthor, "new-feed-url": .itunesNewFeedURL,
            ]

            init(_ name: XMLName) {
                let local = name.local
                if local == "RDF" {
                    self = .rdf
                    return
                }
                switch Reading.namespace(of: name) {
                case .core:
                    if local == "link" {
                        if let uri = name.namespace {
                            self = uri.lowercased() == "http://www.w3.org/2005/atom" ? .atomLink : .rssLink
                        } else {
                            self = name.prefix.isEmpty ? .link : .atomLink
                        }
                        return
                    }
                    self = Self.core[local] ?? .other
                case .itunes: self = Self.itunes[local] ?? .other
                case .podcast:
                    switch local {
                    case "season": self = .podcastSeason
                    case "episode": self = .podcastEpisode
                    case "transcript": self = .podcastTranscript
                    case "chapters": self = .podcastChapters
                    default: self = Self.podcast[local] ?? .other
                    }
                case .content: self = local == "encoded" ? .contentEncoded : .other
                case .dc:
                    switch local {
                    case "date": self = .dcDate
                    case "creator": self = .dcCreator
                    default: self = .other
                    }
                case .media:
                    switch local {
                    case "content": self = .mediaContent
                    case "thumbnail": self = .mediaThumbnail
                    default: self = .other
                    }
                case .googleplay:
                    switch local {
                    case "description": self = .googleplayDescription
                    case "image": self = .googleplayImage
                    case "author": self = .googleplayAuthor
                    default: self = .other
                    }
                case .psc: self = local == "chapter" ? .pscChapter : .other
                case .other: self = .other
                }
            }
        }

        /// By the stream's symbol for a name: what it is, worked out once.
        private var tagBySymbol: [Tag?] = []

        private mutating func tag(of name: XMLName) -> Tag {
            let symbol = name.symbol
            if symbol >= 0, symbol < tagBySymbol.count, let known = tagBySymbol[symbol] { return known }
            let tag = Tag(name)
            if symbol >= 0 {
                while tagBySymbol.count <= symbol { tagBySymbol.append(nil) }
                tagBySymbol[symbol] = tag
            }
            return tag
        }

        /// An Atom link (attributes, not text): by its namespace, or unqualified in an Atom feed.
        private func isAtom(_ tag: Tag) -> Bool { tag == .atomLink || (tag == .link && root == .atom) }

        // MARK: Fields

        private enum Field {
            case title, itunesTitle, guid, date, updated, duration, season, episodeNumber, link
            // Podcasting 2.0 elements with text: on the show (`show`) or the episode.
            case person(role: String?, group: String?, image: String?, link: String?, show: Bool)
            case funding(url: String?)
            case soundbite(start: String?, duration: String?)
            case trailer(url: String?, published: String?, type: String?, length: String?, season: String?)
            case podcastGuid
            case locked(owner: String?)
            case license(url: String?, show: Bool)
            case location(geo: String?, osm: String?, show: Bool)
            case notes(rank: Int)
            case channelTitle, channelTitleFallback, author, authorFallback, channelSummary, channelSummaryFallback, channelLink,
                imageURL, icon, newFeedURL
        }

        /// A start tag; true when the stream should stop.
        mutating func start(_ name: XMLName, attributes: XMLAttributes) -> Bool {
            startTag(name, attributes: attributes)
            return stopRequested
        }

        private mutating func startTag(_ name: XMLName, attributes: XMLAttributes) {
            let tag = tag(of: name)
            defer { names.append(tag) }
            if root == nil {
                guard names.isEmpty else { return }
                switch tag {
                case .rss: root = .rss
                case .feed: root = .atom
                case .rdf: root = .rdf
                default:
                    rootName = String(name.qualified.prefix(40))
                    stopRequested = true
                }
                return
            }
            guard capture == nil else { return }
            func attribute(_ key: StaticString) -> String? { attributes.value(key) }
            let depth = names.count + 1
            if episodeDepth == 0 {
                if tag == .item || tag == .entry || tag == .podcastLiveItem {
                    episode = ParsedEpisode()
                    if tag == .podcastLiveItem { startLive(attribute) }
                    episodeDepth = depth
                    notesRank = 0
                    itunesTitle = nil
                    mediaContent = nil
                    mediaThumbnail = nil
                    return
                }
                channelStart(tag, attribute, depth: depth)
                return
            }
            var field: Field?
            switch tag {
            case .title: field = .title
            case .itunesTitle: field = .itunesTitle
            case .guid, .id: field = .guid
            case .pubDate, .published, .dcDate: field = .date
            case .updated, .modified: field = .updated
            case .itunesDuration: field = .duration
            case .itunesSeason: field = .season
            case .itunesEpisode: field = .episodeNumber
            case .contentEncoded, .content: field = .notes(rank: 3)
            case .description, .summary: field = .notes(rank: 2)
            case .itunesSummary, .googleplayDescription: field = .notes(rank: 1)
            case .link, .atomLink, .rssLink:
                guard isAtom(tag) else {
                    field = .link
                    break
                }
                let rel = attribute("rel") ?? "alternate"
                if rel == "enclosure" {
                    setEnclosure(attribute("href"), type: attribute("type"), length: attribute("length"))
                } else if rel == "alternate", let href = attribute("href") {
                    episode?.link = href
                }
            case .enclosure:
                setEnclosure(attribute("url"), type: attribute("type"), length: attribute("length"))
            case .itunesImage, .googleplayImage:
                if let href = attribute("href") ?? attribute("url") { episode?.artwork = href }
            case .podcastTranscript:
                if let url = attribute("url"), !url.isEmpty {
                    if episode?.transcript == nil { episode?.transcript = url }
                    let line = [url, attribute("type"), attribute("language"), attribute("rel")].map {
                        ($0 ?? "").map { $0 == "\t" || $0.isNewline ? " " : $0 }.reduce(into: "") { $0.append($1) }
                    }.joined(separator: "\t")
                    let before = episode?.transcripts
                    if (before?.utf8.count ?? 0) < 64 << 10 { episode?.transcripts = before.map { $0 + "\n" + line } ?? line }
                }
            case .podcastChapters:
                if episode?.chapters == nil, let url = attribute("url"), !url.isEmpty { episode?.chapters = url }
            case .pscChapter:
                if let start = attribute("start") {
                    func clean(_ text: String?) -> String {
                        HTMLText.decodeEntities(text ?? "").map { $0 == "\t" || $0.isNewline ? " " : $0 }.reduce(into: "") {
                            $0.append($1)
                        }
                    }
                    let line = [start, attribute("title"), attribute("href"), attribute("image")].map(clean).joined(
                        separator: "\t")
                    let before = episode?.simpleChapters
                    if (before?.utf8.count ?? 0) < FeedParser.maxFieldBytes {
                        episode?.simpleChapters = before.map { $0 + "\n" + line } ?? line
                    }
                }
            case .podcastSeason:
                if let name = attribute("name").map(Self.clean), !name.isEmpty { episodeNamespace { $0.seasonName = name } }
                field = .season
            case .podcastEpisode:
                if let display = attribute("display").map(Self.clean), !display.isEmpty {
                    episodeNamespace { $0.episodeDisplay = display }
                }
                field = .episodeNumber
            case .podcastPerson:
                field = .person(
                    role: attribute("role"), group: attribute("group"), image: attribute("img"), link: attribute("href"),
                    show: false)
            case .podcastSoundbite: field = .soundbite(start: attribute("startTime"), duration: attribute("duration"))
            case .podcastLicense: field = .license(url: attribute("url"), show: false)
            case .podcastLocation: field = .location(geo: attribute("geo"), osm: attribute("osm"), show: false)
            case .podcastImages: if let images = Self.images(attribute("srcset")) { episodeNamespace { $0.images = images } }
            case .podcastImage:
                if let image = Self.image(attribute) { episodeNamespace { Self.add(image, to: &$0) } }
            case .podcastValue: startValue(attribute, show: false)
            case .podcastValueRecipient where names.last == .podcastValue: addRecipient(attribute, show: false)
            case .podcastAlternateEnclosure:
                if let type = attribute("type").map(Self.clean), !type.isEmpty {
                    let alternate = PodcastNamespace.AlternateEnclosure(
                        type: type, sources: [], length: attribute("length").flatMap(Self.length),
                        bitrate: attribute("bitrate").flatMap { Double(FeedParser.trim($0)) }.flatMap {
                            $0.isFinite && $0 > 0 ? $0 : nil
                        },
                        height: attribute("height").flatMap { Int(FeedParser.trim($0)) }.flatMap { $0 > 0 ? $0 : nil },
                        language: attribute("lang"), title: attribute("title"), rel: attribute("rel"),
                        isDefault: attribute("default")?.lowercased() == "true")
                    episodeNamespace { namespace in
                        if (namespace.alternateEnclosures?.count ?? 0) < Self.maxListed {
                            namespace.alternateEnclosures = (namespace.alternateEnclosures ?? []) + [alternate]
                        }
                    }
                }
            case .podcastSource where names.last == .podcastAlternateEnclosure:
                if let uri = attribute("uri").map(Self.clean), !uri.isEmpty {
                    episodeNamespace { namespace in
                        guard let last = namespace.alternateEnclosures?.indices.last,
                            (namespace.alternateEnclosures?[last].sources.count ?? 0) < Self.maxListed
                        else { return }
                        namespace.alternateEnclosures?[last].sources.append(uri)
                    }
                }
            case .mediaContent:
                if mediaContent == nil, let url = attribute("url") {
                    mediaContent = (url, attribute("type"), attribute("fileSize").flatMap(Self.length))
                }
            case .mediaThumbnail:
                if mediaThumbnail == nil { mediaThumbnail = attribute("url") }
            default: break
            }
            if let field { startCapture(field, depth: depth) }
        }

        private mutating func channelStart(_ tag: Tag, _ attribute: (StaticString) -> String?, depth: Int) {
            // The channel's own elements: children of <channel> (RSS) or of <feed> (Atom); the image
            // URL one level further down.
            let parent = names.last
            let atChannel = parent == .channel || (root == .atom && names.count == 1)
            switch tag {
            case .itunesCategory:
                if let text = attribute("text") { feed.categories.append(text) }
            case .itunesImage,
                .googleplayImage where atChannel:
                if let href = attribute("href") ?? attribute("url") { feed.artwork = href }
            case .link where atChannel && isAtom(tag), .atomLink where atChannel:
                let rel = attribute("rel") ?? "alternate"
                if rel == "alternate", feed.link == nil { feed.link = attribute("href") }
                if rel == "self", feed.selfURL == nil, let href = attribute("href").map(Self.clean), !href.isEmpty {
                    feed.selfURL = href
                }
            case .url where parent == .image && names.count >= 2 && names[names.count - 2] == .channel:
                startCapture(.imageURL, depth: depth)
            case .name
            where root == .atom && names.count == 2
                && (parent == .author || parent == .itunesAuthor || parent == .googleplayAuthor):
                startCapture(.authorFallback, depth: depth)
            case .podcastRemoteItem where parent == .podcastPodroll:
                if let guid = attribute("feedGuid").map(Self.clean), !guid.isEmpty {
                    let item = PodcastNamespace.RemoteItem(
                        feedGuid: guid, feedURL: attribute("feedUrl").map(Self.clean), itemGuid: attribute("itemGuid"),
                        medium: attribute("medium"), title: attribute("title"))
                    showNamespace { namespace in
                        if (namespace.podroll?.count ?? 0) < Self.maxPodroll {
                            namespace.podroll = (namespace.podroll ?? []) + [item]
                        }
                    }
                }
            case .podcastValueRecipient where parent == .podcastValue && names.count >= 2 && names[names.count - 2] == .channel:
                addRecipient(attribute, show: true)
            default:
                guard atChannel else { return }
                let field: Field?
                switch tag {
                case .title: field = .channelTitle
                case .itunesTitle: field = .channelTitleFallback
                case .itunesAuthor, .googleplayAuthor: field = .author
                case .managingEditor, .dcCreator: field = .authorFallback
                case .description, .subtitle: field = .channelSummary
                case .itunesSummary, .itunesSubtitle, .googleplayDescription: field = .channelSummaryFallback
                case .link, .rssLink: field = .channelLink
                case .icon, .logo: field = .icon
                case .itunesNewFeedURL: field = .newFeedURL
                case .podcastGuid: field = .podcastGuid
                case .podcastPerson:
                    field = .person(
                        role: attribute("role"), group: attribute("group"), image: attribute("img"), link: attribute("href"),
                        show: true)
                case .podcastFunding: field = .funding(url: attribute("url"))
                case .podcastTrailer:
                    field = .trailer(
                        url: attribute("url"), published: attribute("pubdate"), type: attribute("type"),
                        length: attribute("length"),
                        season: attribute("season"))
                case .podcastLocked: field = .locked(owner: attribute("owner"))
                case .podcastLicense: field = .license(url: attribute("url"), show: true)
                case .podcastLocation: field = .location(geo: attribute("geo"), osm: attribute("osm"), show: true)
                case .podcastImages:
                    if let images = Self.images(attribute("srcset")) { showNamespace { $0.images = images } }
                    field = nil
                case .podcastImage:
                    if let image = Self.image(attribute) { showNamespace { Self.add(image, to: &$0) } }
                    field = nil
                case .podcastValue:
                    startValue(attribute, show: true)
                    field = nil
                default: field = nil
                }
                if let field { startCapture(field, depth: depth) }
            }
        }

        private mutating func startCapture(_ field: Field, depth: Int) {
            capture = field
            captureDepth = depth
            text.removeAll(keepingCapacity: true)
        }

        private mutating func setEnclosure(_ url: String?, type: String?, length: String?) {
            guard let url, !url.isEmpty, episode?.enclosureURL == nil else { return }
            episode?.enclosureURL = url
            episode?.enclosureType = type
            episode?.enclosureLength = length.flatMap(Self.length)
        }

        private static func length(_ text: String) -> Int64? {
            Int64(trim(text)).flatMap { $0 > 0 ? $0 : nil }
        }

        var wantsText: Bool { capture != nil && text.count < FeedParser.maxFieldBytes }

        mutating func take(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard capture != nil, text.count < FeedParser.maxFieldBytes else { return }
            text.append(contentsOf: bytes.prefix(FeedParser.maxFieldBytes - text.count))
        }

        /// An end tag; true when the stream should stop.
        mutating func end(_ name: XMLName, explicit: Bool) -> Bool {
            endTag(name, explicit: explicit)
            return stopRequested
        }

        private mutating func endTag(_ name: XMLName, explicit: Bool) {
            let depth = names.count
            names.removeLast()
            if let field = capture, depth == captureDepth {
                capture = nil
                // Dates are read from the bytes: no String for them.
                switch field {
                case .date:
                    if let date = text.withUnsafeBufferPointer({ FeedDates.parse($0) }) { episode?.published = date }
                case .updated:
                    if episode?.published == nil, let date = text.withUnsafeBufferPointer({ FeedDates.parse($0) }) {
                        episode?.published = date
                    }
                default: store(field, Self.trimmed(text))
                }
            }
            guard depth == episodeDepth, let current = episode.take() else { return }
            episodeDepth = 0
            // Cut off by the end of the document: it may be missing anything; leave it out.
            if !explicit, finishing { return }
            deliver(current)
        }

        private mutating func store(_ field: Field, _ value: String) {
            switch field {
            case .title: episode?.title = HTMLText.decodeEntities(value)
            case .itunesTitle: if !value.isEmpty { itunesTitle = HTMLText.decodeEntities(value) }
            case .guid: if !value.isEmpty { episode?.guid = value }
            // A bad date costs the date only; an earlier good one stays. (Never `x?.a = f() ?? x?.a`:
            // reading what a statement modifies is a fatal exclusivity violation at run time.)
            case .date, .updated: break  // read from the bytes, in endTag
            case .duration: if let seconds = FeedDates.duration(value) { episode?.duration = seconds }
            case .season: if let number = Int(value), number >= 0 { episode?.season = number }
            case .episodeNumber: if let number = Int(value), number >= 0 { episode?.episode = number }
            case .link: if !value.isEmpty { episode?.link = value }
            case .notes(let rank):
                if rank > notesRank || (rank == notesRank && episode?.notes == nil), !value.isEmpty {
                    episode?.notes = value
                    notesRank = rank
                }
            case .channelTitle: if !value.isEmpty { feed.title = HTMLText.decodeEntities(value) }
            case .channelTitleFallback: if feed.title == nil, !value.isEmpty { feed.title = HTMLText.decodeEntities(value) }
            case .author: if !value.isEmpty { feed.author = HTMLText.decodeEntities(value) }
            case .newFeedURL: if !value.isEmpty, feed.newFeedURL == nil { feed.newFeedURL = value }
            case .authorFallback: if feed.author == nil, !value.isEmpty { feed.author = HTMLText.decodeEntities(value) }
            case .channelSummary:
                if !channelSummaryFromDescription, !value.isEmpty {
                    feed.summary = HTMLText.plain(value)
                    channelSummaryFromDescription = true
                }
            case .channelSummaryFallback: if feed.summary == nil, !value.isEmpty { feed.summary = HTMLText.plain(value) }
            case .channelLink: if feed.link == nil, !value.isEmpty { feed.link = value }
            case .imageURL: if feed.artwork == nil, !value.isEmpty { feed.artwork = value }
            case .icon: if feed.artwork == nil, !value.isEmpty { feed.artwork = value }
            case .person(let role, let group, let image, let link, let show):
                // A person without a name is no one.
                let name = Self.clean(HTMLText.decodeEntities(value))
                guard !name.isEmpty else { break }
                let person = PodcastNamespace.Person(
                    name: String(name.prefix(200)), role: Self.word(role) ?? "host", group: Self.word(group) ?? "cast",
                    image: image.map(Self.clean).flatMap { $0.isEmpty ? nil : $0 },
                    link: link.map(Self.clean).flatMap { $0.isEmpty ? nil : $0 })
                let add: (inout PodcastNamespace) -> Void = { namespace in
                    if (namespace.people?.count ?? 0) < Self.maxPeople { namespace.people = (namespace.people ?? []) + [person] }
                }
                if show { showNamespace(add) } else { episodeNamespace(add) }
            case .funding(let url):
                guard let url = url.map(Self.clean), !url.isEmpty else { break }
                let text = Self.clean(HTMLText.decodeEntities(value))
                showNamespace { namespace in
                    if (namespace.funding?.count ?? 0) < Self.maxListed {
                        namespace.funding =
                            (namespace.funding ?? []) + [.init(text: text.isEmpty ? url : String(text.prefix(200)), url: url)]
                    }
                }
            case .soundbite(let start, let duration):
                guard let start = start.flatMap({ Double(FeedParser.trim($0)) }), start.isFinite, start >= 0,
                    let length = duration.flatMap({ Double(FeedParser.trim($0)) }), length.isFinite, length > 0
                else { break }
                let title = Self.clean(HTMLText.decodeEntities(value))
                episodeNamespace { namespace in
                    if (namespace.soundbites?.count ?? 0) < Self.maxListed {
                        namespace.soundbites =
                            (namespace.soundbites ?? []) + [
                                .init(start: start, duration: length, title: title.isEmpty ? nil : title)
                            ]
                    }
                }
            case .trailer(let url, let published, let type, let length, let season):
                guard let url = url.map(Self.clean), !url.isEmpty else { break }
                let title = Self.clean(HTMLText.decodeEntities(value))
                let date = published.flatMap { FeedDates.parse($0) }.map(ISODate.string(from:))
                let trailer = PodcastNamespace.Trailer(
                    title: title.isEmpty ? "Trailer" : String(title.prefix(200)), url: url, published: date, type: type,
                    length: length.flatMap(Self.length),
                    season: season.flatMap { Int(FeedParser.trim($0)) }.flatMap { $0 >= 0 ? $0 : nil })
                showNamespace { namespace in
                    if (namespace.trailers?.count ?? 0) < Self.maxListed {
                        namespace.trailers = (namespace.trailers ?? []) + [trailer]
                    }
                }
            case .podcastGuid:
                let guid = Self.clean(value)
                if !guid.isEmpty, guid.utf8.count <= 200 { showNamespace { $0.guid = guid } }
            case .locked(let owner):
                let text = value.lowercased()
                guard text == "yes" || text == "no" else { break }
                showNamespace {
                    $0.locked = .init(locked: text == "yes", owner: owner.map(Self.clean).flatMap { $0.isEmpty ? nil : $0 })
                }
            case .license(let url, let show):
                let text = Self.clean(value)
                guard !text.isEmpty else { break }
                let license = PodcastNamespace.Link(
                    text: String(text.prefix(200)), url: url.map(Self.clean).flatMap { $0.isEmpty ? nil : $0 })
                if show { showNamespace { $0.license = license } } else { episodeNamespace { $0.license = license } }
            case .location(let geo, let osm, let show):
                let text = Self.clean(HTMLText.decodeEntities(value))
                guard !text.isEmpty else { break }
                let location = PodcastNamespace.Location(name: String(text.prefix(200)), geo: geo, osm: osm)
                if show { showNamespace { $0.location = location } } else { episodeNamespace { $0.location = location } }
            }
        }

        // MARK: Podcasting 2.0

        /// Elements kept per show or episode: a hostile feed's 10,000 people cost 100.
        static let maxPeople = 100
        static let maxListed = 50
        static let maxPodroll = 200

        private mutating func showNamespace(_ change: (inout PodcastNamespace) -> Void) {
            var namespace = feed.namespace ?? PodcastNamespace()
            change(&namespace)
            feed.namespace = namespace
        }

        private mutating func episodeNamespace(_ change: (inout PodcastNamespace) -> Void) {
            guard episode != nil else { return }
            var namespace = episode?.namespace ?? PodcastNamespace()
            change(&namespace)
            episode?.namespace = namespace
        }

        /// One line of text: white space runs as one space, trimmed.
        static func clean(_ text: String) -> String {
            FeedParser.trim(String(text.map { $0.isNewline || $0 == "\t" ? " " : $0 }))
        }

        /// A taxonomy word (a role, a group): lower case, nil when empty.
        static func word(_ text: String?) -> String? {
            guard let text = text.map({ clean($0).lowercased() }), !text.isEmpty, text.count <= 60 else { return nil }
            return text
        }

        /// `url 1500w, url 600w` (or `url 2x`, or a bare URL).
        static func images(_ srcset: String?) -> [PodcastNamespace.Image]? {
            guard let srcset else { return nil }
            let images = srcset.split(separator: ",").prefix(maxListed).compactMap { entry -> PodcastNamespace.Image? in
                let parts = entry.split(whereSeparator: { $0 == " " || $0.isNewline || $0 == "\t" })
                guard let url = parts.first.map(String.init), url.contains("://") else { return nil }
                let width = parts.dropFirst().first.flatMap { part in part.hasSuffix("w") ? Int(part.dropLast()) : nil }
                return PodcastNamespace.Image(url: url, width: width.flatMap { $0 > 0 ? $0 : nil })
            }
            return images.isEmpty ? nil : images
        }

        /// `<podcast:image href width purpose>`: artwork of one size (the other purposes, a
        /// social card or a banner, are not the show's picture).
        static func image(_ attribute: (StaticString) -> String?) -> PodcastNamespace.Image? {
            guard let href = attribute("href").map(clean), href.contains("://") else { return nil }
            if let purpose = attribute("purpose"), !purpose.split(separator: " ").contains(where: { $0 == "artwork" }) {
                return nil
            }
            return PodcastNamespace.Image(
                url: href, width: attribute("width").flatMap { Int(FeedParser.trim($0)) }.flatMap { $0 > 0 ? $0 : nil })
        }

        static func add(_ image: PodcastNamespace.Image, to namespace: inout PodcastNamespace) {
            guard (namespace.images?.count ?? 0) < maxListed else { return }
            namespace.images = (namespace.images ?? []) + [image]
        }

        /// An ISO 8601 time as live items give them: `2021-09-26T07:30:00.000-0600`, with a space
        /// before the offset or a colon in it.
        static func liveTime(_ text: String?) -> Date? {
            guard var text = text.map(FeedParser.trim), !text.isEmpty else { return nil }
            text = text.replacing(" +", with: "+").replacing(" -", with: "-").replacing(" ", with: "T")
            if let date = ISODate.parse(text) { return date }
            // `-0600`: the colon ISODate wants.
            let bytes = Array(text.utf8)
            if bytes.count > 5, bytes[bytes.count - 5] == UInt8(ascii: "+") || bytes[bytes.count - 5] == UInt8(ascii: "-") {
                let fixed = String(text.dropLast(2)) + ":" + String(text.suffix(2))
                if let date = ISODate.parse(fixed) { return date }
            }
            return ISODate.parse(text + "Z")
        }

        private mutating func startLive(_ attribute: (StaticString) -> String?) {
            guard let status = Self.word(attribute("status")), ["pending", "live", "ended"].contains(status) else { return }
            let start = Self.liveTime(attribute("start"))
            var end = Self.liveTime(attribute("end"))
            // An end before its start is no end.
            if let start, let finish = end, finish < start { end = nil }
            episodeNamespace {
                $0.live = .init(status: status, start: start.map(ISODate.string(from:)), end: end.map(ISODate.string(from:)))
            }
        }

        private mutating func startValue(_ attribute: (StaticString) -> String?, show: Bool) {
            guard let type = Self.word(attribute("type")), let method = Self.word(attribute("method")) else { return }
            let value = PodcastNamespace.Value(type: type, method: method, suggested: attribute("suggested").map(Self.clean))
            if show { showNamespace { $0.value = value } } else { episodeNamespace { $0.value = value } }
        }

        private mutating func addRecipient(_ attribute: (StaticString) -> String?, show: Bool) {
            guard let type = Self.word(attribute("type")), let address = attribute("address").map(Self.clean), !address.isEmpty,
                let split = attribute("split").flatMap({ Int(FeedParser.trim($0)) }), split >= 0
            else { return }
            let recipient = PodcastNamespace.Value.Recipient(
                name: attribute("name").map(Self.clean).flatMap { $0.isEmpty ? nil : String($0.prefix(200)) }, type: type,
                address: String(address.prefix(200)), split: split)
            let add: (inout PodcastNamespace) -> Void = { namespace in
                guard namespace.value != nil, (namespace.value?.recipients.count ?? 0) < Self.maxListed else { return }
                namespace.value?.recipients.append(recipient)
            }
            if show { showNamespace(add) } else { episodeNamespace(add) }
        }

        private mutating func deliver(_ found: ParsedEpisode) {
            guard handlerError == nil else { return }
            var episode = found
            if episode.title == nil || episode.title?.isEmpty == true { episode.title = itunesTitle ?? episode.title }
            if episode.enclosureURL == nil, let media = mediaContent {
                episode.enclosureURL = media.url
                episode.enclosureType = media.type
                episode.enclosureLength = media.length
            }
            if episode.artwork == nil { episode.artwork = mediaThumbnail }
            if var namespace = episode.namespace {
                // A soundbite past the end of the episode is none; one running past it ends there.
                if let length = episode.duration, length > 0 {
                    namespace.soundbites = namespace.soundbites?.compactMap { bite in
                        guard bite.start < length else { return nil }
                        var bite = bite
                        bite.duration = min(bite.duration, length - bite.start)
                        return bite
                    }
                }
                namespace.alternateEnclosures = namespace.alternateEnclosures?.filter { !$0.sources.isEmpty }
                for key in [\PodcastNamespace.soundbites] where namespace[keyPath: key]?.isEmpty == true {
                    namespace[keyPath: key] = nil
                }
                if namespace.alternateEnclosures?.isEmpty == true { namespace.alternateEnclosures = nil }
                episode.namespace = namespace.isEmpty ? nil : namespace
            }
            if channelBase == nil || channelBase?.link != feed.link {
                channelBase = (feed.link, feed.link.flatMap { URL(string: $0, relativeTo: baseURL) } ?? baseURL)
            }
            let channelBase = self.channelBase?.url
            episode.enclosureURL = episode.enclosureURL.flatMap { resolve($0, against: baseURL) }
            episode.link = episode.link.flatMap { resolve($0, against: channelBase) }
            episode.artwork = episode.artwork.flatMap { resolve($0, against: baseURL) }
            episode.transcript = episode.transcript.flatMap { resolve($0, against: baseURL) }
            episode.chapters = episode.chapters.flatMap { resolve($0, against: baseURL) }
            if let listed = episode.transcripts {
                episode.transcripts = listed.split(separator: "\n").map { line -> String in
                    var fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                    if let url = fields.first { fields[0] = resolve(url, against: baseURL) ?? url }
                    return fields.joined(separator: "\t")
                }.joined(separator: "\n")
            }
            do {
                try onEpisode(episode)
                episodeCount += 1
            } catch {
                handlerError = error
                stopRequested = true
            }
        }

        // MARK: Text

        /// ASCII white space trimmed, on bytes.
        private static func trimmed(_ bytes: [UInt8]) -> String {
            var start = 0
            var end = bytes.count
            while start < end, FeedParser.isSpace(bytes[start]) { start += 1 }
            while end > start, FeedParser.isSpace(bytes[end - 1]) { end -= 1 }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }

        func resolve(_ link: String, against base: URL?) -> String? {
            let trimmed = FeedParser.trim(link)
            guard !trimmed.isEmpty else { return nil }
            // Most links are absolute already: no URL parsing for them.
            if trimmed.hasPrefix("https://") || trimmed.hasPrefix("http://") { return trimmed }
            return URL(string: trimmed, relativeTo: base)?.absoluteURL.absoluteString ?? trimmed
        }
    }
}
