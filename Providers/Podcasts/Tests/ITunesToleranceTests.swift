import Foundation
import MediaKit
import TestSupport
import Testing

@testable import Podcasts

/// Recorded iTunes answers, mutated: no crash; a bad result costs that result, not the page.
@Suite struct ITunesToleranceTests {
    static let corpus = Recorded()

    func provider(_ body: Data) throws -> PodcastsProvider { try .answering(body) }

    @Test(arguments: ["itunes/search-apple.json", "itunes/search-gruber.json", "itunes/lookup.json"])
    func searchAndLookup(file: String) async throws {
        await checkTolerance(of: try Self.corpus.data(file), named: file) { body in
            try await provider(body).search(SearchQuery(text: "x")).items.count
        }
    }

    @Test func theChart() async throws {
        await checkTolerance(of: try Self.corpus.data("itunes/top-podcasts.json"), named: "chart", minDepth: 3) { body in
            try await provider(body).browse(category: "1310", cursor: nil).items.count
        }
    }
}
