import Basics
import FoundationEssentials
import Glibc
import MediaKit
import Synchronization

/// The Movie Database (API v3): genres and their most popular movies, the popular / now playing /
/// top rated / upcoming lists, search, details with cast, director and trailers, similar and
/// recommended movies; with a TMDB login, favorites are kept on the account too.
public struct TMDBProvider: CompiledProvider {
    public static let descriptor = ProviderDescriptor(
        id: "tmdb", name: "The Movie Database", kinds: [.movie],
        capabilities: [.categories, .browse, .search, .item, .children, .login, .remoteFavorites],
        configKeys: [
            .init(
                name: "access_token", summary: "API read access token (v4), sent as a Bearer header", secret: true,
                environment: ["TMDB_ACCESS_TOKEN"]),
            .init(name: "api_key", summary: "API key (v3), sent as api_key", secret: true, environment: ["TMDB_API_KEY"]),
            .init(name: "language", summary: "Language of titles and overviews", defaultValue: "en-US"),
            .init(name: "base_url", summary: "The API's base URL", defaultValue: "https://api.themoviedb.org"),
        ],
        auth: .sessionLogin,
        notes: "Needs TMDB_ACCESS_TOKEN or TMDB_API_KEY; `login tmdb` keeps favorites on your TMDB account.",
        requiredAnyOf: [["access_token", "api_key"]])

    /// Lists offered beside the genres.
    static let lists: [(id: String, name: String)] = [
        ("popular", "Popular"), ("now_playing", "Now Playing"), ("top_rated", "Top Rated"), ("upcoming", "Upcoming"),
    ]

    let base: URL
    let token: String?
    let key: String?
    let language: String
    let http: any HTTPClient
    /// The API's image configuration: kept for the life of the provider.
    let imageMemo = Memo<(base: String, poster: String, backdrop: String)>()

    public init(context: ProviderContext) throws {
        let config = context.config.declared(by: Self.descriptor)
        base = try config.url("base_url")
        token = config["access_token"]
        key = config["api_key"]
        language = config["language"] ?? ""
        http = context.http
    }

    // MARK: Categories and browsing

    public func categories() async throws -> [MediaCategory] {
        let genres: TMDBGenres = try await get("genre/movie/list", ["language": language])
        return Self.lists.map { MediaCategory(id: $0.id, name: $0.name) }
            + (genres.genres ?? []).compactMap { genre in
                genre.id.map { MediaCategory(id: String($0), name: genre.name ?? String($0)) }
            }
    }

    /// A genre's most popular movies (discover), or one of the lists; paged by the API's pages.
    public func browse(category: String, cursor: Cursor?) async throws -> Page {
        let page = try Self.page(cursor)
        if let list = Self.lists.first(where: { $0.id == category || $0.name.equalsIgnoringCase(category) }) {
            return try await movies("movie/\(list.id)", ["language": language, "page": String(page)])
        }
        var genre = category
        if Int(category) == nil {
            guard let match = try await categories().first(where: { $0.name.equalsIgnoringCase(category) })
            else {
                throw ProviderError.notFound("no TMDB genre '\(category)'; `categories tmdb` lists them")
            }
            genre = match.id
        }
        return try await movies(
            "discover/movie", ["with_genres": genre, "sort_by": "popularity.desc", "language": language, "page": String(page)])
    }

    public func search(_ query: SearchQuery) async throws -> Page {
        guard query.kind == nil || query.kind == .movie else {
            throw ProviderError.unsupported("mediahost searches TMDB for movies; people and TV are not among its kinds yet")
        }
        return try await movies(
            "search/movie", ["query": query.text, "language": language, "page": String(try Self.page(query.cursor))])
    }

    // MARK: Details and related movies

    public func item(_ id: ItemID) async throws -> MediaItem {
        guard id.kind == .movie, Int(id.nativeID) != nil else {
            throw ProviderError.notFound("no TMDB \(id.kind.rawValue) \(id.nativeID)")
        }
        let movie: TMDBMovie = try await get(
            "movie/\(id.nativeID)", ["language": language, "append_to_response": "credits,videos"])
        return try await item(from: movie, details: true)
    }

