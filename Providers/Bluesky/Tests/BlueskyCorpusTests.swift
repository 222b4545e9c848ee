import Foundation
import MediaKit
import Synchronization
import TestSupport
import Testing

@testable import Bluesky

/// A session kept in memory, as the host keeps one in its file.
final class MemorySessions: SessionKeeper {
    let kept: Mutex<AuthSession?>
    init(_ session: AuthSession? = nil) { kept = Mutex(session) }
    func load() -> AuthSession? { kept.withLock { $0 } }
    func save(_ session: AuthSession) throws { kept.withLock { $0 = session } }
}

/// The text an entity covers, by its Unicode scalar offsets.
func covered(_ text: String, _ entity: TextEntity) -> String {
    let scalars = Array(text.unicodeScalars)
    guard 0 <= entity.start, entity.start <= entity.end, entity.end <= scalars.count else {
        return "(out of the text: \(entity.start)..<\(entity.end) of \(scalars.count))"
    }
    return String(String.UnicodeScalarView(scalars[entity.start..<entity.end]))
}

/// The provider on real answers of bsky.social and the AppView (Recorded/SOURCES.md).
@Suite struct BlueskyCorpusTests {
    static let corpus = Recorded()
    static let session = AuthSession(
        provider: "bluesky", account: "@bskyr.bsky.social", accessToken: "access", refreshToken: "refresh",
        values: ["did": "did:plc:5c2r73erhng4bszmxlfdtscf", "pds": "https://puffball.us-east.host.bsky.network"])

    /// Answers each XRPC method with a recorded body (or a body given inline).
    static func provider(
        _ routes: [String: String], inline: [String: RecordedHTTPClient.Answer] = [:], session: AuthSession? = nil
    ) throws -> (BlueskyProvider, RecordedHTTPClient) {
        let client = RecordedHTTPClient { request in
            let method = request.url.lastPathComponent
            if let answer = inline[method] { return answer }
            return routes[method].map { corpus.answer($0) }
        }
        let provider = try BlueskyProvider(
            context: ProviderContext(
                config: ProviderConfig([:]), http: client, logger: Logger(label: "test"), sessions: MemorySessions(session)))
        return (provider, client)
    }

    /// A post view from the corpus, as getPosts answers it.
    static func posts(_ file: String) throws -> RecordedHTTPClient.Answer {
        let post = try JSONSerialization.jsonObject(with: corpus.data(file))
        return (200, ["content-type": "application/json"], try JSONSerialization.data(withJSONObject: ["posts": [post]]))
    }

    static func checkEntities(_ item: MediaItem, sourceLocation: SourceLocation = #_sourceLocation) {
        let text = item.summary ?? ""
        for entity in item.entities ?? [] where entity.start != entity.end {
            #expect(covered(text, entity) == entity.text, "\(item.id)", sourceLocation: sourceLocation)
            if entity.type == .hashtag {
                #expect(entity.text.lowercased() == "#" + entity.value.lowercased(), sourceLocation: sourceLocation)
            }
        }
    }

