import Foundation
import MediaKit
import TestSupport
import Testing

@testable import Twitter

/// The provider on answers recorded from the real X API v2 (Recorded/SOURCES.md).
@Suite struct TwitterCorpusTests {
    static let corpus = Recorded()

    func provider(_ routes: [String: String]) throws -> TwitterProvider {
        let client = RecordedHTTPClient { request in
            let path = String(request.url.path.dropFirst())
            return routes[path].map { Self.corpus.answer($0) }
        }
        return try TwitterProvider(
            context: ProviderContext(config: ProviderConfig(["bearer_token": "b"]), http: client, logger: Logger(label: "test")))
    }

    /// Every entity's [start, end) holds exactly its own text in the decoded post text.
    func expectEntitiesPointAtTheirText(_ item: MediaItem, sourceLocation: SourceLocation = #_sourceLocation) {
        let scalars = Array((item.summary ?? "").unicodeScalars)
        for entity in item.entities ?? [] where entity.type != .media {
            guard entity.start >= 0, entity.end <= scalars.count, entity.start <= entity.end else {
                Issue.record("\(entity) is outside the text of \(item.id)", sourceLocation: sourceLocation)
                continue
            }
            let covered = String(String.UnicodeScalarView(scalars[entity.start..<entity.end]))
            #expect(covered == entity.text, "\(item.id): \(entity.type) at \(entity.start)", sourceLocation: sourceLocation)
        }
    }

    @Test func recentSearchDecodesEscapesAndKeepsHashtagOffsets() async throws {
        let x = try provider(["2/tweets/search/recent": "search.json"])
        let page = try await x.search(SearchQuery(text: "#IchbinHanna"))
        #expect(page.items.count == 15)
        for item in page.items { expectEntitiesPointAtTheirText(item) }
        let post = try #require(page.items.first { $0.id.nativeID == "1403253091995197442" })
        #expect(post.summary?.hasPrefix("Wissenschaftler & Studierende sagen") == true)
        #expect(post.summary?.contains("&amp;") == false)
        #expect(post.entities?.filter { $0.type == .hashtag }.map(\.value) == ["IchbinHanna", "95vsWissZeitVG", "Prekariat"])
        #expect(post.subtitle?.hasPrefix("@") == true, "the author from includes.users")
        #expect(post.published?.hasPrefix("2021-06-") == true)
        #expect(page.next == nil, "the recording has no next_token")
    }

    @Test func aUsersTimelineWithMentionsAfterAnEscape() async throws {
        let x = try provider([
            "2/users/by/username/Twitter": "user-by-username.json", "2/users/783214/tweets": "user-tweets.json",
        ])
        let page = try await x.search(SearchQuery(text: "@Twitter"))
        #expect(page.items.count == 4)
        for item in page.items { expectEntitiesPointAtTheirText(item) }
        let retweet = try #require(page.items.first { $0.id.nativeID == "1399359137285218304" })
        #expect(retweet.summary?.contains("@ThebeIkalafeng & @KathleenNdongmo") == true)
        #expect(
            retweet.entities?.filter { $0.type == .mention }.map(\.text) == [
                "@ResistBureau", "@CarineNantulya", "@Gina_Din", "@ThebeIkalafeng", "@KathleenNdongmo",
            ])
    }

    @Test func aPostAndAUser() async throws {
        let x = try provider(["2/tweets/1293593516040269825": "tweet.json", "2/users/783214": "user-by-username.json"])
        let post = try await x.item(ItemID(provider: "twitter", kind: .post, nativeID: "1293593516040269825"))
        #expect(post.summary?.hasPrefix("It’s finally here! 🥁 Say hello to the new #TwitterAPI.") == true)
        #expect(post.title.hasPrefix("It’s finally here!"))
        let user = try await x.item(ItemID(provider: "twitter", kind: .user, nativeID: "783214"))
        #expect(user.title == "Twitter")
        #expect(user.subtitle == "@Twitter")
    }

    @Test func realErrorBodies() async throws {
        let invalid = try provider(["2/tweets/search/recent": "error-400.json"])
        await #expect {
            try await invalid.search(SearchQuery(text: "x"))
        } throws: { error in
            guard let error = error as? ProviderError, case .upstream(400, let message) = error else { return false }
            return message.contains("parameters to your request was invalid") && !message.contains("X:")
        }
        let unauthorized = try provider(["2/tweets/search/recent": "error-401.json"])
        await #expect {
            try await unauthorized.search(SearchQuery(text: "x"))
        } throws: { if case .unauthorized = $0 as? ProviderError { true } else { false } }
        let html = try provider(["2/tweets/search/recent": "error-404.html"])
        await #expect {
            try await html.search(SearchQuery(text: "x"))
        } throws: { error in
            guard let error = error as? ProviderError else { return false }
            return error.kind == "notFound" && !error.message.contains("<") && error.message.count < 400
        }
    }
}
