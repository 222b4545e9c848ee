import FoundationEssentials
import MediaKit

/// An answer of the Podcast Index API, as lenient as its answers need (`Lenient`: a field of
/// the wrong type costs that field): `status` is the string "true"; `feed` is an object, or `[]`
/// when nothing was found; ids are beyond 32 bits; `explicit` a bool on shows and 0/1 on
/// episodes (not read).
struct PodcastIndexAnswer: Decodable {
    @LossyList var feeds: [Feed]?
    @LossyList var items: [Episode]?
    @Lenient var feed: Feed?
    @Lenient var episode: Episode?
    @Lenient var description: String?

    struct Feed: Decodable {
        @Lenient var id: Int64?
        @Lenient var title: String?
        @Lenient var url: String?
        @Lenient var link: String?
        @Lenient var description: String?
        @Lenient var author: String?
        @Lenient var ownerName: String?
        @Lenient var image: String?
        @Lenient var artwork: String?
        @Lenient var podcastGuid: String?
        @Lenient var episodeCount: Int?
        @Lenient var newestItemPubdate: Int64?
        @Lenient var newestItemPublishTime: Int64?
        @Lenient var categories: [String: String]?
    }

    struct Episode: Decodable {
        @Lenient var id: Int64?
        @Lenient var title: String?
        @Lenient var link: String?
        @Lenient var description: String?
        @Lenient var guid: String?
        @Lenient var datePublished: Int64?
        @Lenient var enclosureUrl: String?
        @Lenient var enclosureType: String?
        @Lenient var enclosureLength: Int64?
        @Lenient var duration: Int?
        @Lenient var episode: Int?
        @Lenient var season: Int?
        @Lenient var image: String?
        @Lenient var feedImage: String?
        @Lenient var feedUrl: String?
        @Lenient var feedTitle: String?
        @Lenient var feedAuthor: String?
        @Lenient var chaptersUrl: String?
        @Lenient var transcriptUrl: String?
        @LossyList var transcripts: [Transcript]?
        @LossyList var persons: [Person]?

        struct Transcript: Decodable {
            @Lenient var url: String?
            @Lenient var type: String?
        }

        struct Person: Decodable {
            @Lenient var name: String?
            @Lenient var role: String?
            @Lenient var group: String?
            @Lenient var href: String?
            @Lenient var img: String?
        }
    }
}
