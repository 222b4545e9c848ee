import Basics
import FoundationEssentials
import Glibc
import MediaKit
import Synchronization

/// YouTube through the Data API v3 with a key (categories and their most popular videos, search
/// for videos, channels and playlists, a channel's uploads, a playlist's items, details), or
/// without one through yt-dlp (all of that but categories and charts, which need the API).
/// Downloads go through yt-dlp either way.
public struct YouTubeProvider: CompiledProvider {
    public static let descriptor = ProviderDescriptor(
        id: "youtube", name: "YouTube", kinds: [.video, .channel, .playlist],
        capabilities: [
            .categories, .browse, .search, .item, .children, .download, .login, .remoteFavorites, .segments,
        ],
        configKeys: [
            .init(
                name: "api_key", summary: "YouTube Data API v3 key (Google Cloud console); without one, yt-dlp is used",
                secret: true, environment: ["YOUTUBE_API_KEY"]),
            .init(
                name: "backend", summary: "auto (the API when a key is set, else yt-dlp), api or ytdlp",
                defaultValue: "auto"),
            .init(name: "ytdlp", summary: "The yt-dlp program (a name in PATH or a path)", defaultValue: "yt-dlp"),
            .init(
                name: "download_format",
                summary:
                    "yt-dlp format of downloads (-f); auto: up to 1080p, video and audio merged when ffmpeg is installed, else the best single file; bestaudio for audio only",
                defaultValue: "auto"),
            .init(
                name: "downloader",
                summary: "auto (the host when the format is one file over HTTP, else yt-dlp), host or ytdlp",
                defaultValue: "auto"),
            .init(name: "cookies", summary: "A cookies.txt file yt-dlp sends (age-restricted and members-only videos)"),
            .init(
                name: "cookies_from_browser",
                summary:
                    "The browser yt-dlp takes YouTube's cookies from (--cookies-from-browser): firefox, chrome, chromium, brave, edge, safari; BROWSER:PROFILE for another profile"
            ),
            .init(
                name: "js_runtime",
                summary:
                    "The JavaScript runtime yt-dlp runs YouTube's player with (--js-runtimes RUNTIME[:PATH], e.g. deno or node:/usr/bin/node); by default deno on PATH or beside yt-dlp"
            ),
            .init(name: "ytdlp_timeout", summary: "Seconds yt-dlp may take for one call", defaultValue: "60"),
            .init(
                name: "site_url", summary: "The site yt-dlp is pointed at (a stand-in for tests)",
                defaultValue: "https://www.youtube.com"),
            .init(name: "base_url", summary: "The API's base URL", defaultValue: "https://www.googleapis.com"),
            .init(name: "region", summary: "Region for categories and charts", defaultValue: "US"),
            .init(name: "client_id", summary: "OAuth client id (type: TV and Limited Input devices), for `login youtube`"),
            .init(name: "client_secret", summary: "OAuth client secret", secret: true),
            .init(name: "oauth_base_url", summary: "Google's OAuth 2.0 endpoint", defaultValue: "https://oauth2.googleapis.com"),
        ],
        auth: .oauthDevice,
        notes:
            "Without an API key, yt-dlp reads YouTube (no categories or charts); downloads always use yt-dlp; likes (favorites on the account) need a key and `login youtube`."
    )

    static let pageSize = 20

    let base: URL
    let key: String
    let region: String
    let http: any HTTPClient
    /// Categories change rarely: kept for the life of the provider.
    let categoryMemo = Memo<[MediaCategory]>()
    let oauthBase: URL?
    let clientID: String?
    let clientSecret: String?
    let now: @Sendable () -> Date
    /// yt-dlp: downloads, and everything else when there is no key (or `backend = ytdlp`).
    let ytdlp: YTDLP
    /// Whether reading goes through yt-dlp.
    let keyless: Bool
    /// Channel feeds as last fetched, with their validators (a feed that did not change is
    /// answered 304, without its body).
    let cache: any ProviderCache
    let logger: Logger

