import Foundation
import MediaKit
import TestSupport
import Testing

@testable import YouTube

/// The provider on answers recorded from the real YouTube Data API (Recorded/SOURCES.md): every
/// endpoint it calls, with real content checked.
@Suite struct YouTubeCorpusTests {
    static let corpus = Recorded()

    /// Answers each API call with the recorded body chosen by `pick` (resource, query).
    func provider(_ pick: @escaping @Sendable (String, [String: String]) -> String?) throws -> (
        YouTubeProvider, RecordedHTTPClient
    ) {
        let client = RecordedHTTPClient { request in
            let resource = request.url.path.replacingOccurrences(of: "/youtube/v3/", with: "")
            let query = Dictionary(
                (URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []).map {
                    ($0.name, $0.value ?? "")
                },
                uniquingKeysWith: { a, _ in a })
            return pick(resource, query).map { Self.corpus.answer($0) }
        }
        let provider = try YouTubeProvider(
            context: ProviderContext(config: ProviderConfig(["api_key": "k"]), http: client, logger: Logger(label: "test")))
        return (provider, client)
    }

    @Test func searchDecodesTheHTMLEntitiesOfSnippetsAndPages() async throws {
        let (youtube, client) = try provider { resource, query in
            switch resource {
            case "search": query["pageToken"] == "CBkQAA" ? "search-videos-p2.json" : "search-videos-p1.json"
            case "videos": "videos-multi.json"
            default: nil
            }
        }
        let first = try await youtube.search(SearchQuery(text: "surfing"))
        #expect(first.items.count == 25)
        #expect(first.next == Cursor("CBkQAA"))
        #expect(first.prev == nil)
        #expect(first.total == 1_000_000)
        let titles = first.items.map(\.title)
        #expect(titles.contains("World's best surfing 2017"), "&#39; decoded")
        #expect(titles.contains("SURFING PERFECT PIPE & BACKDOOR || SUNRISE SHACK!"), "&amp; decoded")
        #expect(titles.contains("DANGEROUS SEWER DRAIN SURFING! | Jamie O'Brien"))
        #expect(!titles.joined().contains("&#39;") && !titles.joined().contains("&amp;"))
        #expect(first.items.first?.subtitle == "Jamie O'Brien")
        #expect(first.items.allSatisfy { $0.kind == .video && $0.artwork?.hasPrefix("https://i.ytimg.com/") == true })
        // One batched videos.list for the whole page.
        let batches = client.urls.filter { $0.path.hasSuffix("/videos") }
        #expect(batches.count == 1)
        #expect(batches.first?.query?.contains("id=gQ_1zX-F_No") == true)

        let second = try await youtube.search(SearchQuery(text: "surfing", cursor: first.next))
        #expect(second.items.count == 25)
        #expect(second.next == Cursor("CDIQAA"))
        #expect(second.prev == Cursor("CBkQAQ"))
        #expect(second.items.map(\.title).contains("\"Pacific Dreams\" A California Surfing Film"), "&quot; decoded")
    }

    @Test func searchForChannels() async throws {
        let (youtube, _) = try provider { resource, _ in resource == "search" ? "search-channels.json" : nil }
        let page = try await youtube.search(SearchQuery(text: "fourcade", kind: .channel))
        #expect(page.items.count == 5)
        #expect(page.items.first?.id == ItemID(provider: "youtube", kind: .channel, nativeID: "UCxRULEz6kS0PMxCzOY25GhQ"))
        #expect(page.items.first?.title == "NLaFourcadeVEVO")
        #expect(page.items.first?.url == "https://www.youtube.com/channel/UCxRULEz6kS0PMxCzOY25GhQ")
    }

