import Foundation
import MastodonSandbox
import MediaHTTP
import MediaKit
import Sandbox
import TestSupport
import Testing

@testable import Mastodon

struct MastodonFixture {
    let server = SandboxServer(replicas: [MastodonReplica()])
    let provider: MastodonProvider

    init(token: String? = nil) async throws {
        try await server.start()
        provider = try MastodonProvider(context: server.providerContext("mastodon", token.map { ["access_token": $0] } ?? [:]))
    }
}

/// The text an entity covers, by its Unicode scalar offsets.
func covered(_ text: String, _ entity: TextEntity) -> String {
    let scalars = Array(text.unicodeScalars)
    return String(String.UnicodeScalarView(scalars[entity.start..<entity.end]))
}

@Suite struct MastodonHTMLTests {
    @Test func linksAndOffsetsInUnicodeScalars() {
        let html =
            #"<p>👩‍💻 e&#769;t&eacute; <a href="https://m.social/tags/swift" class="mention hashtag" rel="tag">#<span>Swift</span></a>, see <a href="https://example.com/a/very/long/path?x=1" rel="nofollow"><span class="invisible">https://</span><span class="ellipsis">example.com/a/very</span><span class="invisible">/long/path?x=1</span></a>.</p><p>cc <span class="h-card"><a href="https://m.social/@ada" class="u-url mention">@<span>ada</span></a></span><br>日本語 עברית</p>"#
        let (text, links) = HTMLText.plainWithLinks(html)
        #expect(text == "👩‍💻 e\u{301}té #Swift, see example.com/a/very….\n\ncc @ada\n日本語 עברית")
        #expect(links.map(\.text) == ["#Swift", "example.com/a/very…", "@ada"])
        for link in links {
            #expect(String(String.UnicodeScalarView(Array(text.unicodeScalars)[link.start..<link.end])) == link.text)
        }
        // The emoji is 3 scalars (woman, zero-width joiner, laptop) and "é" as e + combining acute is 2.
        #expect(links[0].start == 9)
        #expect(links[1].href == "https://example.com/a/very/long/path?x=1")
        #expect(links[2].classes.contains("mention"))
    }

    @Test func plainTextOfParagraphsAndEntities() {
        #expect(HTMLText.plainWithLinks("<p>a &amp; b</p><p>c<br>d</p>").text == "a & b\n\nc\nd")
        #expect(HTMLText.plainWithLinks("no markup").links.isEmpty)
    }
}

@Suite struct MastodonProviderTests {
    @Test func tagTimelinePagesBothWaysWithLinkHeaders() async throws {
        let f = try await MastodonFixture()
        defer { f.server.stop() }
        let first = try await f.provider.search(SearchQuery(text: "#Swift"))
        #expect(first.items.count == MastodonProvider.pageSize)
        #expect(first.prev == nil)
        let next = try #require(first.next)
        #expect(next.rawValue.hasPrefix("max:"))
        let second = try await f.provider.search(SearchQuery(text: "#swift", cursor: next))
        #expect(Set(second.items.map(\.id)).isDisjoint(with: first.items.map(\.id)))
        let back = try #require(second.prev)
        #expect(back.rawValue.hasPrefix("min:"))
        #expect(try await f.provider.search(SearchQuery(text: "#swift", cursor: back)).items.map(\.id) == first.items.map(\.id))
        #expect(f.server.traffic.requests.last?.path == "/mastodon/api/v1/timelines/tag/swift")
    }