    public init(context: ProviderContext) throws {
        let config = context.config.declared(by: Self.descriptor)
        let backend = config["backend"] ?? "auto"
        guard ["auto", "api", "ytdlp"].contains(backend) else {
            throw ProviderError.notConfigured(
                "providers.youtube.backend is '\(backend)'; it is auto, api or ytdlp (`config providers.youtube.backend auto`)")
        }
        let hasKey = !(config["api_key"] ?? "").isEmpty
        if backend == "api" && !hasKey {
            throw ProviderError.notConfigured(
                "providers.youtube.backend is api but no key is set: set YOUTUBE_API_KEY or `config providers.youtube.api_key <key>`, or `config providers.youtube.backend auto` to use yt-dlp"
            )
        }
        keyless = backend == "ytdlp" || (backend == "auto" && !hasKey)
        cache = context.cache
        logger = context.logger
        let downloader = config["downloader"] ?? "auto"
        guard ["auto", "host", "ytdlp"].contains(downloader) else {
            throw ProviderError.notConfigured(
                "providers.youtube.downloader is '\(downloader)'; it is auto, host or ytdlp")
        }
        var engine = YTDLP(
            program: config["ytdlp"].flatMap { $0 == "yt-dlp" ? nil : $0 } ?? YTDLP.defaultProgram(), programs: context.programs,
            cookies: config["cookies"],
            format: config["download_format"] ?? "auto", pageSize: Self.pageSize,
            timeout: Double(config["ytdlp_timeout"] ?? "").flatMap { $0 > 0 && $0 <= 3600 ? $0 : nil } ?? 60,
            site: String(try config.url("site_url").absoluteString.reversed().drop { $0 == "/" }.reversed()))
        engine.downloader = downloader
        engine.cookiesFromBrowser = config["cookies_from_browser"].flatMap { $0.isEmpty ? nil : $0 }
        engine.jsRuntime = config["js_runtime"].flatMap { $0.isEmpty ? nil : $0 } ?? YTDLP.runtimeBeside(engine.program)
        ytdlp = engine
        base = try config.url("base_url")
        key = config["api_key"] ?? ""
        region = config["region"] ?? ""
        http = context.http
        // Checked when a login needs it, so a bad value does not stop search and browse.
        oauthBase = try? config.url("oauth_base_url")
        clientID = config["client_id"]
        clientSecret = config["client_secret"]
        now = context.now
    }

    // MARK: Categories and charts

    public func categories() async throws -> [MediaCategory] {
        if keyless { throw Self.needsKey("categories") }
        if let cached = categoryMemo.value() { return cached }
        let list: YTList<YTCategory> = try await get("videoCategories", ["part": "snippet", "regionCode": region])
        let categories = (list.items ?? []).compactMap { category -> MediaCategory? in
            guard let id = category.id, category.snippet?.assignable != false else { return nil }
            return MediaCategory(id: id, name: category.snippet?.title ?? id)
        }
        categoryMemo.keep(categories)
        return categories
    }

    /// The most popular videos of a category (by id or name), with the API's page tokens both ways.
    public func browse(category: String, cursor: Cursor?) async throws -> Page {
        if keyless { throw Self.needsKey("most popular videos") }
        var id = category
        if Int(category) == nil {
            guard let match = try await categories().first(where: { $0.name.equalsIgnoringCase(category) })
            else {
                throw ProviderError.notFound("no YouTube category '\(category)'; `categories youtube` lists them")
            }
            id = match.id
        }
        var query = [
            "part": "snippet,contentDetails,statistics", "chart": "mostPopular", "videoCategoryId": id, "regionCode": region,
            "maxResults": String(Self.pageSize),
        ]
        if let cursor { query["pageToken"] = cursor.rawValue }
        let list: YTList<YTVideo> = try await get("videos", query)
        return Page(
            items: (list.items ?? []).compactMap { item(from: $0) }, next: list.nextPageToken.map { Cursor($0) },
            prev: list.prevPageToken.map { Cursor($0) }, total: list.pageInfo?.totalResults)
    }

    // MARK: Search