    /// Similar movies (the first page) and recommendations, paged.
    public func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        guard id.kind == .movie else { throw ProviderError.unsupported("only movies have related movies") }
        let kind = cursor?.rawValue.hasPrefix("r") == true ? "recommendations" : "similar"
        let page = try Self.page(cursor.map { Cursor(String($0.rawValue.drop { $0 == "r" || $0 == "s" })) })
        var result = try await movies("movie/\(id.nativeID)/\(kind)", ["language": language, "page": String(page)])
        let prefix = kind == "recommendations" ? "r" : "s"
        result.next = result.next.map { Cursor(prefix + $0.rawValue) }
        result.prev = result.prev.map { Cursor(prefix + $0.rawValue) }
        return result
    }

    // MARK: Requests

    func movies(_ path: String, _ parameters: [String: String], session: AuthSession? = nil) async throws -> Page {
        let page: TMDBPage<TMDBMovie> = try await get(path, parameters, session: session)
        var items: [MediaItem] = []
        for movie in page.results ?? [] { if let item = try? await item(from: movie, details: false) { items.append(item) } }
        let current = page.page ?? 1
        let pages = page.total_pages ?? current
        return Page(
            items: items, next: current < min(pages, 500) ? Cursor(String(current + 1)) : nil,
            prev: current > 1 ? Cursor(String(current - 1)) : nil,
            total: page.total_results)
    }

    static func page(_ cursor: Cursor?) throws -> Int {
        guard let cursor else { return 1 }
        guard let page = Int(cursor.rawValue), (1...500).contains(page) else {
            throw ProviderError.invalidArgument("cursor '\(cursor)' is not a TMDB page")
        }
        return page
    }

    func get<T: Decodable>(_ path: String, _ parameters: [String: String], session: AuthSession? = nil) async throws -> T {
        try decode(try await send("GET", path, parameters, session: session))
    }

    func send(
        _ method: String, _ path: String, _ parameters: [String: String], body: [String: Any]? = nil, session: AuthSession? = nil
    ) async throws -> HTTPResponse {
        guard token != nil || key != nil else {
            throw ProviderError.notConfigured("set TMDB_ACCESS_TOKEN or TMDB_API_KEY (or `config providers.tmdb.api_key <key>`)")
        }
        var credentials: [URLQueryItem] = []
        var headers = ["Accept": "application/json"]
        if let token {
            headers["Authorization"] = "Bearer \(token)"
        } else if let key {
            credentials.append(URLQueryItem(name: "api_key", value: key))
        }
        if let session { credentials.append(URLQueryItem(name: "session_id", value: session.accessToken)) }
        guard let url = base.endpoint("3/\(path)", query: parameters, extra: credentials) else {
            throw ProviderError.invalidArgument("cannot build a TMDB URL for \(path)")
        }
        var data: Data?
        if let body {
            headers["Content-Type"] = "application/json;charset=utf-8"
            guard let json = JSONValue(plain: body) else {
                throw ProviderError.invalidArgument("a TMDB request body that is not JSON")
            }
            data = Data(JSONWriter.bytes(json))
        }
        return try await http.fetch(
            HTTPRequest(method: method, url: url, headers: headers, body: data), failure: Self.error(for:))
    }

    func decode<T: Decodable>(_ response: HTTPResponse) throws -> T {
        try response.json(service: "TMDB", what: response.url.path)
    }

    /// TMDB's status codes: 7/10 invalid key, 34 not found, 25 rate limit, 3/17/30/33 session and login.
    static func error(for response: HTTPResponse) -> ProviderError {
        let status = try? JSONDecoder().decode(TMDBStatus.self, from: response.body)
        let message = ServiceReason.from(response.body) ?? "no reason given"
        switch status?.status_code {
        case 7?, 10?: return .unauthorized("the TMDB API key or token is not valid; set TMDB_ACCESS_TOKEN or TMDB_API_KEY")
        case 34?, 6?: return .notFound(message)
        case 25?: return .rateLimited(retryAfter: response.retryAfter)
        case 30?: return .unauthorized("invalid username or password")
        case 33?: return .unauthorized("the login took too long (the request token expired); try `login tmdb` again")
        case 3?, 17?: return .unauthorized("TMDB refused the session; run `login tmdb` again")
        default: return .from(response)
        }
    }

    // MARK: Items

    /// Image URLs come from the configuration endpoint, fetched once.
    func imageBase() async throws -> (base: String, poster: String, backdrop: String) {
        if let cached = imageMemo.value() { return cached }
        let configuration: TMDBConfiguration = try await get("configuration", [:])
        let images = configuration.images
        let base = images?.secure_base_url ?? images?.base_url ?? "https://image.tmdb.org/t/p/"
        let poster = images?.poster_sizes?.first { $0 == "w500" } ?? images?.poster_sizes?.last ?? "original"
        let backdrop = images?.backdrop_sizes?.first { $0 == "w1280" } ?? images?.backdrop_sizes?.last ?? "original"
        imageMemo.keep((base, poster, backdrop))
        return (base, poster, backdrop)
    }

    /// "1999-10-15" as it is; anything else (empty, partial, garbage) is no date.
    static func releaseDate(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            bytes.enumerated().allSatisfy({ $0.offset == 4 || $0.offset == 7 || (0x30...0x39).contains($0.element) })
        else { return nil }
        return text
    }

    func item(from movie: TMDBMovie, details: Bool) async throws -> MediaItem {
        guard let id = movie.id else { throw ProviderError.invalidResponse("a TMDB movie without an id") }
        let images = try await imageBase()
        // "" or anything that is not a date is no date (TMDB sends "" for unreleased films).
        let released = movie.release_date.flatMap(Self.releaseDate)
        let year = released.map { String($0.prefix(4)) }
        var item = MediaItem(
            id: ItemID(provider: "tmdb", kind: .movie, nativeID: String(id)), title: movie.title ?? "Movie \(id)",
            subtitle: year, summary: movie.overview, url: "https://www.themoviedb.org/movie/\(id)",
            artwork: movie.poster_path.map { images.base + images.poster + $0 }, published: released,
            duration: movie.runtime.flatMap { $0 > 0 ? Double($0) * 60 : nil })
        var extra: [String: String] = [:]
        if let rating = movie.vote_average { extra["rating"] = String(printf: "%.1f/10", rating) }
        if let backdrop = movie.backdrop_path { extra["backdrop"] = images.base + images.backdrop + backdrop }
        if let genres = movie.genres?.compactMap(\.name), !genres.isEmpty { extra["genres"] = genres.joined(separator: ", ") }
        if let tagline = movie.tagline, !tagline.isEmpty { extra["tagline"] = tagline }
        if details {
            let cast = (movie.credits?.cast ?? []).sorted { ($0.order ?? 0) < ($1.order ?? 0) }.prefix(5).compactMap(\.name)
            if !cast.isEmpty { extra["cast"] = cast.joined(separator: ", ") }
            if let director = movie.credits?.crew?.first(where: { $0.job == "Director" })?.name {
                extra["director"] = director
                item.creator = director
            }
            // Trailers on YouTube link into the youtube provider: `show`/`play` follow them.
            let trailers = (movie.videos?.results ?? []).filter { $0.site == "YouTube" && $0.key != nil }
                .sorted { ($0.type == "Trailer" ? 0 : 1) < ($1.type == "Trailer" ? 0 : 1) }
            if let first = trailers.first?.key {
                extra["trailer"] = "youtube:video:\(first)"
                // What `play` plays for the movie; YouTube's watch page plays it where YouTube
                // is not configured (mpv opens it).
                item.plays = MediaLink(
                    id: ItemID(provider: "youtube", kind: .video, nativeID: first),
                    url: "https://www.youtube.com/watch?v=\(first)", label: "the first trailer")
            }
            if trailers.count > 1 {
                extra["trailers"] = trailers.compactMap { $0.key.map { "youtube:video:\($0)" } }.joined(separator: " ")
            }
        }
        item.extra = extra
        if let votes = movie.vote_count { item.stats = ["votes": votes] }
        return item
    }
}
