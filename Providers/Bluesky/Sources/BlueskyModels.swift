import Basics
import FoundationEssentials
import Glibc
import MediaKit

// The AppView's lexicon views (app.bsky.*), read leniently: every field optional, a bad element
// of a list costs that element. Unions are told by `$type`.

struct BProfile: Decodable {
    @Lenient var did: String?
    @Lenient var handle: String?
    @Lenient var displayName: String?
    @Lenient var description: String?
    @Lenient var avatar: String?
    @Lenient var followersCount: Int?
    @Lenient var followsCount: Int?
    @Lenient var postsCount: Int?
    @LossyList var labels: [BLabel]?
    /// The post the person pinned to their profile (a strong ref: its URI and CID).
    @Lenient var pinnedPost: BStrongRef?
}

struct BLabel: Decodable { @Lenient var val: String?; @Lenient var neg: Bool? }

struct BByteSlice: Decodable { @Lenient var byteStart: Int?; @Lenient var byteEnd: Int? }

struct BFacet: Decodable {
    struct Feature: Decodable {
        @Lenient var type: String?
        @Lenient var did: String?
        @Lenient var uri: String?
        @Lenient var tag: String?
        enum CodingKeys: String, CodingKey { case type = "$type", did, uri, tag }
    }
    @Lenient var index: BByteSlice?
    @LossyList var features: [Feature]?
}

struct BStrongRef: Decodable { @Lenient var uri: String?; @Lenient var cid: String? }

struct BPostRecord: Decodable {
    struct Reply: Decodable { @Lenient var root: BStrongRef?; @Lenient var parent: BStrongRef? }
    @Lenient var text: String?
    @Lenient var createdAt: String?
    @LossyList var facets: [BFacet]?
    @Lenient var reply: Reply?
    @LossyList var langs: [String]?
}

/// An embed's view (`app.bsky.embed.*#view`): images, a link card, a video, a quoted record, or
/// a quoted record with media.
final class BEmbed: Decodable {
    struct Image: Decodable { @Lenient var thumb: String?; @Lenient var fullsize: String?; @Lenient var alt: String? }
    struct External: Decodable {
        @Lenient var uri: String?; @Lenient var title: String?; @Lenient var description: String?; @Lenient var thumb: String?
    }
    let type: String?
    /// Images, and a gallery's items (`app.bsky.embed.gallery#view`, 2026).
    let images: [Image]
    let external: External?
    let playlist: String?
    let thumbnail: String?
    let alt: String?
    /// A quoted post (`record#viewRecord`), or why it cannot be shown.
    let record: BQuoted?
    /// The media beside a quoted record.
    let media: BEmbed?

    enum CodingKeys: String, CodingKey { case type = "$type", images, items, external, playlist, thumbnail, alt, record, media }

    /// The embed views this reads; another (a type added since) is shown as unsupported, by name.
    static let known: Set<String> = [
        "app.bsky.embed.images#view", "app.bsky.embed.external#view", "app.bsky.embed.video#view",
        "app.bsky.embed.record#view", "app.bsky.embed.recordWithMedia#view", "app.bsky.embed.gallery#view",
    ]

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = (try? container.decode(Lenient<String>.self, forKey: .type))?.wrappedValue
        images =
            ((try? container.decode(LossyList<Image>.self, forKey: .images))?.wrappedValue ?? [])
            + ((try? container.decode(LossyList<Image>.self, forKey: .items))?.wrappedValue ?? [])
        external = (try? container.decode(Lenient<External>.self, forKey: .external))?.wrappedValue
        playlist = (try? container.decode(Lenient<String>.self, forKey: .playlist))?.wrappedValue
        thumbnail = (try? container.decode(Lenient<String>.self, forKey: .thumbnail))?.wrappedValue
        alt = (try? container.decode(Lenient<String>.self, forKey: .alt))?.wrappedValue
        // record#view holds the record under `record`; recordWithMedia#view holds a record#view
        // there (a starter pack's view holds its own record under `record`: kept as it is).
        let inner = (try? container.decode(Lenient<BQuoted>.self, forKey: .record))?.wrappedValue
        let wraps = inner?.type == "app.bsky.embed.record#view" || (inner?.type == nil && inner?.uri == nil)
        record = wraps ? inner?.record : inner
        media = (try? container.decode(Lenient<BEmbed>.self, forKey: .media))?.wrappedValue
    }
}

