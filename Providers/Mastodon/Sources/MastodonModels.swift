import Basics
import FoundationEssentials
import Glibc
import MediaKit

struct MStatus: Decodable {
    @Lenient var id: String?
    @Lenient var created_at: String?
    @Lenient var in_reply_to_id: String?
    @Lenient var sensitive: Bool?
    @Lenient var spoiler_text: String?
    @Lenient var url: String?
    @Lenient var content: String?
    @Lenient var replies_count: Int?
    @Lenient var reblogs_count: Int?
    @Lenient var favourites_count: Int?
    @Lenient var account: MAccount?
    @LossyList var media_attachments: [MMedia]?
    @LossyList var mentions: [MMention]?
    @LossyList var tags: [MTag]?
    @Lenient var reblog: Box?

    /// Statuses nest one level (a boost wraps the original).
    final class Box: Decodable {
        let status: MStatus
        required init(from decoder: any Decoder) throws { status = try MStatus(from: decoder) }
    }
}

struct MAccount: Decodable {
    @Lenient var id: String?
    @Lenient var username: String?
    @Lenient var acct: String?
    @Lenient var display_name: String?
    @Lenient var note: String?
    @Lenient var url: String?
    @Lenient var avatar: String?
    @Lenient var followers_count: Int?
    @Lenient var following_count: Int?
    @Lenient var statuses_count: Int?
}

struct MMedia: Decodable {
    @Lenient var id: String?; @Lenient var type: String?; @Lenient var url: String?; @Lenient var preview_url: String?;
    @Lenient var description: String?
}
struct MMention: Decodable {
    @Lenient var id: String?; @Lenient var username: String?; @Lenient var acct: String?; @Lenient var url: String?
}
struct MTag: Decodable { @Lenient var name: String?; @Lenient var url: String? }
struct MSearch: Decodable { @LossyList var statuses: [MStatus]? }
struct MContext: Decodable { @LossyList var descendants: [MStatus]? }
