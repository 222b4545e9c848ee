import Foundation

/// YouTube Data API v3 resources. Everything optional: the API omits what a part does not ask
/// for, and counts arrive as strings.
struct YTList<Item: Decodable>: Decodable {
    var items: [Item]?
    var nextPageToken: String?
    var prevPageToken: String?
    var pageInfo: PageInfo?
    struct PageInfo: Decodable { var totalResults: Int? }
}

struct YTThumbnail: Decodable { var url: String?; var width: Int?; var height: Int? }

struct YTSnippet: Decodable {
    var publishedAt: String?
    var channelId: String?
    var title: String?
    var description: String?
    var thumbnails: [String: YTThumbnail]?
    var channelTitle: String?
    var categoryId: String?
    var customUrl: String?
    var assignable: Bool?
    var resourceId: YTResourceID?
    var videoOwnerChannelTitle: String?

    /// The largest thumbnail there is.
    var bestThumbnail: String? {
        for size in ["maxres", "standard", "high", "medium", "default"] { if let url = thumbnails?[size]?.url { return url } }
        return nil
    }
}

struct YTResourceID: Decodable {
    var kind: String?
    var videoId: String?
    var channelId: String?
    var playlistId: String?
}

struct YTVideo: Decodable {
    var id: String?
    var snippet: YTSnippet?
    var contentDetails: ContentDetails?
    var statistics: [String: String]?
    struct ContentDetails: Decodable { var duration: String? }
}

struct YTSearchResult: Decodable {
    var id: YTResourceID?
    var snippet: YTSnippet?
}

struct YTChannel: Decodable {
    var id: String?
    var snippet: YTSnippet?
    var contentDetails: ContentDetails?
    var statistics: [String: YTFlexible]?
    struct ContentDetails: Decodable { var relatedPlaylists: [String: String]? }
}

struct YTCategory: Decodable {
    var id: String?
    var snippet: YTSnippet?
}

struct YTPlaylistItem: Decodable {
    var snippet: YTSnippet?
    var contentDetails: ContentDetails?
    struct ContentDetails: Decodable { var videoId: String? }
}

/// A JSON value that may be a string, number or boolean (channel statistics mix them).
struct YTFlexible: Decodable {
    var text: String?
    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) { text = string }
        else if let int = try? container.decode(Int.self) { text = String(int) }
        else if let bool = try? container.decode(Bool.self) { text = String(bool) }
    }
}

/// `{"error": {"code", "message", "errors": [{"reason"}], "details": [{"reason"}]}}`.
struct YTErrorBody: Decodable {
    struct Detail: Decodable { var reason: String?; var message: String? }
    struct Body: Decodable {
        var code: Int?
        var message: String?
        var errors: [Detail]?
        var details: [Detail]?
    }
    var error: Body?
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
