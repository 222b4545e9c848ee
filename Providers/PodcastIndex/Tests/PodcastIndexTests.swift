import Foundation
import Logging
import MediaHTTP
import MediaKit
import PodcastIndexSandbox
import Sandbox
import TestSupport
import Testing

@testable import PodcastIndex

/// The request signature: SHA-1's standard vectors, and the worked example of a client's tests
/// (Recorded/AUTH.md: key 123, secret ABC, time 1672531200).
@Suite struct PodcastIndexSigningTests {
    @Test func sha1StandardVectors() {
        #expect(SHA1.hex([]) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(SHA1.hex(Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(
            SHA1.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(SHA1.hex(Array(repeating: UInt8(ascii: "a"), count: 1_000_000)) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test func theHeadersOfARequest() {
        let headers = PodcastIndexProvider.authHeaders(
            key: "123", secret: "ABC", date: Date(timeIntervalSince1970: 1_672_531_200))
        #expect(headers["X-Auth-Key"] == "123" && headers["X-Auth-Date"] == "1672531200")
        #expect(headers["Authorization"] == "88f9e47ed7f0fb27aee876a772d0b2ae5486f890")
        #expect(headers["User-Agent"]?.hasPrefix("mediahost") == true)
        #expect(!headers.values.contains("ABC"), "the secret never travels")
    }
}

/// The provider on the API's real recorded answers (Recorded/SOURCES.md).
@Suite struct PodcastIndexRecordedTests {
    static let corpus = Recorded()

    static func provider(_ routes: [String: String]) throws -> PodcastIndexProvider {
        let client = RecordedHTTPClient { request in
            let path = request.url.path
            for (suffix, file) in routes where path.hasSuffix(suffix) { return corpus.answer(file) }
            return (404, [:], Data())
        }
        return try PodcastIndexProvider(
            context: ProviderContext(
                config: ProviderConfig([
                    "api_key": "key", "api_secret": "secret", "base_url": "https://api.podcastindex.org/api/1.0",
                ]),
                http: client, logger: Logger(label: "test")))
    }

    @Test func aShowFoundOpensOnItsOwnFeed() async throws {
        let provider = try Self.provider(["search/byterm": "search-byterm.json"])
        let page = try await provider.search(SearchQuery(text: "podcasting 2.0"))
        let first = try #require(page.items.first)
        #expect(first.title == "Podcasting 2.0")
        #expect(first.id == ItemID.feed("http://mp3s.nashownotes.com/pc20rss.xml", provider: "podcasts"))
        #expect(first.feed == "http://mp3s.nashownotes.com/pc20rss.xml")
        #expect(first.namespace?.guid == "917393e3-1b1e-5cef-ace4-edaa54e1f810")
        #expect(first.stats?["episodes"] == 48)
    }

    @Test func aPersonsEpisodesAcrossShows() async throws {
        let provider = try Self.provider(["search/byperson": "search-byperson.json"])
        let page = try await provider.search(SearchQuery(text: "person:Adam Curry"))
        #expect(page.items.count > 3)
        let first = try #require(page.items.first)
        #expect(first.kind == .episode && first.provider == "podcasts", "\(first.id)")
        #expect(first.id.nativeID.hasPrefix("feed-") && first.id.nativeID.hasSuffix(":Buzzsprout-9984456"))
        #expect(first.enclosure?.url.hasPrefix("https://") == true && first.duration == 4319)
        #expect(Set(page.items.compactMap(\.feed)).count > 1, "across shows")
    }

    @Test func trendingRecentAndAShowsEpisodes() async throws {
        let provider = try Self.provider([
            "podcasts/trending": "podcasts-trending.json", "recent/episodes": "recent-episodes.json",
            "episodes/byfeedid": "episodes-byfeedid.json",
        ])
        #expect(try await provider.browse(category: "trending", cursor: nil).items.isEmpty == false)
        // Recent episodes name no feed URL: the Index's own ids, playable from their files.
        let recent = try await provider.browse(category: "recent", cursor: nil).items
        let episode = try #require(recent.first)
        #expect(episode.provider == "podcastindex" && episode.enclosure != nil)
        let episodes = try await provider.children(
            of: ItemID(provider: "podcastindex", kind: .podcast, nativeID: "920666"), cursor: nil)
        #expect(!episodes.items.isEmpty)
        #expect(episodes.items.contains { $0.namespace?.people?.isEmpty == false })
    }

    @Test func aShowByGuidAndNoneFound() async throws {
        let found = try Self.provider(["podcasts/byguid": "podcasts-byguid.json"])
        #expect(try await found.show(guid: "917393e3-1b1e-5cef-ace4-edaa54e1f810") != nil)
        let none = try Self.provider(["podcasts/byfeedid": "podcasts-byfeedid-notfound.json"])
        await #expect(throws: ProviderError.self) {
            _ = try await none.item(ItemID(provider: "podcastindex", kind: .podcast, nativeID: "1"))
        }
    }

    @Test func refusalsSayWhatToDo() async throws {
        let refused = try Self.provider(["search/byterm": "error-401-bad-hash.txt"])
        do {
            _ = try await refused.search(SearchQuery(text: "x"))
            Issue.record("a 401 was taken")
        } catch let error as ProviderError {
            #expect("\(error)".contains("PODCASTINDEX_API_SECRET"), "\(error)")
        }
        let bad = try Self.provider(["search/byterm": "error-400.json"])
        await #expect(throws: ProviderError.self) { _ = try await bad.search(SearchQuery(text: "x")) }
        let keyless = try PodcastIndexProvider(
            context: ProviderContext(config: ProviderConfig([:]), http: RecordedHTTPClient([:]), logger: Logger(label: "test")))
        do {
            _ = try await keyless.search(SearchQuery(text: "x"))
            Issue.record("searched without a key")
        } catch let error as ProviderError {
            #expect("\(error)".contains("https://api.podcastindex.org/"), "\(error)")
        }
    }
}

/// The provider against its sandbox replica: signed requests, a person's episodes across shows,
/// a wrong secret refused.
@Suite struct PodcastIndexReplicaTests {
    @Test func searchesAndSigning() async throws {
        let server = SandboxServer(replicas: [PodcastIndexReplica()])
        try await server.start()
        defer { server.stop() }
        let provider = try PodcastIndexProvider(
            context: server.providerContext("podcastindex", ["api_key": "sandbox-key", "api_secret": "sandbox-secret"]))
        let shows = try await provider.search(SearchQuery(text: "engines"))
        #expect(shows.items.map(\.title) == ["Engines of Thought"])
        let ada = try await provider.search(SearchQuery(text: "person:ada lovelace"))
        #expect(ada.items.count == 3 && Set(ada.items.compactMap(\.feed)).count == 3, "\(ada.items.map(\.title))")
        #expect(
            ada.items.allSatisfy { $0.namespace?.people?.contains { $0.name == "Ada Lovelace" && $0.role == "guest" } == true })
        // `--kind podcast`: the shows she is heard on, each once, opening on their own feeds.
        let hers = try await provider.search(SearchQuery(text: "person:ada lovelace", kind: .podcast))
        #expect(hers.items.count == 3 && hers.items.allSatisfy { $0.id.kind == .podcast && $0.id.provider == "podcasts" })
        #expect(Set(hers.items.compactMap(\.feed)) == Set(ada.items.compactMap(\.feed)))
        let byTitle = try await provider.search(SearchQuery(text: "title:radio"))
        #expect(byTitle.items.map(\.title) == ["Tone Radio"])
        #expect(try await provider.browse(category: "trending", cursor: nil).items.count == 6)
        let wrong = try PodcastIndexProvider(
            context: server.providerContext("podcastindex", ["api_key": "sandbox-key", "api_secret": "not-it"]))
        await #expect(throws: ProviderError.self) { _ = try await wrong.search(SearchQuery(text: "engines")) }
    }
}
