import Foundation
import Hummingbird
import NIOCore
import Sandbox
import Synchronization
import YouTubeSandbox

/// The Movie Database API v3 as the real service answers it: configuration, genres, discover,
/// lists, search, details with credits and videos, similar/recommended movies, the request-token
/// -> login -> session -> account flow, and account favorites.
public struct TMDBReplica: SandboxReplica {
    public let id = "tmdb"
    let catalogue = TMDBCatalogue()
    public let accounts = TMDBAccounts()

    public init() {}

    public func environment(baseURL: String) -> [String: String] { ["TMDB_API_KEY": "sandbox-key"] }

    public func register(_ routes: SandboxRoutes) {
        Self.files.register(routes)
        let api = routes.group("3")
        api.get("configuration") { request, _ in
            try authorized(request) { Self.json(Self.files.localized(Self.configuration, for: request)) }
        }
        api.get("genre/movie/list") { request, _ in
            try authorized(request) { Self.json(["genres": TMDBCatalogue.genres.map { ["id": $0.id, "name": $0.name] }]) }
        }
        api.get("discover/movie") { request, _ in
            try authorized(request) {
                let genre = request.uri.queryParameters.get("with_genres").flatMap { Int($0) }
                let movies = catalogue.movies.filter { genre == nil || $0.genres.contains(genre!) }.sorted {
                    $0.popularity > $1.popularity
                }
                return page(movies, request)
            }
        }
        for list in ["popular", "now_playing", "top_rated", "upcoming"] {
            api.get("movie/\(list)") { request, _ in try authorized(request) { page(catalogue.list(list), request) } }
        }
        api.get("search/movie") { request, _ in
            try authorized(request) {
                let words = (request.uri.queryParameters.get("query") ?? "").lowercased().replacingOccurrences(of: "+", with: " ")
                    .split(separator: " ")
                guard !words.isEmpty else { return page([], request) }
                return page(
                    catalogue.movies.filter { movie in words.allSatisfy { movie.title.lowercased().contains($0) } }, request)
            }
        }
        api.get("movie/:id") { request, context in
            try authorized(request) {
                guard let id = context.parameters.get("id", as: Int.self), let movie = catalogue.movie(id) else {
                    return Self.notFound()
                }
                return Self.json(details(movie, append: request.uri.queryParameters.get("append_to_response") ?? ""))
            }
        }
        for related in ["similar", "recommendations"] {
            api.get("movie/:id/\(related)") { request, context in
                try authorized(request) {
                    guard let id = context.parameters.get("id", as: Int.self), let movie = catalogue.movie(id) else {
                        return Self.notFound()
                    }
                    return page(catalogue.related(movie, recommendations: related == "recommendations"), request)
                }
            }
        }
        accounts.register(api, catalogue: catalogue, replica: self)
    }

    // MARK: Authentication of the app: api_key or a v4 bearer token

    func authorized(_ request: Request, _ body: () throws -> Response) throws -> Response {
        let key = request.uri.queryParameters.get("api_key")
        let bearer = request.headers[.authorization].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        let credential = key ?? bearer ?? ""
        guard !credential.isEmpty, !credential.hasPrefix("bad") else {
            return Self.json(
                ["status_code": 7, "status_message": "Invalid API key: You must be granted a valid key.", "success": false],
                status: .unauthorized)
        }
        return try body()
    }

    // MARK: Responses

    static var configuration: [String: Any] {
        [
            "images": [
                "base_url": "http://image.tmdb.org/t/p/", "secure_base_url": "https://image.tmdb.org/t/p/",
                "backdrop_sizes": ["w300", "w780", "w1280", "original"],
                "logo_sizes": ["w45", "w92", "w154", "w185", "w300", "w500", "original"],
                "poster_sizes": ["w92", "w154", "w185", "w342", "w500", "w780", "original"],
                "profile_sizes": ["w45", "w185", "h632", "original"],
                "still_sizes": ["w92", "w185", "w300", "original"],
            ],
            "change_keys": ["adult", "title"],
        ]
    }

