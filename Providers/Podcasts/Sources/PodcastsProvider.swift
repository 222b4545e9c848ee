import Basics
import FoundationEssentials
import Glibc
import MediaKit
import Synchronization

/// Podcasts from Apple's directory (the iTunes Search API, its genres and top charts) and each
/// show's own RSS or Atom feed.
public struct PodcastsProvider: CompiledProvider {
    public static let descriptor = ProviderDescriptor(
        id: "podcasts", name: "Podcasts (Apple directory + RSS feeds)", kinds: [.podcast, .episode],
        capabilities: [.categories, .browse, .search, .item, .children, .download, .feeds],
        configKeys: [
            .init(
                name: "base_url", summary: "The iTunes Search API base URL (search, lookup, genres, charts)",
                defaultValue: "https://itunes.apple.com"),
            .init(name: "country", summary: "Two-letter store country for search and charts", defaultValue: "US"),
        ],
        auth: .none)

    static let searchPageSize = 20
    static let chartPageSize = 20
    static let chartLength = 200
    static let episodePageSize = 20

    let base: URL
    let country: String
    let http: any HTTPClient
    let cache: any ProviderCache
    let logger: Logger
    /// Genres and charts change slowly: kept for ten minutes.
    let genreMemo = Memo<[MediaCategory]>(lifetime: 600)
    let chartMemo = Memo<[MediaItem]>(lifetime: 600)

    public init(context: ProviderContext) throws {
        let config = context.config.declared(by: Self.descriptor)
        base = try config.url("base_url")
        country = (config["country"] ?? "").lowercased()
        http = context.http
        cache = context.cache
        logger = context.logger
    }

    // MARK: Categories and charts

    public func categories() async throws -> [MediaCategory] {
        if let cached = genreMemo.value() { return cached }
        let data = try await get("WebObjects/MZStoreServices.woa/ws/genres", ["id": "26"], what: "the genre list")
        let root = try decode([String: ITunesGenre].self, data, what: "the genre list")
        guard let podcasts = root["26"] else { throw ProviderError.invalidResponse("the genre list has no podcast genres") }
        var categories: [MediaCategory] = []
        for (id, genre) in (podcasts.subgenres ?? [:]).sorted(by: { ($0.value.name ?? "") < ($1.value.name ?? "") }) {
            categories.append(MediaCategory(id: id, name: genre.name ?? id))
            for (subID, sub) in (genre.subgenres ?? [:]).sorted(by: { ($0.value.name ?? "") < ($1.value.name ?? "") }) {
                categories.append(MediaCategory(id: subID, name: sub.name ?? subID, parent: id))
            }
        }
        genreMemo.keep(categories)
        return categories
    }

    /// The top podcasts of a genre (by id or name), most popular first.
    public func browse(category: String, cursor: Cursor?) async throws -> Page {
        let genre: String
        if Int(category) != nil {
            genre = category
        } else if let match = try await categories().first(where: { $0.name.equalsIgnoringCase(category) }) {
            genre = match.id
        } else {
            throw ProviderError.notFound("no podcast genre '\(category)'; `categories podcasts` lists them")
        }
        let chart: [MediaItem]
        if let cached = chartMemo.value(genre) {
            chart = cached
        } else {
            let data = try await get(
                "\(country)/rss/toppodcasts/limit=\(Self.chartLength)/genre=\(genre)/json", [:], what: "the top podcasts chart")
            let decoded = try decode(ITunesChart.self, data, what: "the top podcasts chart")
            chart = (decoded.feed?.entry ?? []).compactMap(item(fromChart:))
            chartMemo.keep(chart, genre)
        }
        return try Self.page(chart, cursor: cursor, size: Self.chartPageSize) { $0 }
    }

    // MARK: Search

    public func search(_ query: SearchQuery) async throws -> Page {
        if let kind = query.kind, kind != .podcast {
            throw ProviderError.unsupported("podcasts searches shows; open a podcast to see its \(kind.rawValue)s")
        }
        let offset = try Self.offset(query.cursor)
        let data = try await get(
            "search",
            [
                "term": query.text, "media": "podcast", "entity": "podcast", "limit": String(Self.searchPageSize),
                "offset": String(offset), "country": country,
            ], what: "search")
        let response = try decode(ITunesSearchResponse.self, data, what: "search")
        let items = (response.results ?? []).compactMap { item(from: $0, feed: nil) }
        let full = (response.results?.count ?? 0) >= Self.searchPageSize
        return Page(
            items: items, next: full ? Cursor(String(offset + Self.searchPageSize)) : nil,
            prev: offset > 0 ? Cursor(String(max(0, offset - Self.searchPageSize))) : nil)
    }

