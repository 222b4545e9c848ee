import Foundation
import MediaKit
import TestSupport
import Testing

@testable import Twitter

/// Recorded X answers, mutated: no crash (entity offsets out of range included); a bad post
/// costs that post, not the page.
@Suite struct TwitterToleranceTests {
    static let corpus = Recorded()

    func provider(_ body: Data) throws -> TwitterProvider { try .answering(body, settings: ["bearer_token": "b"]) }

    @Test(arguments: ["search.json", "user-tweets.json", "user-tweets-2.json", "search-recent.json", "user-tweets-plain.json"])
    func timelines(file: String) async throws {
        await checkTolerance(of: try Self.corpus.data(file), named: file, variants: 80) { body in
            try await provider(body).timeline("2/tweets/search/recent", [:], cursor: nil, tokenName: "next_token").items.count
        }
    }

    @Test func aPostAndAUser() async throws {
        await checkTolerance(of: try Self.corpus.data("tweet.json"), named: "tweet") { body in
            _ = try await provider(body).item(ItemID(provider: "twitter", kind: .post, nativeID: "1"))
            return 0
        }
        await checkTolerance(of: try Self.corpus.data("user-by-username.json"), named: "user") { body in
            _ = try await provider(body).item(ItemID(provider: "twitter", kind: .user, nativeID: "1"))
            return 0
        }
    }
}
