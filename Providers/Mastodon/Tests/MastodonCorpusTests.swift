import Foundation
import MediaKit
import TestSupport
import Testing

@testable import Mastodon

/// The provider on answers recorded from mastodon.social and a Mastodon 4.6 server
/// (Recorded/SOURCES.md): every endpoint it calls, with real content checked.
@Suite struct MastodonCorpusTests {
    static let corpus = Recorded()

    func provider(_ routes: [String: String], token: String? = "t") throws -> MastodonProvider {
        let client = RecordedHTTPClient { request in
            let path = String(request.url.path.dropFirst())
            return routes[path].map { Self.corpus.answer($0) }
        }
        var config = ["instance": "https://mastodon.social"]
        config["access_token"] = token
        return try MastodonProvider(
            context: ProviderContext(config: ProviderConfig(config), http: client, logger: Logger(label: "test")))
    }

    @Test func aPostWithAContentWarningARemoteMentionAHashtagAndAGif() async throws {
        let mastodon = try provider(["api/v1/statuses/110446223051565765": "status-cw-media.json"])
        let post = try await mastodon.item(ItemID(provider: "mastodon", kind: .post, nativeID: "110446223051565765"))
        #expect(post.extra?["contentWarning"] == "test post for mastodon.py stuff")
        #expect(post.title == "CW: test post for mastodon.py stuff")
        #expect(post.extra?["sensitive"] == "true")
        #expect(post.summary?.hasPrefix("@halcy you're a doo-doo head") == true)
        let mention = try #require(post.entities?.first { $0.type == .mention })
        #expect(mention.value == "halcy@icosahedron.website", "the account's host comes from mentions[]")
        #expect(post.entities?.first { $0.type == .hashtag }?.value == "thisisahashtag")
        #expect(post.entities?.first { $0.type == .media }?.text == "[video]", "a gifv is a video")
        #expect(post.subtitle == "@halcy@icosahedron.website")
        #expect(
            post.artwork == "https://files.mastodon.social/cache/accounts/avatars/000/023/972/original/9c900052b7f670db.jpg",
            "sensitive media are not previewed")
        let scalars = Array((post.summary ?? "").unicodeScalars)
        for entity in post.entities ?? [] where entity.type != .media {
            #expect(String(String.UnicodeScalarView(scalars[entity.start..<entity.end])) == entity.text)
        }
    }

    /// A mention link whose URL differs from `mentions[].url` only in scheme or form: matched as
    /// Mastodon's clients match it. (The recording, with its link rewritten each way.)
    @Test(arguments: [
        "http://icosahedron.website/@halcy", "https://icosahedron.website/users/halcy", "https://ICOSAHEDRON.website/@halcy",
    ])
    func mentionLinksInAnotherFormStillFindTheirAccount(href: String) async throws {
        let body = try Self.corpus.text("status-cw-media.json").replacingOccurrences(
            of: #"<a href=\"https://icosahedron.website/@halcy\""#, with: "<a href=\\\"\(href)\\\"")
        let client = RecordedHTTPClient { _ in (200, ["content-type": "application/json"], Data(body.utf8)) }
        let mastodon = try MastodonProvider(
            context: ProviderContext(
                config: ProviderConfig(["instance": "https://mastodon.social"]), http: client, logger: Logger(label: "test")))
        let post = try await mastodon.item(ItemID(provider: "mastodon", kind: .post, nativeID: "110446223051565765"))
        #expect(post.entities?.first { $0.type == .mention }?.value == "halcy@icosahedron.website", "\(href)")
    }

    @Test func anAccountAndItsStatusesPagedByTheLinkHeader() async throws {
        let mastodon = try provider([
            "api/v1/accounts/23972": "account.json", "api/v1/accounts/lookup": "account-lookup.json",
            "api/v1/accounts/117020565966271181/statuses": "account-statuses-p1.json",
        ])
        let user = try await mastodon.item(ItemID(provider: "mastodon", kind: .user, nativeID: "23972"))
        #expect(user.subtitle == "@halcy@icosahedron.website")
        #expect(user.stats?["followers"] == 3553)
        #expect(user.stats?["posts"] == 75076)
        let page = try await mastodon.search(SearchQuery(text: "@mastodonpy_test"))
        #expect(page.items.count == 5)
        #expect(page.next == Cursor("max:117020580489281910"))
        #expect(page.prev == Cursor("min:117020580518794573"))
    }

    @Test func aTagTimelineTrendingTagsTextSearchAndAThread() async throws {
        let mastodon = try provider([
            "api/v1/timelines/tag/hoot": "timeline-tag.json", "api/v1/trends/tags": "trends-tags.json",
            "api/v2/search": "search-v2.json",
            "api/v1/statuses/110446983926957470/context": "context.json",
        ])
        let tag = try await mastodon.search(SearchQuery(text: "#hoot"))
        #expect(tag.items.count == 1)
        #expect(tag.items.first?.entities?.first?.value == "hoot")
        let trends = try await mastodon.categories()
        #expect(trends.count == 10)
        #expect(trends.first == MediaCategory(id: "caturday", name: "#caturday"))
        #expect(trends.contains { $0.id == "あ行で女子力がわかるらしい" })
        let found = try await mastodon.search(SearchQuery(text: "halcy"))
        #expect(found.items.count == 2)
        let replies = try await mastodon.children(
            of: ItemID(provider: "mastodon", kind: .post, nativeID: "110446983926957470"), cursor: nil)
        #expect(replies.items.count == 1)
    }

    @Test func realErrorBodies() async throws {
        let missing = try provider(["api/v1/accounts/lookup": "error-not-found.json"])
        await #expect {
            try await missing.search(SearchQuery(text: "@nobody"))
        } throws: { error in
            guard let error = error as? ProviderError else { return false }
            return error.kind == "notFound" && error.message == "Record not found"
        }
        let refused = try provider(["api/v2/search": "error-unauthorized.json"])
        await #expect {
            try await refused.search(SearchQuery(text: "words"))
        } throws: { error in
            guard let error = error as? ProviderError else { return false }
            return error.kind == "unauthorized" && error.message.contains("The access token is invalid")
        }
    }
}
