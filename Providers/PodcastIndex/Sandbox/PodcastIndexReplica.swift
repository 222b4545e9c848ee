import Foundation
import HTTPTypes
import Hummingbird
import MediaKit
import NIOCore
import Sandbox

/// The Podcast Index API 1.0 as the real one answers it (the answers' shapes from its recorded
/// answers in Tests/Recorded): search by term, title and person, trending shows, recent
/// episodes, a show's episodes, shows by id, feed URL and guid; requests signed with the key,
/// the time and the SHA-1 of key, secret and time, refused in plain text as the real one does.
/// Its shows' feeds (with Podcasting 2.0 people, seasons, soundbites and funding) and their
/// media (WAV tones) are served here too, so a show found opens, plays and downloads.
public struct PodcastIndexReplica: SandboxReplica {
    public let id = "podcastindex"
    static let key = "sandbox-key"
    static let secret = "sandbox-secret"

    public init() {}

    public func environment(baseURL: String) -> [String: String] {
        ["PODCASTINDEX_API_KEY": Self.key, "PODCASTINDEX_API_SECRET": Self.secret]
    }

    struct Show {
        var id: Int64
        var title: String
        var author: String
        var guid: String
        var description: String
        var episodes: [Episode]
    }

    struct Episode {
        var id: Int64
        var title: String
        var guid: String
        var published: Int64
        var seconds: Int
        var people: [(name: String, role: String)]
    }

    /// Six shows; Ada Lovelace is a guest on three of them.
    static let shows: [Show] = {
        let titles = [
            ("Engines of Thought", "Charles Babbage"), ("The Analytical Hour", "Mary Somerville"),
            ("Signal and Noise", "Claude Shannon"),
            ("Loom Talk", "Joseph Jacquard"), ("Number Stations", "Grace Hopper"), ("Tone Radio", "Sandbox"),
        ]
        return titles.enumerated().map { index, entry in
            let showID = Int64(7_000_001 + index)
            let episodes = (1...3).map { number -> Episode in
                var people: [(String, String)] = [(entry.1, "host")]
                if index % 2 == 0, number == 2 { people.append(("Ada Lovelace", "guest")) }
                return Episode(
                    id: showID * 100 + Int64(number),
                    title: "\(entry.0) \(number): " + ["Beginnings", "Machines", "Futures"][number - 1],
                    guid: "pi-\(showID)-\(number)", published: 1_767_225_600 + Int64(index * 86_400 + number * 3_600),
                    seconds: [4, 30, 60][number - 1], people: people)
            }
            return Show(
                id: showID, title: entry.0, author: entry.1, guid: String(format: "%08x-0000-5000-8000-%012x", index + 1, showID),
                description: "\(entry.0), with \(entry.1): a show of the sandbox's Podcast Index.", episodes: episodes)
        }
    }()

