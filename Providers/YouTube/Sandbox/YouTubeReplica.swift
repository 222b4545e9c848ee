import Foundation
import Hummingbird
import MediaKit
import NIOCore
import Sandbox
import Synchronization

/// The YouTube Data API v3 as the real service answers it: paths, parameters, page tokens,
/// string-typed statistics, error bodies, and quota accounting per key.
public struct YouTubeReplica: SandboxReplica {
    public let id = "youtube"
    let catalogue = YouTubeCatalogue()
    let quota = Quota()
    /// The video the site's stand-in serves as separate video and audio (HLS), which a download
    /// merges with ffmpeg; every other video is one file.
    public var separateStreamsVideo: String { catalogue.videos.last?.id ?? "" }
    /// The device-flow login and the account's likes.
    public let accounts = YouTubeAccounts()

    /// Units spent per key today; a call past the limit answers quotaExceeded like the real API.
    public final class Quota: Sendable {
        private let state = Mutex<(limit: Int, used: [String: Int])>((10_000, [:]))
        public var limit: Int {
            get { state.withLock { $0.limit } }
            set { state.withLock { $0.limit = newValue } }
        }
        func spend(_ units: Int, key: String) -> Bool {
            state.withLock { state in
                let used = state.used[key, default: 0] + units
                guard used <= state.limit else { return false }
                state.used[key] = used
                return true
            }
        }
        public func reset() { state.withLock { $0.used = [:] } }
    }

    public init() {}

