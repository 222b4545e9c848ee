import Foundation
import MediaKit
import TestSupport
import Testing

@testable import YouTube

/// The provider on answers in the real API's format (as its reference documents them).
@Suite struct YouTubeRecordedTests {
    static let videos = #"""
        {
          "kind": "youtube#videoListResponse",
          "etag": "CqGqLjYfF3c0kq0P1rYzVw3hXqA",
          "items": [
            {
              "kind": "youtube#video",
              "etag": "Jc6uDq7R3n3KdlXj8yuWk9Xw0mQ",
              "id": "dQw4w9WgXcQ",
              "snippet": {
                "publishedAt": "2009-10-25T06:57:33Z",
                "channelId": "UCuAXFkgsw1L7xaCfnd5JJOw",
                "title": "Rick Astley - Never Gonna Give You Up (Official Music Video)",
                "description": "The official video for “Never Gonna Give You Up” by Rick Astley.",
                "thumbnails": {
                  "default": {"url": "https://i.ytimg.com/vi/dQw4w9WgXcQ/default.jpg", "width": 120, "height": 90},
                  "high": {"url": "https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg", "width": 480, "height": 360},
                  "standard": {"url": "https://i.ytimg.com/vi/dQw4w9WgXcQ/sddefault.jpg", "width": 640, "height": 480}
                },
                "channelTitle": "Rick Astley",
                "tags": ["rick astley", "Never Gonna Give You Up"],
                "categoryId": "10",
                "liveBroadcastContent": "none",
                "localized": {"title": "Rick Astley - Never Gonna Give You Up (Official Music Video)", "description": "…"},
                "defaultAudioLanguage": "en"
              },
              "contentDetails": {"duration": "PT3M33S", "dimension": "2d", "definition": "hd", "caption": "true", "licensedContent": true, "contentRating": {}, "projection": "rectangular"},
              "statistics": {"viewCount": "1500000000", "likeCount": "17000000", "favoriteCount": "0", "commentCount": "2300000"}
            }
          ],
          "pageInfo": {"totalResults": 1, "resultsPerPage": 1}
        }
        """#

    static let quota = #"""
        {"error": {"code": 403, "message": "The request cannot be completed because you have exceeded your <a href=\"/youtube/v3/getting-started#quota\">quota</a>.", "errors": [{"message": "The request cannot be completed because you have exceeded your <a href=\"/youtube/v3/getting-started#quota\">quota</a>.", "domain": "youtube.quota", "reason": "quotaExceeded"}]}}
        """#

    static let badKey = #"""
        {"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "errors": [{"message": "API key not valid. Please pass a valid API key.", "domain": "global", "reason": "badRequest"}], "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com", "metadata": {"service": "youtube.googleapis.com"}}]}}
        """#

    func provider(_ client: RecordedHTTPClient) throws -> YouTubeProvider {
        try YouTubeProvider(
            context: ProviderContext(config: ProviderConfig(["api_key": "k"]), http: client, logger: Logger(label: "test")))
    }

    @Test func videoResource() async throws {
        let client = RecordedHTTPClient(["/youtube/v3/videos": (200, Self.videos)])
        let video = try await provider(client).item(ItemID(provider: "youtube", kind: .video, nativeID: "dQw4w9WgXcQ"))
        #expect(video.title == "Rick Astley - Never Gonna Give You Up (Official Music Video)")
        #expect(video.duration == 213)
        #expect(video.stats == ["views": 1_500_000_000, "likes": 17_000_000, "comments": 2_300_000])
        #expect(video.artwork == "https://i.ytimg.com/vi/dQw4w9WgXcQ/sddefault.jpg", "the largest there is")
        #expect(video.extra?["channel"] == "youtube:channel:UCuAXFkgsw1L7xaCfnd5JJOw")
        #expect(video.url == "https://www.youtube.com/watch?v=dQw4w9WgXcQ")
        #expect(client.urls.first?.host == "www.googleapis.com")
    }

    @Test func realErrorBodies() async throws {
        let quota = RecordedHTTPClient(["/youtube/v3/videoCategories": (403, Self.quota)])
        await #expect {
            try await provider(quota).categories()
        } throws: { if case .quotaExceeded = $0 as? ProviderError { true } else { false } }
        let badKey = RecordedHTTPClient(["/youtube/v3/videoCategories": (400, Self.badKey)])
        await #expect {
            try await provider(badKey).categories()
        } throws: { if case .unauthorized = $0 as? ProviderError { true } else { false } }
    }
}