    // MARK: Details and episodes

    public func item(_ id: ItemID) async throws -> MediaItem {
        switch id.kind {
        case .podcast:
            let show = try await lookup(id.nativeID)
            do {
                let feed = try await feed(of: show)
                return item(from: show, feed: feed.channel, episodes: feed.count) ?? MediaItem(id: id, title: id.nativeID)
            } catch let error as ProviderError {
                // The directory entry is still worth showing when the feed is down or broken.
                var item = item(from: show, feed: nil) ?? MediaItem(id: id, title: id.nativeID)
                item.extra?["feedError"] = error.message
                return item
            }
        case .episode:
            let (show, feed, episode) = try await findEpisode(id)
            return self.item(from: episode, show: show, feed: feed.channel)
        default:
            throw ProviderError.unsupported("podcasts has no \(id.kind.rawValue) items")
        }
    }

    /// A podcast's episodes from its feed, newest first, read a page at a time from the copy the
    /// host keeps (a feed of 40,000 episodes is never in memory at once).
    public func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        guard id.kind == .podcast else { throw ProviderError.unsupported("only podcasts have episodes") }
        return try await episodes(of: try await lookup(id.nativeID), cursor: cursor)
    }

    /// A page of a show's episodes, newest first.
    func episodes(of show: ITunesPodcast, cursor: Cursor?) async throws -> Page {
        let feed = try await feed(of: show)
        let offset = try Self.offset(cursor)
        let rows = await cache.listRows(feed.listKey, offset: offset, limit: Self.episodePageSize) ?? []
        // Items (and their notes as text) are made for this page only.
        let items = rows.compactMap { EpisodeRecord.decode($0.data) }.map { item(from: $0, show: show, feed: feed.channel) }
        let end = offset + rows.count
        return Page(
            items: items, next: end < feed.count ? Cursor(String(end)) : nil,
            prev: offset > 0 ? Cursor(String(max(0, offset - Self.episodePageSize))) : nil, total: feed.count)
    }

    public func downloadSource(for id: ItemID) async throws -> DownloadSource {
        guard id.kind == .episode else {
            throw ProviderError.unsupported("only episodes can be downloaded, not a \(id.kind.rawValue)")
        }
        let (show, stored, episode) = try await findEpisode(id)
        let feed = stored.channel
        guard let text = episode.enclosureURL, let url = URL(string: text) else {
            throw ProviderError.notFound("episode \(id) has no media file in its feed")
        }
        let date = episode.published.map { String(FeedDates.isoString($0).prefix(10)) }
        let ext = url.pathExtension.isEmpty ? (episode.enclosureType == "audio/mpeg" ? "mp3" : nil) : url.pathExtension
        return DownloadSource(
            url: url, suggestedName: [date, episode.title ?? "episode"].compactMap { $0 }.joined(separator: " "),
            collection: feed.title ?? show.collectionName, fileExtension: ext, expectedLength: episode.enclosureLength)
    }

    // MARK: Fetching

    /// How long a directory entry is used without asking the directory again: a show's feed URL
    /// and name change rarely, and re-opening a show is then one conditional request.
    static let lookupLifetime: TimeInterval = 24 * 3600

    func lookup(_ nativeID: String) async throws -> ITunesPodcast {
        // A show known by its feed alone (imported from OPML) needs no directory.
        if nativeID.hasPrefix(ItemID.feedPrefix) {
            guard let url = ItemID.feedURL(nativeID: nativeID) else { throw ProviderError.notFound("no podcast \(nativeID)") }
            var show = try JSONDecoder().decode(ITunesPodcast.self, from: Data("{}".utf8))
            show.feedUrl = url
            show.feedID = String(nativeID.prefix { $0 != ":" })
            return show
        }
        guard let collection = Int(nativeID.prefix { $0 != ":" }) else { throw ProviderError.notFound("no podcast \(nativeID)") }
        let key = "lookup:\(country):\(collection)"
        let cached = await cache.value(for: key)
        let data: Data
        if let cached, Date().timeIntervalSince(cached.storedAt) < Self.lookupLifetime {
            data = cached.data
        } else {
            do {
                data = try await get("lookup", ["id": String(collection), "country": country], what: "lookup")
                await cache.store(CachedValue(data: data), for: key)
            } catch let error as ProviderError {
                // An older entry beats none when the directory cannot be reached.
                guard case .network = error, let cached else { throw error }
                data = cached.data
            }
        }
        let response = try decode(ITunesSearchResponse.self, data, what: "lookup")
        guard let show = response.results?.first(where: { ($0.collectionId ?? $0.trackId) == collection }) else {
            throw ProviderError.notFound("no podcast with id \(collection) in the directory")
        }
        return show
    }

    func findEpisode(_ id: ItemID) async throws -> (ITunesPodcast, StoredFeed, ParsedEpisode) {
        let parts = id.nativeID.split(separator: ":", maxSplits: 1)
        guard parts.count == 2 else { throw ProviderError.notFound("\(id) is not an episode id") }
        let show = try await lookup(String(parts[0]))
        let feed = try await feed(of: show)
        guard let row = await cache.listRow(feed.listKey, id: String(parts[1])), let episode = EpisodeRecord.decode(row.data)
        else {
            throw ProviderError.notFound(
                "episode \(parts[1]) is no longer in the feed of \(show.collectionName ?? "podcast \(parts[0])")")
        }
        return (show, feed, episode)
    }

    /// A show's feed as the host keeps it: the channel's fields, and its episodes as a list in
    /// the cache (`listKey`), newest first.
    struct StoredFeed: Codable {
        var channel: ParsedFeed
        var count: Int
        var listKey: String
    }

    /// The largest feed read: long-running shows reach 50 MB; far beyond is a server that never stops.
    static let maxFeedSize = 512 << 20

    /// The show's feed, revalidated with the validators of the copy the host keeps: a 304 costs
    /// one request; a new copy is parsed chunk by chunk as it arrives into the host's list of
    /// episodes (through a temporary file when the parser falls behind: memory stays flat
    /// whatever its size).
    func feed(of show: ITunesPodcast) async throws -> StoredFeed {
        guard let text = show.feedUrl, let url = URL(string: text) else {
            throw ProviderError.notFound("\(show.collectionName ?? "this podcast") has no feed in the directory")
        }
        let name = URLRedaction.redact(url.absoluteString)
        // Named by the episode record's version: a cache of another version is not read (its
        // feed is fetched and parsed again, its rows left to the cache's bound).
        let key = "feed\(EpisodeRecord.version + 1):" + url.absoluteString
        let listKey = "episodes\(EpisodeRecord.version):" + url.absoluteString
        let cached = await cache.value(for: key)
        var kept = cached.flatMap { try? JSONDecoder().decode(StoredFeed.self, from: $0.data) }
        if kept != nil, await cache.listCount(listKey) == nil { kept = nil }
        var request = HTTPRequest(
            url: url, headers: ["Accept": "application/rss+xml, application/atom+xml, application/xml;q=0.9, */*;q=0.8"])
        if let cached, kept != nil { request.setValidators(etag: cached.etag, lastModified: cached.lastModified) }

        // The body goes through memory while the parser keeps up, else a temporary file (memory
        // stays flat whatever its size), and is parsed as it arrives, its episodes written to a new copy of the list alongside; the
        // copy replaces the kept one only once the whole body arrived and parsed.
        let body = SpoolFile()
        let received = ResponseHead()
        let download = Task {
            defer { body.finish() }
            return try await http.stream(
                request, offset: 0, onHead: { status, headers in received.keep(headers, status: status) },
                onData: { received.errorChunk($0) ?? body.write($0, limit: Self.maxFeedSize) }, progress: nil)
        }
        // However reading ends (a feed that cannot be read, cancellation), the transfer ends with
        // it; after a whole read it has ended already.
        defer { download.cancel() }
        return try await withTaskCancellationHandler {
            // Nothing written by the end of the transfer: not a new feed (304, an error, an empty body).
            if await !body.hasBytes() {
                let head: (status: Int, headers: [String: String])
                do {
                    head = try await download.value
                } catch let error as HTTPClientError where error.kind != .cancelled {
                    // A refresh reports the failure; a person browsing gets the kept copy.
                    if let kept, !FetchPolicy.requireFresh {
                        logger.notice("using the kept copy of \(name): \(error.detail)")
                        return kept
                    }
                    throw ProviderError.network("cannot fetch the feed: \(error)")
                }
                if head.status == 304, let kept { return kept }
                guard head.status == 200 else {
                    if let kept, head.status >= 500, !FetchPolicy.requireFresh { return kept }
                    let response = HTTPResponse(status: head.status, headers: head.headers, body: received.errorBody, url: url)
                    throw Self.error(for: response, what: "the feed \(name)")
                }
            }
            return try await read(
                body, download: download, headers: received.headers, url: url, name: name, keys: (key, listKey), kept: kept)
        } onCancel: {
            download.cancel()
        }
    }

    /// Parses a feed's body as it arrives into a new copy of its list of episodes.
    private func read(
        _ body: SpoolFile, download: Task<(status: Int, headers: [String: String]), any Error>, headers: [String: String],
        url: URL, name: String, keys: (value: String, list: String), kept: StoredFeed?
    ) async throws -> StoredFeed {
        let batch = EpisodeBatch()
        let parser = FeedParser(url: url, charset: XMLTextDecoder.charset(fromContentType: headers["content-type"])) {
            episode in
            batch.append(
                CachedRow(
                    id: Self.episodeKey(episode), order: episode.published?.timeIntervalSince1970,
                    data: EpisodeRecord.encode(episode)))
        }
        var channel = ParsedFeed()
        var head = (status: 200, headers: headers)
        let started = ContinuousClock.now
        var parsing = Duration.zero
        var waiting = Duration.zero
        var storing = Duration.zero
        var pieces = 0
        do {
            try await cache.replaceList(keys.list) { append in
                var offset = 0
                // A chunk at a time as the bytes arrive: a quarter of a MiB or what is left.
                var asked = ContinuousClock.now
                while true {
                    // When the first bytes were handed over: the wait for them ends there.
                    var handed: ContinuousClock.Instant?
                    let count = try await body.read(from: offset, count: 1 << 20, minimum: 1 << 18) { piece in
                        if handed == nil { handed = .now }
                        pieces += 1
                        try parser.feed(piece)
                    }
                    guard count > 0 else { break }
                    offset += count
                    let start = handed ?? asked
                    waiting += start - asked
                    asked = ContinuousClock.now
                    parsing += asked - start
                    if batch.isFull {
                        try await append(batch.take())
                        storing += ContinuousClock.now - asked
                        asked = ContinuousClock.now
                    }
                    try Task.checkCancellation()
                }
                // The list is kept only if the body came whole.
                head = try await download.value
                if body.overflowed {
                    throw ProviderError.invalidResponse("the feed \(name) is larger than \(Self.maxFeedSize >> 20) MB")
                }
                channel = try parser.finish()
                try await append(batch.take())
            }
        } catch let error as HTTPClientError where error.kind != .cancelled {
            if let kept, !FetchPolicy.requireFresh {
                logger.notice("using the kept copy of \(name): \(error.detail)")
                return kept
            }
            throw ProviderError.network("cannot fetch the feed: \(error)")
        } catch let error as FeedError {
            throw ProviderError.invalidResponse(error.description)
        }
        logger.debug(
            "read the feed \(name): \(parser.episodeCount) episodes in \(body.size) bytes (\(pieces) pieces), parsed in \(parsing.milliseconds) ms, waited \(waiting.milliseconds) ms for bytes and \(storing.milliseconds) ms for the database, stored in \((ContinuousClock.now - started).milliseconds) ms in all"
        )
        let stored = StoredFeed(channel: channel, count: parser.episodeCount, listKey: keys.list)
        if let data = try? JSONEncoder().encode(stored) {
            await cache.store(
                CachedValue(data: data, etag: head.headers["etag"], lastModified: head.headers["last-modified"]), for: keys.value)
        }
        return stored
    }

    private func get(_ path: String, _ query: [String: String], what: String) async throws -> Data {
        guard let url = base.endpoint(path, query: query) else {
            throw ProviderError.invalidArgument("cannot build a URL for \(what)")
        }
        let response: HTTPResponse
        do {
            response = try await http.send(HTTPRequest(url: url, headers: ["Accept": "application/json"]))
        } catch let error as HTTPClientError where error.kind != .cancelled {
            throw ProviderError.network("cannot reach the podcast directory for \(what): \(error)")
        }
        guard response.status == 200 else { throw Self.error(for: response, what: what) }
        return response.body
    }

    static func error(for response: HTTPResponse, what: String) -> ProviderError {
        switch response.status {
        case 404: return .notFound("\(what) was not found (HTTP 404)")
        case 429,
            403 where response.header("retry-after") != nil:
            return .rateLimited(retryAfter: response.retryAfter)
        default:
            return .upstream(
                status: response.status, message: "\(what) failed: " + (ServiceReason.from(response.body) ?? "no reason given"))
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ data: Data, what: String) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw ProviderError.invalidResponse("\(what) answered with JSON that cannot be read (\(data.count) bytes)")
        }
    }
}
