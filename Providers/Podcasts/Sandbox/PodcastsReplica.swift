import Foundation
import Hummingbird
import NIOCore
import Sandbox
import Synchronization

/// The iTunes Search API, Apple's genre list and top-podcast charts, every show's feed and its
/// episode audio (with Range support), as the real services serve them.
public struct PodcastsReplica: SandboxReplica {
    public let id = "podcasts"
    let catalogue: PodcastCatalogue
    /// Episodes published on request since the start, by show (`POST _publish/<show>`).
    let publishing = Publishing()
    /// The show whose feed is about 60 MB (`?episodes=N` on its feed URL changes its length).
    public static let longShowID = PodcastCatalogue.longShowID
    public static let radioShowID = PodcastCatalogue.radioShowID

    public init(seed: UInt64 = 20_261_121, shows: Int = 600) {
        catalogue = PodcastCatalogue(seed: seed, count: shows)
    }

    /// A show as it is now: the catalogue's, with the episodes published since.
    func show(_ id: Int) -> PodcastCatalogue.Show? {
        guard var show = catalogue.show(id) else { return nil }
        let published = publishing.count(id)
        show.episodeCount += published
        show.published = published
        return show
    }

    /// Publishes `count` new episodes of `show` (a refresh then finds them).
    public func publish(_ show: Int, count: Int = 1) -> Int? {
        guard catalogue.show(show) != nil, (1...1000).contains(count) else { return nil }
        publishing.add(count, to: show)
        return self.show(show)?.episodeCount
    }

    public func register(_ routes: SandboxRoutes) {
        // New episodes on request: `POST /podcasts/_publish/<show>?count=N` (1 to 1000).
        routes.post("_publish/:show") { request, context in
            let count = request.uri.queryParameters.get("count").flatMap { Int($0) } ?? 1
            guard let id = context.parameters.get("show", as: Int.self), let total = publish(id, count: count) else {
                return Self.json(["error": "no such show, or a count outside 1...1000"], status: .badRequest)
            }
            return Self.json(["show": id, "episodes": total])
        }
        routes.get("search") { request, context in try search(request, context) }
        routes.get("lookup") { request, context in try lookup(request, context) }
        routes.get("WebObjects/MZStoreServices.woa/ws/genres") { _, _ in try genres() }
        routes.get(":country/rss/toppodcasts/:limit/:genre/json") { request, context in
            try top(request, context, limit: context.parameters.get("limit"), genre: context.parameters.get("genre"))
        }
        routes.get(":country/rss/toppodcasts/:limit/json") { request, context in
            try top(request, context, limit: context.parameters.get("limit"), genre: nil)
        }
        routes.get("feeds/:file") { request, context in try feed(request, context) }
        routes.get("media/:show/:file") { request, context in try media(request, context) }
        routes.get("transcripts/:show/:file") { request, context in
            let writer = FeedWriter(catalogue: catalogue, base: base(request))
            guard let show = context.parameters.get("show", as: Int.self).flatMap(show),
                let file = context.parameters.get("file"), let (body, type) = writer.transcript(show, file: file)
            else { return Response(status: .notFound) }
            var headers = HTTPFields()
            headers[.contentType] = type + "; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: Data(body.utf8))))
        }
        routes.get("chapters/:show/:file") { request, context in
            guard context.parameters.get("show", as: Int.self) == PodcastCatalogue.radioShowID,
                context.parameters.get("file") == "3.json"
            else { return Response(status: .notFound) }
            return jsonResponse(
                FeedWriter.radioChaptersFile(base: base(request)), status: .ok, contentType: "application/json+chapters")
        }
        routes.get("artwork/:file") { request, _ in
            Response(
                status: .ok, headers: [.contentType: "image/png"],
                body: .init(byteBuffer: ByteBuffer(bytes: SandboxPicture.png(for: "podcast" + request.uri.path))))
        }
    }

    private func base(_ request: Request) -> String {
        "http://\(request.head.authority ?? "127.0.0.1")/\(id)"
    }

    // MARK: iTunes Search API

    private func search(_ request: Request, _ context: SandboxContext) throws -> Response {
        let query = request.uri.queryParameters
        guard let term = query.get("term") else {
            return Self.json(
                ["errorMessage": "Invalid value(s) for key(s): [term]", "queryParameters": "term"], status: .badRequest)
        }
        if let media = query.get("media"), media != "podcast", media != "all" {
            return Self.json(["resultCount": 0, "results": [Any]()])
        }
        let limit = min(max(Int(query.get("limit") ?? "50") ?? 50, 1), 200)
        let offset = max(Int(query.get("offset") ?? "0") ?? 0, 0)
        let matches = catalogue.search(term.replacingOccurrences(of: "+", with: " "))
        let page = matches.dropFirst(offset).prefix(limit)
        let writer = FeedWriter(catalogue: catalogue, base: base(request))
        return Self.json(["resultCount": page.count, "results": page.map { result($0, writer) }])
    }

