import Foundation
import Sandbox

/// Deterministic users and tweets whose text exercises every entity (hashtags, mentions, t.co
/// links, media), emoji, CJK, RTL and combining marks, with offsets in code points as the API
/// gives them.
struct TwitterData: Sendable {
    struct User: Sendable { var id: String; var username: String; var name: String }
    struct Entity: Sendable { var kind: String; var start: Int; var end: Int; var value: String; var extra: String? }
    struct Tweet: Sendable {
        var id: String
        var author: String
        var text: String
        var entities: [Entity]
        var media: [(key: String, type: String)]
        var replyTo: String?
        var created: Date
        var sensitive: Bool
    }

    static let tags = ["swift", "swiftlang", "wwdc", "opensource", "caturday", "rustlang"]
    static let openers = ["New post 🎉", "日本語も", "שלום", "Cafe\u{301} time", "Thread 🧵 1/3", "Plain"]

    let users: [User]
    let tweets: [Tweet]

    init(seed: UInt64 = 20_261_121) {
        users = [
            ("swiftlang", "Swift"), ("ada", "Ada 👩‍💻"), ("kenji", "健二"), ("noa", "נועה"), ("server", "Swift Server"),
            ("cats", "Cat Facts"),
        ]
        .enumerated().map { User(id: String(1_000_000 + $0), username: $1.0, name: $1.1) }
        var random = SplitMix64(seed: seed)
        var tweets: [Tweet] = []
        for n in 0..<400 {
            let author = Int(random.next() % UInt64(users.count))
            let tag = Self.tags[n % Self.tags.count]
            let mentioned = users[(author + 1 + n % 3) % users.count]
            var text = Self.openers[n % Self.openers.count] + " "
            var entities: [Entity] = []
            func add(_ piece: String, _ kind: String, _ value: String, _ extra: String? = nil) {
                let start = text.unicodeScalars.count
                text += piece
                entities.append(Entity(kind: kind, start: start, end: text.unicodeScalars.count, value: value, extra: extra))
            }
            add("#" + tag, "hashtag", tag)
            // The API escapes & < > in post text, and its offsets count the escaped text.
            text += n % 3 == 0 ? " &amp; &lt;3 " : " with "
            add("@" + mentioned.username, "mention", mentioned.username, mentioned.id)
            if n % 2 == 0 {
                text += " ("
                add("https://t.co/l\(n)", "url", "https://example.com/posts/\(n)?utm=x", "example.com/posts/\(n)")
                text += ")!"
            }
            var media: [(String, String)] = []
            if n % 5 == 0 {
                text += " "
                let key = "3_\(n)"
                add("https://t.co/m\(n)", "url", "https://x.com/\(users[author].username)/status/\(n)/photo/1", "pic.x.com/m\(n)")
                entities[entities.count - 1].kind = "media:\(key)"
                media.append((key, n % 10 == 0 ? "video" : "photo"))
            }
            tweets.append(
                Tweet(
                    id: String(1_800_000_000_000_000_000 - n * 1000), author: users[author].id, text: text, entities: entities,
                    media: media,
                    replyTo: n % 9 == 8 ? String(1_800_000_000_000_000_000 - (n - 1) * 1000) : nil,
                    created: Date(timeIntervalSince1970: 1_763_700_000 - Double(n) * 300), sensitive: n % 25 == 5))
        }
        self.tweets = tweets
    }

    func user(_ user: User) -> [String: Any] {
        [
            "id": user.id, "username": user.username, "name": user.name,
            "description": "Tweets about #\(Self.tags[Int(user.id)! % 6]).",
            "profile_image_url": "https://pbs.twimg.com/profile_images/\(user.id)/avatar_normal.jpg",
            "public_metrics": [
                "followers_count": user.username.count * 1000, "following_count": 10,
                "tweet_count": tweets.filter { $0.author == user.id }.count, "listed_count": 3,
            ],
        ]
    }

    func json(_ tweet: Tweet) -> [String: Any] {
        var entities: [String: [[String: Any]]] = [:]
        for entity in tweet.entities {
            switch entity.kind {
            case "hashtag":
                entities["hashtags", default: []].append(["start": entity.start, "end": entity.end, "tag": entity.value])
            case "mention":
                entities["mentions", default: []].append([
                    "start": entity.start, "end": entity.end, "username": entity.value, "id": entity.extra ?? "",
                ])
            default:
                var url: [String: Any] = [
                    "start": entity.start, "end": entity.end,
                    "url": String(tweet.text.unicodeScalars.dropFirst(entity.start).prefix(entity.end - entity.start)),
                    "expanded_url": entity.value, "display_url": entity.extra ?? "",
                ]
                if entity.kind.hasPrefix("media:") { url["media_key"] = String(entity.kind.dropFirst(6)) }
                entities["urls", default: []].append(url)
            }
        }
        var object: [String: Any] = [
            "id": tweet.id, "text": tweet.text, "author_id": tweet.author,
            "created_at": ISO8601DateFormatter().string(from: tweet.created),
            "entities": entities, "lang": "en", "possibly_sensitive": tweet.sensitive,
            "conversation_id": tweet.replyTo ?? tweet.id,
            "public_metrics": [
                "retweet_count": Int(tweet.id.suffix(4))! % 40, "reply_count": tweets.filter { $0.replyTo == tweet.id }.count,
                "like_count": Int(tweet.id.suffix(5))! % 900, "quote_count": 1, "bookmark_count": 0, "impression_count": 1000,
            ],
            "edit_history_tweet_ids": [tweet.id],
        ]
        if !tweet.media.isEmpty { object["attachments"] = ["media_keys": tweet.media.map(\.key)] }
        if let reply = tweet.replyTo { object["referenced_tweets"] = [["type": "replied_to", "id": reply]] }
        return object
    }

    func includes(_ slice: [Tweet]) -> [String: Any] {
        let authors = Set(slice.map(\.author))
        let media = slice.flatMap(\.media).map { media -> [String: Any] in
            var item: [String: Any] = [
                "media_key": media.key, "type": media.type, "width": 1200, "height": 800, "alt_text": "Media \(media.key)",
            ]
            if media.type == "photo" {
                item["url"] = "https://pbs.twimg.com/media/\(media.key).jpg"
            } else {
                item["preview_image_url"] = "https://pbs.twimg.com/ext_tw_video_thumb/\(media.key).jpg"
            }
            return item
        }
        var result: [String: Any] = ["users": users.filter { authors.contains($0.id) }.map(user)]
        if !media.isEmpty { result["media"] = media }
        return result
    }
}
