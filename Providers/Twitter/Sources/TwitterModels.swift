import Foundation

struct TWResponse<Payload: Decodable>: Decodable {
    var data: Payload?
    var includes: TWIncludes?
    var meta: TWMeta?
    var errors: [TWProblem]?
}

struct TWIncludes: Decodable { var users: [TWUser]?; var media: [TWMedia]? }
struct TWMeta: Decodable { var result_count: Int?; var next_token: String?; var previous_token: String? }
struct TWProblem: Decodable { var title: String?; var detail: String?; var type: String? }

struct TWTweet: Decodable {
    var id: String?
    var text: String?
    var author_id: String?
    var created_at: String?
    var possibly_sensitive: Bool?
    var entities: Entities?
    var public_metrics: [String: Int]?
    var attachments: Attachments?
    var referenced_tweets: [Reference]?

    struct Entities: Decodable {
        var hashtags: [Tag]?
        var mentions: [Mention]?
        var urls: [Link]?
    }
    struct Tag: Decodable { var start: Int?; var end: Int?; var tag: String? }
    struct Mention: Decodable { var start: Int?; var end: Int?; var username: String? }
    struct Link: Decodable { var start: Int?; var end: Int?; var url: String?; var expanded_url: String?; var display_url: String?; var media_key: String? }
    struct Attachments: Decodable { var media_keys: [String]? }
    struct Reference: Decodable { var type: String?; var id: String? }
}

struct TWUser: Decodable {
    var id: String?
    var username: String?
    var name: String?
    var description: String?
    var profile_image_url: String?
    var public_metrics: [String: Int]?
}

struct TWMedia: Decodable { var media_key: String?; var type: String?; var url: String?; var preview_image_url: String?; var alt_text: String? }
