import Basics
import FoundationEssentials
import Glibc
import MediaKit

struct TWResponse<Payload: Decodable>: Decodable {
    @Lenient var data: Payload?
    @Lenient var includes: TWIncludes?
    @Lenient var meta: TWMeta?
    @LossyList var errors: [TWProblem]?
}

struct TWIncludes: Decodable { @LossyList var users: [TWUser]?; @LossyList var media: [TWMedia]? }
struct TWMeta: Decodable {
    @Lenient var result_count: Int?; @Lenient var next_token: String?; @Lenient var previous_token: String?
}
struct TWProblem: Decodable { @Lenient var title: String?; @Lenient var detail: String?; @Lenient var type: String? }

struct TWTweet: Decodable {
    @Lenient var id: String?
    @Lenient var text: String?
    @Lenient var author_id: String?
    @Lenient var created_at: String?
    @Lenient var possibly_sensitive: Bool?
    @Lenient var entities: Entities?
    @LossyMap var public_metrics: [String: Int]?
    @Lenient var attachments: Attachments?
    @LossyList var referenced_tweets: [Reference]?

    struct Entities: Decodable {
        @LossyList var hashtags: [Tag]?
        @LossyList var mentions: [Mention]?
        @LossyList var urls: [Link]?
    }
    struct Tag: Decodable { @Lenient var start: Int?; @Lenient var end: Int?; @Lenient var tag: String? }
    struct Mention: Decodable { @Lenient var start: Int?; @Lenient var end: Int?; @Lenient var username: String? }
    struct Link: Decodable {
        @Lenient var start: Int?; @Lenient var end: Int?; @Lenient var url: String?; @Lenient var expanded_url: String?;
        @Lenient var display_url: String?; @Lenient var media_key: String?
    }
    struct Attachments: Decodable { @LossyList var media_keys: [String]? }
    struct Reference: Decodable { @Lenient var type: String?; @Lenient var id: String? }
}

struct TWUser: Decodable {
    @Lenient var id: String?
    @Lenient var username: String?
    @Lenient var name: String?
    @Lenient var description: String?
    @Lenient var profile_image_url: String?
    @LossyMap var public_metrics: [String: Int]?
}

struct TWMedia: Decodable {
    @Lenient var media_key: String?; @Lenient var type: String?; @Lenient var url: String?;
    @Lenient var preview_image_url: String?; @Lenient var alt_text: String?
}