    @Test func aThreadFromTheAppViewWithLinkFacetsAfterAnEmoji() async throws {
        let (bluesky, client) = try Self.provider([
            "app.bsky.feed.getPostThread": "thread.json", "app.bsky.feed.getPosts": "posts.json",
        ])
        let id = ItemID(provider: "bluesky", kind: .post, nativeID: "did:plc:ic6zqvuw5ulmfpjiwnhsr2ns/3k7qmjev5lr2s")
        let replies = try await bluesky.children(of: id, cursor: nil)
        #expect(replies.items.isEmpty, "the recorded thread has no replies")
        let asked = try #require(client.urls.first)
        #expect(asked.host == "public.api.bsky.app", "no session: the public AppView")
        #expect(
            asked.query?.contains("uri=at%3A%2F%2Fdid%3Aplc%3Aic6zqvuw5ulmfpjiwnhsr2ns%2Fapp.bsky.feed.post%2F3k7qmjev5lr2s")
                == true)
        let post = try await bluesky.item(id)
        #expect(post.subtitle == "@soubhikbarari.bsky.social")
        #expect(post.creator == "Soubhik Barari")
        #expect(post.url == "https://bsky.app/profile/soubhikbarari.bsky.social/post/3k7qmjev5lr2s")
        let links = (post.entities ?? []).filter { $0.type == .url }
        #expect(links.map(\.text) == ["localview.net", "rstats.ai/gov.html"])
        #expect(links.map(\.value) == ["http://localview.net", "https://rstats.ai/gov.html"])
        Self.checkEntities(post)
        #expect(post.entities?.contains { $0.type == .media && $0.text == "[image]" } == true)
        #expect(post.stats?["likes"] == 4)
    }

    @Test func anAuthorsFeedWithRepliesRepostsAndACursor() async throws {
        let (bluesky, _) = try Self.provider(["app.bsky.feed.getAuthorFeed": "author-feed.json"])
        let page = try await bluesky.search(SearchQuery(text: "@chriskenny.bsky.social"))
        let recorded = try #require(
            try JSONSerialization.jsonObject(with: Self.corpus.data("author-feed.json")) as? [String: Any])
        #expect(page.items.count == (recorded["feed"] as? [Any])?.count)
        #expect(page.next?.rawValue == recorded["cursor"] as? String)
        #expect(page.items.contains { $0.extra?["repostedBy"] == "@chriskenny.bsky.social" })
        #expect(page.items.contains { $0.extra?["inReplyTo"]?.hasPrefix("bluesky:post:did:plc:") == true })
        for item in page.items { Self.checkEntities(item) }
        #expect(page.items.flatMap { $0.entities ?? [] }.count > 20)
    }

    @Test func aVideoPostPlaysItsPlaylistAndItsTagsFollowAnEmoji() async throws {
        let (bluesky, _) = try Self.provider([:], inline: ["app.bsky.feed.getPosts": try Self.posts("post-video.json")])
        let post = try await bluesky.item(
            ItemID(provider: "bluesky", kind: .post, nativeID: "did:plc:l7mosai5i2u562b5qbosw6c7/3lhnr2o6kb22h"))
        let video = try #require(post.entities?.first { $0.type == .media })
        #expect(video.text.hasPrefix("[video]"))
        #expect(
            video.value
                == "https://video.bsky.app/watch/did%3Aplc%3Al7mosai5i2u562b5qbosw6c7/bafkreic3uqlah5pnqzq4tx2r5cg6kyj2uziq4jn4uatuwdhvl33sx2qkgm/playlist.m3u8"
        )
        let tags = (post.entities ?? []).filter { $0.type == .hashtag }
        #expect(tags.map(\.value) == ["swiftUI", "iOS", "beginner", "code", "keeplearning"])
        Self.checkEntities(post)
        // Bytes and scalars differ after the emoji: the offsets were converted, not copied.
        let first = try #require(tags.first)
        #expect(first.start < 134, "byteStart 134 is fewer scalars in")
        #expect(post.artwork?.hasSuffix("thumbnail.jpg") == true)
    }

    @Test func quotesAndMediaWithAltText() async throws {
        let (bluesky, _) = try Self.provider(
            [:], inline: ["app.bsky.feed.getPosts": try Self.posts("post-record-with-media.json")])
        let post = try await bluesky.item(ItemID(provider: "bluesky", kind: .post, nativeID: "at://x"))
        let image = try #require(post.entities?.first { $0.type == .media })
        #expect(image.text.hasPrefix("[image] Bluesky Alt Text Rating How consistently"))
        #expect(post.extra?["quote"]?.hasPrefix("bluesky:post:did:plc:") == true)

        let (quoting, _) = try Self.provider([:], inline: ["app.bsky.feed.getPosts": try Self.posts("post-quote.json")])
        let quote = try await quoting.item(ItemID(provider: "bluesky", kind: .post, nativeID: "at://x"))
        #expect(quote.extra?["quote"] == "bluesky:post:did:plc:7exlcsle4mjfhu3wnhcgizz6/3lhljcua7lv2e")
        #expect(quote.extra?["quoted"]?.hasPrefix("@theverge.com: Apple ordered") == true)
        #expect(quote.creator == "Kuba Suder 🇵🇱🇺🇦")

        let (carded, _) = try Self.provider([:], inline: ["app.bsky.feed.getPosts": try Self.posts("post-external.json")])
        let card = try await carded.item(ItemID(provider: "bluesky", kind: .post, nativeID: "at://x"))
        let link = try #require(card.entities?.first { $0.type == .url })
        #expect(link.text == "Designing for Application States: Creating Seamless User Experiences")
        #expect(link.value.hasPrefix("https://www.createwithswift.com/"))
    }

    @Test func aReplyAndARepostAndLabels() async throws {
        let (bluesky, _) = try Self.provider(
            [:], inline: ["app.bsky.feed.getPosts": try Self.posts("post-reply-labelled.json")])
        let reply = try await bluesky.item(ItemID(provider: "bluesky", kind: .post, nativeID: "at://x"))
        #expect(reply.extra?["inReplyTo"] == "bluesky:post:did:plc:x2rfmy3ldn2k6d2diyp7ofi2/3lhmfcfualc2s")
        #expect(reply.extra?["sensitive"] == nil, "!no-unauthenticated is no content warning")
        #expect(reply.extra?["labels"] == nil)

        let entry = try JSONDecoder().decode(BFeedItem.self, from: Self.corpus.data("feed-view-repost.json"))
        let reposted = try #require(bluesky.item(from: entry))
        #expect(reposted.extra?["repostedBy"] == "@daniloc.xyz")
        #expect(reposted.subtitle == "@theferrarilab.bsky.social")
    }

    @Test func feedsAreCategoriesAndTheirPostsPages() async throws {
        let (bluesky, _) = try Self.provider([
            "app.bsky.unspecced.getPopularFeedGenerators": "suggested-feeds.json", "app.bsky.feed.getFeed": "feed.json",
        ])
        let categories = try await bluesky.categories()
        #expect(categories.count > 5)
        #expect(categories.allSatisfy { $0.id.hasPrefix("at://") && $0.id.contains("/app.bsky.feed.generator/") })
        let first = try #require(categories.first)
        let page = try await bluesky.browse(category: first.id, cursor: nil)
        #expect(!page.items.isEmpty)
        #expect(page.next != nil)
        for item in page.items { Self.checkEntities(item) }
        await #expect(throws: ProviderError.self) { try await bluesky.browse(category: "cats", cursor: nil) }
    }

    /// A list is read with getListFeed (getFeed serves only feed generators), from its AT URI
    /// or its bsky.app link, and pages on with the real list cursor (an ISO time).
    @Test func aListIsBrowsedWithGetListFeed() async throws {
        let (bluesky, client) = try Self.provider([
            "app.bsky.feed.getListFeed": "list-feed.json", "com.atproto.identity.resolveHandle": "resolve-handle.json",
        ])
        let uri = "at://did:plc:ragtjsm2j2vknwkz3zp4oxrd/app.bsky.graph.list/3kmokjyuflk2g"
        let page = try await bluesky.browse(category: uri, cursor: nil)
        #expect(page.items.count == 10)
        #expect(page.next?.rawValue == "2025-05-22T03:45:30.576Z")
        for item in page.items { Self.checkEntities(item) }
        let asked = try #require(client.urls.last)
        #expect(asked.path.hasSuffix("app.bsky.feed.getListFeed"))
        #expect(
            asked.query?.contains("list=at%3A%2F%2Fdid%3Aplc%3Aragtjsm2j2vknwkz3zp4oxrd%2Fapp.bsky.graph.list%2F3kmokjyuflk2g")
                == true)
        _ = try await bluesky.browse(category: uri, cursor: page.next)
        #expect(client.urls.last?.query?.contains("cursor=2025-05-22T03%3A45%3A30.576Z") == true)
        // A bsky.app link to the list, by handle.
        _ = try await bluesky.browse(category: "https://bsky.app/profile/bskyr.bsky.social/lists/3kmokjyuflk2g", cursor: nil)
        #expect(client.urls.last?.path.hasSuffix("app.bsky.feed.getListFeed") == true)
    }

    /// A starter pack embedded in a post (ATAT's recorded embed) is a link a person can open,
    /// named; an embed of a type this does not know says so by name instead of vanishing.
    @Test func embedsOfOtherRecordsAreShownNotDropped() async throws {
        let embed = try JSONSerialization.jsonObject(with: Self.corpus.data("embed-record-view-starter-pack.json"))
        var post = try #require(
            try JSONSerialization.jsonObject(with: Self.corpus.data("post-external.json")) as? [String: Any])
        post["embed"] = embed
        let data = try JSONSerialization.data(withJSONObject: ["posts": [post]])
        let (bluesky, _) = try Self.provider([:], inline: ["app.bsky.feed.getPosts": (200, [:], data)])
        let id = ItemID(
            provider: "bluesky", kind: .post, nativeID: try #require((post["uri"] as? String).flatMap(BlueskyProvider.postID)))
        let item = try await bluesky.item(id)
        let pack = try #require(item.entities?.first { $0.text.hasPrefix("[starter pack:") }, "\(item.entities ?? [])")
        #expect(pack.text == "[starter pack: Independent, Worker-Owned and Reader-Funded Media by @laminda.bsky.social]")
        #expect(pack.value == "https://bsky.app/starter-pack/did:plc:g3cybquvoxmxto4lhtc2mdma/3l7edfblvuk2w")
        // A later lexicon's embed, unknown here (the real post with its type renamed).
        var future = post
        var external = try #require(post["embed"] as? [String: Any])
        external["$type"] = "app.bsky.embed.hologram#view"
        future["embed"] = external
        let futureData = try JSONSerialization.data(withJSONObject: ["posts": [future]])
        let (later, _) = try Self.provider([:], inline: ["app.bsky.feed.getPosts": (200, [:], futureData)])
        let unknown = try await later.item(id)
        #expect(unknown.entities?.contains { $0.text == "[unsupported embed: app.bsky.embed.hologram#view]" } == true)
    }

    /// A profile's pinned post (ATAT's recorded profile) is linked from its details; its page
    /// asks Bluesky to put the pinned post first.
    @Test func aPinnedPostComesFirst() async throws {
        let profiles = try #require(
            try JSONSerialization.jsonObject(with: Self.corpus.data("profiles-pinned-post.json")) as? [String: Any])
        let profile = try JSONSerialization.data(withJSONObject: try #require((profiles["profiles"] as? [Any])?.first))
        let (bluesky, client) = try Self.provider(
            ["app.bsky.feed.getAuthorFeed": "author-feed.json"], inline: ["app.bsky.actor.getProfile": (200, [:], profile)])
        let person = try await bluesky.item(ItemID(provider: "bluesky", kind: .user, nativeID: "mattie.thecocoa.dev"))
        #expect(person.extra?["pinned"]?.hasPrefix("bluesky:post:did:plc:") == true, "\(person.extra ?? [:])")
        _ = try await bluesky.children(of: person.id, cursor: nil)
        #expect(client.urls.last?.query?.contains("includePins=true") == true)
    }

    @Test func peopleSearchAndProfiles() async throws {
        let (bluesky, _) = try Self.provider(["app.bsky.actor.searchActors": "search-actors.json"])
        let people = try await bluesky.search(SearchQuery(text: "political science", kind: .user))
        #expect(people.items.count > 3)
        #expect(people.items.allSatisfy { $0.kind == .user && $0.id.nativeID.hasPrefix("did:") })
        let profiles = try #require(
            try JSONSerialization.jsonObject(with: Self.corpus.data("profiles.json")) as? [String: Any])
        let profile = try JSONSerialization.data(withJSONObject: try #require((profiles["profiles"] as? [Any])?.first))
        let (one, _) = try Self.provider([:], inline: ["app.bsky.actor.getProfile": (200, [:], profile)])
        let person = try await one.item(ItemID(provider: "bluesky", kind: .user, nativeID: "chriskenny.bsky.social"))
        #expect(person.subtitle == "@chriskenny.bsky.social")
        #expect(person.stats?["followers"] != nil)
    }

    @Test func postSearchNeedsASessionAndGoesToTheAccountsServer() async throws {
        let (anonymous, _) = try Self.provider(["app.bsky.feed.searchPosts": "search-posts.json"])
        let refused = await #expect(throws: ProviderError.self) { try await anonymous.search(SearchQuery(text: "#rstats")) }
        #expect(refused?.kind == "unauthorized")
        #expect("\(refused.map(String.init(describing:)) ?? "")".contains("login bluesky"))

        // Words without an account find people, which the public AppView answers.
        let (people, _) = try Self.provider(["app.bsky.actor.searchActors": "search-actors.json"])
        let found = try await people.search(SearchQuery(text: "political science"))
        #expect(!found.items.isEmpty && found.items.allSatisfy { $0.kind == .user })

        let (bluesky, client) = try Self.provider(["app.bsky.feed.searchPosts": "search-posts.json"], session: Self.session)
        let page = try await bluesky.search(SearchQuery(text: "redistricting"))
        #expect(page.items.count == 25)
        #expect(page.next != nil)
        for item in page.items { Self.checkEntities(item) }
        let asked = try #require(client.asked.withLock { $0.first })
        #expect(asked.url.host == "puffball.us-east.host.bsky.network")
        #expect(asked.headers["Authorization"] == "Bearer access")
    }

    @Test func likesAreTheAccountsFavorites() async throws {
        let (bluesky, client) = try Self.provider(
            ["app.bsky.feed.getActorLikes": "actor-likes.json", "com.atproto.repo.createRecord": "like.json"],
            inline: ["app.bsky.feed.getPosts": try Self.posts("post-video.json")])
        let likes = try await bluesky.accountFavorites(cursor: nil, session: Self.session)
        #expect(!likes.items.isEmpty)
        let id = ItemID(provider: "bluesky", kind: .post, nativeID: "did:plc:l7mosai5i2u562b5qbosw6c7/3lhnr2o6kb22h")
        try await bluesky.setAccountFavorite(id, true, session: Self.session)
        let create = try #require(
            client.asked.withLock { $0.first { $0.url.lastPathComponent == "com.atproto.repo.createRecord" } })
        let body = try #require(try JSONSerialization.jsonObject(with: create.body ?? Data()) as? [String: Any])
        #expect(body["repo"] as? String == "did:plc:5c2r73erhng4bszmxlfdtscf")
        let subject = (body["record"] as? [String: Any])?["subject"] as? [String: Any]
        #expect(subject?["cid"] as? String == "bafyreiepnzmbdht5jwqobzo7pod44eyl6hbyjlbjaqjhbsl5cboclm2hgi")
    }

    /// Unliking deletes the account's like record named by the post's viewer state (the recorded
    /// post, with the like record a logged-in viewer would see added).
    @Test func unlikingDeletesTheLikeRecord() async throws {
        var post = try #require(try JSONSerialization.jsonObject(with: Self.corpus.data("post-video.json")) as? [String: Any])
        post["viewer"] = ["like": "at://did:plc:5c2r73erhng4bszmxlfdtscf/app.bsky.feed.like/3lpkeypxcth2a"]
        let body = try JSONSerialization.data(withJSONObject: ["posts": [post]])
        let (bluesky, client) = try Self.provider(
            ["com.atproto.repo.deleteRecord": "unlike.json"],
            inline: ["app.bsky.feed.getPosts": (200, ["content-type": "application/json"], body)])
        let id = ItemID(provider: "bluesky", kind: .post, nativeID: "did:plc:l7mosai5i2u562b5qbosw6c7/3lhnr2o6kb22h")
        try await bluesky.setAccountFavorite(id, false, session: Self.session)
        let delete = try #require(
            client.asked.withLock { $0.first { $0.url.lastPathComponent == "com.atproto.repo.deleteRecord" } })
        let sent = try #require(try JSONSerialization.jsonObject(with: delete.body ?? Data()) as? [String: Any])
        #expect(sent["rkey"] as? String == "3lpkeypxcth2a")
        #expect(sent["collection"] as? String == "app.bsky.feed.like")
        #expect(delete.url.host == "puffball.us-east.host.bsky.network")
        // Liking a post already liked sends nothing.
        try await bluesky.setAccountFavorite(id, true, session: Self.session)
        #expect(client.asked.withLock { $0.filter { $0.url.lastPathComponent == "com.atproto.repo.createRecord" } }.isEmpty)
    }

    /// Servers named by DID documents: https, or http on the loopback only (a token never goes
    /// out in clear); anything else is no server.
    @Test(arguments: [
        ("https://pds.example.com", true), ("https://pds.example.com/", true), ("http://127.0.0.1:8080/pds", true),
        ("http://localhost:2583", true), ("http://pds.example.com", false), ("javascript:alert(1)", false),
        ("file:///etc/passwd", false), ("https://", false), ("", false), ("ftp://pds.example.com", false),
    ])
    func serversFromDocuments(text: String, usable: Bool) {
        #expect((BlueskyProvider.serverURL(text) != nil) == usable, "\(text)")
    }

    @Test(arguments: [
        ("a.eyJleHAiOjE3NjQwMDAwMDB9.s", 1_764_000_000.0),  // {"exp":1764000000}
        ("a.eyJleHAiOjFlMzAwfQ.s", nil),  // {"exp":1e300}
        ("a.eyJleHAiOi01fQ.s", nil),  // {"exp":-5}
        ("a.eyJleHAiOiJzb29uIn0.s", nil),  // {"exp":"soon"}
        ("a.!!!.s", nil), ("no-dots", nil), ("", nil), ("a.b.c.d", nil),
    ])
    func tokenExpiryIsReadOrLeftUnknown(token: String, seconds: Double?) {
        #expect(BlueskyProvider.expiry(ofJWT: token)?.timeIntervalSince1970 == seconds, "\(token)")
    }

    @Test func loginReadsTheServerFromTheDIDDocument() async throws {
        // bskyr blanked the tokens in its recording: as recorded, there is no session to keep.
        let (blank, _) = try Self.provider([
            "com.atproto.server.createSession": "create-session.json",
            "com.atproto.identity.resolveHandle": "resolve-handle.json",
        ])
        let error = await #expect(throws: ProviderError.self) {
            try await blank.login(LoginCredentials(username: "bskyr.bsky.social", password: "abcd-efgh-ijkl-mnop")) { _ in }
        }
        #expect(error?.kind == "invalidResponse")
        // The same answer with tokens in it.
        let body = try Self.corpus.text("create-session.json").replacingOccurrences(
            of: #""accessJwt":"""#, with: #""accessJwt":"a.eyJleHAiOjE3NjQwMDAwMDB9.s""#
        ).replacingOccurrences(of: #""refreshJwt":"""#, with: #""refreshJwt":"r.e.s""#)
        let (bluesky, client) = try Self.provider(
            ["com.atproto.identity.resolveHandle": "resolve-handle.json"],
            inline: ["com.atproto.server.createSession": (200, [:], Data(body.utf8))])
        let session = try await bluesky.login(
            LoginCredentials(username: "@bskyr.bsky.social", password: "abcd-efgh-ijkl-mnop")
        ) { _ in }
        #expect(session.account == "@bskyr.bsky.social")
        #expect(session.values["pds"] == "https://puffball.us-east.host.bsky.network")
        #expect(session.values["did"] == "did:plc:5c2r73erhng4bszmxlfdtscf")
        #expect(session.expiresAt == Date(timeIntervalSince1970: 1_764_000_000), "from the JWT's exp")
        let login = try #require(client.asked.withLock { $0.first { $0.method == "POST" } })
        #expect(String(decoding: login.body ?? Data(), as: UTF8.self).contains(#""identifier":"bskyr.bsky.social""#))
    }

    @Test func errorsAreTypedWithTheServicesWords() async throws {
        let (bluesky, _) = try Self.provider([
            "com.atproto.server.createSession": "error-bad-login.json",
            "com.atproto.identity.resolveHandle": "error-invalid-request.json",
        ])
        let refused = await #expect(throws: ProviderError.self) {
            try await bluesky.login(LoginCredentials(username: "nobody.test", password: "abcd-efgh-ijkl-mnop")) { _ in }
        }
        #expect(refused?.kind == "unauthorized")
        #expect("\(refused.map(String.init(describing:)) ?? "")".contains("Invalid identifier or password"))
        #expect(!"\(refused.map(String.init(describing:)) ?? "")".contains("abcd-efgh"))

        let notAppPassword = await #expect(throws: ProviderError.self) {
            try await bluesky.login(LoginCredentials(username: "nobody.test", password: "my real password")) { _ in }
        }
        #expect("\(notAppPassword.map(String.init(describing:)) ?? "")".contains("App passwords"))
        #expect(!"\(notAppPassword.map(String.init(describing:)) ?? "")".contains("my real password"))

        let limited = HTTPResponse(
            status: 429, headers: ["ratelimit-reset": "1747676784"], body: Data(#"{"error":"RateLimitExceeded"}"#.utf8),
            url: URL(string: "https://public.api.bsky.app/xrpc/x")!)
        let fixed = try BlueskyProvider(
            context: ProviderContext(
                config: ProviderConfig([:]), http: RecordedHTTPClient([:]), logger: Logger(label: "t"),
                now: { Date(timeIntervalSince1970: 1_747_676_700) }))
        guard case .rateLimited(let after) = fixed.error(for: limited) else {
            Issue.record("not rate limited")
            return
        }
        #expect(after == 84)
        // A reset in the past or absurdly far: no negative wait, none past the longest.
        for reset in ["1", "99999999999999", "soon"] {
            let odd = HTTPResponse(
                status: 429, headers: ["ratelimit-reset": reset], body: Data(), url: URL(string: "https://x.test/xrpc/x")!)
            guard case .rateLimited(let wait) = fixed.error(for: odd) else {
                Issue.record("not rate limited")
                continue
            }
            #expect(wait.map { $0 >= 0 && $0 <= RetryAfter.maximum } ?? true, "\(reset): \(String(describing: wait))")
        }
        let gone = HTTPResponse(
            status: 400, headers: [:], body: Data(#"{"error":"NotFound","message":"Post not found: at://x"}"#.utf8),
            url: URL(string: "https://public.api.bsky.app/xrpc/x")!)
        #expect(fixed.error(for: gone).kind == "notFound")
    }
}