    private func lookup(_ request: Request, _ context: SandboxContext) throws -> Response {
        let ids = (request.uri.queryParameters.get("id") ?? "").split(separator: ",").compactMap { Int($0) }
        let writer = FeedWriter(catalogue: catalogue, base: base(request))
        let results = ids.compactMap(show).map { result($0, writer) }
        return Self.json(["resultCount": results.count, "results": results])
    }

    private func result(_ show: PodcastCatalogue.Show, _ writer: FeedWriter) -> [String: Any] {
        let slug = show.title.lowercased().replacingOccurrences(of: " ", with: "-")
        var item: [String: Any] = [
            "wrapperType": "track", "kind": "podcast", "collectionId": show.id, "trackId": show.id,
            "artistName": show.author, "collectionName": show.title, "trackName": show.title,
            "collectionCensoredName": show.title, "trackCensoredName": show.title,
            "feedUrl": "\(writer.base)/feeds/\(show.id).xml",
            "collectionViewUrl": "https://podcasts.apple.com/us/podcast/\(slug)/id\(show.id)?uo=4",
            "trackViewUrl": "https://podcasts.apple.com/us/podcast/\(slug)/id\(show.id)?uo=4",
            "artworkUrl30": writer.artwork(show), "artworkUrl60": writer.artwork(show),
            "artworkUrl100": writer.artwork(show), "artworkUrl600": writer.artwork(show),
            "collectionPrice": 0.0, "trackPrice": 0.0, "collectionHdPrice": 0,
            "releaseDate": FeedWriter.iso(show.releaseDate), "collectionExplicitness": "notExplicit",
            "trackExplicitness": "cleaned", "trackCount": show.episodeCount, "country": "USA", "currency": "USD",
            "primaryGenreName": show.genre.name, "contentAdvisoryRating": "Clean",
            "genreIds": [String(show.genre.id), "26"], "genres": [show.genre.name, "Podcasts"],
        ]
        // Real results sometimes lack fields; so do ours.
        if show.id % 11 == 0 { item["artworkUrl600"] = nil }
        return item
    }

    private func genres() throws -> Response {
        var subgenres: [String: Any] = [:]
        for genre in PodcastCatalogue.genres {
            var children: [String: Any] = [:]
            for sub in genre.subgenres {
                children[String(sub.id)] = [
                    "name": sub.name, "id": String(sub.id), "url": "https://podcasts.apple.com/us/genre/id\(sub.id)",
                ]
            }
            var entry: [String: Any] = [
                "name": genre.name, "id": String(genre.id), "url": "https://podcasts.apple.com/us/genre/id\(genre.id)",
            ]
            if !children.isEmpty { entry["subgenres"] = children }
            subgenres[String(genre.id)] = entry
        }
        return Self.json([
            "26": [
                "name": "Podcasts", "id": "26", "url": "https://podcasts.apple.com/us/genre/podcasts/id26",
                "subgenres": subgenres,
            ]
        ])
    }

    // MARK: Top podcasts chart (the iTunes RSS JSON format)

    private func top(_ request: Request, _ context: SandboxContext, limit: String?, genre: String?) throws -> Response {
        func value(_ segment: String?, _ name: String) -> Int? {
            guard let segment, segment.hasPrefix(name + "=") else { return nil }
            return Int(segment.dropFirst(name.count + 1))
        }
        let count = min(max(value(limit, "limit") ?? 10, 1), 200)
        let genreID = value(genre, "genre")
        let writer = FeedWriter(catalogue: catalogue, base: base(request))
        let entries: [[String: Any]] = catalogue.top(genre: genreID).prefix(count).map { show in
            [
                "im:name": ["label": show.title],
                "im:image": [55, 60, 170].map { ["label": writer.artwork(show), "attributes": ["height": String($0)]] },
                "summary": ["label": show.summary],
                "im:price": ["label": "Get", "attributes": ["amount": "0", "currency": "USD"]],
                "im:contentType": ["attributes": ["term": "Podcast", "label": "Podcast"]],
                "title": ["label": "\(show.title) - \(show.author)"],
                "link": [
                    "attributes": [
                        "rel": "alternate", "type": "text/html",
                        "href": "https://podcasts.apple.com/us/podcast/id\(show.id)?uo=2",
                    ]
                ],
                "id": [
                    "label": "https://podcasts.apple.com/us/podcast/id\(show.id)?uo=2", "attributes": ["im:id": String(show.id)],
                ],
                "im:artist": ["label": show.author],
                "category": ["attributes": ["im:id": String(show.genre.id), "term": show.genre.name, "label": show.genre.name]],
                "im:releaseDate": ["label": FeedWriter.iso(show.releaseDate)],
            ]
        }
        // The real feed gives a bare object, not an array, when the chart has one entry.
        let entry: Any = entries.count == 1 ? entries[0] : entries
        let title =
            genreID.flatMap { id in PodcastCatalogue.genres.first { $0.id == id }?.name }.map {
                "iTunes Store: Top Podcasts in \($0)"
            }
            ?? "iTunes Store: Top Podcasts"
        return Self.json([
            "feed": [
                "author": ["name": ["label": "iTunes Store"]], "entry": entry, "title": ["label": title],
                "updated": ["label": "2026-11-21T00:00:00-07:00"],
            ]
        ])
    }

