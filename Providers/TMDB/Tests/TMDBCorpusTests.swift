import Foundation
import MediaKit
import TestSupport
import Testing

@testable import TMDB

/// The provider on answers recorded from the real TMDB API and TMDB's reference examples
/// (Recorded/SOURCES.md): every endpoint it calls, with real content checked.
@Suite struct TMDBCorpusTests {
    static let corpus = Recorded()

    /// Routes `3/<path>` to a recorded body; `details` answers movie/{id} with credits and videos
    /// appended from their own recordings, as `append_to_response=credits,videos` answers.
    func provider(routes: [String: String] = [:]) throws -> (TMDBProvider, RecordedHTTPClient) {
        var table = [
            "configuration": "configuration.json", "genre/movie/list": "genre-movie-list.json",
            "search/movie": "search-movie.json",
            "movie/popular": "movie-popular.json", "movie/now_playing": "movie-now-playing.json",
            "movie/top_rated": "movie-top-rated.json",
            "movie/upcoming": "movie-upcoming.json", "discover/movie": "discover-movie.json",
            "movie/550/similar": "movie-similar.json",
            "movie/550/recommendations": "movie-recommendations.json", "authentication/token/new": "request-token.json",
            "authentication/token/validate_with_login": "session-with-login.json", "authentication/session/new": "session.json",
            "authentication/session": "session-delete.json", "account": "account.json",
            "account/548/favorite/movies": "account-favorites.json", "account/548/favorite": "account-add-favorite.json",
        ]
        table.merge(routes) { $1 }
        let routesTable = table
        let details = Self.detailsWithAppendedResponses()
        let client = RecordedHTTPClient { request in
            let path = request.url.path.replacingOccurrences(of: "/3/", with: "")
            if path == "movie/550", routesTable["movie/550"] == nil {
                return (200, ["content-type": "application/json"], details)
            }
            return routesTable[path].map { Self.corpus.answer($0) }
        }
        let provider = try TMDBProvider(
            context: ProviderContext(config: ProviderConfig(["api_key": "k"]), http: client, logger: Logger(label: "test")))
        return (provider, client)
    }

    static func detailsWithAppendedResponses() -> Data {
        guard var details = try? JSONSerialization.jsonObject(with: corpus.data("movie-details.json")) as? [String: Any],
            let credits = try? JSONSerialization.jsonObject(with: corpus.data("movie-credits.json")),
            let videos = try? JSONSerialization.jsonObject(with: corpus.data("movie-videos.json"))
        else { return Data() }
        details["credits"] = credits
        details["videos"] = videos
        return (try? JSONSerialization.data(withJSONObject: details)) ?? Data()
    }

    @Test func genresAndTheFourLists() async throws {
        let (tmdb, _) = try provider()
        let categories = try await tmdb.categories()
        #expect(categories.count == 4 + 19)
        #expect(categories.contains(MediaCategory(id: "28", name: "Action")))
        for (list, first, pages) in [
            ("popular", "Wonka", 42471), ("now_playing", "Wonka", 155), ("top_rated", "The Shawshank Redemption", 456),
            ("upcoming", "Wonka", 37),
        ] {
            let page = try await tmdb.browse(category: list, cursor: nil)
            #expect(page.items.count == 20, "\(list)")
            #expect(page.items.first?.title == first, "\(list)")
            #expect(page.next == Cursor("2"), "\(list) of \(pages) pages")
            #expect(page.prev == nil)
        }
        let action = try await tmdb.browse(category: "Action", cursor: nil)
        #expect(action.items.first?.title == "Ant-Man and the Wasp: Quantumania")
    }

    @Test func searchWithImagesFromTheConfiguration() async throws {
        let (tmdb, client) = try provider()
        let page = try await tmdb.search(SearchQuery(text: "rrrrrr"))
        let movie = try #require(page.items.first)
        #expect(page.items.count == 1)
        #expect(page.next == nil)
        #expect(movie.title == "RRRrrrr!!!")
        #expect(movie.published == "2004-01-28")
        #expect(movie.subtitle == "2004")
        // The reference example lists w92 only: the largest size there is.
        #expect(movie.artwork?.hasPrefix("https://image.tmdb.org/t/p/w92/") == true)
        _ = try await tmdb.search(SearchQuery(text: "again"))
        #expect(client.urls.filter { $0.path.hasSuffix("/configuration") }.count == 1, "the configuration is fetched once")
    }

