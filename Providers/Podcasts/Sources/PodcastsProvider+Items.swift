import Basics
import FoundationEssentials
import Glibc
import MediaKit

extension PodcastsProvider {
    func item(from show: ITunesPodcast, feed: ParsedFeed?, episodes: Int? = nil) -> MediaItem? {
        guard let native = show.nativeID else { return nil }
        var item = MediaItem(
            id: ItemID(provider: "podcasts", kind: .podcast, nativeID: native),
            title: show.collectionName ?? show.trackName ?? feed?.title ?? URL(string: show.feedUrl ?? "")?.host
                ?? "Podcast \(native)",
            subtitle: show.artistName ?? feed?.author, summary: feed?.summary,
            url: feed?.link ?? show.collectionViewUrl ?? show.trackViewUrl,
            artwork: show.artworkUrl600 ?? feed?.artwork ?? show.artworkUrl100,
            published: show.releaseDate, creator: show.artistName ?? feed?.author)
        item.feed = show.feedUrl
        var extra: [String: String] = [:]
        let genres = (show.genres ?? []).filter { $0 != "Podcasts" }
        if !genres.isEmpty {
            extra["genres"] = genres.joined(separator: ", ")
        } else if let feed, !feed.categories.isEmpty {
            extra["genres"] = feed.categories.joined(separator: ", ")
        }
        if let directory = show.collectionViewUrl ?? show.trackViewUrl { extra["directory"] = directory }
        // The address the feed gives as its own, when it is not the one read: the show moved
        // (`itunes:new-feed-url`), or the one read redirects to it (its Atom self link).
        if let read = show.feedUrl, let own = feed?.newFeedURL ?? feed?.selfURL, own.hasPrefix("http"),
            !SyncKeys.sameFeed(read, own)
        {
            extra["movedTo"] = own
        }
        item.extra = extra
        if let count = episodes ?? show.trackCount { item.stats = ["episodes": count] }
        item.namespace = feed?.namespace.flatMap { $0.isEmpty ? nil : $0 }
        return item
    }

    func item(fromChart entry: ITunesChart.Entry) -> MediaItem? {
        guard let id = entry.id?.attributes?["im:id"], Int(id) != nil else { return nil }
        let artwork = entry.images?.max { Int($0.attributes?["height"] ?? "0") ?? 0 < Int($1.attributes?["height"] ?? "0") ?? 0 }?
            .label
        var item = MediaItem(
            id: ItemID(provider: "podcasts", kind: .podcast, nativeID: id), title: entry.name?.label ?? "Podcast \(id)",
            subtitle: entry.artist?.label, summary: entry.summary?.label.map(HTMLText.plain), url: entry.id?.label,
            artwork: artwork, published: entry.releaseDate?.label, creator: entry.artist?.label)
        if let genre = entry.category?.attributes?["label"] { item.extra = ["genres": genre] }
        return item
    }

    func item(from episode: ParsedEpisode, show: ITunesPodcast, feed: ParsedFeed) -> MediaItem {
        let collection = show.nativeID ?? "0"
        var item = MediaItem(
            id: ItemID(provider: "podcasts", kind: .episode, nativeID: "\(collection):\(Self.episodeKey(episode))"),
            title: episode.title ?? "Untitled episode", subtitle: feed.title ?? show.collectionName, summary: episode.summary,
            url: episode.link, artwork: episode.artwork ?? show.artworkUrl600 ?? feed.artwork ?? show.artworkUrl100,
            published: episode.published.map(FeedDates.isoString), duration: episode.duration,
            creator: feed.author ?? show.artistName,
            enclosure: episode.enclosureURL.map {
                Enclosure(url: $0, type: episode.enclosureType, length: episode.enclosureLength)
            })
        // The show's feed: a sync server names an episode's show by it.
        item.feed = show.feedUrl
        var extra: [String: String] = [:]
        if let season = episode.season { extra["season"] = String(season) }
        if let number = episode.episode { extra["episode"] = String(number) }
        if let transcript = episode.transcript { extra["transcript"] = transcript }
        if let chapters = episode.chapters {
            extra["chapters"] = chapters
        } else if let simple = episode.simpleChapters {
            extra["chapters"] = String(simple.split(separator: "\n").count)
        }
        if let guid = episode.guid { extra["guid"] = guid }
        if let live = episode.namespace?.live { extra["live"] = live.status }
        item.extra = extra.isEmpty ? nil : extra
        item.namespace = episode.namespace
        return item
    }

