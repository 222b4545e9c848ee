import Foundation

struct MStatus: Decodable {
    var id: String?
    var created_at: String?
    var in_reply_to_id: String?
    var sensitive: Bool?
    var spoiler_text: String?
    var url: String?
    var content: String?
    var replies_count: Int?
    var reblogs_count: Int?
    var favourites_count: Int?
    var account: MAccount?
    var media_attachments: [MMedia]?
    var mentions: [MMention]?
    var tags: [MTag]?
    var reblog: Box?

    /// Statuses nest one level (a boost wraps the original).
    final class Box: Decodable {
        let status: MStatus
        required init(from decoder: any Decoder) throws { status = try MStatus(from: decoder) }
    }
}

struct MAccount: Decodable {
    var id: String?
    var username: String?
    var acct: String?
    var display_name: String?
    var note: String?
    var url: String?
    var avatar: String?
    var followers_count: Int?
    var following_count: Int?
    var statuses_count: Int?
}

struct MMedia: Decodable { var id: String?; var type: String?; var url: String?; var preview_url: String?; var description: String? }
struct MMention: Decodable { var id: String?; var username: String?; var acct: String?; var url: String? }
struct MTag: Decodable { var name: String?; var url: String? }
struct MSearch: Decodable { var statuses: [MStatus]? }
struct MContext: Decodable { var descendants: [MStatus]? }
