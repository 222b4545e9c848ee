import Foundation
import MediaHTTP
import MediaKit
import PodcastsSandbox
import Sandbox
import Synchronization
import TestSupport
import Testing

@testable import Podcasts

typealias MemoryCache = MemoryProviderCache

/// The podcasts provider, over libcurl, against its sandbox replica.
struct PodcastsFixture {
    let server = SandboxServer(replicas: [PodcastsReplica()])
    let provider: PodcastsProvider

    init(retries: Int = 0) async throws {
        try await server.start()
        provider = try PodcastsProvider(context: server.providerContext("podcasts", retries: retries, cache: MemoryCache()))
    }
}

@Suite struct PodcastsProviderTests {
    @Test func genresWithSubgenres() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        let categories = try await fixture.provider.categories()
        #expect(categories.contains(MediaCategory(id: "1303", name: "Comedy")))
        #expect(categories.contains(MediaCategory(id: "1306", name: "Food", parent: "1301")))
        #expect(categories.filter { $0.parent == nil }.count == 19)
    }

    @Test func browsesAGenreChartByIDOrNameBothWays() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        let first = try await fixture.provider.browse(category: "1318", cursor: nil)
        #expect(first.items.count == PodcastsProvider.chartPageSize)
        #expect(first.items.allSatisfy { $0.kind == .podcast && $0.extra?["genres"] == "Technology" })
        #expect(first.prev == nil)
        let second = try await fixture.provider.browse(category: "Technology", cursor: first.next)
        #expect(second.items.first?.id != first.items.first?.id)
        #expect(second.total == first.total)
        #expect(try await fixture.provider.browse(category: "technology", cursor: second.prev) == first)
        // The chart is fetched once and paged locally.
        #expect(fixture.server.traffic.count(prefix: "/podcasts/us/rss/toppodcasts") == 1)
        await #expect(throws: ProviderError.self) { try await fixture.provider.browse(category: "Knitting", cursor: nil) }
    }

    @Test func searchesAndPages() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        let page = try await fixture.provider.search(SearchQuery(text: "kitchen"))
        #expect(page.items.count == PodcastsProvider.searchPageSize)
        #expect(page.items.allSatisfy { $0.title.contains("Kitchen") })
        let next = try await fixture.provider.search(SearchQuery(text: "kitchen", cursor: page.next))
        #expect(Set(next.items.map(\.id)).isDisjoint(with: page.items.map(\.id)))
        #expect(next.prev == Cursor("0"))
        let query = try #require(fixture.server.traffic.requests.last { $0.path == "/podcasts/search" }?.query)
        for part in ["term=kitchen", "media=podcast", "entity=podcast", "limit=20", "offset=20", "country=us"] {
            #expect(query.contains(part), "\(query)")
        }
        #expect(try await fixture.provider.search(SearchQuery(text: "zzzz-nothing")).items.isEmpty)
        await #expect(throws: ProviderError.self) { try await fixture.provider.search(SearchQuery(text: "x", kind: .video)) }
    }

    @Test func podcastDetailsCombineDirectoryAndFeed() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        let show = try #require(try await fixture.provider.search(SearchQuery(text: "kitchen")).items.first)
        let item = try await fixture.provider.item(show.id)
        #expect(item.title == show.title)
        #expect(item.summary?.contains("Café crème & croissants") == true)
        #expect(item.feed?.hasSuffix("/feeds/\(show.id.nativeID).xml") == true)
        #expect(item.extra?["genres"] != nil)
        #expect((item.stats?["episodes"] ?? 0) >= 5)
        #expect(item.artwork != nil)
        #expect(item.url?.contains("/shows/") == true, "the show's website from the feed")
    }

    @Test func episodesNewestFirstPagedAndOpenable() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        // Show 0 is one of the long-running ones (300+ episodes).
        let id = ItemID(provider: "podcasts", kind: .podcast, nativeID: "1000000000")
        let first = try await fixture.provider.children(of: id, cursor: nil)
        #expect(first.items.count == PodcastsProvider.episodePageSize)
        #expect((first.total ?? 0) >= 300)
        let dates = first.items.compactMap(\.published)
        #expect(dates == dates.sorted(by: >))
        var seen = Set(first.items.map(\.id))
        var cursor = first.next
        var pages = 1
        while let next = cursor {
            let page = try await fixture.provider.children(of: id, cursor: next)
            #expect(seen.isDisjoint(with: page.items.map(\.id)))
            seen.formUnion(page.items.map(\.id))
            cursor = page.next
            pages += 1
        }
        #expect(seen.count == first.total)
        #expect(pages == ((first.total ?? 0) + PodcastsProvider.episodePageSize - 1) / PodcastsProvider.episodePageSize)

        let episode = try await fixture.provider.item(first.items[2].id)
        #expect(episode.title == first.items[2].title)
        #expect(episode.enclosure?.type == "audio/mpeg")
        #expect(episode.subtitle != nil && episode.creator != nil)
        let source = try await fixture.provider.downloadSource(for: episode.id)
        #expect(source.url.absoluteString == episode.enclosure?.url)
        #expect(source.fileExtension == "mp3")
        #expect(source.collection == episode.subtitle)
        #expect(source.suggestedName.hasSuffix(episode.title))
    }

    @Test func everyEpisodeOfEveryFeedFormatIsReadable() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        // Show indexes 0 (RSS, long), 3 (ISO-8859-1), 7 (Atom), 13 (ISO-8859-1), 22 (Atom).
        for index in [0, 3, 7, 13, 22] {
            let id = ItemID(provider: "podcasts", kind: .podcast, nativeID: String(1_000_000_000 + index * 7919))
            let page = try await fixture.provider.children(of: id, cursor: nil)
            #expect(!page.items.isEmpty, "show \(index)")
            #expect(page.items.allSatisfy { $0.enclosure?.url.hasPrefix("http://127.0.0.1") == true && $0.published != nil })
            #expect(page.items.contains { $0.duration != nil })
        }
        let latin = try await fixture.provider.item(
            ItemID(provider: "podcasts", kind: .podcast, nativeID: String(1_000_000_000 + 3 * 7919)))
        #expect(latin.summary?.contains("Café") == true)
    }

    @Test func reopeningAPodcastIsOneConditionalRequest() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        let id = ItemID(provider: "podcasts", kind: .podcast, nativeID: "1000007919")
        let feedPath = "/podcasts/feeds/1000007919.xml"
        _ = try await fixture.provider.children(of: id, cursor: nil)
        #expect(fixture.server.traffic.counts[feedPath] == 1)
        let again = try await fixture.provider.children(of: id, cursor: nil)
        #expect(fixture.server.traffic.counts[feedPath] == 2)
        let last = try #require(fixture.server.traffic.requests.last { $0.path == feedPath })
        #expect(last.headers["if-none-match"] != nil)
        #expect(!again.items.isEmpty, "the kept copy answered the 304")
        #expect(fixture.server.traffic.counts["/podcasts/lookup"] == 1, "the directory entry is kept for a day")
    }

    @Test func keptFeedAnswersWhenTheNetworkFails() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        let id = ItemID(provider: "podcasts", kind: .podcast, nativeID: "1000007919")
        let before = try await fixture.provider.children(of: id, cursor: nil)
        fixture.server.faults.add(FaultRule(path: "/podcasts/feeds/", status: 503))
        #expect(try await fixture.provider.children(of: id, cursor: nil) == before)
        // A refresh asks for the feed itself: the failure is said, not hidden behind the copy.
        func fresh() async throws -> Page {
            try await FetchPolicy.$requireFresh.withValue(true) { try await fixture.provider.children(of: id, cursor: nil) }
        }
        await #expect {
            try await fresh()
        } throws: { if case .upstream(let status, _) = $0 as? ProviderError { status == 503 } else { false } }
        // Once the feed answers again, as before (a 304 answered from the copy).
        fixture.server.faults.clear()
        #expect(try await fresh() == before)
    }

    /// Feeds are parsed as they arrive, into a new copy of the list: a transfer cut off halfway
    /// must leave no half list behind, and the next whole transfer is read whole.
    @Test func aFeedCutOffInTransitKeepsNoPartialList() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        let id = ItemID(provider: "podcasts", kind: .podcast, nativeID: "1000007919")
        fixture.server.faults.add(FaultRule(path: "/podcasts/feeds/", truncateAfterBytes: 6_000, times: 1))
        await #expect {
            try await fixture.provider.children(of: id, cursor: nil)
        } throws: { if case .network = $0 as? ProviderError { true } else { false } }
        let whole = try await fixture.provider.children(of: id, cursor: nil)
        let reference = try await PodcastsFixture()
        defer { reference.server.stop() }
        let expected = try await reference.provider.children(of: id, cursor: nil)
        #expect(whole.total == expected.total && whole.total ?? 0 > 5)
        #expect(whole.items.map(\.id) == expected.items.map(\.id), "the same episodes (URLs differ by port)")
    }

    @Test func malformedFeedIsAClearInvalidResponse() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        fixture.server.faults.add(FaultRule(path: "/podcasts/feeds/", malformed: true))
        let id = ItemID(provider: "podcasts", kind: .podcast, nativeID: "1000015838")
        await #expect {
            try await fixture.provider.children(of: id, cursor: nil)
        } throws: { error in
            guard case .invalidResponse(let message) = error as? ProviderError else { return false }
            return message.contains("/feeds/1000015838.xml")
        }
        // Details still show what the directory knows, and say what is wrong with the feed.
        let item = try await fixture.provider.item(id)
        #expect(item.extra?["feedError"]?.contains("cannot be read") == true)
    }

    @Test func serviceErrorsMapToTypedErrors() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        fixture.server.faults.add(FaultRule(path: "/podcasts/search", status: 429, retryAfter: 60, times: 1))
        await #expect(throws: ProviderError.rateLimited(retryAfter: 60)) {
            try await fixture.provider.search(SearchQuery(text: "code"))
        }
        fixture.server.faults.add(FaultRule(path: "/podcasts/search", malformed: true, times: 1))
        await #expect {
            try await fixture.provider.search(SearchQuery(text: "code"))
        } throws: { if case .invalidResponse = $0 as? ProviderError { true } else { false } }
        fixture.server.faults.add(FaultRule(path: "/podcasts/search", status: 500, times: 1))
        await #expect {
            try await fixture.provider.search(SearchQuery(text: "code"))
        } throws: { if case .upstream(500, _) = $0 as? ProviderError { true } else { false } }
        await #expect {
            try await fixture.provider.item(ItemID(provider: "podcasts", kind: .podcast, nativeID: "42"))
        } throws: { if case .notFound = $0 as? ProviderError { true } else { false } }
    }

    @Test func transientFailuresAreRetried() async throws {
        let fixture = try await PodcastsFixture(retries: 3)
        defer { fixture.server.stop() }
        fixture.server.faults.add(FaultRule(path: "/podcasts/search", status: 503, times: 2))
        #expect(try await !fixture.provider.search(SearchQuery(text: "code")).items.isEmpty)
        #expect(fixture.server.traffic.count(prefix: "/podcasts/search") == 3)
    }

    @Test func replicaIsDeterministic() async throws {
        let a = try await PodcastsFixture()
        let b = try await PodcastsFixture()
        defer { a.server.stop(); b.server.stop() }
        let fromA = try await a.provider.search(SearchQuery(text: "garden")).items.map { ($0.id, $0.title) }
        let fromB = try await b.provider.search(SearchQuery(text: "garden")).items.map { ($0.id, $0.title) }
        #expect(fromA.map(\.0) == fromB.map(\.0) && fromA.map(\.1) == fromB.map(\.1))
    }
}

