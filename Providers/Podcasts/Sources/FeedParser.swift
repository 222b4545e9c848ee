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
                itunesCategory, itunesAuthor
            case podcastSeason, podcastEpisode, podcastTranscript, podcastChapters, pscChapter
            case contentEncoded, dcDate, dcCreator, mediaContent, mediaThumbnail
            case googleplayDescription, googleplayImage, googleplayAuthor

            static let core: [String: Tag] = [
                "rss": .rss, "feed": .feed, "channel": .channel, "item": .item, "entry": .entry, "image": .image, "url": .url,
                "name": .name, "author": .author, "title": .title, "guid": .guid, "id": .id, "pubDate": .pubDate,
                "published": .published, "updated": .updated, "modified": .modified, "content": .content,
                "description": .description, "summary": .summary, "subtitle": .subtitle, "managingEditor": .managingEditor,
                "enclosure": .enclosure, "icon": .icon, "logo": .logo,
            ]
            static let itunes: [String: Tag] = [
                "title": .itunesTitle, "duration": .itunesDuration, "season": .itunesSeason, "episode": .itunesEpisode,
                "summary": .itunesSummary, "subtitle": .itunesSubtitle, "image": .itunesImage, "category": .itunesCategory,
                "author": .itunesAuthor,
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
                    default: self = .other
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
            case notes(rank: Int)
            case channelTitle, channelTitleFallback, author, authorFallback, channelSummary, channelSummaryFallback, channelLink,
                imageURL, icon
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
                if tag == .item || tag == .entry {
                    episode = ParsedEpisode()
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
            case .itunesSeason, .podcastSeason: field = .season
            case .itunesEpisode, .podcastEpisode: field = .episodeNumber
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
                if (attribute("rel") ?? "alternate") == "alternate", feed.link == nil { feed.link = attribute("href") }
            case .url where parent == .image && names.count >= 2 && names[names.count - 2] == .channel:
                startCapture(.imageURL, depth: depth)
            case .name
            where root == .atom && names.count == 2
                && (parent == .author || parent == .itunesAuthor || parent == .googleplayAuthor):
                startCapture(.authorFallback, depth: depth)
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
            }
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