    static func notFound() -> Response {
        json(
            ["success": false, "status_code": 34, "status_message": "The resource you requested could not be found."],
            status: .notFound)
    }

    func page(_ movies: [TMDBCatalogue.Movie], _ request: Request) -> Response {
        let page = max(1, Int(request.uri.queryParameters.get("page") ?? "1") ?? 1)
        guard page <= 500 else {
            return Self.json(
                [
                    "success": false, "status_code": 22,
                    "status_message": "Invalid page: Pages start at 1 and max at 500. They are expected to be an integer.",
                ], status: .badRequest)
        }
        let start = (page - 1) * 20
        let slice = start < movies.count ? Array(movies[start..<min(start + 20, movies.count)]) : []
        return Self.json([
            "page": page, "results": slice.map(summary), "total_pages": max(1, (movies.count + 19) / 20),
            "total_results": movies.count,
        ])
    }

    func summary(_ movie: TMDBCatalogue.Movie) -> [String: Any] {
        [
            "adult": false, "backdrop_path": movie.backdrop, "genre_ids": movie.genres, "id": movie.id, "original_language": "en",
            "original_title": movie.title, "overview": movie.overview, "popularity": movie.popularity,
            "poster_path": movie.poster,
            "release_date": movie.release, "title": movie.title, "video": false, "vote_average": movie.voteAverage,
            "vote_count": movie.voteCount,
        ]
    }

    func details(_ movie: TMDBCatalogue.Movie, append: String) -> [String: Any] {
        var body = summary(movie)
        body["genre_ids"] = nil
        body["genres"] = movie.genres.compactMap { id in
            TMDBCatalogue.genres.first { $0.id == id }.map { ["id": $0.id, "name": $0.name] }
        }
        body["runtime"] = movie.runtime
        body["status"] = "Released"
        body["tagline"] = "A sandbox film."
        body["imdb_id"] = "tt\(String(format: "%07d", movie.id))"
        let parts = append.split(separator: ",")
        if parts.contains("credits") {
            body["credits"] = [
                "cast": movie.cast.enumerated().map { order, name in
                    [
                        "id": 5000 + order, "name": name, "character": "Role \(order + 1)", "order": order,
                        "known_for_department": "Acting",
                    ]
                },
                "crew": [
                    ["id": 9000, "name": movie.director, "job": "Director", "department": "Directing"],
                    ["id": 9001, "name": "Sam Writer", "job": "Screenplay", "department": "Writing"],
                ],
            ]
        }
        if parts.contains("videos") {
            body["videos"] = [
                "results": movie.trailers.enumerated().map { index, key in
                    [
                        "iso_639_1": "en", "iso_3166_1": "US", "name": index == 0 ? "Official Trailer" : "Teaser", "key": key,
                        "site": "YouTube",
                        "size": 1080, "type": index == 0 ? "Trailer" : "Teaser", "official": true,
                        "published_at": movie.release + "T12:00:00.000Z", "id": "vid\(movie.id)\(index)",
                    ]
                }
            ]
        }
        return body
    }

    /// Posters and backdrops: the configuration's image base points at the sandbox.
    static let files = FileHosts(replica: "tmdb", hosts: ["image.tmdb.org"])

    static func json(_ object: Any, status: HTTPResponse.Status = .ok) -> Response {
        jsonResponse(object, status: status, contentType: "application/json;charset=utf-8")
    }
}

/// A few thousand deterministic movies across every genre; 550 is Fight Club.
struct TMDBCatalogue: Sendable {
    struct Movie: Sendable {
        var id: Int
        var title: String
        var overview: String
        var release: String
        var runtime: Int
        var genres: [Int]
        var voteAverage: Double
        var voteCount: Int
        var popularity: Double
        var poster: String
        var backdrop: String
        var cast: [String]
        var director: String
        var trailers: [String]
    }

