import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// `search` and `lookup` answers of the iTunes Search API. Every field is optional: the
/// service leaves them out at will.
struct ITunesSearchResponse: Decodable {
    @Lenient var resultCount: Int?
    @LossyList var results: [ITunesPodcast]?
}

struct ITunesPodcast: Decodable {
    @Lenient var wrapperType: String?
    @Lenient var kind: String?
    @Lenient var collectionId: Int?
    @Lenient var trackId: Int?
    @Lenient var artistName: String?
    @Lenient var collectionName: String?
    @Lenient var trackName: String?
    @Lenient var feedUrl: String?
    @Lenient var collectionViewUrl: String?
    @Lenient var trackViewUrl: String?
    @Lenient var artworkUrl100: String?
    @Lenient var artworkUrl600: String?
    @Lenient var releaseDate: String?
    @Lenient var trackCount: Int?
    @Lenient var primaryGenreName: String?
    @LossyList var genres: [String]?
    /// Set for a show known by its feed URL alone (`ItemID.feed`), never by the directory.
    var feedID: String?

    /// The show's native id: the directory's number, or the feed id.
    var nativeID: String? { feedID ?? (collectionId ?? trackId).map(String.init) }
}

/// The genres endpoint: `{"26": {"name": "Podcasts", "subgenres": {"1301": {...}}}}`.
struct ITunesGenre: Decodable {
    @Lenient var name: String?
    @Lenient var id: String?
    @LossyMap var subgenres: [String: ITunesGenre]?
}

/// The iTunes RSS chart in JSON: `{"feed": {"entry": [...]}}`, where a one-entry chart has an
/// object instead of an array.
struct ITunesChart: Decodable {
    struct Feed: Decodable {
        /// A lone object when the chart has one entry: read as a list of one.
        @LossyList var entry: [Entry]?
    }

    struct Label: Decodable { @Lenient var label: String? }

    struct Entry: Decodable {
        struct Image: Decodable {
            @Lenient var label: String?
            @LossyMap var attributes: [String: String]?
        }
        struct Identifier: Decodable {
            @Lenient var label: String?
            @LossyMap var attributes: [String: String]?
        }
        struct Category: Decodable { @LossyMap var attributes: [String: String]? }

        @Lenient var name: Label?
        @LossyList var images: [Image]?
        @Lenient var summary: Label?
        @Lenient var artist: Label?
        @Lenient var id: Identifier?
        @Lenient var category: Category?
        @Lenient var releaseDate: Label?

        enum CodingKeys: String, CodingKey {
            case name = "im:name", images = "im:image", summary, artist = "im:artist", id, category
            case releaseDate = "im:releaseDate"
        }
    }

    @Lenient var feed: Feed?
}