    // MARK: Feeds and media

    private func feed(_ request: Request, _ context: SandboxContext) throws -> Response {
        guard let file = context.parameters.get("file"), file.hasSuffix(".xml"), let id = Int(file.dropLast(4)),
            let show = show(id)
        else { return Response(status: .notFound) }
        let writer = FeedWriter(catalogue: catalogue, base: base(request))
        let etag = "\"feed-\(show.id)-\(show.episodeCount)\""
        // Changes with what is published, so a reader asking by date alone sees new episodes.
        let lastModified =
            show.published == 0
            ? "Tue, 10 Jun 2025 09:41:00 GMT"
            : FeedWriter.httpDate(show.releaseDate.addingTimeInterval(Double(show.published) * 3600))
        if request.headers[.ifNoneMatch] == etag
            || (request.headers[.ifNoneMatch] == nil && request.headers[.ifModifiedSince] == lastModified)
        {
            return Response(status: .notModified, headers: [.eTag: etag, .lastModified: lastModified])
        }
        if show.id == PodcastCatalogue.longShowID {
            // Written as it is sent, a few hundred episodes at a time: the replica never holds 60 MB.
            // `?episodes=N` makes it shorter (tests) or longer (benchmarks).
            var long = show
            if let count = request.uri.queryParameters.get("episodes").flatMap({ Int($0) }), (1...200_000).contains(count) {
                long.episodeCount = count
            }
            let show = long
            return Response(
                status: .ok,
                headers: [.contentType: "application/rss+xml; charset=utf-8", .eTag: etag, .lastModified: lastModified],
                body: ResponseBody { body in
                    try await body.write(ByteBuffer(string: writer.rssHeader(show, encoding: "UTF-8")))
                    for start in stride(from: show.episodeCount, through: 1, by: -250) {
                        var chunk = ""
                        for number in stride(from: start, to: max(0, start - 250), by: -1) {
                            chunk += writer.rssItem(show, number)
                        }
                        try await body.write(ByteBuffer(string: chunk))
                    }
                    try await body.write(ByteBuffer(string: writer.rssFooter))
                    try await body.finish(nil)
                })
        }
        let (body, type) = writer.feed(for: show)
        return Response(
            status: .ok, headers: [.contentType: type, .eTag: etag, .lastModified: lastModified],
            body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    private func media(_ request: Request, _ context: SandboxContext) throws -> Response {
        if context.parameters.get("show", as: Int.self) == PodcastCatalogue.radioShowID,
            let file = context.parameters.get("file"), file.hasSuffix(".wav"), let number = Int(file.dropLast(4)),
            let radio = show(PodcastCatalogue.radioShowID), (1...radio.episodeCount).contains(number)
        {
            return MediaFile.wave(seconds: catalogue.episode(radio, number).duration, etag: "\"radio-\(number)\"")
                .response(to: request, bytesPerSecond: context.mediaBytesPerSecond)
        }
        guard let showID = context.parameters.get("show", as: Int.self), let show = show(showID),
            let file = context.parameters.get("file"), file.hasSuffix(".mp3"), let number = Int(file.dropLast(4)),
            (1...show.episodeCount).contains(number)
        else { return Response(status: .notFound) }
        let size = catalogue.episode(show, number).size
        let version = context.mediaVersion
        // Audio a real player plays (a tone in a WAV of the listed size), so `play` works on
        // the sandbox as on a real feed.
        return MediaFile.wave(
            size: size, seed: (UInt64(showID) &* 131 &+ UInt64(number)) ^ (version &* 0x9E37_79B9),
            etag: "\"\(showID)-\(number)-v\(version)\"", type: "audio/mpeg"
        ).response(to: request, bytesPerSecond: context.mediaBytesPerSecond)
    }

    static func json(_ object: Any, status: HTTPResponse.Status = .ok) -> Response {
        jsonResponse(object, status: status, contentType: "text/javascript; charset=utf-8")
    }
}

/// How many episodes were published on request, by show.
final class Publishing: Sendable {
    private let counts = Mutex<[Int: Int]>([:])

    func count(_ show: Int) -> Int { counts.withLock { $0[show] ?? 0 } }

    func add(_ count: Int, to show: Int) { counts.withLock { $0[show, default: 0] += count } }
}