    public func search(_ query: SearchQuery) async throws -> Page {
        if keyless { return try await ytdlp.search(query) }
        let type: String
        switch query.kind {
        case nil, .video?: type = "video"
        case .channel?: type = "channel"
        case .playlist?: type = "playlist"
        case let other?:
            throw ProviderError.unsupported("YouTube searches videos, channels and playlists, not \(other.rawValue)s")
        }
        var parameters = [
            "part": "snippet", "q": query.text, "type": type, "maxResults": String(Self.pageSize), "regionCode": region,
        ]
        if let cursor = query.cursor { parameters["pageToken"] = cursor.rawValue }
        let list: YTList<YTSearchResult> = try await get("search", parameters)
        let results = list.items ?? []
        // Search results lack durations and counts: one batched videos.list completes them.
        let details = try await videos(results.compactMap { $0.id?.videoId })
        let items = results.compactMap { result -> MediaItem? in
            // search.list's snippets carry HTML entities ("World&#39;s best"); videos.list's do not.
            let snippet = result.snippet.map(Self.unescaped)
            if let videoID = result.id?.videoId {
                return details[videoID] ?? item(fromSnippet: snippet, kind: .video, id: videoID)
            }
            if let channelID = result.id?.channelId { return item(fromSnippet: snippet, kind: .channel, id: channelID) }
            if let playlistID = result.id?.playlistId { return item(fromSnippet: snippet, kind: .playlist, id: playlistID) }
            return nil
        }
        return Page(
            items: items, next: list.nextPageToken.map { Cursor($0) }, prev: list.prevPageToken.map { Cursor($0) },
            total: list.pageInfo?.totalResults)
    }

    /// Full video resources by id, at most 50 per request, as few requests as possible.
    func videos(_ ids: [String]) async throws -> [String: MediaItem] {
        var found: [String: MediaItem] = [:]
        for start in stride(from: 0, to: ids.count, by: 50) {
            let batch = ids[start..<min(start + 50, ids.count)]
            let list: YTList<YTVideo> = try await get(
                "videos", ["part": "snippet,contentDetails,statistics", "id": batch.joined(separator: ",")])
            for video in list.items ?? [] { if let id = video.id, let item = item(from: video) { found[id] = item } }
        }
        return found
    }

    // MARK: Details and children

    public func item(_ id: ItemID) async throws -> MediaItem {
        if keyless {
            // A channel's feed names it, in one small request.
            if id.kind == .channel || id.kind == .playlist, case .success(let feed) = await atomFeed(id), let title = feed.title {
                var item = MediaItem(
                    id: id, title: title,
                    url: id.kind == .channel ? YTDLP.channelURL(id.nativeID) : YTDLP.playlistURL(id.nativeID),
                    artwork: feed.items.first?.artwork, creator: id.kind == .channel ? title : feed.items.first?.creator)
                item.feed = YouTubeChannelFeed.url(site: "https://www.youtube.com", for: id)
                return item
            }
            return try await ytdlp.item(id)
        }
        switch id.kind {
        case .video:
            guard var item = try await videos([id.nativeID])[id.nativeID] else {
                throw ProviderError.notFound("no YouTube video \(id.nativeID)")
            }
            // Details name the category ("Music"), keeping its id; a failed category lookup costs only the name.
            if let categoryID = item.extra?["category"],
                let name = try? await categories().first(where: { $0.id == categoryID })?.name
            {
                item.extra?["category"] = name
                item.extra?["categoryId"] = categoryID
            }
            return item
        case .channel:
            return item(from: try await channel(id.nativeID))
        default:
            throw ProviderError.unsupported(
                "details of YouTube \(id.kind.rawValue)s are not available; open it to see its videos")
        }
    }