@Suite struct PodcastsCursorTests {
    /// A client's cursor is outside input: no arithmetic on it may overflow.
    @Test(arguments: ["9223372036854775807", "9223372036854775800", "-1", "10000001", "abc", ""])
    func hostileCursorsAreRefused(cursor: String) async throws {
        #expect(throws: ProviderError.self) {
            try PodcastsProvider.page([1, 2, 3], cursor: Cursor(cursor), size: 20) {
                MediaItem(id: ItemID(provider: "podcasts", kind: .episode, nativeID: "1:\($0)"), title: "\($0)")
            }
        }
    }
}

@Suite struct LongFeedTests {
    /// A feed over the 10 MB that libxml2 refused whole (and the 32 MiB body cap of the old
    /// path), streamed from the replica: opens, pages both ways, and finds its episodes.
    /// Episodes go to the cache 256 at a time, or sooner when their records reach 1 MB
    /// (episodes with long notes must not pile up in memory).
    @Test func aBatchOfEpisodesIsFullByCountOrBySize() {
        let batch = EpisodeBatch()
        for n in 0..<255 { batch.append(CachedRow(id: "e\(n)", order: nil, data: Data(count: 100))) }
        #expect(!batch.isFull)
        batch.append(CachedRow(id: "e255", order: nil, data: Data(count: 100)))
        #expect(batch.isFull)
        #expect(batch.take().count == 256)
        #expect(batch.rows.isEmpty && !batch.isFull)
        for n in 0..<10 { batch.append(CachedRow(id: "long\(n)", order: nil, data: Data(count: 100_000))) }
        #expect(!batch.isFull)
        batch.append(CachedRow(id: "long10", order: nil, data: Data(count: 100_000)))
        #expect(batch.isFull)
        #expect(batch.take().map(\.id).last == "long10")
    }

    @Test func aFeedOverTenMegabytesOpensAndPages() async throws {
        let fixture = try await PodcastsFixture()
        defer { fixture.server.stop() }
        let base = try #require(fixture.server.baseURL(for: "podcasts"))
        var show = try await fixture.provider.lookup(String(PodcastsReplica.longShowID))
        show.feedUrl = "\(base)/feeds/\(PodcastsReplica.longShowID).xml?episodes=4500"
        let feed = try await fixture.provider.feed(of: show)
        #expect(feed.count == 4500)
        #expect(feed.channel.title == "The Long Runner")
        let first = try await fixture.provider.episodes(of: show, cursor: nil)
        #expect(first.items.count == 20)
        #expect(first.total == 4500)
        #expect(first.items.first?.extra?["episode"] == "4500", "newest first")
        let last = try await fixture.provider.episodes(of: show, cursor: Cursor("4480"))
        #expect(last.items.count == 20)
        #expect(last.items.last?.extra?["episode"] == "1")
        #expect(last.next == nil)
        #expect(last.prev == Cursor("4460"))
    }
}