    static let genres: [(id: Int, name: String)] = [
        (28, "Action"), (12, "Adventure"), (16, "Animation"), (35, "Comedy"), (80, "Crime"), (99, "Documentary"), (18, "Drama"),
        (10751, "Family"), (14, "Fantasy"), (36, "History"), (27, "Horror"), (10402, "Music"), (9648, "Mystery"),
        (10749, "Romance"),
        (878, "Science Fiction"), (10770, "TV Movie"), (53, "Thriller"), (10752, "War"), (37, "Western"),
    ]
    static let words = [
        "Midnight", "Silent", "Golden", "Last", "Broken", "Hidden", "Electric", "Crimson", "Lost", "Winter", "Iron", "Paper",
    ]
    static let nouns = [
        "Harbor", "Empire", "Garden", "Signal", "Frontier", "Promise", "Machine", "River", "Kingdom", "Orchestra", "Heist",
        "Summer",
    ]
    static let people = [
        "Ada Stone", "Ben Rivera", "Chloe Park", "Dev Shah", "Eli Novak", "Fay Moreau", "Gus Ito", "Hana Berg", "Ivan Cole",
        "Jun Ma",
    ]

    let movies: [Movie]
    private let index: [Int: Int]

    init(seed: UInt64 = 20_261_121, count: Int = 3000) {
        var random = SplitMix64(seed: seed)
        var movies: [Movie] = []
        let trailerIDs = YouTubeSandboxVideos.ids
        for n in 0..<count {
            let id = n == 0 ? 550 : 1000 + n
            let genre = Self.genres[n % Self.genres.count].id
            let second = Self.genres[Int(random.next() % UInt64(Self.genres.count))].id
            let title = n == 0 ? "Fight Club" : "The \(Self.words[n % 12]) \(Self.nouns[Int(random.next() % 12)]) \(n)"
            movies.append(
                Movie(
                    id: id, title: title,
                    overview: n == 0
                        ? "A ticking-time-bomb insomniac and a slippery soap salesman channel primal male aggression into a shocking new form of therapy."
                        : "In \(title), a story of \(Self.words[(n + 3) % 12].lowercased()) \(Self.nouns[(n + 5) % 12].lowercased())s unfolds.",
                    release: n == 0 ? "1999-10-15" : String(format: "%04d-%02d-%02d", 1970 + n % 56, n % 12 + 1, n % 28 + 1),
                    runtime: n == 0 ? 139 : 80 + Int(random.next() % 90), genres: genre == second ? [genre] : [genre, second],
                    voteAverage: n == 0 ? 8.4 : Double(Int(random.next() % 80) + 20) / 10, voteCount: Int(random.next() % 30_000),
                    popularity: n == 0 ? 99.5 : Double(random.next() % 100_000) / 1000,
                    poster: "/p\(id)x.jpg", backdrop: "/b\(id)x.jpg",
                    cast: (0..<5).map { Self.people[(n + $0) % Self.people.count] },
                    director: Self.people[(n + 7) % Self.people.count],
                    trailers: [trailerIDs[n % trailerIDs.count], trailerIDs[(n + 1) % trailerIDs.count]]))
        }
        self.movies = movies
        index = Dictionary(uniqueKeysWithValues: movies.enumerated().map { ($1.id, $0) })
    }

    func movie(_ id: Int) -> Movie? { index[id].map { movies[$0] } }

    func list(_ name: String) -> [Movie] {
        switch name {
        case "top_rated": movies.sorted { $0.voteAverage > $1.voteAverage }
        case "now_playing": movies.filter { $0.release >= "2024" }.sorted { $0.release > $1.release }
        case "upcoming": movies.filter { $0.release >= "2025" }
        default: movies.sorted { $0.popularity > $1.popularity }
        }
    }

    func related(_ movie: Movie, recommendations: Bool) -> [Movie] {
        movies.filter { $0.id != movie.id && $0.genres.contains(movie.genres[0]) && ($0.id % 2 == 0) == recommendations }.prefix(
            60
        ).map { $0 }
    }
}