/// A quoted record: a post (`#viewRecord`), one not found, blocked or detached, or another
/// record a post can embed (a feed, a list, a labeler, a starter pack).
final class BQuoted: Decodable {
    let type: String?
    let uri: String?
    let author: BProfile?
    let value: BPostRecord?
    /// recordWithMedia#view nests a record#view: its record; a starter pack's view, its record.
    let record: BQuoted?
    /// A feed generator's `displayName`, a list's or a starter pack record's `name`.
    let name: String?
    /// Who made a feed, list, labeler or starter pack.
    let creator: BProfile?

    enum CodingKeys: String, CodingKey { case type = "$type", uri, author, value, record, displayName, name, creator }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = (try? container.decode(Lenient<String>.self, forKey: .type))?.wrappedValue
        uri = (try? container.decode(Lenient<String>.self, forKey: .uri))?.wrappedValue
        author = (try? container.decode(Lenient<BProfile>.self, forKey: .author))?.wrappedValue
        value = (try? container.decode(Lenient<BPostRecord>.self, forKey: .value))?.wrappedValue
        record = (try? container.decode(Lenient<BQuoted>.self, forKey: .record))?.wrappedValue
        name =
            (try? container.decode(Lenient<String>.self, forKey: .displayName))?.wrappedValue
            ?? (try? container.decode(Lenient<String>.self, forKey: .name))?.wrappedValue
        creator = (try? container.decode(Lenient<BProfile>.self, forKey: .creator))?.wrappedValue
    }
}

struct BPost: Decodable {
    struct Viewer: Decodable { @Lenient var like: String?; @Lenient var repost: String? }
    @Lenient var uri: String?
    @Lenient var cid: String?
    @Lenient var author: BProfile?
    @Lenient var record: BPostRecord?
    @Lenient var embed: BEmbed?
    @Lenient var replyCount: Int?
    @Lenient var repostCount: Int?
    @Lenient var likeCount: Int?
    @Lenient var quoteCount: Int?
    @Lenient var indexedAt: String?
    @Lenient var viewer: Viewer?
    @LossyList var labels: [BLabel]?
}

/// A timeline entry: the post, and who reposted it when it is a repost.
struct BFeedItem: Decodable {
    struct Reason: Decodable {
        @Lenient var type: String?
        @Lenient var by: BProfile?
        enum CodingKeys: String, CodingKey { case type = "$type", by }
    }
    @Lenient var post: BPost?
    @Lenient var reason: Reason?
}

struct BFeedPage: Decodable {
    @LossyList var feed: [BFeedItem]?
    @Lenient var cursor: String?
}

struct BPostsPage: Decodable {
    @LossyList var posts: [BPost]?
    @Lenient var cursor: String?
}

struct BActorsPage: Decodable {
    @LossyList var actors: [BProfile]?
    @Lenient var cursor: String?
}

struct BProfilesPage: Decodable { @LossyList var profiles: [BProfile]? }

struct BGenerator: Decodable {
    @Lenient var uri: String?
    @Lenient var displayName: String?
    @Lenient var description: String?
    @Lenient var likeCount: Int?
    @Lenient var creator: BProfile?
}

struct BGeneratorsPage: Decodable {
    @LossyList var feeds: [BGenerator]?
    @Lenient var cursor: String?
}

/// A node of a thread: a post with its replies, or a post not found or blocked.
final class BThread: Decodable {
    let type: String?
    let post: BPost?
    let replies: [BThread]

    enum CodingKeys: String, CodingKey { case type = "$type", post, replies }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = (try? container.decode(Lenient<String>.self, forKey: .type))?.wrappedValue
        post = (try? container.decode(Lenient<BPost>.self, forKey: .post))?.wrappedValue
        replies = (try? container.decode(LossyList<BThread>.self, forKey: .replies))?.wrappedValue ?? []
    }
}

struct BThreadAnswer: Decodable { @Lenient var thread: BThread? }

/// `com.atproto.server.createSession` / `refreshSession`.
struct BSession: Decodable {
    @Lenient var did: String?
    @Lenient var handle: String?
    @Lenient var accessJwt: String?
    @Lenient var refreshJwt: String?
    @Lenient var didDoc: BDIDDocument?
    @Lenient var active: Bool?
    @Lenient var status: String?
}

struct BDIDDocument: Decodable {
    struct Service: Decodable {
        @Lenient var id: String?; @Lenient var type: String?; @Lenient var serviceEndpoint: String?
    }
    @Lenient var id: String?
    @LossyList var alsoKnownAs: [String]?
    @LossyList var service: [Service]?

    /// The account's PDS: the `#atproto_pds` service.
    var pds: String? {
        service?.first { $0.id == "#atproto_pds" || $0.id?.hasSuffix("#atproto_pds") == true }?.serviceEndpoint
    }
}

struct BCreated: Decodable { @Lenient var uri: String?; @Lenient var cid: String? }