    public func register(_ routes: SandboxRoutes) {
        routes.get("search/byterm") { request, _ in
            try signed(request) {
                let words = Self.words(request)
                return Self.feeds(
                    Self.shows.filter { show in
                        words.allSatisfy { (show.title + " " + show.author + " " + show.description).lowercased().contains($0) }
                    }, request, query: true)
            }
        }
        routes.get("search/bytitle") { request, _ in
            try signed(request) {
                let words = Self.words(request)
                return Self.feeds(
                    Self.shows.filter { show in words.allSatisfy { show.title.lowercased().contains($0) } }, request, query: true)
            }
        }
        routes.get("search/byperson") { request, _ in
            try signed(request) {
                let words = Self.words(request)
                let found = Self.shows.flatMap { show in
                    show.episodes.filter { episode in
                        episode.people.contains { person in words.allSatisfy { person.name.lowercased().contains($0) } }
                    }.map { (show, $0) }
                }
                return Self.items(found, request, feedURL: true, query: true)
            }
        }
        routes.get("podcasts/trending") { request, _ in try signed(request) { Self.feeds(Self.shows, request, query: false) } }
        routes.get("recent/episodes") { request, _ in
            try signed(request) {
                let all = Self.shows.flatMap { show in show.episodes.map { (show, $0) } }.sorted {
                    $0.1.published > $1.1.published
                }
                return Self.items(Array(all.prefix(Self.max(request))), request, feedURL: false, query: false)
            }
        }
        routes.get("episodes/byfeedid") { request, _ in
            try signed(request) {
                guard let show = Self.show(request.uri.queryParameters.get("id")) else {
                    return jsonResponse([
                        "status": "true", "items": [], "count": 0, "description": "No episodes match this feed id.",
                    ])
                }
                return Self.items(show.episodes.reversed().map { (show, $0) }, request, feedURL: true, query: true)
            }
        }
        routes.get("episodes/byid") { request, _ in
            try signed(request) {
                let id = request.uri.queryParameters.get("id").flatMap { Int64($0) }
                guard
                    let (show, episode) = Self.shows.lazy.flatMap({ show in show.episodes.map { (show, $0) } }).first(where: {
                        $0.1.id == id
                    })
                else { return jsonResponse(["status": "true", "episode": [], "description": "No episodes match this id."]) }
                return jsonResponse([
                    "status": "true", "episode": Self.episodeJSON(show, episode, request, feedURL: true),
                    "description": "Found matching item.",
                ])
            }
        }
        let finders: [(String, @Sendable (Request) -> Show?)] = [
            ("podcasts/byfeedid", { @Sendable request in Self.show(request.uri.queryParameters.get("id")) }),
            ("podcasts/byguid", { @Sendable request in Self.shows.first { $0.guid == request.uri.queryParameters.get("guid") } }),
            (
                "podcasts/byfeedurl",
                { @Sendable request in Self.shows.first { Self.feedURL($0, request) == request.uri.queryParameters.get("url") } }
            ),
        ]
        for (path, find) in finders {
            routes.get(RouterPath(path)) { request, _ in
                try signed(request) {
                    guard let show = find(request) else {
                        return jsonResponse(["status": "true", "feed": [], "description": "No feeds match this id."])
                    }
                    return jsonResponse([
                        "status": "true", "feed": Self.feedJSON(show, request), "description": "Found matching feed.",
                    ])
                }
            }
        }
        routes.get("feeds/:file") { request, context in
            guard let file = context.parameters.get("file"), file.hasSuffix(".xml"),
                let show = Self.show(String(file.dropLast(4)))
            else { return Response(status: .notFound) }
            return Response(
                status: .ok, headers: [.contentType: "application/rss+xml; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: Self.rss(show, request))))
        }
        routes.get("media/:show/:file") { request, context in
            guard let file = context.parameters.get("file"), file.hasSuffix(".wav"), let number = Int(file.dropLast(4)),
                let show = Self.show(context.parameters.get("show")),
                let episode = show.episodes.first(where: { $0.id % 100 == Int64(number) })
            else { return Response(status: .notFound) }
            return MediaFile.wave(seconds: episode.seconds, etag: "\"pi-\(episode.id)\"")
                .response(to: request, bytesPerSecond: context.mediaBytesPerSecond)
        }
    }

    // MARK: Signing

    /// As the real API: the key, a time within 3 minutes, and the SHA-1 of key, secret and time;
    /// any mistake is a 401 in plain text.
    func signed(_ request: Request, _ body: () throws -> Response) throws -> Response {
        let headers = request.headers
        let name = { (field: String) in HTTPField.Name(field).flatMap { headers[$0] } }
        let time = name("X-Auth-Date") ?? ""
        guard name("User-Agent")?.isEmpty == false else {
            return Response(
                status: .unauthorized, body: .init(byteBuffer: ByteBuffer(string: "A User-Agent header is required.")))
        }
        guard let key = name("X-Auth-Key"), key == Self.key, let seconds = Double(time),
            abs(Date().timeIntervalSince1970 - seconds) <= 180,
            name("Authorization") == SHA1.hex(Array((key + Self.secret + time).utf8))
        else {
            return Response(
                status: .unauthorized,
                body: .init(
                    byteBuffer: ByteBuffer(string: "Authorization header doesn't match up. Check your API key and secret.")))
        }
        return try body()
    }

    // MARK: Answers

    static func words(_ request: Request) -> [String] {
        (request.uri.queryParameters.get("q") ?? "").removingPercentEncoding?.replacingOccurrences(of: "+", with: " ")
            .lowercased()
            .split(separator: " ").map(String.init) ?? []
    }

    static func max(_ request: Request) -> Int {
        request.uri.queryParameters.get("max").flatMap { Int($0) }.map { min(Swift.max($0, 1), 1000) } ?? 10
    }

    static func show(_ id: String?) -> Show? { shows.first { String($0.id) == id } }

    static func root(_ request: Request) -> String { "http://" + (request.head.authority ?? "127.0.0.1") + "/podcastindex" }

    static func feedURL(_ show: Show, _ request: Request) -> String { root(request) + "/feeds/\(show.id).xml" }

    static func feedJSON(_ show: Show, _ request: Request) -> [String: Any] {
        [
            "id": show.id, "title": show.title, "url": feedURL(show, request), "originalUrl": feedURL(show, request),
            "link": "https://example.com/\(show.id)", "description": show.description, "author": show.author,
            "ownerName": show.author, "image": "", "artwork": "", "lastUpdateTime": show.episodes.last?.published ?? 0,
            "itunesId": NSNull(), "language": "en", "explicit": false, "type": 0, "dead": 0, "categories": ["102": "Technology"],
            "locked": 0, "podcastGuid": show.guid, "episodeCount": show.episodes.count,
            "newestItemPubdate": show.episodes.last?.published ?? 0, "trendScore": 9,
        ]
    }

    static func feeds(_ shows: [Show], _ request: Request, query: Bool) -> Response {
        let listed = shows.prefix(max(request)).map { feedJSON($0, request) }
        var answer: [String: Any] = [
            "status": "true", "feeds": Array(listed), "count": listed.count, "description": "Found matching feeds.",
        ]
        if query { answer["query"] = request.uri.queryParameters.get("q") ?? "" } else { answer["max"] = String(max(request)) }
        return jsonResponse(answer)
    }

    static func episodeJSON(_ show: Show, _ episode: Episode, _ request: Request, feedURL withFeed: Bool) -> [String: Any] {
        let number = episode.id % 100
        var object: [String: Any] = [
            "id": episode.id, "title": episode.title, "link": "", "description": "<p>\(episode.title)</p>", "guid": episode.guid,
            "datePublished": episode.published, "dateCrawled": episode.published + 60,
            "enclosureUrl": root(request) + "/media/\(show.id)/\(number).wav", "enclosureType": "audio/wav",
            "enclosureLength": 44 + episode.seconds * 16_000, "duration": episode.seconds, "explicit": 0, "episode": number,
            "episodeType": "full", "season": 1, "image": "", "feedItunesId": NSNull(), "feedImage": "", "feedId": show.id,
            "feedTitle": show.title, "feedLanguage": "en", "chaptersUrl": NSNull(), "transcriptUrl": NSNull(),
            "persons": episode.people.enumerated().map { index, person in
                ["id": index + 1, "name": person.name, "role": person.role, "group": "cast", "href": "", "img": ""]
            },
        ]
        if withFeed {
            object["feedUrl"] = feedURL(show, request)
            object["feedAuthor"] = show.author
        }
        return object
    }

    static func items(_ found: [(Show, Episode)], _ request: Request, feedURL: Bool, query: Bool) -> Response {
        let listed = found.prefix(max(request)).map { episodeJSON($0.0, $0.1, request, feedURL: feedURL) }
        var answer: [String: Any] = [
            "status": "true", "items": Array(listed), "count": listed.count, "description": "Found matching items.",
        ]
        if query { answer["query"] = request.uri.queryParameters.get("q") ?? request.uri.queryParameters.get("id") ?? "" }
        return jsonResponse(answer)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: "\"", with: "&quot;")
    }

    /// The show's feed, with Podcasting 2.0 elements.
    static func rss(_ show: Show, _ request: Request) -> String {
        var xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0">
            <channel><title>\(escape(show.title))</title><link>https://example.com/\(show.id)</link>
            <description>\(escape(show.description))</description><itunes:author>\(escape(show.author))</itunes:author>
            <podcast:guid>\(show.guid)</podcast:guid><podcast:funding url="https://example.com/\(show.id)/support">Support \(escape(show.title))</podcast:funding>
            <podcast:person role="host">\(escape(show.author))</podcast:person>

            """
        for episode in show.episodes.reversed() {
            let number = episode.id % 100
            let date = Date(timeIntervalSince1970: Double(episode.published))
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
            xml += """
                <item><title>\(escape(episode.title))</title><guid isPermaLink="false">\(episode.guid)</guid>
                <pubDate>\(formatter.string(from: date))</pubDate><itunes:duration>\(episode.seconds)</itunes:duration>
                <enclosure url="\(root(request))/media/\(show.id)/\(number).wav" type="audio/wav" length="\(44 + episode.seconds * 16_000)"/>
                <podcast:season name="The first">1</podcast:season><podcast:episode>\(number)</podcast:episode>
                <podcast:soundbite startTime="1" duration="2">The best bit of \(escape(episode.title))</podcast:soundbite>

                """
            for person in episode.people {
                xml += "<podcast:person role=\"\(person.role)\">\(escape(person.name))</podcast:person>\n"
            }
            xml += "</item>\n"
        }
        return xml + "</channel></rss>\n"
    }
}
