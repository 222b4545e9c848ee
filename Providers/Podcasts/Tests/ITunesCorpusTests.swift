import Foundation
import MediaKit
import TestSupport
import Testing

@testable import Podcasts

/// The provider on the iTunes answers recorded in public projects (Recorded/SOURCES.md).
@Suite struct ITunesCorpusTests {
    static let corpus = Recorded()

    func provider(_ pick: @escaping @Sendable (String) -> String?) throws -> PodcastsProvider {
        let client = RecordedHTTPClient { request in pick(request.url.path).map { Self.corpus.answer("itunes/" + $0) } }
        return try PodcastsProvider(
            context: ProviderContext(config: ProviderConfig([:]), http: client, logger: Logger(label: "test")))
    }

    @Test func searchResults() async throws {
        let podcasts = try provider { $0 == "/search" ? "search-apple.json" : nil }
        let page = try await podcasts.search(SearchQuery(text: "apple"))
        #expect(page.items.count == 20 || page.items.count == 50, "a page of what the directory sent")
        let first = try #require(page.items.first)
        #expect(first.title == "Apple Keynotes")
        #expect(first.id == ItemID(provider: "podcasts", kind: .podcast, nativeID: "275834665"))
        #expect(first.creator == "Apple")
        #expect(first.feed == "http://podcasts.apple.com/apple_keynotes/apple_keynotes.xml")
        #expect(first.artwork?.contains("mzstatic.com") == true)
        #expect(page.next == Cursor("20"), "a full page means there may be more")
        let gruber = try provider { $0 == "/search" ? "search-gruber.json" : nil }
        #expect(try await gruber.search(SearchQuery(text: "gruber")).items.first?.title == "The Talk Show With John Gruber")
    }

    @Test func lookupWithANonASCIITitle() async throws {
        let podcasts = try provider { $0 == "/lookup" ? "lookup.json" : nil }
        let show = try await podcasts.lookup("537879700")
        #expect(show.collectionName == "Seminargespräche")
        #expect(show.feedUrl == "http://feeds.feedburner.com/forum-politische-bildung")
    }

    @Test func aLookupThatClaimsAResultButHasNone() async throws {
        let lie = try provider { $0 == "/lookup" ? "lookup-lie.json" : nil }
        await #expect(throws: ProviderError.notFound("no podcast with id 537879700 in the directory")) {
            try await lie.lookup("537879700")
        }
        let surprise = try provider { $0 == "/search" ? "surprise.json" : nil }
        #expect(try await surprise.search(SearchQuery(text: "x")).items.isEmpty, "an answer of another shape is no results")
    }

    @Test func aGenresTopChart() async throws {
        let podcasts = try provider { $0.contains("/rss/toppodcasts/") ? "top-podcasts.json" : nil }
        let page = try await podcasts.browse(category: "1310", cursor: nil)
        #expect(page.total == 41)
        #expect(page.items.count == 20)
        #expect(page.items.first?.title == "Björk: Sonic Symbolism")
        #expect(page.items.first?.id.nativeID == "1641171534")
        #expect(page.items.first?.extra?["genres"] == "Music Interviews")
        #expect(page.items.first?.artwork?.hasSuffix("170x170bb.png") == true, "the largest image")
        let last = try await podcasts.browse(category: "1310", cursor: Cursor("40"))
        #expect(last.items.count == 1)
        #expect(last.next == nil)
    }
}
