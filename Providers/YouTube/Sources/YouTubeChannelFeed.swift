import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// A channel's public Atom feed (`/feeds/videos.xml?channel_id=…`): its 15 newest videos with
/// title, date, description, thumbnail, views and likes, without a key or yt-dlp, in one small
/// request, which is how feed readers (newsboat, FreeTube's subscriptions) follow channels.
final class YouTubeChannelFeed: XMLStreamDelegate {
    /// A byte of a channel or playlist id: an ASCII letter or digit, "_" or "-".
    static func isIDByte(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || byte == 95 || byte == 45
    }

    static let youtubeNamespace = "http://www.youtube.com/xml/schemas/2015"
    static let mediaNamespace = "http://search.yahoo.com/mrss/"
    static let atomNamespace = "http://www.w3.org/2005/Atom"

    private(set) var title: String?
    private(set) var items: [MediaItem] = []
    /// Whether entries past `maxEntries` were left unread.
    private(set) var capped = false
    private weak var stream: XMLStream?

    /// Entries read at most: YouTube's feeds hold 15; a feed of a quarter of a million (a
    /// hostile or broken server) must not cost `new` seconds and gigabytes.
    static let maxEntries = 100
    /// The largest feed body taken (a real one is 30-80 KB).
    static let maxBodySize = 4 << 20
    private var entry: Entry?
    private var text: [UInt8] = []
    private var capturing = false
    private var depth = 0

    private struct Entry {
        var videoID: String?
        var channelID: String?
        var title: String?
        var published: String?
        var author: String?
        var description: String?
        var thumbnail: String?
        var views: Int?
        var likes: Int?
        /// The entry's page (`/watch?v=` or, since 2025, `/shorts/<id>` for a Short).
        var link: String?
    }

    /// The feed URL of a channel, or of a playlist (YouTube serves both as Atom).
    static func url(site: String, for id: ItemID) -> String {
        let parameter = id.kind == .playlist ? "playlist_id" : "channel_id"
        return "\(site)/feeds/videos.xml?\(parameter)=\(YTDLP.escaped(id.nativeID))"
    }

    /// The channel or playlist a feed URL of YouTube's is (`channel_id=`, `playlist_id=`), as
    /// feed readers' OPML files list them.
    static func itemID(feed: String) -> ItemID? {
        // Most feeds are not YouTube's (an OPML of thousands of podcasts asks for each): those
        // are told from their bytes, without parsing a URL.
        guard mentionsYouTube(feed), let components = URLComponents(string: feed),
            ["http", "https"].contains(components.scheme ?? ""),
            let host = components.host?.lowercased(), host == "youtube.com" || host.hasSuffix(".youtube.com"),
            components.path == "/feeds/videos.xml"
        else { return nil }
        func value(_ name: String) -> String? {
            components.queryItems?.first { $0.name == name }?.value.flatMap {
                (2...64).contains($0.utf8.count) && $0.utf8.allSatisfy(Self.isIDByte) ? $0 : nil
            }
        }
        if let channel = value("channel_id") { return ItemID(provider: "youtube", kind: .channel, nativeID: channel) }
        if let playlist = value("playlist_id") { return ItemID(provider: "youtube", kind: .playlist, nativeID: playlist) }
        return nil
    }

    /// Whether "youtube.com" is in `text`, in any case.
    static func mentionsYouTube(_ text: String) -> Bool {
        let word: StaticString = "youtube.com"
        let needle = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        var matched = 0
        for byte in text.utf8 {
            let lower = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if lower == needle[matched] {
                matched += 1
                if matched == needle.count { return true }
            } else {
                matched = lower == needle[0] ? 1 : 0
            }
        }
        return false
    }

    /// Reads a feed; entries without a video id are skipped, a broken document keeps what was
    /// read before the break.
    static func read(_ bytes: [UInt8]) throws -> YouTubeChannelFeed {
        let reader = YouTubeChannelFeed()
        let stream = XMLStream(delegate: reader)
        reader.stream = stream
        do {
            try stream.feed(bytes)
            try stream.finish()
        } catch  where !reader.items.isEmpty {
            // What was read before a break stands.
        }
        return reader
    }

