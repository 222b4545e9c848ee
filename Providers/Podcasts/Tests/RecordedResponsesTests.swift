import Foundation
import MediaKit
import Synchronization
import TestSupport
import Testing

@testable import Podcasts

/// The provider on recorded iTunes answers: the real field names, nesting and quirks.
@Suite struct RecordedResponsesTests {
    static let search = #"""
        {
         "resultCount":1,
         "results": [
        {"wrapperType":"track", "kind":"podcast", "collectionId":1470039059, "trackId":1470039059, "artistName":"Podcast \u2013 Software Engineering Daily", "collectionName":"Podcast \u2013 Software Engineering Daily", "trackName":"Podcast \u2013 Software Engineering Daily", "collectionCensoredName":"Podcast \u2013 Software Engineering Daily", "trackCensoredName":"Podcast \u2013 Software Engineering Daily", "collectionViewUrl":"https://podcasts.apple.com/us/podcast/podcast-software-engineering-daily/id1470039059?uo=4", "feedUrl":"https://softwareengineeringdaily.com/category/podcast/feed/", "trackViewUrl":"https://podcasts.apple.com/us/podcast/podcast-software-engineering-daily/id1470039059?uo=4", "artworkUrl30":"https://is1-ssl.mzstatic.com/image/thumb/Podcasts113/v4/01/b1/a8/01b1a824-0331-f18b-a13d-df807d103d78/mza_2035166097799261329.png/30x30bb.jpg", "artworkUrl60":"https://is1-ssl.mzstatic.com/image/thumb/Podcasts113/v4/01/b1/a8/01b1a824-0331-f18b-a13d-df807d103d78/mza_2035166097799261329.png/60x60bb.jpg", "artworkUrl100":"https://is1-ssl.mzstatic.com/image/thumb/Podcasts113/v4/01/b1/a8/01b1a824-0331-f18b-a13d-df807d103d78/mza_2035166097799261329.png/100x100bb.jpg", "collectionPrice":0.00, "trackPrice":0.00, "collectionHdPrice":0, "releaseDate":"2020-01-17T10:00:00Z", "collectionExplicitness":"cleaned", "trackExplicitness":"cleaned", "trackCount":100, "country":"USA", "currency":"USD", "primaryGenreName":"Tech News", "contentAdvisoryRating":"Clean", "artworkUrl600":"https://is1-ssl.mzstatic.com/image/thumb/Podcasts113/v4/01/b1/a8/01b1a824-0331-f18b-a13d-df807d103d78/mza_2035166097799261329.png/600x600bb.jpg", "genreIds":["1528", "26", "1489"], "genres":["Tech News", "Podcasts", "News"]}]
        }
        """#

    /// A chart with one entry: the real feed then gives an object, not an array.
    static let chart = #"""
        {"feed":{"author":{"name":{"label":"iTunes Store"},"uri":{"label":"http://www.apple.com/itunes/"}},"entry":{"im:name":{"label":"Software Engineering Daily"},"im:image":[{"label":"https://is1-ssl.mzstatic.com/image/thumb/55x55bb.png","attributes":{"height":"55"}},{"label":"https://is1-ssl.mzstatic.com/image/thumb/60x60bb.png","attributes":{"height":"60"}},{"label":"https://is1-ssl.mzstatic.com/image/thumb/170x170bb.png","attributes":{"height":"170"}}],"summary":{"label":"Technical interviews about software topics."},"im:price":{"label":"Get","attributes":{"amount":"0","currency":"USD"}},"im:contentType":{"attributes":{"term":"Podcast","label":"Podcast"}},"rights":{"label":"© All rights reserved"},"title":{"label":"Software Engineering Daily - Software Engineering Daily"},"link":{"attributes":{"rel":"alternate","type":"text/html","href":"https://podcasts.apple.com/us/podcast/software-engineering-daily/id1019576853?uo=2"}},"id":{"label":"https://podcasts.apple.com/us/podcast/software-engineering-daily/id1019576853?uo=2","attributes":{"im:id":"1019576853"}},"im:artist":{"label":"Software Engineering Daily","attributes":{"href":"https://podcasts.apple.com/us/artist/software-engineering-daily/1019576852?uo=2"}},"category":{"attributes":{"im:id":"1318","term":"Technology","scheme":"https://podcasts.apple.com/us/genre/podcasts-technology/id1318?uo=2","label":"Technology"}},"im:releaseDate":{"label":"2024-05-10T03:00:00-07:00","attributes":{"label":"May 10, 2024"}}},"updated":{"label":"2024-05-10T12:00:00-07:00"},"rights":{"label":"Copyright 2008 Apple Inc."},"title":{"label":"iTunes Store: Top Podcasts in Technology"},"icon":{"label":"http://itunes.apple.com/favicon.ico"},"link":[{"attributes":{"rel":"alternate","type":"text/html","href":"https://podcasts.apple.com/WebObjects/MZStore.woa/wa/viewTop?cc=us&id=1318&popId=3"}},{"attributes":{"rel":"self","href":"https://itunes.apple.com/us/rss/toppodcasts/limit=1/genre=1318/json"}}],"id":{"label":"https://itunes.apple.com/us/rss/toppodcasts/limit=1/genre=1318/json"}}}
        """#

    static let genres = #"""
        {"26":{"name":"Podcasts","id":"26","url":"https://podcasts.apple.com/us/genre/podcasts/id26","rssUrls":{"topAudioPodcasts":"https://itunes.apple.com/us/rss/topaudiopodcasts/genre=26/json"},"chartUrls":{"podcasts":"https://itunes.apple.com/WebObjects/MZStoreServices.woa/ws/charts?cc=us&g=26&name=Podcasts"},"subgenres":{"1318":{"name":"Technology","id":"1318","url":"https://podcasts.apple.com/us/genre/podcasts-technology/id1318"},"1489":{"name":"News","id":"1489","url":"https://podcasts.apple.com/us/genre/podcasts-news/id1489","subgenres":{"1528":{"name":"Tech News","id":"1528","url":"https://podcasts.apple.com/us/genre/podcasts-news-tech-news/id1528"}}}}}}
        """#

    func provider(_ client: RecordedHTTPClient) throws -> PodcastsProvider {
        try PodcastsProvider(context: ProviderContext(config: ProviderConfig([:]), http: client, logger: Logger(label: "test")))
    }

    @Test func searchResult() async throws {
        let client = RecordedHTTPClient(["/search": (200, Self.search)])
        let page = try await provider(client).search(SearchQuery(text: "software engineering"))
        let item = try #require(page.items.first)
        #expect(item.id == ItemID(provider: "podcasts", kind: .podcast, nativeID: "1470039059"))
        #expect(item.title == "Podcast – Software Engineering Daily")
        #expect(item.artwork?.hasSuffix("600x600bb.jpg") == true)
        #expect(item.extra?["genres"] == "Tech News, News")
        #expect(item.feed == "https://softwareengineeringdaily.com/category/podcast/feed/")
        #expect(item.stats?["episodes"] == 100)
        #expect(page.next == nil, "fewer results than a page")
        #expect(client.urls.first?.absoluteString.hasPrefix("https://itunes.apple.com/search?") == true)
    }

    @Test func singleEntryChart() async throws {
        let client = RecordedHTTPClient(["/us/rss/toppodcasts/limit=200/genre=1318/json": (200, Self.chart)])
        let page = try await provider(client).browse(category: "1318", cursor: nil)
        let item = try #require(page.items.first)
        #expect(page.items.count == 1)
        #expect(item.id.nativeID == "1019576853")
        #expect(item.artwork == "https://is1-ssl.mzstatic.com/image/thumb/170x170bb.png", "the largest image")
        #expect(item.extra?["genres"] == "Technology")
    }

    @Test func genreTree() async throws {
        let client = RecordedHTTPClient(["/WebObjects/MZStoreServices.woa/ws/genres": (200, Self.genres)])
        let categories = try await provider(client).categories()
        #expect(
            categories == [
                MediaCategory(id: "1489", name: "News"), MediaCategory(id: "1528", name: "Tech News", parent: "1489"),
                MediaCategory(id: "1318", name: "Technology"),
            ])
    }

    @Test func searchErrorMessageOfTheRealService() async throws {
        let body =
            #"{"errorMessage":"Invalid value(s) for key(s): [mediaType]", "queryParameters":{"output":"json", "callback":"A javascript function to handle your search results", "country":"ISO-2A country code", "limit":"The number of search results to return", "term":"A search string", "lang":"ISO-2A language code"}}"#
        let client = RecordedHTTPClient(["/search": (400, body)])
        await #expect {
            try await provider(client).search(SearchQuery(text: "x"))
        } throws: { error in
            guard case .upstream(400, let message) = error as? ProviderError else { return false }
            return message.contains("Invalid value")
        }
    }
}
