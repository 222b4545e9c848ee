import Foundation
import MediaHTTP
import MediaKit
import Sandbox
import TestSupport
import Testing
import TwitterSandbox

@testable import Twitter

struct TwitterFixture {
    let server = SandboxServer(replicas: [TwitterReplica()])
    let provider: TwitterProvider

    init(token: String = "t") async throws {
        try await server.start()
        provider = try TwitterProvider(context: server.providerContext("twitter", ["bearer_token": token]))
    }
}

@Suite struct TwitterTests {
    @Test func escapedTextFromTheReplicaIsDecodedWithOffsetsKept() async throws {
        let f = try await TwitterFixture()
        defer { f.server.stop() }
        let page = try await f.provider.search(SearchQuery(text: "#swift"))
        let escaped = page.items.filter { $0.summary?.contains(" & <3 ") == true }
        #expect(!escaped.isEmpty, "the replica escapes & and < as the API does")
        for post in page.items {
            #expect(post.summary?.contains("&amp;") == false && post.summary?.contains("&lt;") == false)
            let scalars = Array((post.summary ?? "").unicodeScalars)
            for entity in post.entities ?? [] where entity.type != .media {
                #expect(String(String.UnicodeScalarView(scalars[entity.start..<entity.end])) == entity.text)
            }
        }
    }