/// Posts that are gone or hidden, and handles that name nobody, in the lexicon's shapes.
@Suite struct BlueskyMissingTests {
    static func answering(_ method: String, _ status: Int, _ body: String) throws -> BlueskyProvider {
        try BlueskyCorpusTests.provider([:], inline: [method: (status, ["content-type": "application/json"], Data(body.utf8))]).0
    }

    @Test(arguments: [
        (#"{"thread":{"$type":"app.bsky.feed.defs#notFoundPost","uri":"at://x","notFound":true}}"#, "deleted"),
        (#"{"thread":{"$type":"app.bsky.feed.defs#blockedPost","uri":"at://x","blocked":true}}"#, "blocks"),
    ])
    func aThreadThatIsGone(body: String, said: String) async throws {
        let bluesky = try Self.answering("app.bsky.feed.getPostThread", 200, body)
        let error = await #expect(throws: ProviderError.self) {
            try await bluesky.children(of: ItemID(provider: "bluesky", kind: .post, nativeID: "did:plc:a/b"), cursor: nil)
        }
        #expect(error?.kind == "notFound")
        #expect("\(error.map(String.init(describing:)) ?? "")".contains(said))
    }

    @Test func aDeletedPostAndAnUnknownHandle() async throws {
        let posts = try Self.answering("app.bsky.feed.getPosts", 200, #"{"posts":[]}"#)
        let gone = await #expect(throws: ProviderError.self) {
            try await posts.item(ItemID(provider: "bluesky", kind: .post, nativeID: "did:plc:a/b"))
        }
        #expect(gone?.kind == "notFound")
        let handles = try Self.answering(
            "com.atproto.identity.resolveHandle", 400, #"{"error":"InvalidRequest","message":"Unable to resolve handle"}"#)
        let nobody = await #expect(throws: ProviderError.self) {
            try await handles.item(
                ItemID(provider: "bluesky", kind: .post, nativeID: "https://bsky.app/profile/nobody.test/post/3abc"))
        }
        #expect("\(nobody.map(String.init(describing:)) ?? "")".contains("@nobody.test does not resolve"))
        let feeds = try Self.answering(
            "app.bsky.feed.getAuthorFeed", 400, #"{"error":"InvalidRequest","message":"Profile not found"}"#)
        let unknown = await #expect(throws: ProviderError.self) { try await feeds.search(SearchQuery(text: "@nobody.test")) }
        #expect(unknown?.kind == "notFound")
    }
}

/// Facets against hand-made texts: every way offsets from outside can be wrong.
@Suite struct BlueskyFacetTests {
    static func facet(_ start: Int, _ end: Int, tag: String) throws -> BFacet {
        try JSONDecoder().decode(
            BFacet.self,
            from: Data(
                #"{"index":{"byteStart":\#(start),"byteEnd":\#(end)},"features":[{"$type":"app.bsky.richtext.facet#tag","tag":"\#(tag)"}]}"#
                    .utf8))
    }

    static func bytes(_ text: String, _ part: String) -> (Int, Int) {
        let range = text.range(of: part)!
        let start = text.utf8.distance(from: text.startIndex, to: range.lowerBound)
        return (start, start + part.utf8.count)
    }

    @Test(arguments: [
        "👩‍💻🚀 #tag", "日本語のテキスト #tag", "שלום עולם #tag", "e\u{301}le\u{300}ve #tag", "🇵🇱🇺🇦 #tag after flags",
    ])
    func offsetsBecomeScalars(text: String) throws {
        let (start, end) = Self.bytes(text, "#tag")
        let entities = BlueskyProvider.entities(text: text, facets: [try Self.facet(start, end, tag: "tag")])
        let entity = try #require(entities.first)
        #expect(covered(text, entity) == "#tag")
        let range = try #require(text.range(of: "#tag"))
        #expect(entity.start == text.unicodeScalars.distance(from: text.startIndex, to: range.lowerBound))
        #expect(entity.start < start, "every text here has a character of more than one byte before the tag")
    }

    @Test func badFacetsCostOnlyThemselves() throws {
        let text = "日本 #one #two #three"
        let (a, b) = Self.bytes(text, "#one")
        let (c, d) = Self.bytes(text, "#two")
        let (e, f) = Self.bytes(text, "#three")
        let facets = try [
            Self.facet(a, b, tag: "one"),
            Self.facet(a + 1, b, tag: "overlapping"),
            Self.facet(1, 4, tag: "inside-a-character"),
            Self.facet(f, f + 40, tag: "beyond"),
            Self.facet(d, c, tag: "backwards"),
            Self.facet(-3, 2, tag: "negative"),
            Self.facet(c, d, tag: "two"),
            Self.facet(e, f, tag: "three"),
        ]
        let entities = BlueskyProvider.entities(text: text, facets: facets)
        #expect(entities.map(\.value) == ["one", "two", "three"])
        for entity in entities { #expect(covered(text, entity) == "#" + entity.value) }
    }
}

/// Recorded answers, mutated: no crash; a bad post costs that post, not the page.
@Suite struct BlueskyToleranceTests {
    @Test(arguments: ["author-feed.json", "feed.json", "actor-likes.json"])
    func feeds(file: String) async throws {
        await checkTolerance(of: try BlueskyCorpusTests.corpus.data(file), named: file, variants: 40) { body in
            try await BlueskyProvider.answering(body).feed("app.bsky.feed.getFeed", [:], cursor: nil).items.count
        }
    }

    @Test func postsThreadsAndSearch() async throws {
        for file in ["post-video.json", "post-record-with-media.json", "post-quote.json"] {
            let wrapped = try JSONSerialization.data(
                withJSONObject: ["posts": [try JSONSerialization.jsonObject(with: BlueskyCorpusTests.corpus.data(file))]])
            await checkTolerance(of: wrapped, named: file, variants: 40, minDepth: 3) { body in
                _ = try await BlueskyProvider.answering(body).item(ItemID(provider: "bluesky", kind: .post, nativeID: "at://x"))
                return 0
            }
        }
        await checkTolerance(of: try BlueskyCorpusTests.corpus.data("thread.json"), named: "thread", variants: 40) { body in
            try await BlueskyProvider.answering(body).children(
                of: ItemID(provider: "bluesky", kind: .post, nativeID: "at://x"), cursor: nil
            ).items.count
        }
        await checkTolerance(of: try BlueskyCorpusTests.corpus.data("search-actors.json"), named: "actors", variants: 40) {
            body in
            try await BlueskyProvider.answering(body).search(SearchQuery(text: "x", kind: .user)).items.count
        }
    }
}