    /// A channel's uploads (newest first), or a playlist's items.
    public func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        if keyless {
            // A channel's or playlist's first page is its feed (one small request, which works when
            // yt-dlp is rate-limited); later pages, yt-dlp's.
            guard cursor == nil, id.kind == .channel || id.kind == .playlist else {
                return try await ytdlp.children(of: id, cursor: cursor)
            }
            return try await firstPage(id)
        }
        let playlist: String
        switch id.kind {
        case .channel:
            guard let uploads = try await channel(id.nativeID).contentDetails?.relatedPlaylists?["uploads"] else {
                throw ProviderError.notFound("channel \(id.nativeID) has no uploads")
            }
            playlist = uploads
        case .playlist: playlist = id.nativeID
        default: throw ProviderError.unsupported("YouTube \(id.kind.rawValue)s have no children")
        }
        var parameters = ["part": "snippet,contentDetails", "playlistId": playlist, "maxResults": String(Self.pageSize)]
        if let cursor { parameters["pageToken"] = cursor.rawValue }
        let list: YTList<YTPlaylistItem> = try await get("playlistItems", parameters)
        let ids = (list.items ?? []).compactMap { $0.contentDetails?.videoId ?? $0.snippet?.resourceId?.videoId }
        let details = try await videos(ids)
        return Page(
            items: ids.compactMap { details[$0] }, next: list.nextPageToken.map { Cursor($0) },
            prev: list.prevPageToken.map { Cursor($0) },
            total: list.pageInfo?.totalResults)
    }

    /// A channel's or playlist's first page without a key: its Atom feed, else yt-dlp's listing.
    /// Which was taken, and why, is in the debug log; when both fail, or the feed failed and
    /// yt-dlp lists nothing, the error says so (`new` reports it beside the others, never an
    /// empty answer).
    func firstPage(_ id: ItemID) async throws -> Page {
        let why: String
        switch await atomFeed(id) {
        case .success(let feed) where !feed.items.isEmpty:
            logger.debug("youtube: \(id) from its feed (\(feed.items.count) videos)")
            return Page(items: feed.items, next: Cursor(String(feed.items.count + 1)))
        case .success:
            why = "its feed lists no videos"
        case .failure(let error):
            why = "its feed failed: \(error.message)"
        }
        logger.debug("youtube: \(id): \(why); listing it through yt-dlp")
        let page: Page
        do {
            page = try await ytdlp.children(of: id, cursor: nil)
        } catch let error as ProviderError {
            throw error.prefixed("\(why), and yt-dlp failed too")
        }
        if page.items.isEmpty {
            throw ProviderError.upstream(status: 0, message: "nothing listed: \(why), and yt-dlp listed no videos")
        }
        return page
    }

    /// A channel's or playlist's public Atom feed, read. Fetched with the validators of the copy
    /// kept, so following many channels costs a 304 each when nothing is new.
    func atomFeed(_ id: ItemID) async -> Result<YouTubeChannelFeed, ProviderError> {
        guard let url = URL(string: YouTubeChannelFeed.url(site: ytdlp.site, for: id)) else {
            return .failure(.invalidArgument("no feed URL for \(id)"))
        }
        let key = "channel-feed:" + url.absoluteString
        let kept = await cache.value(for: key)
        var request = HTTPRequest(url: url, headers: ["Accept": "application/atom+xml"])
        request.maxBodySize = YouTubeChannelFeed.maxBodySize
        request.setValidators(etag: kept?.etag, lastModified: kept?.lastModified)
        let response: HTTPResponse
        do {
            response = try await http.send(request)
        } catch let error as HTTPClientError {
            return .failure(.network(error.detail))
        } catch {
            return .failure(.network("\(error)"))
        }
        let body: Data
        switch response.status {
        case 304 where kept != nil: body = kept!.data
        case 200:
            body = response.body
            await cache.store(
                CachedValue(data: body, etag: response.headers["etag"], lastModified: response.headers["last-modified"]),
                for: key)
        case let status: return .failure(.upstream(status: status, message: "the feed \(url.absoluteString)"))
        }
        let feed: YouTubeChannelFeed
        do {
            feed = try YouTubeChannelFeed.read(Array(body))
        } catch {
            return .failure(.invalidResponse("the feed cannot be read: \(error)"))
        }
        if feed.capped {
            logger.debug(
                "youtube: the feed of \(id) holds more than \(YouTubeChannelFeed.maxEntries) entries; the first are read")
        }
        return .success(feed)
    }

    public func itemID(forFeed url: String) -> ItemID? { YouTubeChannelFeed.itemID(feed: url) }

    /// A video's media, through yt-dlp whichever backend reads (the API has no media URLs).
    public func downloadSource(for id: ItemID) async throws -> DownloadSource {
        var (source, youtube) = try await ytdlp.downloadSource(for: id)
        // Read from a stand-in site, yt-dlp knows no title: the file is named by the item's, when
        // the API reads items (without a key the item is yt-dlp's same reading: no second run).
        if youtube || keyless {
            source.title = source.suggestedName
        } else if let item = try? await item(id) {
            source.suggestedName = item.title
            source.collection = item.creator ?? source.collection
            source.title = item.title
        }
        return source
    }

    /// A video's stream as a player opens it: one file or an HLS playlist yt-dlp finds, read as
    /// downloads are (so also from the sandbox's stand-in site).
    public func streamSource(for id: ItemID) async throws -> DownloadSource? {
        try await ytdlp.streamSource(for: id)
    }

    /// What only the Data API has (YouTube has no key-less chart), and how to get it.
    static func needsKey(_ what: String) -> ProviderError {
        .unsupported(
            "YouTube's \(what) need the Data API: set YOUTUBE_API_KEY or `config providers.youtube.api_key <key>` (search, channels and playlists work without one)"
        )
    }

    private func channel(_ id: String) async throws -> YTChannel {
        let list: YTList<YTChannel> = try await get("channels", ["part": "snippet,statistics,contentDetails", "id": id])
        guard let channel = list.items?.first else { throw ProviderError.notFound("no YouTube channel \(id)") }
        return channel
    }

    // MARK: Requests and errors

    /// A Data API call: with the API key, or with the account's token when `session` is given.
    func get<T: Decodable>(
        _ resource: String, _ parameters: [String: String], session: AuthSession? = nil, method: String = "GET"
    ) async throws -> T {
        try await call(resource, parameters, session: session, method: method).json(service: "YouTube", what: resource)
    }

    func call(_ resource: String, _ parameters: [String: String], session: AuthSession?, method: String) async throws
        -> HTTPResponse
    {
        var credentials: [URLQueryItem] = []
        var headers = ["Accept": "application/json"]
        if let session {
            headers["Authorization"] = "Bearer \(session.accessToken)"
        } else {
            credentials.append(URLQueryItem(name: "key", value: key))
        }
        guard let url = base.endpoint("youtube/v3/\(resource)", query: parameters, extra: credentials) else {
            throw ProviderError.invalidArgument("cannot build a YouTube URL for \(resource)")
        }
        return try await http.fetch(
            HTTPRequest(method: method, url: url, headers: headers, body: method == "POST" ? Data() : nil),
            failure: Self.error(for:))
    }

    /// The API's error body mapped to a typed error; the key is never part of the message.
    static func error(for response: HTTPResponse) -> ProviderError {
        let body = (try? JSONDecoder().decode(YTErrorBody.self, from: response.body))?.error
        let reasons = Set(((body?.errors ?? []) + (body?.details ?? [])).compactMap(\.reason))
        let message = ServiceReason.from(response.body) ?? "no reason given"
        if reasons.contains("quotaExceeded") || reasons.contains("dailyLimitExceeded") {
            return .quotaExceeded("the YouTube API quota for this key is used up for today (it resets at midnight Pacific time)")
        }
        if reasons.contains("rateLimitExceeded") || reasons.contains("userRateLimitExceeded") || response.status == 429 {
            return .rateLimited(retryAfter: response.retryAfter)
        }
        if reasons.contains("keyInvalid") || reasons.contains("API_KEY_INVALID") || reasons.contains("keyExpired") {
            return .unauthorized(
                "the YouTube API key is not valid; set YOUTUBE_API_KEY or `config providers.youtube.api_key <key>`")
        }
        if response.status == 401 || reasons.contains("authError") || (reasons.contains("forbidden") && response.status == 403) {
            return .unauthorized("YouTube refused the request: \(message)")
        }
        if response.status == 404 || reasons.contains(where: { $0.hasSuffix("NotFound") }) {
            return .notFound(message)
        }
        return .upstream(status: response.status, message: message)
    }

    // MARK: Items

    func item(from video: YTVideo) -> MediaItem? {
        guard let id = video.id else { return nil }
        var item = item(fromSnippet: video.snippet, kind: .video, id: id)
        item.duration = video.contentDetails?.duration.flatMap(ISO8601Duration.seconds)
        var stats: [String: Int] = [:]
        for (name, key) in [("views", "viewCount"), ("likes", "likeCount"), ("comments", "commentCount")] {
            if let value = video.statistics?[key].flatMap({ Int($0) }) { stats[name] = value }
        }
        item.stats = stats.isEmpty ? nil : stats
        return item
    }

    func item(from channel: YTChannel) -> MediaItem {
        let id = channel.id ?? ""
        var item = item(fromSnippet: channel.snippet, kind: .channel, id: id)
        var stats: [String: Int] = [:]
        for (name, key) in [("subscribers", "subscriberCount"), ("videos", "videoCount"), ("views", "viewCount")] {
            if let value = channel.statistics?[key].flatMap({ Int($0) }) { stats[name] = value }
        }
        item.stats = stats.isEmpty ? nil : stats
        if let uploads = channel.contentDetails?.relatedPlaylists?["uploads"] {
            item.extra?["uploads"] = "youtube:playlist:\(uploads)"
        }
        if let handle = channel.snippet?.customUrl { item.extra?["handle"] = handle }
        item.feed = YouTubeChannelFeed.url(
            site: "https://www.youtube.com", for: ItemID(provider: "youtube", kind: .channel, nativeID: id))
        return item
    }

    /// A search.list snippet with the HTML entities of its text decoded.
    static func unescaped(_ snippet: YTSnippet) -> YTSnippet {
        var snippet = snippet
        snippet.title = snippet.title.map(HTMLText.decodeEntities)
        snippet.description = snippet.description.map(HTMLText.decodeEntities)
        snippet.channelTitle = snippet.channelTitle.map(HTMLText.decodeEntities)
        return snippet
    }

    func item(fromSnippet snippet: YTSnippet?, kind: MediaKind, id: String) -> MediaItem {
        let url: String =
            switch kind {
            case .channel: "https://www.youtube.com/channel/\(id)"
            case .playlist: "https://www.youtube.com/playlist?list=\(id)"
            default: "https://www.youtube.com/watch?v=\(id)"
            }
        var extra: [String: String] = [:]
        if kind != .channel, let channel = snippet?.channelId { extra["channel"] = "youtube:channel:\(channel)" }
        if let category = snippet?.categoryId { extra["category"] = category }
        return MediaItem(
            id: ItemID(provider: "youtube", kind: kind, nativeID: id), title: snippet?.title ?? id,
            subtitle: kind == .channel ? nil : snippet?.channelTitle, summary: snippet?.description, url: url,
            artwork: snippet?.bestThumbnail, published: snippet?.publishedAt, creator: snippet?.channelTitle, extra: extra)
    }
}

