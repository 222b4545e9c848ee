import Foundation
import MediaKit
import TestSupport
import Testing

@testable import YouTube

/// Recorded YouTube answers, mutated: dropped fields, nulls, numbers as strings and back,
/// unknown fields and values. No crash; a bad element costs that element, not the page.
@Suite struct YouTubeToleranceTests {
    static let corpus = Recorded()

    func provider(_ resource: String, _ body: Data) throws -> YouTubeProvider {
        let client = RecordedHTTPClient { request in
            request.url.path.hasSuffix("/" + resource)
                ? (200, ["content-type": "application/json"], body)
                : (200, ["content-type": "application/json"], Data(#"{"items":[]}"#.utf8))
        }
        return try YouTubeProvider(
            context: ProviderContext(config: ProviderConfig(["api_key": "k"]), http: client, logger: Logger(label: "test")))
    }

    @Test(arguments: ["search-videos-p1.json", "search-videos-p2.json", "search-channels.json", "search-by-channel.json"])
    func search(file: String) async throws {
        await checkTolerance(of: try Self.corpus.data(file), named: file) { body in
            try await provider("search", body).search(
                SearchQuery(text: "x", kind: file == "search-channels.json" ? .channel : nil)
            ).items.count
        }
    }

    @Test(arguments: ["videos-chart-p1.json", "videos-chart-p2.json", "videos-multi.json", "videos-liked.json"])
    func videoLists(file: String) async throws {
        await checkTolerance(of: try Self.corpus.data(file), named: file) { body in
            try await provider("videos", body).browse(category: "28", cursor: nil).items.count
        }
    }

    @Test(arguments: ["playlist-items-p1.json", "playlist-items-p2.json"])
    func playlistItems(file: String) async throws {
        // The items' videos.list answers nothing: each item is then left out, so count the ids.
        await checkTolerance(of: try Self.corpus.data(file), named: file) { body in
            _ = try await provider("playlistItems", body).children(
                of: ItemID(provider: "youtube", kind: .playlist, nativeID: "P"), cursor: nil)
            return 0
        }
    }

    @Test func categoriesAndChannels() async throws {
        await checkTolerance(of: try Self.corpus.data("video-categories.json"), named: "categories") { body in
            try await provider("videoCategories", body).categories().count
        }
        for file in ["channel-single.json", "channels.json"] {
            await checkTolerance(of: try Self.corpus.data(file), named: file) { body in
                _ = try await provider("channels", body).item(ItemID(provider: "youtube", kind: .channel, nativeID: "C"))
                return 0
            }
        }
    }
}