    @Test func entitiesMatchTheirTextOnEveryPost() async throws {
        let f = try await MastodonFixture()
        defer { f.server.stop() }
        var seen = Set<TextEntity.EntityType>()
        var cursor: Cursor?
        for _ in 0..<3 {
            let page = try await f.provider.browse(category: "caturday", cursor: cursor)
            for post in page.items {
                let text = try #require(post.summary)
                for entity in post.entities ?? [] {
                    seen.insert(entity.type)
                    if entity.type == .media {
                        #expect(entity.start == text.unicodeScalars.count && entity.end == entity.start)
                        #expect(["[image]", "[video]"].contains(entity.text))
                    } else {
                        #expect(covered(text, entity) == entity.text, "\(post.id): \(entity)")
                    }
                    if entity.type == .hashtag {
                        #expect(entity.value == entity.value.lowercased() && "#" + entity.value == entity.text.lowercased())
                    }
                    if entity.type == .mention { #expect("@" + entity.value == entity.text) }
                    if entity.type == .url { #expect(entity.value.hasPrefix("https://example.com/articles/")) }
                }
            }
            cursor = page.next
        }
        #expect(seen == [.hashtag, .mention, .url, .media])
    }

    @Test func contentWarningsBoostsAndSensitiveMedia() async throws {
        let f = try await MastodonFixture()
        defer { f.server.stop() }
        var items: [MediaItem] = []
        var cursor: Cursor?
        for _ in 0..<8 {
            let page = try await f.provider.search(SearchQuery(text: "#music", cursor: cursor))
            items += page.items
            cursor = page.next
            if cursor == nil { break }
        }
        let warned = try #require(items.first { $0.extra?["contentWarning"] != nil })
        #expect(warned.title.hasPrefix("CW: spoilers"))
        #expect(warned.summary?.isEmpty == false, "the text is kept, behind the warning")
        let boost = try #require(items.first { $0.extra?["boostedBy"] != nil })
        #expect(boost.extra?["boostedBy"]?.hasPrefix("@") == true)
        #expect(boost.summary?.isEmpty == false, "a boost shows the original post")
        let sensitive = try #require(
            items.first { $0.extra?["sensitive"] == "true" && $0.entities?.contains { $0.type == .media } == true })
        #expect(sensitive.artwork?.contains("/avatars/") == true, "sensitive media are not previewed")
    }

    @Test func usersTheirPostsAndReplies() async throws {
        let f = try await MastodonFixture()
        defer { f.server.stop() }
        let posts = try await f.provider.search(SearchQuery(text: "@swiftlang"))
        #expect(!posts.items.isEmpty && posts.items.allSatisfy { $0.subtitle == "@swiftlang" })
        let author = try #require(posts.items.first?.extra?["author"])
        let user = try await f.provider.item(ItemID(parsing: author))
        #expect(user.title == "Swift 🐦" && user.stats?["posts"] != nil)
        #expect(user.summary?.contains("#") == true)
        #expect(try await !f.provider.children(of: user.id, cursor: nil).items.isEmpty)
        let post = try await f.provider.item(posts.items[0].id)
        #expect(post.id == posts.items[0].id)
        _ = try await f.provider.children(of: post.id, cursor: nil)
        await #expect(throws: ProviderError.self) { try await f.provider.search(SearchQuery(text: "@nobody-here")) }
    }

    @Test func textSearchNeedsAToken() async throws {
        let anonymous = try await MastodonFixture()
        defer { anonymous.server.stop() }
        do {
            _ = try await anonymous.provider.search(SearchQuery(text: "release"))
            Issue.record("text search without a token went ahead")
        } catch let error as ProviderError {
            guard case .unsupported(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("MASTODON_ACCESS_TOKEN"))
        }
        let signed = try await MastodonFixture(token: "t")
        defer { signed.server.stop() }
        let found = try await signed.provider.search(SearchQuery(text: "release"))
        #expect(!found.items.isEmpty && found.items.allSatisfy { $0.summary?.lowercased().contains("release") == true })
        #expect(signed.server.traffic.requests.last?.path == "/mastodon/api/v2/search")
    }

    @Test func trendingTagsAndRateLimits() async throws {
        let f = try await MastodonFixture()
        defer { f.server.stop() }
        let tags = try await f.provider.categories()
        #expect(tags.first == MediaCategory(id: "swift", name: "#swift"))
        f.server.faults.add(FaultRule(path: "/mastodon/api/v1/timelines/tag/", status: 429, retryAfter: 9, times: 1))
        await #expect(throws: ProviderError.rateLimited(retryAfter: 9)) {
            try await f.provider.browse(category: "swift", cursor: nil)
        }
        #expect(
            MastodonProvider.links(#"<https://x/a?max_id=5>; rel="next", <https://x/a?min_id=9>; rel="prev""#) == [
                "next": "https://x/a?max_id=5", "prev": "https://x/a?min_id=9",
            ])
    }
}
