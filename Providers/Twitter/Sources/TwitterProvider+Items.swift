import Basics
import FoundationEssentials
import Glibc
import MediaKit

extension TwitterProvider {
    /// A post: `t.co` links read as their display URLs, media links leave the text (they become
    /// media entities), and every offset is recomputed in Unicode scalars.
    func item(from tweet: TWTweet, includes: TWIncludes?) -> MediaItem? {
        guard let id = tweet.id else { return nil }
        let source = Array((tweet.text ?? "").unicodeScalars)
        struct Span { var start: Int; var end: Int; var replacement: String?; var entity: (TextEntity.EntityType, String)? }
        var spans: [Span] = []
        for tag in tweet.entities?.hashtags ?? [] {
            if let start = tag.start, let end = tag.end, let name = tag.tag {
                spans.append(Span(start: start, end: end, replacement: nil, entity: (.hashtag, name)))
            }
        }
        for mention in tweet.entities?.mentions ?? [] {
            if let start = mention.start, let end = mention.end, let name = mention.username {
                spans.append(Span(start: start, end: end, replacement: nil, entity: (.mention, name)))
            }
        }
        for link in tweet.entities?.urls ?? [] {
            guard let start = link.start, let end = link.end else { continue }
            if link.media_key != nil {
                spans.append(Span(start: start, end: end, replacement: "", entity: nil))
            } else {
                spans.append(
                    Span(
                        start: start, end: end, replacement: link.display_url ?? link.expanded_url,
                        entity: (.url, link.expanded_url ?? link.url ?? "")))
            }
        }
        var text = String.UnicodeScalarView()
        var entities: [TextEntity] = []
        var position = 0
        // The API escapes &, < and > in the text as &amp; &lt; &gt;, and its offsets count the
        // escaped text: the stretches between entities are decoded as they are copied, so every
        // entity's offsets follow the text as shown.
        // Offsets from outside: a span backwards or beyond the text is left out, never trusted.
        for span in spans.sorted(by: { $0.start < $1.start })
        where span.start >= position && span.start <= span.end && span.end <= source.count {
            Self.appendUnescaped(source[position..<span.start], to: &text)
            let covered = span.replacement.map { Array($0.unicodeScalars) } ?? Array(source[span.start..<span.end])
            let start = text.count
            text.append(contentsOf: covered)
            if let (type, value) = span.entity {
                entities.append(
                    TextEntity(
                        type: type, start: start, end: text.count, text: String(String.UnicodeScalarView(covered)), value: value))
            }
            position = span.end
        }
        if position < source.count { Self.appendUnescaped(source[position...], to: &text) }
        // Only the end is trimmed (where removed media links leave spaces): offsets count from the start.
        while let last = text.last, last.properties.isWhitespace, last != "\n" { text.removeLast() }
        let plain = String(text)
        let end = plain.unicodeScalars.count
        let media = (tweet.attachments?.media_keys ?? []).compactMap { key in includes?.media?.first { $0.media_key == key } }
        for item in media {
            guard let url = item.url ?? item.preview_image_url else { continue }
            entities.append(
                TextEntity(type: .media, start: end, end: end, text: item.type == "photo" ? "[image]" : "[video]", value: url))
        }
        let author = includes?.users?.first { $0.id == tweet.author_id }
        let handle = author?.username.map { "@" + $0 }
        var extra: [String: String] = [:]
        if tweet.possibly_sensitive == true { extra["sensitive"] = "true" }
        if let author = tweet.author_id { extra["author"] = "twitter:user:\(author)" }
        if let reply = tweet.referenced_tweets?.first(where: { $0.type == "replied_to" })?.id {
            extra["inReplyTo"] = "twitter:post:\(reply)"
        }
        var item = MediaItem(
            id: ItemID(provider: "twitter", kind: .post, nativeID: id), title: MediaItem.headline(plain),
            subtitle: handle, summary: plain, url: author?.username.map { "https://x.com/\($0)/status/\(id)" },
            artwork: tweet.possibly_sensitive == true
                ? author?.profile_image_url : media.first.flatMap { $0.url ?? $0.preview_image_url } ?? author?.profile_image_url,
            published: tweet.created_at, creator: author?.name ?? handle, entities: entities, extra: extra)
        if let metrics = tweet.public_metrics {
            var stats: [String: Int] = [:]
            for (name, key) in [
                ("likes", "like_count"), ("reposts", "retweet_count"), ("replies", "reply_count"), ("quotes", "quote_count"),
            ] {
                if let value = metrics[key] { stats[name] = value }
            }
            item.stats = stats
        }
        return item
    }

    /// Copies text, turning X's three escapes (&amp; &lt; &gt;) back into their characters.
    static func appendUnescaped(_ scalars: ArraySlice<Unicode.Scalar>, to text: inout String.UnicodeScalarView) {
        var i = scalars.startIndex
        next: while i < scalars.endIndex {
            if scalars[i] == "&" {
                for (escape, character) in escapes where scalars[i...].starts(with: escape) {
                    text.append(character)
                    i += escape.count
                    continue next
                }
            }
            text.append(scalars[i])
            i += 1
        }
    }

    static func unescaped(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        appendUnescaped(ArraySlice(text.unicodeScalars), to: &out)
        return String(out)
    }

    private static let escapes: [([Unicode.Scalar], Unicode.Scalar)] = [
        (Array("&amp;".unicodeScalars), "&"), (Array("&lt;".unicodeScalars), "<"), (Array("&gt;".unicodeScalars), ">"),
    ]

    func item(from user: TWUser) -> MediaItem {
        let id = user.id ?? ""
        var item = MediaItem(
            id: ItemID(provider: "twitter", kind: .user, nativeID: id),
            title: user.name.flatMap { $0.isEmpty ? nil : $0 } ?? user.username ?? id,
            subtitle: user.username.map { "@" + $0 }, summary: user.description.map(Self.unescaped),
            url: user.username.map { "https://x.com/\($0)" },
            artwork: user.profile_image_url)
        var stats: [String: Int] = [:]
        for (name, key) in [("followers", "followers_count"), ("following", "following_count"), ("posts", "tweet_count")] {
            if let value = user.public_metrics?[key] { stats[name] = value }
        }
        item.stats = stats
        return item
    }
}