    @Test func entitiesPointAtTheirTextAfterLinksAreExpanded() async throws {
        let f = try await TwitterFixture()
        defer { f.server.stop() }
        let page = try await f.provider.search(SearchQuery(text: "#swift"))
        #expect(page.items.count == TwitterProvider.pageSize)
        var kinds = Set<TextEntity.EntityType>()
        for post in page.items {
            let text = try #require(post.summary)
            #expect(!text.contains("t.co"), "links read as their display URLs; media links leave the text")
            for entity in post.entities ?? [] {
                kinds.insert(entity.type)
                let scalars = Array(text.unicodeScalars)
                if entity.type == .media {
                    #expect(entity.start == scalars.count)
                } else {
                    #expect(
                        String(String.UnicodeScalarView(scalars[entity.start..<entity.end])) == entity.text,
                        "\(post.id) \(entity)")
                }
            }
        }
        #expect(kinds == [.hashtag, .mention, .url, .media])
        let query = try #require(f.server.traffic.requests.last?.query?.removingPercentEncoding)
        for part in [
            "expansions=author_id,attachments.media_keys", "tweet.fields=", "user.fields=", "media.fields=", "max_results=20",
        ] {
            #expect(query.contains(part), "\(query)")
        }
    }

    @Test func pagingBothWaysAndUserPosts() async throws {
        let f = try await TwitterFixture()
        defer { f.server.stop() }
        let first = try await f.provider.search(SearchQuery(text: "@swiftlang"))
        #expect(first.items.allSatisfy { $0.subtitle == "@swiftlang" })
        let second = try await f.provider.search(SearchQuery(text: "@swiftlang", cursor: first.next))
        #expect(Set(second.items.map(\.id)).isDisjoint(with: first.items.map(\.id)))
        #expect(try await f.provider.search(SearchQuery(text: "@swiftlang", cursor: second.prev)).items == first.items)
        let author = try ItemID(parsing: try #require(first.items.first?.extra?["author"]))
        #expect(try await f.provider.children(of: author, cursor: nil).items == first.items)
        let post = try await f.provider.item(first.items[0].id)
        #expect(post.id == first.items[0].id && post.stats?["likes"] != nil)
        let user = try await f.provider.item(author)
        #expect(user.subtitle == "@swiftlang" && user.url == "https://x.com/swiftlang")
        #expect(user.stats?["posts"] ?? 0 > 20 && user.artwork != nil)
        await #expect(throws: ProviderError.self) {
            try await f.provider.item(ItemID(provider: "twitter", kind: .user, nativeID: "404"))
        }
    }

    @Test func partialErrorsKeepTheData() async throws {
        let f = try await TwitterFixture()
        defer { f.server.stop() }
        // The replica adds an errors array to searches containing "partial"; there are no such
        // posts, so search a word that matches with it: the data must survive the errors.
        let page = try await f.provider.search(SearchQuery(text: "with partial"))
        #expect(page.items.isEmpty)
        let good = try await f.provider.search(SearchQuery(text: "with"))
        #expect(!good.items.isEmpty)
    }

    @Test func errorsAreTyped() async throws {
        let f = try await TwitterFixture()
        defer { f.server.stop() }
        do {
            _ = try await f.provider.search(SearchQuery(text: "ratelimit"))
            Issue.record("no rate limit")
        } catch let error as ProviderError {
            guard case .rateLimited(let after?) = error else { Issue.record("\(error)"); return }
            #expect(after > 4 && after <= 7)
        }
        do {
            _ = try await f.provider.search(SearchQuery(text: "@nobody"))
            Issue.record("a missing user was found")
        } catch let error as ProviderError {
            guard case .notFound(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("nobody"))
        }
        await #expect(throws: ProviderError.self) { try await f.provider.categories() }
        let bad = try await TwitterFixture(token: "bad")
        defer { bad.server.stop() }
        do {
            _ = try await bad.provider.search(SearchQuery(text: "#x"))
            Issue.record("a bad token was accepted")
        } catch let error as ProviderError {
            guard case .unauthorized(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("TWITTER_BEARER_TOKEN"))
        }
    }

    @Test func recordedSearchAnswerWithPartialErrors() async throws {
        let body = #"""
            {"data":[{"id":"1460323737035677698","text":"Introducing a new era for #Swift 🎉 by @swiftlang https://t.co/abc123 https://t.co/pic456","author_id":"2244994945","created_at":"2021-11-15T19:08:05.000Z","edit_history_tweet_ids":["1460323737035677698"],"attachments":{"media_keys":["3_1460323733311262721"]},"entities":{"hashtags":[{"start":26,"end":32,"tag":"Swift"}],"mentions":[{"start":38,"end":48,"username":"swiftlang","id":"1"}],"urls":[{"start":49,"end":68,"url":"https://t.co/abc123","expanded_url":"https://swift.org/blog/","display_url":"swift.org/blog/"},{"start":69,"end":88,"url":"https://t.co/pic456","expanded_url":"https://twitter.com/x/status/1/photo/1","display_url":"pic.twitter.com/pic456","media_key":"3_1460323733311262721"}]},"public_metrics":{"retweet_count":10,"reply_count":2,"like_count":99,"quote_count":1}}],
             "includes":{"users":[{"id":"2244994945","name":"Developers","username":"XDevelopers"}],"media":[{"media_key":"3_1460323733311262721","type":"photo","url":"https://pbs.twimg.com/media/FEWxyz.jpg"}]},
             "errors":[{"value":"3_999","detail":"Could not find media with key: [3_999].","title":"Not Found Error","resource_type":"media","type":"https://api.twitter.com/2/problems/resource-not-found"}],
             "meta":{"newest_id":"1460323737035677698","oldest_id":"1460323737035677698","result_count":1}}
            """#
        let client = RecordedHTTPClient(["/2/tweets/search/recent": (200, body)])
        let provider = try TwitterProvider(
            context: ProviderContext(config: ProviderConfig(["bearer_token": "t"]), http: client, logger: Logger(label: "test")))
        let post = try #require(try await provider.search(SearchQuery(text: "#Swift")).items.first)
        #expect(post.summary == "Introducing a new era for #Swift 🎉 by @swiftlang swift.org/blog/")
        #expect(post.entities?.map(\.text) == ["#Swift", "@swiftlang", "swift.org/blog/", "[image]"])
        #expect(post.entities?.first { $0.type == .url }?.value == "https://swift.org/blog/")
        #expect(post.subtitle == "@XDevelopers")
        #expect(post.stats?["likes"] == 99)
    }

    @Test func leadingSpaceKeepsOffsetsAndTrailingMediaLinkLeaves() throws {
        let json =
            #"{"id":"1","text":"  #a https://t.co/p","entities":{"hashtags":[{"start":2,"end":4,"tag":"a"}],"urls":[{"start":5,"end":19,"url":"https://t.co/p","media_key":"3_1"}]}}"#
        let tweet = try JSONDecoder().decode(TWTweet.self, from: Data(json.utf8))
        let provider = try TwitterProvider(
            context: ProviderContext(
                config: ProviderConfig(["bearer_token": "t"]), http: RecordedHTTPClient([:]), logger: Logger(label: "test")))
        let post = try #require(provider.item(from: tweet, includes: nil))
        #expect(post.summary == "  #a")
        let tag = try #require(post.entities?.first)
        #expect(String(String.UnicodeScalarView(Array(post.summary!.unicodeScalars)[tag.start..<tag.end])) == "#a")
    }
}
