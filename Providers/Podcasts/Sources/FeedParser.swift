import Foundation
import MediaKit

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// A podcast feed, parsed: the show and its episodes in feed order.
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

    /// The notes as plain text.
    public var summary: String? { notes.map(HTMLText.plain) }
}

/// Why a feed could not be read.
public struct FeedError: Error, CustomStringConvertible {
    var feed: String
    var reason: String
    public var description: String { "the feed \(feed) cannot be read: \(reason)" }
}

/// Streams RSS 2.0 and Atom (with the itunes and podcast namespaces) through XMLParser, the
/// libxml2 SAX parser: memory stays proportional to what is kept, not to the document. It
/// honours the declared encoding (ISO-8859-1, Windows-1252), rejects entity-expansion bombs and
/// never resolves external entities.
public final class FeedParser: NSObject, XMLParserDelegate {
    private var feed = ParsedFeed()
    private var episode: ParsedEpisode?
    private var text = ""
    private var path: [String] = []
    private var isAtom = false
    /// How good the episode's summary is so far (see didEndElement).
    private var summaryRank = 0
    private var channelSummaryFromDescription = false
    private var sawRoot = false
    private var closedRoot = false
    private let baseURL: URL?

    private init(baseURL: URL?) { self.baseURL = baseURL }

    /// - Parameter url: where the feed came from, for resolving relative links and naming it in errors.
    public static func parse(_ data: Data, url: URL?) throws -> ParsedFeed {
        let delegate = FeedParser(baseURL: url)
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = false
        parser.shouldResolveExternalEntities = false
        parser.delegate = delegate
        let ok = parser.parse()
        let name = url.map { URLRedaction.redact($0.absoluteString) } ?? "(data)"
        guard delegate.sawRoot else {
            throw FeedError(feed: name, reason: parser.parserError.map { "not XML (\(Self.describe($0)))" } ?? "neither RSS nor Atom")
        }
        guard ok, delegate.closedRoot else {
            throw FeedError(
                feed: name,
                reason: "malformed XML at line \(parser.lineNumber)" + (parser.parserError.map { ": \(Self.describe($0))" } ?? ""))
        }
        return delegate.resolved()
    }

    private static func describe(_ error: any Error) -> String {
        let ns = error as NSError
        return ns.localizedDescription.isEmpty ? "error \(ns.code)" : ns.localizedDescription
    }

    private func resolved() -> ParsedFeed {
        var feed = feed
        let channelBase = feed.link.flatMap { URL(string: $0, relativeTo: baseURL) } ?? baseURL
        feed.link = feed.link.flatMap { resolve($0, against: baseURL) }
        feed.artwork = feed.artwork.flatMap { resolve($0, against: baseURL) }
        feed.episodes = feed.episodes.map { episode in
            var episode = episode
            episode.enclosureURL = episode.enclosureURL.flatMap { resolve($0, against: baseURL) }
            episode.link = episode.link.flatMap { resolve($0, against: channelBase) }
            episode.artwork = episode.artwork.flatMap { resolve($0, against: baseURL) }
            episode.transcript = episode.transcript.flatMap { resolve($0, against: baseURL) }
            return episode
        }
        return feed
    }

