import Foundation
import Sandbox

/// Deterministic accounts and posts covering hashtags, mentions, links (Mastodon's shortened
/// display), media, content warnings, boosts, replies, emoji, CJK, right-to-left text and
/// combining marks.
struct MastodonData: Sendable {
    struct Account: Sendable { var id: String; var username: String; var displayName: String; var note: String }
    struct Status: Sendable {
        var id: String
        var author: String
        var html: String
        var plain: String
        var tags: [String]
        var mentions: [String]
        var media: [(type: String, id: String)]
        var spoiler: String
        var boostOf: Int?
        var replyTo: String?
        var created: Date
    }

    static let trending = ["swift", "rust", "caturday", "photography", "fediverse", "music", "science", "books"]
    static let texts = [
        "Shipping a new release today 🎉", "日本語のテキストも大丈夫", "שלום עולם — right to left", "Café crème, naïve résumé",
        "Combining marks: e\u{301}le\u{300}ve", "Plain words, nothing else", "Three emoji 👩‍💻🚀✨ in a row",
    ]

    let accounts: [Account]
    let statuses: [Status]

    init(seed: UInt64 = 20_261_121) {
        accounts = [
            ("swiftlang", "Swift 🐦"), ("rustlang", "Rust"), ("ada", "Ada L."), ("kenji", "健二"), ("noa", "נועה"),
            ("photo", "Photos Daily"),
            ("cat", "Caturday Cat 🐈"), ("astro", "Astro"), ("reader", "Bookworm"), ("dj", "DJ Loop"), ("lab", "Science Lab"),
            ("fedi", "Fedi Guide"),
        ].enumerated().map { index, pair in
            Account(
                id: String(109_000_000_000_000_000 + index), username: pair.0, displayName: pair.1,
                note:
                    "<p>Posts about <a href=\"https://mastodon.social/tags/\(Self.trending[index % 8])\" class=\"mention hashtag\" rel=\"tag\">#<span>\(Self.trending[index % 8])</span></a> &amp; more.</p>"
            )
        }
        var random = SplitMix64(seed: seed)
        var statuses: [Status] = []
        for n in 0..<600 {
            let author = Int(random.next() % UInt64(accounts.count))
            let tag = Self.trending[n % Self.trending.count]
            let second = Self.trending[Int(random.next() % 8)]
            let mentioned = accounts[(author + 1 + n % 5) % accounts.count]
            let text = Self.texts[n % Self.texts.count]
            var html =
                "<p>\(text) <a href=\"https://mastodon.social/tags/\(tag)\" class=\"mention hashtag\" rel=\"tag\">#<span>\(tag)</span></a>"
            var plain = "\(text) #\(tag)"
            var tags = [tag]
            if second != tag {
                html +=
                    " <a href=\"https://mastodon.social/tags/\(second)\" class=\"mention hashtag\" rel=\"tag\">#<span>\(second.capitalized)</span></a>"
                plain += " #\(second.capitalized)"
                tags.append(second)
            }
            html +=
                "</p><p>cc <span class=\"h-card\"><a href=\"https://mastodon.social/@\(mentioned.username)\" class=\"u-url mention\">@<span>\(mentioned.username)</span></a></span>"
            plain += "\n\ncc @\(mentioned.username)"
            if n % 3 == 0 {
                html +=
                    " <a href=\"https://example.com/articles/\(n)/a-rather-long-slug-for-testing\" target=\"_blank\" rel=\"nofollow noopener noreferrer\"><span class=\"invisible\">https://</span><span class=\"ellipsis\">example.com/articles/\(n)/a-rath</span><span class=\"invisible\">er-long-slug-for-testing</span></a>."
                plain += " example.com/articles/\(n)/a-rath…."
            }
            html += "</p>"
            let media: [(String, String)] = n % 4 == 0 ? [(n % 8 == 0 ? "video" : "image", "m\(n)")] : []
            statuses.append(
                Status(
                    id: String(110_000_000_000_000_000 - n * 1000), author: accounts[author].id, html: html, plain: plain,
                    tags: tags,
                    mentions: [mentioned.id], media: media, spoiler: n % 10 == 5 ? "spoilers for episode \(n)" : "",
                    boostOf: n % 17 == 4 && n > 0 ? n - 1 : nil,
                    replyTo: n % 7 == 6 ? String(110_000_000_000_000_000 - (n - 1) * 1000) : nil,
                    created: Date(timeIntervalSince1970: 1_763_700_000 - Double(n) * 600)))
        }
        self.statuses = statuses
    }

    /// Ids are numeric strings; compare them as numbers.
    static func compare(_ a: String, _ b: String) -> Int {
        a.count != b.count ? a.count - b.count : (a < b ? -1 : a == b ? 0 : 1)
    }

    func account(_ account: Account) -> [String: Any] {
        [
            "id": account.id, "username": account.username, "acct": account.username, "display_name": account.displayName,
            "locked": false, "bot": false, "note": account.note, "url": "https://mastodon.social/@\(account.username)",
            "avatar": "https://files.mastodon.social/accounts/avatars/\(account.id).png",
            "followers_count": account.username.count * 1234, "following_count": 42,
            "statuses_count": statuses.filter { $0.author == account.id }.count,
            "created_at": "2022-11-01T00:00:00.000Z",
        ]
    }

    func json(_ status: Status) -> [String: Any] {
        let author = accounts.first { $0.id == status.author }!
        var object: [String: Any] = [
            "id": status.id, "created_at": ISO8601DateFormatter().string(from: status.created),
            "in_reply_to_id": status.replyTo ?? NSNull(),
            "sensitive": !status.spoiler.isEmpty || status.media.contains { $0.type == "video" }, "spoiler_text": status.spoiler,
            "visibility": "public", "language": "en",
            "uri": "https://mastodon.social/users/\(author.username)/statuses/\(status.id)",
            "url": "https://mastodon.social/@\(author.username)/\(status.id)",
            "replies_count": statuses.filter { $0.replyTo == status.id }.count,
            "reblogs_count": Int(status.id.suffix(4))! % 50, "favourites_count": Int(status.id.suffix(5))! % 300,
            "content": status.html,
            "account": account(author),
            "media_attachments": status.media.map { media in
                [
                    "id": media.id, "type": media.type,
                    "url": "https://files.mastodon.social/media/\(media.id).\(media.type == "video" ? "mp4" : "jpg")",
                    "preview_url": "https://files.mastodon.social/media/\(media.id)_small.jpg",
                    "description": "A \(media.type) for post \(status.id)",
                ]
            },
            "mentions": status.mentions.compactMap { id in accounts.first { $0.id == id } }.map {
                ["id": $0.id, "username": $0.username, "acct": $0.username, "url": "https://mastodon.social/@\($0.username)"]
            },
            "tags": status.tags.map { ["name": $0, "url": "https://mastodon.social/tags/\($0)"] },
            "reblog": NSNull(),
        ]
        if let original = status.boostOf {
            // A boost: the booster's status wraps the original, whose content is shown.
            object["reblog"] = json(statuses[original])
            object["content"] = ""
        }
        return object
    }
}