extension YouTubeProvider: TranscriptProvider {
    /// A video's captions through yt-dlp (the uploader's, else YouTube's automatic ones, whose
    /// rolling lines the reader says once), in WebVTT. The Data API's captions need the owner's
    /// login: without a key only.
    public func transcript(of id: ItemID, language: String?) async throws -> Transcript? {
        let program = ytdlp.program
        let runnable =
            program.contains("/") ? FileManager.default.isExecutableFile(atPath: program) : YTDLP.installed(program)
        guard keyless || runnable else { return nil }
        guard let caption = YTDLP.chooseCaption(try await ytdlp.captions(id), language: language),
            let url = URL(string: caption.url)
        else { return nil }
        let response: HTTPResponse
        do {
            response = try await http.send(HTTPRequest(url: url, maxBodySize: TranscriptReader.maxSize))
        } catch let error as HTTPClientError where error.kind != .cancelled {
            throw ProviderError.network("cannot fetch the captions of \(id): \(error)")
        }
        guard (200..<300).contains(response.status) else {
            throw ProviderError.from(response, reason: "YouTube's captions answered HTTP \(response.status)")
        }
        var transcript = try TranscriptReader.read(response.body, type: "text/vtt", url: caption.url)
        if caption.automatic { transcript.notes.append("YouTube's automatic captions (\(caption.language))") }
        return transcript
    }
}

extension YouTubeProvider: ChapterProvider {
    /// A video's chapters from yt-dlp (the Data API has none: the host then reads the
    /// description's timestamps).
    public func chapters(of id: ItemID) async throws -> ChapterList? {
        guard keyless else { return nil }
        return try await ytdlp.chapters(id)
    }
}