    var wantsText: Bool { capturing }

    func xmlStart(_ name: XMLName, attributes: XMLAttributes) {
        depth += 1
        guard depth < 64 else { return }
        switch (name.namespace, name.local) {
        case (Self.atomNamespace, "entry"): entry = Entry()
        case (Self.atomNamespace, "link"):
            if entry != nil, entry?.link == nil, attributes.value("rel") ?? "alternate" == "alternate" {
                entry?.link = attributes.value("href")
            }
        case (Self.mediaNamespace, "thumbnail"):
            if entry?.thumbnail == nil { entry?.thumbnail = attributes.value("url") }
        case (Self.mediaNamespace, "statistics"): entry?.views = attributes.value("views").flatMap { Int($0) }
        case (Self.mediaNamespace, "starRating"): entry?.likes = attributes.value("count").flatMap { Int($0) }
        case (Self.youtubeNamespace, "videoId"), (Self.youtubeNamespace, "channelId"), (Self.atomNamespace, "title"),
            (Self.atomNamespace, "published"), (Self.atomNamespace, "name"), (Self.mediaNamespace, "description"):
            capturing = true
            text.removeAll(keepingCapacity: true)
        default: break
        }
    }

    func xmlText(_ chunk: UnsafeBufferPointer<UInt8>) {
        if text.count < 20_000 { text += chunk.prefix(20_000 - text.count) }
    }

    func xmlEnd(_ name: XMLName, explicit: Bool) {
        defer { depth -= 1 }
        let value = capturing ? String(decoding: text, as: UTF8.self).trimming(.whitespacesAndNewlines) : ""
        capturing = false
        switch (name.namespace, name.local) {
        case (Self.youtubeNamespace, "videoId"): entry?.videoID = value
        case (Self.youtubeNamespace, "channelId"): entry?.channelID = value
        case (Self.atomNamespace, "title"):
            if entry != nil { entry?.title = value } else if title == nil { title = value }
        case (Self.atomNamespace, "published"): entry?.published = value
        case (Self.atomNamespace, "name"):
            if entry?.author == nil { entry?.author = value }
        case (Self.mediaNamespace, "description"): entry?.description = value
        case (Self.atomNamespace, "entry"):
            // Only an entry closed by its end tag: a cut document's last one may be half there.
            if explicit, let entry, let item = Self.item(entry) { items.append(item) }
            entry = nil
            if items.count >= Self.maxEntries {
                capped = true
                stream?.stop()
            }
        default: break
        }
    }

    private static func item(_ entry: Entry) -> MediaItem? {
        guard let id = entry.videoID, !id.isEmpty, id.count <= 64 else { return nil }
        var stats: [String: Int] = [:]
        if let views = entry.views { stats["views"] = views }
        if let likes = entry.likes { stats["likes"] = likes }
        let published = entry.published.flatMap(ISODate.parse).map(ISODate.string(from:))
        var extra: [String: String] = [:]
        if let channel = entry.channelID { extra["channel"] = "youtube:channel:\(channel)" }
        // Since 2025 channel feeds mix Shorts in: kept, and marked so they can be told apart.
        let short = entry.link.map { $0.contains("/shorts/") } ?? false
        if short { extra[MediaItem.shortKey] = "true" }
        return MediaItem(
            id: ItemID(provider: "youtube", kind: .video, nativeID: id), title: entry.title ?? id, subtitle: entry.author,
            summary: entry.description, url: short ? "https://www.youtube.com/shorts/\(id)" : YTDLP.videoURL(id),
            artwork: entry.thumbnail, published: published, creator: entry.author, stats: stats.isEmpty ? nil : stats,
            extra: extra.isEmpty ? nil : extra)
    }
}