    /// Trims ASCII white space on UTF-8 (Foundation's trimming bridges through UTF-16 and was
    /// most of the parse time).
    static func trim(_ text: String) -> String {
        let utf8 = text.utf8
        guard let first = utf8.firstIndex(where: { !Self.isSpace($0) }) else { return "" }
        let last = utf8.lastIndex(where: { !Self.isSpace($0) })!
        if first == utf8.startIndex, last == utf8.index(before: utf8.endIndex) { return text }
        return String(text[first...last])
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    private func resolve(_ link: String, against base: URL?) -> String? {
        let trimmed = Self.trim(link)
        guard !trimmed.isEmpty else { return nil }
        // Most links are absolute already: no URL parsing for them.
        if trimmed.hasPrefix("https://") || trimmed.hasPrefix("http://") { return trimmed }
        return URL(string: trimmed, relativeTo: base)?.absoluteURL.absoluteString ?? trimmed
    }

    // MARK: XMLParserDelegate

    public func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if path.isEmpty {
            sawRoot = name == "rss" || name == "feed" || name == "rdf:RDF"
            isAtom = name == "feed"
            if !sawRoot { parser.abortParsing() }
        }
        path.append(name)
        text = ""
        switch name {
        case "item", "entry":
            episode = ParsedEpisode()
            summaryRank = 0
        case "enclosure":
            episode?.enclosureURL = attributes["url"]
            episode?.enclosureType = attributes["type"]
            episode?.enclosureLength = attributes["length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 > 0 ? $0 : nil }
        case "link" where isAtom:
            let rel = attributes["rel"] ?? "alternate"
            if rel == "enclosure", episode != nil {
                episode?.enclosureURL = attributes["href"]
                episode?.enclosureType = attributes["type"]
                episode?.enclosureLength = attributes["length"].flatMap { Int64($0) }
            } else if rel == "alternate" {
                if episode != nil { episode?.link = attributes["href"] } else { feed.link = attributes["href"] }
            }
        case "itunes:image":
            if let href = attributes["href"] {
                if episode != nil { episode?.artwork = href } else { feed.artwork = href }
            }
        case "itunes:category":
            if episode == nil, let category = attributes["text"] { feed.categories.append(HTMLText.decodeEntities(category)) }
        case "podcast:transcript":
            if episode?.transcript == nil { episode?.transcript = attributes["url"] }
        default:
            break
        }
    }

    public func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    public func parser(_ parser: XMLParser, foundCDATA block: Data) {
        text += String(decoding: block, as: UTF8.self)
    }

    public func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        defer {
            path.removeLast()
            text = ""
            if path.isEmpty { closedRoot = true }
        }
        let value = Self.trim(text)
        if episode != nil {
            switch name {
            case "item", "entry":
                if let episode { feed.episodes.append(episode) }
                episode = nil
            case "title": episode?.title = HTMLText.decodeEntities(value)
            case "guid", "id": if !value.isEmpty { episode?.guid = value }
            // A bad date costs the date only; an earlier good one stays. (Not `x?.a = f() ?? x?.a`:
            // reading what the statement modifies is a fatal exclusivity violation at run time.)
            case "pubDate", "published", "dc:date": if let date = FeedDates.parse(value) { episode?.published = date }
            case "updated": if episode?.published == nil { episode?.published = FeedDates.parse(value) }
            case "itunes:duration": episode?.duration = FeedDates.duration(value)
            case "itunes:season": episode?.season = Int(value)
            case "itunes:episode": episode?.episode = Int(value)
            case "link" where !isAtom: if !value.isEmpty { episode?.link = value }
            // The fullest notes win: content:encoded, then description (Atom: content, summary), then itunes:summary.
            case "content:encoded", "content":
                if !value.isEmpty { episode?.notes = value; summaryRank = 3 }
            case "description", "summary":
                if summaryRank < 2, !value.isEmpty { episode?.notes = value; summaryRank = 2 }
            case "itunes:summary":
                if summaryRank < 1, !value.isEmpty { episode?.notes = value; summaryRank = 1 }
            default: break
            }
            return
        }
        // Channel-level elements only (and the channel image's url).
        guard path.count <= 3 || (name == "url" && path.dropLast().last == "image" && path.count == 4) else { return }
        switch name {
        case "title": if feed.title == nil { feed.title = HTMLText.decodeEntities(value) }
        case "itunes:author": feed.author = HTMLText.decodeEntities(value)
        case "name" where isAtom && path.dropLast().last == "author": feed.author = feed.author ?? value
        case "managingEditor": feed.author = feed.author ?? value
        case "description", "subtitle":
            if !channelSummaryFromDescription, !value.isEmpty {
                feed.summary = HTMLText.plain(value)
                channelSummaryFromDescription = true
            }
        case "itunes:summary":
            if feed.summary == nil, !value.isEmpty { feed.summary = HTMLText.plain(value) }
        case "link" where !isAtom: if feed.link == nil, !value.isEmpty { feed.link = value }
        case "url" where path.dropLast().last == "image": if feed.artwork == nil { feed.artwork = value }
        case "icon", "logo": if feed.artwork == nil, !value.isEmpty { feed.artwork = value }
        default: break
        }
    }
}
