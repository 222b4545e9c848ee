import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// YouTube Data API v3 resources. Everything optional: the API omits what a part does not ask
/// for, and counts arrive as strings.
struct YTList<Item: Decodable>: Decodable {
    @LossyList var items: [Item]?
    @Lenient var nextPageToken: String?
    @Lenient var prevPageToken: String?
    @Lenient var pageInfo: PageInfo?
    struct PageInfo: Decodable { @Lenient var totalResults: Int? }
}

struct YTThumbnail: Decodable { @Lenient var url: String?; @Lenient var width: Int?; @Lenient var height: Int? }

struct YTSnippet: Decodable {
    @Lenient var publishedAt: String?
    @Lenient var channelId: String?
    @Lenient var title: String?
    @Lenient var description: String?
    @LossyMap var thumbnails: [String: YTThumbnail]?
    @Lenient var channelTitle: String?
    @Lenient var categoryId: String?
    @Lenient var customUrl: String?
    @Lenient var assignable: Bool?
    @Lenient var resourceId: YTResourceID?
    @Lenient var videoOwnerChannelTitle: String?

    /// The largest thumbnail there is.
    var bestThumbnail: String? {
        for size in ["maxres", "standard", "high", "medium", "default"] { if let url = thumbnails?[size]?.url { return url } }
        return nil
    }
}

struct YTResourceID: Decodable {
    @Lenient var kind: String?
    @Lenient var videoId: String?
    @Lenient var channelId: String?
    @Lenient var playlistId: String?
}

struct YTVideo: Decodable {
    @Lenient var id: String?
    @Lenient var snippet: YTSnippet?
    @Lenient var contentDetails: ContentDetails?
    @LossyMap var statistics: [String: String]?
    struct ContentDetails: Decodable { @Lenient var duration: String? }
}

struct YTSearchResult: Decodable {
    @Lenient var id: YTResourceID?
    @Lenient var snippet: YTSnippet?
}

struct YTChannel: Decodable {
    @Lenient var id: String?
    @Lenient var snippet: YTSnippet?
    @Lenient var contentDetails: ContentDetails?
    @LossyMap var statistics: [String: String]?
    struct ContentDetails: Decodable { @LossyMap var relatedPlaylists: [String: String]? }
}

struct YTCategory: Decodable {
    @Lenient var id: String?
    @Lenient var snippet: YTSnippet?
}

struct YTPlaylistItem: Decodable {
    @Lenient var snippet: YTSnippet?
    @Lenient var contentDetails: ContentDetails?
    struct ContentDetails: Decodable { @Lenient var videoId: String? }
}

/// `{"error": {"code", "message", "errors": [{"reason"}], "details": [{"reason"}]}}`.
struct YTErrorBody: Decodable {
    struct Detail: Decodable { @Lenient var reason: String?; @Lenient var message: String? }
    struct Body: Decodable {
        @Lenient var code: Int?
        @Lenient var message: String?
        @LossyList var errors: [Detail]?
        @LossyList var details: [Detail]?
    }
    @Lenient var error: Body?
}

enum ISO8601Duration {
    /// "PT1H2M3S", "PT4M", "P1DT2H", "P0D" -> seconds; nil when unreadable.
    static func seconds(_ text: String) -> Double? {
        guard text.hasPrefix("P") else { return nil }
        var total = 0.0
        var number = ""
        var inTime = false
        var sawUnit = false
        for character in text.dropFirst() {
            switch character {
            case "T": inTime = true
            case "0"..."9", ".": number.append(character)
            default:
                guard let value = Double(number) else { return nil }
                number = ""
                sawUnit = true
                switch (character, inTime) {
                case ("W", false): total += value * 604_800
                case ("D", false): total += value * 86_400
                case ("H", true): total += value * 3600
                case ("M", true): total += value * 60
                case ("S", true): total += value
                default: return nil
                }
            }
        }
        return number.isEmpty && sawUnit ? total.within(0...315_576_000) : nil
    }
}