    @Test func aVideoAndItsCategory() async throws {
        let (youtube, _) = try provider { resource, _ in resource == "videos" ? "videos-single.json" : nil }
        let video = try await youtube.item(ItemID(provider: "youtube", kind: .video, nativeID: "D-lhorsDlUQ"))
        #expect(video.title == "What are Actions on Google (Assistant on Air)")
        #expect(video.subtitle == "Google Developers")
        #expect(video.extra?["category"] == "28")
        #expect(video.published?.hasPrefix("20") == true)
        #expect(video.artwork?.contains("D-lhorsDlUQ") == true)
    }

    @Test func theMostPopularChartPagesBothWays() async throws {
        let (youtube, _) = try provider { resource, query in
            guard resource == "videos", query["chart"] == "mostPopular" else { return nil }
            return query["pageToken"] == "CAUQAA" ? "videos-chart-p2.json" : "videos-chart-p1.json"
        }
        let first = try await youtube.browse(category: "28", cursor: nil)
        #expect(first.items.count == 5)
        #expect(first.total == 8)
        #expect(first.next == Cursor("CAUQAA"))
        let second = try await youtube.browse(category: "28", cursor: first.next)
        #expect(second.items.count == 3)
        #expect(second.next == nil)
        #expect(second.prev == Cursor("CAUQAQ"))
    }

    @Test func assignableCategoriesOnly() async throws {
        let (youtube, _) = try provider { resource, _ in resource == "videoCategories" ? "video-categories.json" : nil }
        let categories = try await youtube.categories()
        #expect(categories.count == 15, "32 categories, 15 assignable")
        #expect(categories.first == MediaCategory(id: "1", name: "Film & Animation"))
    }

    @Test func aChannelWithItsStatisticsAndItsUploads() async throws {
        let (youtube, _) = try provider { resource, query in
            switch resource {
            case "channels": "channel-single.json"
            case "playlistItems": query["pageToken"] == "CAoQAA" ? "playlist-items-p2.json" : "playlist-items-p1.json"
            case "videos": "videos-multi.json"
            default: nil
            }
        }
        let channel = try await youtube.item(ItemID(provider: "youtube", kind: .channel, nativeID: "UC_x5XG1OV2P6uZZ5FSM9Ttw"))
        #expect(channel.title == "Google Developers")
        #expect(channel.stats == ["subscribers": 1_927_873, "videos": 5026, "views": 160_361_638])
        // This recording has no contentDetails: a channel without uploads says so.
        await #expect(throws: ProviderError.self) {
            try await youtube.children(of: channel.id, cursor: nil)
        }
        // A playlist's items, completed by one videos.list (the recorded batch knows two of them).
        let playlist = ItemID(provider: "youtube", kind: .playlist, nativeID: "PLOU2XLYxmsIIM9h1Ybw2DuRw6o2fkNMeR")
        let items = try await youtube.children(of: playlist, cursor: nil)
        #expect(items.total == 13)
        #expect(items.next == Cursor("CAoQAA"))
        #expect(items.items.allSatisfy { $0.kind == .video })
        let last = try await youtube.children(of: playlist, cursor: items.next)
        #expect(last.next == nil)
        #expect(last.prev == Cursor("CAoQAQ"))
    }

    @Test func theAccountsLikedVideos() async throws {
        let (youtube, client) = try provider { resource, query in
            resource == "videos" && query["myRating"] == "like" ? "videos-liked.json" : nil
        }
        let liked = try await youtube.accountFavorites(cursor: nil, session: AuthSession(provider: "youtube", accessToken: "t"))
        #expect(liked.items.count == 2)
        #expect(liked.next == Cursor("CAIQAA"))
        #expect(client.asked.withLock { $0.first?.headers["Authorization"] } == "Bearer t")
    }

    @Test func aRealErrorBodyKeepsItsReason() async throws {
        let (youtube, _) = try provider { _, _ in "error-permission.json" }
        await #expect {
            try await youtube.categories()
        } throws: { error in
            guard let error = error as? ProviderError else { return false }
            return error.message.contains("The caller does not have permission") && !error.message.contains("YouTube: ")
        }
    }
}