    /// A stable key for an episode: its guid when it is a sensible id, else a hash of what
    /// identifies it (feeds without guids exist).
    static func episodeKey(_ episode: ParsedEpisode) -> String {
        if let guid = episode.guid, guid.utf8.count <= 200, !hasControlCharacter(guid) {
            return guid
        }
        // Without a guid: title and date, which survive a host moving its media (URLs do not);
        // the media path only when there is no title.
        let basis: String
        if let guid = episode.guid {
            basis = guid
        } else if let title = episode.title {
            basis = "\(title)|\(episode.published?.timeIntervalSince1970 ?? 0)"
        } else {
            basis = episode.enclosureURL.flatMap { URL(string: $0)?.path } ?? ""
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in basis.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return "h" + String(hash, radix: 16)
    }

    /// Whether the text holds a control character (Unicode's Cc: U+0000-U+001F, U+007F-U+009F),
    /// read from its UTF-8: the last 32 are C2 80 to C2 9F there.
    static func hasControlCharacter(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte <= 0x9F && byte >= 0x80) { return true }
            previous = byte
        }
        return false
    }

    static func offset(_ cursor: Cursor?) throws -> Int {
        guard let cursor else { return 0 }
        // Bounded so that no arithmetic on a client's cursor can overflow.
        guard let offset = Int(cursor.rawValue), (0...10_000_000).contains(offset) else {
            throw ProviderError.invalidArgument("cursor '\(cursor.rawValue.prefix(40))' is not from podcasts")
        }
        return offset
    }

    /// One page of `all`, made into items by `makeItem` (only the page's elements are).
    static func page<Element>(_ all: [Element], cursor: Cursor?, size: Int, makeItem: (Element) -> MediaItem) throws -> Page {
        let offset = try offset(cursor)
        let end = min(offset + size, all.count)
        return Page(
            items: offset < end ? all[offset..<end].map(makeItem) : [], next: end < all.count ? Cursor(String(end)) : nil,
            prev: offset > 0 ? Cursor(String(max(0, offset - size))) : nil, total: all.count)
    }
}

/// Episodes parsed since the last batch went to the cache (one writer: the feed being read).
/// A batch goes once it holds 256 rows or 1 MB (episodes with long notes must not pile up in
/// memory); the cache gathers batches into larger writes while one is in flight.
final class EpisodeBatch: @unchecked Sendable {
    private(set) var rows: [CachedRow] = []
    private var bytes = 0

    func append(_ row: CachedRow) {
        rows.append(row)
        bytes += row.data.count + row.id.utf8.count
    }

    var isFull: Bool { rows.count >= 256 || bytes >= 1 << 20 }

    func take() -> [CachedRow] {
        defer {
            rows.removeAll(keepingCapacity: true)
            bytes = 0
        }
        return rows
    }
}

/// A response's headers, kept on the transfer's thread for the reader of its body; only a 200's
/// body is read.
final class ResponseHead: @unchecked Sendable {
    private let lock = Lock()
    private var kept: [String: String] = [:]
    private var status = 0
    private var errorText = Data()
    /// Enough of an error's body to say why.
    static let errorBodyLimit = 4096

    func keep(_ headers: [String: String], status: Int) -> Bool {
        lock.withLock {
            kept = headers
            self.status = status
        }
        return true
    }

    var headers: [String: String] { lock.withLock { kept } }

    /// Keeps the start of an error's body (for its reason).
    /// - Returns: nil for a 200 (the chunk is the feed's), else whether to read on.
    func errorChunk(_ chunk: UnsafeRawBufferPointer) -> Bool? {
        lock.withLock {
            guard status != 200 else { return nil }
            errorText.append(contentsOf: chunk.prefix(Self.errorBodyLimit - errorText.count))
            return errorText.count < Self.errorBodyLimit
        }
    }

    var errorBody: Data { lock.withLock { errorText } }
}