    @Test func fightClubWithCastDirectorAndTrailers() async throws {
        let (tmdb, _) = try provider()
        let movie = try await tmdb.item(ItemID(provider: "tmdb", kind: .movie, nativeID: "550"))
        #expect(movie.title == "Fight Club")
        #expect(movie.duration == 8340, "139 minutes")
        #expect(movie.published == "1999-10-15")
        #expect(movie.extra?["genres"] == "Drama")
        #expect(movie.extra?["cast"]?.hasPrefix("Edward Norton") == true)
        #expect(movie.extra?["director"] == "David Fincher")
        #expect(
            movie.extra?["trailer"] == "youtube:video:dfeUzm6KF4g"
                || movie.extra?["trailers"]?.contains("youtube:video:dfeUzm6KF4g") == true)
        // What `play` plays, from the real answer: the first trailer and its watch page.
        let plays = try #require(movie.plays)
        #expect(plays.id.description == movie.extra?["trailer"] && plays.label == "the first trailer")
        #expect(plays.url == "https://www.youtube.com/watch?v=\(plays.id.nativeID)")
    }

    @Test func similarThenRecommendationsWhereAnEmptyDateIsNoDate() async throws {
        let (tmdb, _) = try provider()
        let id = ItemID(provider: "tmdb", kind: .movie, nativeID: "550")
        let similar = try await tmdb.children(of: id, cursor: nil)
        #expect(similar.items.count == 20)
        #expect(similar.items.first?.title == "The Asphalt Jungle")
        #expect(similar.next == Cursor("s2"))
        let recommended = try await tmdb.children(of: id, cursor: Cursor("r1"))
        #expect(recommended.items.count == 21)
        let undated = try #require(recommended.items.first { $0.id.nativeID == "1083189" })
        #expect(undated.title == "Man")
        #expect(undated.published == nil, "release_date \"\" is no date")
        #expect(undated.subtitle == nil)
        #expect(recommended.next == Cursor("r2"))
    }

    @Test func loginAccountAndFavorites() async throws {
        let (tmdb, client) = try provider()
        let session = try await tmdb.login(LoginCredentials(username: "travisbell", password: "secret"), prompt: { _ in })
        #expect(session.accessToken == "79191836ddaa0da3df76a5ffef6f07ad6ab0c641")
        #expect(session.account == "travisbell")
        #expect(session.values["account_id"] == "548")
        let favorites = try await tmdb.accountFavorites(cursor: nil, session: session)
        #expect(favorites.items.first?.title == "The Incredibles")
        #expect(favorites.next == Cursor("2"))
        try await tmdb.setAccountFavorite(ItemID(provider: "tmdb", kind: .movie, nativeID: "550"), true, session: session)
        try await tmdb.logout(session)
        #expect(client.asked.withLock { $0.contains { $0.method == "DELETE" } })
    }

    @Test(arguments: [
        ("error-invalid-api-key.json", "unauthorized", "not valid"),
        ("error-not-found.json", "notFound", "could not be found"),
        ("error-validation.json", "upstream", "query must be provided"),
    ])
    func realErrorBodiesKeepTheirReason(file: String, kind: String, reason: String) async throws {
        let (tmdb, _) = try provider(routes: ["search/movie": file, "movie/550": file])
        await #expect {
            try await tmdb.search(SearchQuery(text: "x"))
        } throws: { error in
            guard let error = error as? ProviderError else { return false }
            let message = error.message
            return error.kind == kind && (message.contains(reason) || kind == "unauthorized")
                && !message.contains("HTTP 422: HTTP 422")
                && !message.contains("TMDB:")
        }
    }
}
