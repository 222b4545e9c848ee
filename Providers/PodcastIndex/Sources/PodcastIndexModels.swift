import FoundationEssentials
import MediaKit

/// An answer of the Podcast Index API, as lenient as its answers need: `status` is the string
/// "true"; `feed` is an object, or `[]` when nothing was found; ids are beyond 32 bits;
/// `explicit` a bool on shows and 0/1 on episodes (not read).
struct PodcastIndexAnswer: Decodable {
    var feeds: [Feed]?
    var items: [Episode]?
    var feed: Feed?
    var episode: Episode?
    var description: String?

    enum CodingKeys: String, CodingKey { case feeds, items, feed, episode, description }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        feeds = try? container.decodeIfPresent([Lenient<Feed>].self, forKey: .feeds)?.compactMap(\.wrappedValue)
        items = try? container.decodeIfPresent([Lenient<Episode>].self, forKey: .items)?.compactMap(\.wrappedValue)
        // `[]` when there is no such feed.
        feed = try? container.decodeIfPresent(Feed.self, forKey: .feed)
        episode = try? container.decodeIfPresent(Episode.self, forKey: .episode)
        description = try? container.decodeIfPresent(String.self, forKey: .description)
    }

    struct Feed: Decodable {
        var id: Int64?
        var title: String?
        var url: String?
        var link: String?
        var description: String?
        var author: String?
        var ownerName: String?
        var image: String?
        var artwork: String?
        var podcastGuid: String?
        var episodeCount: Int?
        var newestItemPubdate: Int64?
        var newestItemPublishTime: Int64?
        var categories: [String: String]?

        enum CodingKeys: String, CodingKey {
            case id, title, url, link, description, author, ownerName, image, artwork, podcastGuid, episodeCount,
                newestItemPubdate, newestItemPublishTime, categories
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try? c.decodeIfPresent(Int64.self, forKey: .id)
            title = try? c.decodeIfPresent(String.self, forKey: .title)
            url = try? c.decodeIfPresent(String.self, forKey: .url)
            link = try? c.decodeIfPresent(String.self, forKey: .link)
            description = try? c.decodeIfPresent(String.self, forKey: .description)
            author = try? c.decodeIfPresent(String.self, forKey: .author)
            ownerName = try? c.decodeIfPresent(String.self, forKey: .ownerName)
            image = try? c.decodeIfPresent(String.self, forKey: .image)
            artwork = try? c.decodeIfPresent(String.self, forKey: .artwork)
            podcastGuid = try? c.decodeIfPresent(String.self, forKey: .podcastGuid)
            episodeCount = try? c.decodeIfPresent(Int.self, forKey: .episodeCount)
            newestItemPubdate = try? c.decodeIfPresent(Int64.self, forKey: .newestItemPubdate)
            newestItemPublishTime = try? c.decodeIfPresent(Int64.self, forKey: .newestItemPublishTime)
            categories = try? c.decodeIfPresent([String: String].self, forKey: .categories)
        }
    }

    struct Episode: Decodable {
        var id: Int64?
        var title: String?
        var link: String?
        var description: String?
        var guid: String?
        var datePublished: Int64?
        var enclosureUrl: String?
        var enclosureType: String?
        var enclosureLength: Int64?
        var duration: Int?
        var episode: Int?
        var season: Int?
        var image: String?
        var feedImage: String?
        var feedUrl: String?
        var feedTitle: String?
        var feedAuthor: String?
        var chaptersUrl: String?
        var transcriptUrl: String?
        var transcripts: [Transcript]?
        var persons: [Person]?

        struct Transcript: Decodable {
            var url: String?
            var type: String?
        }

        struct Person: Decodable {
            var name: String?
            var role: String?
            var group: String?
            var href: String?
            var img: String?
        }

        enum CodingKeys: String, CodingKey {
            case id, title, link, description, guid, datePublished, enclosureUrl, enclosureType, enclosureLength, duration,
                episode,
                season, image, feedImage, feedUrl, feedTitle, feedAuthor, chaptersUrl, transcriptUrl, transcripts, persons
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try? c.decodeIfPresent(Int64.self, forKey: .id)
            title = try? c.decodeIfPresent(String.self, forKey: .title)
            link = try? c.decodeIfPresent(String.self, forKey: .link)
            description = try? c.decodeIfPresent(String.self, forKey: .description)
            guid = try? c.decodeIfPresent(String.self, forKey: .guid)
            datePublished = try? c.decodeIfPresent(Int64.self, forKey: .datePublished)
            enclosureUrl = try? c.decodeIfPresent(String.self, forKey: .enclosureUrl)
            enclosureType = try? c.decodeIfPresent(String.self, forKey: .enclosureType)
            enclosureLength = try? c.decodeIfPresent(Int64.self, forKey: .enclosureLength)
            duration = try? c.decodeIfPresent(Int.self, forKey: .duration)
            episode = try? c.decodeIfPresent(Int.self, forKey: .episode)
            season = try? c.decodeIfPresent(Int.self, forKey: .season)
            image = try? c.decodeIfPresent(String.self, forKey: .image)
            feedImage = try? c.decodeIfPresent(String.self, forKey: .feedImage)
            feedUrl = try? c.decodeIfPresent(String.self, forKey: .feedUrl)
            feedTitle = try? c.decodeIfPresent(String.self, forKey: .feedTitle)
            feedAuthor = try? c.decodeIfPresent(String.self, forKey: .feedAuthor)
            chaptersUrl = try? c.decodeIfPresent(String.self, forKey: .chaptersUrl)
            transcriptUrl = try? c.decodeIfPresent(String.self, forKey: .transcriptUrl)
            transcripts = try? c.decodeIfPresent([Transcript].self, forKey: .transcripts)
            persons = try? c.decodeIfPresent([Person].self, forKey: .persons)
        }
    }
}
