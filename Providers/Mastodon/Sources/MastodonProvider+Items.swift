import Basics
import FoundationEssentials
import Glibc
import MediaKit

extension MastodonProvider {
    /// A post with its text as plain text and its hashtags, mentions, links and media as
    /// entities (offsets in Unicode scalars). A boost shows the original and who boosted it;
    /// a content warning is kept as such (`extra.contentWarning`), never dropped.
    func item(from status: MStatus) -> MediaItem? {
        guard let wrapperID = status.id else { return nil }
        let shown = status.reblog?.status ?? status
        guard let id = shown.id else { return nil }
        let (text, links) = HTMLText.plainWithLinks(shown.content ?? "")
        var entities: [TextEntity] = links.map { link in
            if link.classes.contains("hashtag") {
                let name = String(link.text.drop { $0 == "#" })
                let tag = shown.tags?.first { $0.name?.equalsIgnoringCase(name) == true }?.name ?? name.lowercased()
                return TextEntity(type: .hashtag, start: link.start, end: link.end, text: link.text, value: tag)
            }
            if link.classes.contains("mention") {
                let mention = Self.mention(for: link, in: shown.mentions ?? [])
                return TextEntity(
                    type: .mention, start: link.start, end: link.end, text: link.text,
                    value: mention?.acct ?? String(link.text.drop { $0 == "@" }))
            }
            return TextEntity(type: .url, start: link.start, end: link.end, text: link.text, value: link.href)
        }
        let end = text.unicodeScalars.count
        for media in shown.media_attachments ?? [] {
            guard let url = media.url else { continue }
            let marker = media.type == "video" || media.type == "gifv" ? "[video]" : media.type == "audio" ? "[audio]" : "[image]"
            entities.append(TextEntity(type: .media, start: end, end: end, text: marker, value: url))
        }
        let author = shown.account
        let handle = author?.acct.map { "@" + $0 }
        var extra: [String: String] = [:]
        if let warning = shown.spoiler_text, !warning.isEmpty { extra["contentWarning"] = warning }
        if shown.sensitive == true { extra["sensitive"] = "true" }
        if status.reblog != nil, let booster = status.account?.acct {
            extra["boostedBy"] = "@" + booster; extra["boost"] = wrapperID
        }
        if let reply = shown.in_reply_to_id { extra["inReplyTo"] = "mastodon:post:\(reply)" }
        if let account = author?.id { extra["author"] = "mastodon:user:\(account)" }
        var item = MediaItem(
            id: ItemID(provider: "mastodon", kind: .post, nativeID: id),
            title: extra["contentWarning"].map { "CW: " + $0 } ?? MediaItem.headline(text),
            subtitle: handle, summary: text, url: shown.url,
            // Sensitive media are not previewed: the author's avatar stands in.
            artwork: shown.sensitive == true ? author?.avatar : shown.media_attachments?.first?.preview_url ?? author?.avatar,
            published: shown.created_at, creator: author?.display_name.flatMap { $0.isEmpty ? nil : $0 } ?? handle,
            entities: entities, extra: extra)
        var stats: [String: Int] = [:]
        if let replies = shown.replies_count { stats["replies"] = replies }
        if let boosts = shown.reblogs_count { stats["boosts"] = boosts }
        if let favourites = shown.favourites_count { stats["favourites"] = favourites }
        item.stats = stats.isEmpty ? nil : stats
        return item
    }

    /// The account a mention link stands for, matched as Mastodon's own clients do: by URL, then
    /// by the URL's host and name whatever its scheme or form (`/@user`, `/users/user`), then by
    /// the name alone when only one mention has it.
    static func mention(for link: HTMLLink, in mentions: [MMention]) -> MMention? {
        if let exact = mentions.first(where: { $0.url == link.href }) { return exact }
        func key(_ text: String?) -> (host: String, name: String)? {
            guard let text, let url = URL(string: text), let host = url.host?.lowercased() else { return nil }
            let parts = url.path.split(separator: "/").map(String.init)
            if let first = parts.first, first.hasPrefix("@"), parts.count == 1 {
                return (host, String(first.dropFirst()).lowercased())
            }
            if parts.count >= 2, parts[0] == "users" || parts[0] == "u" { return (host, parts[1].lowercased()) }
            return nil
        }
        if let wanted = key(link.href), let found = mentions.first(where: { key($0.url).map { $0 == wanted } ?? false }) {
            return found
        }
        let name = String(link.text.drop { $0 == "@" }).split(separator: "@").first.map { $0.lowercased() } ?? ""
        let named = mentions.filter { $0.username?.lowercased() == name }
        return named.count == 1 ? named[0] : nil
    }

    func item(from account: MAccount) -> MediaItem {
        let id = account.id ?? ""
        var item = MediaItem(
            id: ItemID(provider: "mastodon", kind: .user, nativeID: id),
            title: account.display_name.flatMap { $0.isEmpty ? nil : $0 } ?? account.acct ?? id,
            subtitle: account.acct.map { "@" + $0 }, summary: account.note.map(HTMLText.plain), url: account.url,
            artwork: account.avatar)
        var stats: [String: Int] = [:]
        if let followers = account.followers_count { stats["followers"] = followers }
        if let following = account.following_count { stats["following"] = following }
        if let posts = account.statuses_count { stats["posts"] = posts }
        item.stats = stats
        return item
    }
}
