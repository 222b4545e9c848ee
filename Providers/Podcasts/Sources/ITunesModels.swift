import Foundation

/// `search` and `lookup` answers of the iTunes Search API. Every field is optional: the
/// service leaves them out at will.
struct ITunesSearchResponse: Decodable {
    var resultCount: Int?
    var results: [ITunesPodcast]?
}

struct ITunesPodcast: Decodable {
    var wrapperType: String?
    var kind: String?
    var collectionId: Int?
    var trackId: Int?
    var artistName: String?
    var collectionName: String?
    var trackName: String?
    var feedUrl: String?
    var collectionViewUrl: String?
    var trackViewUrl: String?
    var artworkUrl100: String?
    var artworkUrl600: String?
    var releaseDate: String?
    var trackCount: Int?
    var primaryGenreName: String?
    var genres: [String]?
}

/// The genres endpoint: `{"26": {"name": "Podcasts", "subgenres": {"1301": {...}}}}`.
struct ITunesGenre: Decodable {
    var name: String?
    var id: String?
    var subgenres: [String: ITunesGenre]?
}

/// The iTunes RSS chart in JSON: `{"feed": {"entry": [...]}}`, where a one-entry chart has an
/// object instead of an array.
struct ITunesChart: Decodable {
    struct Feed: Decodable {
        var entry: [Entry]?

        enum CodingKeys: String, CodingKey { case entry }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            if let list = try? container.decodeIfPresent([Entry].self, forKey: .entry) {
                entry = list
            } else if let single = try? container.decodeIfPresent(Entry.self, forKey: .entry) {
                entry = [single]
            }
        }
    }

    struct Label: Decodable { var label: String? }

    struct Entry: Decodable {
        struct Image: Decodable {
            var label: String?
            var attributes: [String: String]?
        }
        struct Identifier: Decodable {
            var label: String?
            var attributes: [String: String]?
        }
        struct Category: Decodable { var attributes: [String: String]? }

        var name: Label?
        var images: [Image]?
        var summary: Label?
        var artist: Label?
        var id: Identifier?
        var category: Category?
        var releaseDate: Label?

        enum CodingKeys: String, CodingKey {
            case name = "im:name", images = "im:image", summary, artist = "im:artist", id, category
            case releaseDate = "im:releaseDate"
        }
    }

    var feed: Feed?
}
