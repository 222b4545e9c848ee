import Basics
import FoundationEssentials
import Glibc
import JSONRPC
import MediaKit
import MediaStore

extension ListImportFormat {
    /// The formats a file can be imported from, in words for a message ("opml, json, ... or freetube").
    static var importable: String {
        let names = allCases.filter { $0 != .m3u }.map(\.rawValue)
        return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
    }

    /// The format of a file by its name, or of a text by its first characters. A `.json` file is
    /// told by what it holds (a mediahost list, NewPipe's or FreeTube's export, Takeout's list).
    static func guess(name: String?, text: [UInt8]) -> ListImportFormat? {
        switch name.map({ Path.extension(of: $0).lowercased() }) {
        case "opml", "xml": return .opml
        case "m3u": return .m3u
        case "csv": return .takeout
        case "db": return .freetube
        default: break
        }
        let content = SubscriptionExport.content(Array(text.prefix(4096)))
        switch content.first {
        case UInt8(ascii: "{"): return guessJSON(text)
        case UInt8(ascii: "["): return .takeout
        default: break
        }
        let head = String(decoding: content.prefix(512), as: UTF8.self)
        if head.hasPrefix("#EXTM3U") { return .m3u }
        if head.lowercased().contains("<opml") || head.hasPrefix("<") { return .opml }
        // A table whose first rows name channels: Takeout's (its header in any language) or FreeTube's.
        if CSVReader.rows(Array(content)).prefix(3).contains(where: { SubscriptionExport.channel(in: $0) != nil }) {
            return .takeout
        }
        return nil
    }

    /// A JSON object's format: mediahost's list (whose writer puts its "format" first, so a large
    /// list is told without reading it), NewPipe's export (a `subscriptions` list) or FreeTube's
    /// (a line per profile or channel, each with an `_id`).
    static func guessJSON(_ text: [UInt8]) -> ListImportFormat {
        if String(decoding: text.prefix(512), as: UTF8.self).contains("\"mediahost-list\"") { return .json }
        let whole = try? JSONParser.parse(text)
        let line = text.split(separator: UInt8(ascii: "\n"), maxSplits: 1).first.flatMap { try? JSONParser.parse(Array($0)) }
        if let first = whole ?? line, first["_id"] != nil || first["channelId"] != nil { return .freetube }
        if whole?["subscriptions"] != nil { return .newpipe }
        return .json
    }
}

/// One subscription in an OPML file.
struct OPMLOutline: Equatable {
    var title: String?
    var feedURL: String
    var htmlURL: String?
}

/// Reads the feed outlines of an OPML file, as podcast apps write them: nested folders
/// (flattened), `type` "rss" or "link" or none, `xmlUrl` or else `url`, a missing or empty
/// title, any encoding (declared or detected), and what is not well-formed XML but common (a raw
/// `&` in a URL). Titles are taken from `title`, else `text` (gPodder puts a show's description
/// in `text`). A URL that is not http(s) is skipped and reported.
final class OPMLReader: XMLStreamDelegate {
    private(set) var outlines: [OPMLOutline] = []
    private(set) var skipped: [String] = []
    private(set) var title: String?
    private var inHeadTitle = false
    private var headTitle: [UInt8] = []
    private var seen = Set<String>()
    /// The stream reading the file, stopped at the first feed past `maxOutlines`.
    private weak var stream: XMLStream?
    private(set) var tooMany = false

    /// The largest OPML file read (a subscription list is kilobytes).
    static let maxSize = 16 << 20
    /// The most feeds read: what a list holds. The file is refused at the next one, while it is
    /// read, not after every entry was made into an item.
    static let maxOutlines = MediaStore.listLimit

    static func read(_ bytes: [UInt8]) throws -> OPMLReader {
        guard bytes.count <= maxSize else { throw HostError.invalidArgument("the OPML file is larger than 16 MB") }
        let reader = OPMLReader()
        var decoder = XMLTextDecoder()
        var text: [UInt8] = []
        bytes.withUnsafeBytes { decoder.decode($0, into: &text) }
        decoder.finish(into: &text)
        let stream = XMLStream(delegate: reader)
        reader.stream = stream
        do {
            try stream.feed(text)
            if !reader.tooMany { try stream.finish() }
        } catch {
            throw HostError.invalidArgument("this is not an OPML file mediahost can read: \(error)")
        }
        guard !reader.tooMany else {
            throw HostError.invalidArgument(
                "the OPML file has more than \(maxOutlines) feeds; a list holds \(maxOutlines) at most")
        }
        return reader
    }

    /// What each element name is, by its number in the stream (names are compared once, not
    /// lowercased at every one of thousands of outlines).
    private enum Element: UInt8 { case unknown, title, outline, other }
    private var elements: [Element] = []

    private func element(_ name: XMLName) -> Element {
        if name.symbol >= 0, name.symbol < elements.count, elements[name.symbol] != .unknown { return elements[name.symbol] }
        let element: Element =
            switch name.local.lowercased() {
            case "title": .title
            case "outline": .outline
            default: .other
            }
        if name.symbol >= 0 {
            while elements.count <= name.symbol { elements.append(.unknown) }
            elements[name.symbol] = element
        }
        return element
    }

    var wantsText: Bool { inHeadTitle }

