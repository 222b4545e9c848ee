import Foundation
import MediaKit
import TestSupport
import Testing

@testable import Mastodon

/// Recorded Mastodon answers, mutated: no crash; a bad status costs that status, not the page.
@Suite struct MastodonToleranceTests {
    static let corpus = Recorded()

    func provider(_ body: Data) throws -> MastodonProvider {
        try .answering(body, settings: ["instance": "https://mastodon.social", "access_token": "t"])
    }

    @Test(arguments: ["account-statuses-p1.json", "timeline-tag.json"])
    func timelines(file: String) async throws {
        await checkTolerance(of: try Self.corpus.data(file), named: file, minDepth: 1) { body in
            try await provider(body).timeline("api/v1/timelines/tag/x", cursor: nil).items.count
        }
    }

    @Test func postsAccountsTrendsSearchAndThreads() async throws {
        for file in ["status-cw-media.json", "status-2.json"] {
            await checkTolerance(of: try Self.corpus.data(file), named: file, minDepth: 1) { body in
                _ = try await provider(body).item(ItemID(provider: "mastodon", kind: .post, nativeID: "1"))
                return 0
            }
        }
        await checkTolerance(of: try Self.corpus.data("account.json"), named: "account", minDepth: 1) { body in
            _ = try await provider(body).item(ItemID(provider: "mastodon", kind: .user, nativeID: "1"))
            return 0
        }
        await checkTolerance(of: try Self.corpus.data("trends-tags.json"), named: "trends", minDepth: 1) { body in
            try await provider(body).categories().count
        }
        await checkTolerance(of: try Self.corpus.data("search-v2.json"), named: "search") { body in
            try await provider(body).search(SearchQuery(text: "halcy")).items.count
        }
        await checkTolerance(of: try Self.corpus.data("context.json"), named: "context") { body in
            try await provider(body).children(of: ItemID(provider: "mastodon", kind: .post, nativeID: "1"), cursor: nil).items
                .count
        }
    }
}
