import Foundation
import MediaKit
import TestSupport
import Testing

@testable import TMDB

/// Recorded TMDB answers, mutated: no crash; a bad movie costs that movie, not the page.
@Suite struct TMDBToleranceTests {
    static let corpus = Recorded()

    func provider(_ path: String, _ body: Data) throws -> TMDBProvider {
        let configuration = (try? Self.corpus.data("configuration.json")) ?? Data()
        let client = RecordedHTTPClient { request in
            let asked = request.url.path.replacingOccurrences(of: "/3/", with: "")
            if asked == path { return (200, ["content-type": "application/json"], body) }
            if asked == "configuration" { return (200, ["content-type": "application/json"], configuration) }
            return nil
        }
        return try TMDBProvider(
            context: ProviderContext(config: ProviderConfig(["api_key": "k"]), http: client, logger: Logger(label: "test")))
    }

    @Test(arguments: [
        ("movie-popular.json", "movie/popular"), ("movie-top-rated.json", "movie/top_rated"),
        ("search-movie.json", "search/movie"),
        ("movie-recommendations.json", "movie/550/recommendations"), ("movie-similar.json", "movie/550/similar"),
        ("discover-movie.json", "discover/movie"), ("account-favorites.json", "account/548/favorite/movies"),
    ])
    func pagesOfMovies(file: String, path: String) async throws {
        await checkTolerance(of: try Self.corpus.data(file), named: file) { body in
            try await provider(path, body).movies(path, [:]).items.count
        }
    }

    @Test func detailsGenresAndConfiguration() async throws {
        await checkTolerance(of: TMDBCorpusTests.detailsWithAppendedResponses(), named: "details", minDepth: 1) { body in
            _ = try await provider("movie/550", body).item(ItemID(provider: "tmdb", kind: .movie, nativeID: "550"))
            return 0
        }
        await checkTolerance(of: try Self.corpus.data("genre-movie-list.json"), named: "genres") { body in
            try await provider("genre/movie/list", body).categories().count
        }
    }
}