    func xmlStart(_ name: XMLName, attributes: XMLAttributes) {
        switch element(name) {
        case .title: inHeadTitle = outlines.isEmpty && title == nil
        case .outline:
            let type = attributes.value("type")?.lowercased()
            let url = (attributes.value("xmlUrl") ?? attributes.value("xmlurl") ?? attributes.value("url"))
                .map(DisplayText.trimmed)
            guard let url, !url.isEmpty, type == nil || type == "rss" || type == "link" || type == "atom" else { return }
            guard ItemID.isFeedURL(url) else {
                skipped.append(url)
                return
            }
            guard seen.insert(url).inserted else { return }
            guard outlines.count < Self.maxOutlines else {
                tooMany = true
                stream?.stop()
                return
            }
            func named(_ text: String?) -> String? {
                text.map { DisplayText.trimmed(DisplayText.clean($0)) }.flatMap { $0.isEmpty ? nil : $0 }
            }
            let title = named(attributes.value("title")) ?? named(attributes.value("text"))
            outlines.append(OPMLOutline(title: title, feedURL: url, htmlURL: attributes.value("htmlUrl")))
        default: break
        }
    }

    func xmlEnd(_ name: XMLName, explicit: Bool) {
        if inHeadTitle, element(name) == .title {
            inHeadTitle = false
            let text = String(decoding: headTitle, as: UTF8.self).trimming(.whitespacesAndNewlines)
            if !text.isEmpty { title = text }
        }
    }

    func xmlText(_ text: UnsafeBufferPointer<UInt8>) {
        if inHeadTitle, headTitle.count < 1000 { headTitle += text }
    }
}

/// Writes lists out.
public enum ListWriter {
    /// OPML 2.0 of what among `items` has a feed to subscribe to: podcasts, and whatever else a
    /// provider gave a feed (YouTube channels).
    static func opml(title: String, items: [MediaItem], date: Date = Date()) -> (text: String, count: Int) {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <opml version="2.0">
              <head>
                <title>\(escape(title))</title>
                <dateCreated>\(rfc822(date))</dateCreated>
              </head>
              <body>

            """
        var count = 0
        for item in items {
            // An episode names its show's feed (for sync); the show is what an OPML lists.
            guard item.kind != .episode,
                let feed = item.feed ?? (item.kind == .podcast ? ItemID.feedURL(nativeID: item.id.nativeID) : nil)
            else { continue }
            out +=
                "    <outline type=\"rss\" text=\"\(escape(item.title))\" title=\"\(escape(item.title))\" xmlUrl=\"\(escape(feed))\""
            if let url = item.url { out += " htmlUrl=\"\(escape(url))\"" }
            out += "/>\n"
            count += 1
        }
        out += "  </body>\n</opml>\n"
        return (out, count)
    }

    /// mediahost's own format: ids and snapshots, any provider, read back exactly.
    struct Document: Codable {
        var format = "mediahost-list"
        var version = 1
        var name: String
        var items: [MediaItem]
    }

    /// The list as `JSONEncoder` writes `Document` (pretty-printed, keys sorted, slashes as
    /// they are) and a line break, each item written by `MediaItemJSON` (an export of 10,000 spent
    /// a third of its time in the encoder); the encoder itself for items that one leaves to it.
    public static func json(name: String, items: [MediaItem]) throws -> String {
        let clean = items.map(\.snapshot)
        var out = Array("{\n  \"format\" : \"mediahost-list\",\n  \"items\" : [\n".utf8)
        out.reserveCapacity(items.count * 500)
        for (index, item) in clean.enumerated() {
            guard let compact = MediaItemJSON.encode(item, escapingSlashes: false) else { return try encoded(name, clean) }
            if index > 0 { out += ",\n".utf8 }
            out += "    ".utf8
            MediaItemJSON.pretty(compact, depth: 2, into: &out)
        }
        // After the last item, or after none: JSONEncoder's empty array is "[", an empty line, "]".
        out += "\n  ],\n  \"name\" : ".utf8
        MediaItemJSON.string(name, escapingSlashes: false, into: &out)
        out += ",\n  \"version\" : 1\n}\n".utf8
        return String(decoding: out, as: UTF8.self)
    }

    /// `json` through `JSONEncoder`.
    static func encoded(_ name: String, _ items: [MediaItem]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(Document(name: name, items: items)), as: UTF8.self) + "\n"
    }

    /// An extended M3U of what can be played: the item's own completed download, else its media
    /// URL when that is http(s). Each entry is two lines whatever the item holds: a title or URL
    /// with a line break in it cannot add an entry.
    static func m3u(items: [MediaItem], paths: [ItemID: String]) -> (text: String, count: Int) {
        var out = "#EXTM3U\n"
        var count = 0
        for item in items {
            let local = paths[item.id].flatMap { path in
                path.hasPrefix("/") && !path.unicodeScalars.contains { $0.properties.generalCategory == .control } ? path : nil
            }
            let stream = (item.enclosure?.url ?? (item.kind == .video ? item.url : nil)).flatMap(webLink)
            guard let target = local ?? stream else { continue }
            let seconds = item.duration.flatMap { Int(finite: $0.rounded()) }.map { max(0, $0) } ?? -1
            out += "#EXTINF:\(seconds),\(DisplayText.clean(item.title))\n\(target)\n"
            count += 1
        }
        return (out, count)
    }

    /// `link` when it is an http(s) URL with no space or control character in it.
    static func webLink(_ link: String) -> String? {
        guard let checked = MediaItem.checkedLink(link), let scheme = URL(string: checked)?.scheme?.lowercased(),
            scheme == "http" || scheme == "https"
        else { return nil }
        return checked
    }

    static func escape(_ text: String) -> String {
        let text = DisplayText.clean(text)
        // Most titles and URLs have nothing to escape.
        if !text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 < 0x20 }) { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n", "\r", "\t": out += " "
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func rfc822(_ date: Date) -> String { HTTPDate.string(from: date) }
}