    static func text(_ body: String, type: String) -> Response {
        Response(status: .ok, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: body)))
    }

    /// Every third video has segments, in SponsorBlock's shapes: a sponsor read at 5-12 s and a
    /// reminder to subscribe at 20-24 s (the sandbox's videos are 50-75 s), a highlight at 30 s;
    /// and one in nine is labelled whole.
    static func sponsorSegments(_ id: String) -> [[String: Any]] {
        let seed = id.utf8.reduce(UInt64(1469598103934665603)) { ($0 ^ UInt64($1)) &* 1099511628211 }
        guard seed % 3 == 0 else { return [] }
        func segment(_ category: String, _ action: String, _ start: Double, _ end: Double, _ n: Int) -> [String: Any] {
            [
                "category": category, "actionType": action, "segment": [start, end], "UUID": "\(id)-\(n)",
                "videoDuration": 0, "locked": 0, "votes": Int(seed % 7), "description": "",
            ]
        }
        var segments = [
            segment("sponsor", "skip", 5, 12, 1), segment("interaction", "skip", 20, 24, 2),
            segment("poi_highlight", "poi", 30, 30, 3),
        ]
        if seed % 9 == 0 { segments.append(segment("exclusive_access", "full", 0, 0, 4)) }
        return segments
    }

    public func environment(baseURL: String) -> [String: String] {
        [
            "MEDIAHOST_YOUTUBE_OAUTH_BASE_URL": baseURL + "/oauth2", "YOUTUBE_API_KEY": "sandbox-key",
            "MEDIAHOST_YOUTUBE_CLIENT_ID": "sandbox-client.apps.googleusercontent.com",
            "MEDIAHOST_YOUTUBE_CLIENT_SECRET": "sandbox-secret",
            // yt-dlp (downloads, and reading without a key) reads the site's stand-in.
            "MEDIAHOST_YOUTUBE_SITE_URL": baseURL + "/site",
            // SponsorBlock's stand-in, for the same videos.
            "MEDIAHOST_SPONSORBLOCK_SERVER": baseURL + "/sponsorblock",
        ]
    }

    public func register(_ routes: SandboxRoutes) {
        Self.files.register(routes)
        let api = routes.group("youtube/v3")
        api.get("videoCategories") { request, _ in try guarded(request, cost: 1) { try videoCategories(request) } }
        api.get("videos") { request, _ in try guarded(request, cost: 1) { try videos(request) } }
        api.get("search") { request, _ in try guarded(request, cost: 100) { try search(request) } }
        api.get("channels") { request, _ in try guarded(request, cost: 1) { try channels(request) } }
        api.get("playlistItems") { request, _ in try guarded(request, cost: 1) { try playlistItems(request) } }
        api.post("videos/rate") { request, _ in
            guard accounts.authorized(request) else { return Self.unauthenticated() }
            let query = request.uri.queryParameters
            guard let id = query.get("id"), catalogue.video(id) != nil else {
                return Self.error(
                    404, "The video that you are trying to rate cannot be found.", reason: "videoNotFound",
                    domain: "youtube.video", status: "NOT_FOUND")
            }
            guard let rating = query.get("rating"), ["like", "dislike", "none"].contains(rating) else {
                return Self.error(
                    400, "Invalid rating.", reason: "invalidRating", domain: "youtube.parameter", status: "INVALID_ARGUMENT")
            }
            accounts.like(id, rating)
            return Response(status: .noContent)
        }
        accounts.register(routes)
        // The site's stand-in: a video's page is its media (a tone a player plays), which yt-dlp
        // takes as a direct link with its generic extractor, as on any site it has no extractor for.
        // SponsorBlock's privacy-preserving endpoint, as the real server answers it: every video
        // whose id's SHA-256 starts with the prefix and has segments, 404 when none has.
        let hashes = catalogue.videos.map { (SHA256.hex(Array($0.id.utf8)), $0) }
        routes.get("sponsorblock/api/skipSegments/:prefix") { _, context in
            guard let prefix = context.parameters.get("prefix")?.lowercased(), prefix.count >= 4 else {
                return Response(status: .badRequest)
            }
            let found = hashes.filter { $0.0.hasPrefix(prefix) }.compactMap { hash, video -> [String: Any]? in
                let segments = Self.sponsorSegments(video.id)
                return segments.isEmpty ? nil : ["videoID": video.id, "hash": hash, "segments": segments]
            }
            return found.isEmpty ? Response(status: .notFound) : jsonResponse(found)
        }
        routes.get("site/watch") { request, context in
            // `large-<MB>`: a video of that many megabytes, for benchmarks of big downloads.
            if let id = request.uri.queryParameters.get("v"), id.hasPrefix("large-"),
                let megabytes = Int(id.dropFirst(6)), (1...4000).contains(megabytes)
            {
                return MediaFile.wave(
                    size: megabytes * 1_000_000, seed: UInt64(megabytes), etag: "\"yt-\(id)\"", type: "audio/wav"
                )
                .response(to: request, bytesPerSecond: context.mediaBytesPerSecond)
            }
            guard let id = request.uri.queryParameters.get("v"), let video = catalogue.video(id) else {
                return Response(status: .notFound)
            }
            // One video is served as YouTube serves most: video and audio apart, to be merged.
            if id == separateStreamsVideo {
                return Self.text(SeparateStreams.master(id), type: "application/vnd.apple.mpegurl")
            }
            let seed = id.utf8.reduce(UInt64(1469598103934665603)) { ($0 ^ UInt64($1)) &* 1099511628211 }
            return MediaFile.wave(size: 400_000 + Int(seed % 200_000), seed: seed, etag: "\"yt-\(video.id)\"", type: "audio/wav")
                .response(to: request, bytesPerSecond: context.mediaBytesPerSecond)
        }
        routes.get("site/hls/:id/:file") { _, context in
            guard context.parameters.get("id") == separateStreamsVideo else { return Response(status: .notFound) }
            switch context.parameters.get("file") {
            case "video.m3u8": return Self.text(SeparateStreams.media("video.ts"), type: "application/vnd.apple.mpegurl")
            case "audio.m3u8": return Self.text(SeparateStreams.media("audio.aac"), type: "application/vnd.apple.mpegurl")
            case "video.ts":
                return Response(
                    status: .ok, headers: [.contentType: "video/mp2t"],
                    body: .init(byteBuffer: ByteBuffer(bytes: SeparateStreams.video)))
            case "audio.aac":
                return Response(
                    status: .ok, headers: [.contentType: "audio/aac"],
                    body: .init(byteBuffer: ByteBuffer(bytes: SeparateStreams.audio)))
            default: return Response(status: .notFound)
            }
        }
        // A channel's Atom feed, as www.youtube.com/feeds/videos.xml serves it: its 15 newest
        // videos (Shorts among them, linked as /shorts/<id>); or a playlist's first 15.
        routes.get("site/feeds/videos.xml") { request, _ in
            let found: (YouTubeCatalogue.Channel, [YouTubeCatalogue.Video], String)?
            if let id = request.uri.queryParameters.get("channel_id").map { String($0) }, let channel = catalogue.channel(id),
                let videos = catalogue.playlist(channel.uploads)
            {
                found = (channel, videos, id)
            } else if let id = request.uri.queryParameters.get("playlist_id").map { String($0) },
                let channel = catalogue.channel(ofPlaylist: id), let videos = catalogue.playlist(id)
            {
                found = (channel, videos, id)
            } else {
                found = nil
            }
            guard let (channel, videos, id) = found else { return Response(status: .notFound) }
            // A feed changes when its channel uploads: its newest video is its version.
            let etag = "\"\(id)-\(videos.first?.id ?? "none")\""
            if request.headers[.ifNoneMatch] == etag { return Response(status: .notModified, headers: [.eTag: etag]) }
            return Response(
                status: .ok, headers: [.contentType: "application/atom+xml; charset=UTF-8", .eTag: etag],
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: Self.atom(
                            channel, Array(videos.prefix(15)),
                            // Thumbnails on the sandbox's stand-in of the image host.
                            images: "http://\(request.head.authority ?? "127.0.0.1")/youtube/files/i1.ytimg.com"))))
        }
        routes.post("_quota") { request, context in
            struct Change: Decodable { var limit: Int?; var reset: Bool? }
            let change = try await request.decode(as: Change.self, context: context)
            if let limit = change.limit { quota.limit = limit }
            if change.reset == true { quota.reset() }
            return Response(status: .noContent)
        }
    }

    // MARK: Keys, quota, errors

    static func unauthenticated() -> Response {
        error(
            401,
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.",
            reason: "authError", domain: "global", status: "UNAUTHENTICATED")
    }

    private func guarded(_ request: Request, cost: Int, _ body: () throws -> Response) throws -> Response {
        if request.headers[.authorization] != nil {
            // OAuth requests need no key, but a live token.
            guard accounts.authorized(request) else { return Self.unauthenticated() }
            guard quota.spend(cost, key: "oauth") else {
                return Self.error(
                    403, "The request cannot be completed because you have exceeded your quota.", reason: "quotaExceeded",
                    domain: "youtube.quota", status: "PERMISSION_DENIED")
            }
            return try body()
        }
        guard let key = request.uri.queryParameters.get("key"), !key.isEmpty else {
            return Self.error(
                403, "The request is missing a valid API key.", reason: "forbidden", domain: "global", status: "PERMISSION_DENIED"
            )
        }
        if key.hasPrefix("bad") {
            return Self.error(
                400, "API key not valid. Please pass a valid API key.", reason: "badRequest", domain: "global",
                status: "INVALID_ARGUMENT", details: "API_KEY_INVALID")
        }
        guard quota.spend(cost, key: key) else {
            return Self.error(
                403,
                "The request cannot be completed because you have exceeded your <a href=\"/youtube/v3/getting-started#quota\">quota</a>.",
                reason: "quotaExceeded", domain: "youtube.quota", status: "PERMISSION_DENIED")
        }
        return try body()
    }

    static func error(_ code: Int, _ message: String, reason: String, domain: String, status: String, details: String? = nil)
        -> Response
    {
        var error: [String: Any] = [
            "code": code, "message": message, "errors": [["message": message, "domain": domain, "reason": reason]],
            "status": status,
        ]
        if let details {
            error["details"] = [
                ["@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": details, "domain": "googleapis.com"]
            ]
        }
        return json(["error": error], status: .init(code: code))
    }

    /// A channel feed in YouTube's format (yt: and media: namespaces, as recorded in the
    /// provider's tests).
    static func atom(_ channel: YouTubeCatalogue.Channel, _ videos: [YouTubeCatalogue.Video], images: String) -> String {
        func escaped(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        let entries = videos.map { video in
            """
             <entry>
              <id>yt:video:\(video.id)</id>
              <yt:videoId>\(video.id)</yt:videoId>
              <yt:channelId>\(channel.id)</yt:channelId>
              <title>\(escaped(video.title))</title>
              <link rel="alternate" href="https://www.youtube.com/\(video.isShort ? "shorts/" : "watch?v=")\(video.id)"/>
              <author>
               <name>\(escaped(channel.title))</name>
               <uri>https://www.youtube.com/channel/\(channel.id)</uri>
              </author>
              <published>\(ISODate.string(from: video.published))</published>
              <updated>\(ISODate.string(from: video.published))</updated>
              <media:group>
               <media:title>\(escaped(video.title))</media:title>
               <media:thumbnail url="\(images)/vi/\(video.id)/hqdefault.jpg" width="480" height="360"/>
               <media:description>\(escaped(video.description))</media:description>
               <media:community>
                <media:starRating count="\(video.likes)" average="5.00" min="1" max="5"/>
                <media:statistics views="\(video.views)"/>
               </media:community>
              </media:group>
             </entry>
            """
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <feed xmlns:yt="http://www.youtube.com/xml/schemas/2015" xmlns:media="http://search.yahoo.com/mrss/" xmlns="http://www.w3.org/2005/Atom">
             <link rel="self" href="http://www.youtube.com/feeds/videos.xml?channel_id=\(channel.id)"/>
             <id>yt:channel:\(channel.id)</id>
             <yt:channelId>\(channel.id)</yt:channelId>
             <title>\(escaped(channel.title))</title>
            \(entries.joined(separator: "\n"))
            </feed>
            """
    }

    static let files = FileHosts(replica: "youtube", hosts: ["i.ytimg.com"])

    /// `request`: the body holds thumbnails, which point at the sandbox as it was reached.
    static func json(_ object: Any, status: HTTPResponse.Status = .ok, for request: Request? = nil) -> Response {
        jsonResponse(
            request.map { files.localized(object, for: $0) } ?? object, status: status,
            contentType: "application/json; charset=UTF-8")
    }

    // MARK: Paging

    /// Page tokens are opaque to clients; here they encode an offset.
    static func token(_ offset: Int) -> String { "CB" + String(offset, radix: 36).uppercased() + "AQ" }
    static func offset(_ token: String?) -> Int? {
        guard let token else { return 0 }
        guard token.hasPrefix("CB"), token.hasSuffix("AQ") else { return nil }
        return Int(token.dropFirst(2).dropLast(2), radix: 36)
    }

    private func page<T>(_ all: [T], _ request: Request, kind: String, item: (T) -> [String: Any]) -> Response {
        let query = request.uri.queryParameters
        let size = min(max(Int(query.get("maxResults") ?? "5") ?? 5, 0), 50)
        guard let offset = Self.offset(query.get("pageToken")) else {
            return Self.error(
                400, "The request specifies an invalid page token.", reason: "invalidPageToken", domain: "youtube.parameter",
                status: "INVALID_ARGUMENT")
        }
        let end = min(offset + size, all.count)
        var body: [String: Any] = [
            "kind": kind, "etag": "\"sandbox\"", "items": offset < end ? all[offset..<end].map(item) : [],
            "pageInfo": ["totalResults": all.count, "resultsPerPage": size],
        ]
        if end < all.count { body["nextPageToken"] = Self.token(end) }
        if offset > 0 { body["prevPageToken"] = Self.token(max(0, offset - size)) }
        return Self.json(body, for: request)
    }

    // MARK: Resources

    private func thumbnails(_ id: String, maxres: Bool) -> [String: Any] {
        var sizes: [String: Any] = [
            "default": ["url": "https://i.ytimg.com/vi/\(id)/default.jpg", "width": 120, "height": 90],
            "medium": ["url": "https://i.ytimg.com/vi/\(id)/mqdefault.jpg", "width": 320, "height": 180],
            "high": ["url": "https://i.ytimg.com/vi/\(id)/hqdefault.jpg", "width": 480, "height": 360],
        ]
        if maxres { sizes["maxres"] = ["url": "https://i.ytimg.com/vi/\(id)/maxresdefault.jpg", "width": 1280, "height": 720] }
        return sizes
    }

    /// What search.list does to text: `World&#39;s best`, `A &amp; B`, `&quot;quoted&quot;`.
    static func htmlEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "'", with: "&#39;").replacingOccurrences(
            of: "\"", with: "&quot;")
    }

    private func snippet(_ video: YouTubeCatalogue.Video) -> [String: Any] {
        let channel = catalogue.channels[video.channel]
        return [
            "publishedAt": ISO8601DateFormatter().string(from: video.published), "channelId": channel.id, "title": video.title,
            "description": video.description, "thumbnails": thumbnails(video.id, maxres: video.hasMaxres),
            "channelTitle": channel.title,
            "categoryId": video.category, "liveBroadcastContent": "none",
        ]
    }

    private func videoResource(_ video: YouTubeCatalogue.Video) -> [String: Any] {
        [
            "kind": "youtube#video", "etag": "\"\(video.id)\"", "id": video.id, "snippet": snippet(video),
            "contentDetails": ["duration": video.duration, "dimension": "2d", "definition": "hd", "caption": "false"],
            // The real API sends counts as strings.
            "statistics": [
                "viewCount": String(video.views), "likeCount": String(video.likes), "favoriteCount": "0",
                "commentCount": String(video.comments),
            ],
        ]
    }

    private func videoCategories(_ request: Request) throws -> Response {
        Self.json([
            "kind": "youtube#videoCategoryListResponse", "etag": "\"sandbox\"",
            "items": YouTubeCatalogue.categories.map { category in
                [
                    "kind": "youtube#videoCategory", "etag": "\"\(category.id)\"", "id": category.id,
                    "snippet": [
                        "title": category.title, "assignable": category.assignable, "channelId": "UCBR8-60-B28hp2BmDPdntcQ",
                    ],
                ]
            },
        ])
    }

    private func videos(_ request: Request) throws -> Response {
        let query = request.uri.queryParameters
        if let ids = query.get("id") {
            let list = ids.split(separator: ",").map(String.init)
            guard list.count <= 50 else {
                return Self.error(
                    400, "The request specifies too many ids.", reason: "invalidFilters", domain: "youtube.parameter",
                    status: "INVALID_ARGUMENT")
            }
            return Self.json(
                [
                    "kind": "youtube#videoListResponse", "etag": "\"sandbox\"",
                    "items": list.compactMap(catalogue.video).map(videoResource),
                    "pageInfo": ["totalResults": list.count, "resultsPerPage": list.count],
                ], for: request)
        }
        if query.get("myRating") == "like" {
            guard accounts.authorized(request) else { return Self.unauthenticated() }
            return page(
                accounts.likes.compactMap(catalogue.video), request, kind: "youtube#videoListResponse", item: videoResource)
        }
        guard query.get("chart") == "mostPopular" else {
            return Self.error(
                400, "No filter selected. Expected one of: chart, id, myRating", reason: "missingRequiredParameter",
                domain: "youtube.parameter", status: "INVALID_ARGUMENT")
        }
        let category = query.get("videoCategoryId")
        if let category, let known = YouTubeCatalogue.categories.first(where: { $0.id == category }), !known.assignable {
            return Self.error(
                404, "Requested entity was not found.", reason: "videoChartNotFound", domain: "youtube.video", status: "NOT_FOUND"
            )
        }
        let chart = catalogue.videos.filter { category == nil || $0.category == category }.sorted { $0.views > $1.views }
        return page(chart, request, kind: "youtube#videoListResponse", item: videoResource)
    }

    private func search(_ request: Request) throws -> Response {
        let query = request.uri.queryParameters
        let words = (query.get("q") ?? "").lowercased().replacingOccurrences(of: "+", with: " ").split(separator: " ").map(
            String.init)
        let types = Set((query.get("type") ?? "video,channel,playlist").split(separator: ",").map(String.init))
        var results: [[String: Any]] = []
        func matches(_ text: String) -> Bool { let lower = text.lowercased(); return words.allSatisfy { lower.contains($0) } }
        if types.contains("channel") {
            for channel in catalogue.channels where matches(channel.title) {
                results.append([
                    "kind": "youtube#searchResult", "etag": "\"\(channel.id)\"",
                    "id": ["kind": "youtube#channel", "channelId": channel.id],
                    "snippet": [
                        "publishedAt": "2015-01-01T00:00:00Z", "channelId": channel.id, "title": Self.htmlEscaped(channel.title),
                        "description": "The \(channel.title) channel.", "thumbnails": thumbnails(channel.id, maxres: false),
                        "channelTitle": channel.title,
                    ],
                ])
            }
        }
        if types.contains("playlist") {
            for channel in catalogue.channels where matches(channel.title + " playlist") {
                for playlist in channel.playlists {
                    results.append([
                        "kind": "youtube#searchResult", "id": ["kind": "youtube#playlist", "playlistId": playlist],
                        "snippet": [
                            "publishedAt": "2020-01-01T00:00:00Z", "channelId": channel.id, "title": "\(channel.title) playlist",
                            "description": "", "thumbnails": thumbnails(playlist, maxres: false), "channelTitle": channel.title,
                        ],
                    ])
                }
            }
        }
        if types.contains("video") {
            for video in catalogue.videos where matches(video.title + " " + video.description) {
                var snippet = snippet(video)
                snippet["categoryId"] = nil
                // search.list escapes its snippets' text as HTML, as the real API does.
                for key in ["title", "description", "channelTitle"] {
                    snippet[key] = (snippet[key] as? String).map(Self.htmlEscaped)
                }
                results.append([
                    "kind": "youtube#searchResult", "etag": "\"\(video.id)\"",
                    "id": ["kind": "youtube#video", "videoId": video.id], "snippet": snippet,
                ])
            }
        }
        return page(results, request, kind: "youtube#searchListResponse") { $0 }
    }

    private func channels(_ request: Request) throws -> Response {
        var ids = (request.uri.queryParameters.get("id") ?? "").split(separator: ",").map(String.init)
        if request.uri.queryParameters.get("mine") == "true" { ids = [catalogue.channels[0].id] }
        let items: [[String: Any]] = ids.compactMap { catalogue.channel($0) }.map { channel in
            let uploads = catalogue.playlist(channel.uploads)?.count ?? 0
            return [
                "kind": "youtube#channel", "etag": "\"\(channel.id)\"", "id": channel.id,
                "snippet": [
                    "title": channel.title, "description": "The \(channel.title) channel.",
                    "customUrl": "@" + channel.title.replacingOccurrences(of: " ", with: "").lowercased(),
                    "publishedAt": "2015-01-01T00:00:00Z", "thumbnails": thumbnails(channel.id, maxres: false),
                ],
                "contentDetails": ["relatedPlaylists": ["likes": "", "uploads": channel.uploads]],
                "statistics": [
                    "viewCount": String(channel.subscribers * 40), "subscriberCount": String(channel.subscribers),
                    "hiddenSubscriberCount": false, "videoCount": String(uploads),
                ],
            ]
        }
        return Self.json(
            [
                "kind": "youtube#channelListResponse", "etag": "\"sandbox\"",
                "pageInfo": ["totalResults": items.count, "resultsPerPage": 5], "items": items,
            ], for: request)
    }

    private func playlistItems(_ request: Request) throws -> Response {
        guard let id = request.uri.queryParameters.get("playlistId"), let videos = catalogue.playlist(id) else {
            return Self.error(
                404, "The playlist identified with the request's <code>playlistId</code> parameter cannot be found.",
                reason: "playlistNotFound", domain: "youtube.playlistItem", status: "NOT_FOUND")
        }
        return page(Array(videos.enumerated()), request, kind: "youtube#playlistItemListResponse") { position, video in
            var snippet = snippet(video)
            snippet["playlistId"] = id
            snippet["position"] = position
            snippet["resourceId"] = ["kind": "youtube#video", "videoId": video.id]
            snippet["videoOwnerChannelId"] = snippet["channelId"]
            return [
                "kind": "youtube#playlistItem", "etag": "\"\(video.id)\"", "id": "PI" + video.id, "snippet": snippet,
                "contentDetails": ["videoId": video.id, "videoPublishedAt": snippet["publishedAt"] ?? ""],
            ]
        }
    }
}
