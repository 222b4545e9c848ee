import Basics
import FoundationEssentials
import Glibc
import MediaKit

extension BlueskyProvider {
    /// Labels that hide media until asked, as Mastodon's sensitive media (self-labels and
    /// moderation labels alike).
    static let sensitiveLabels: Set<String> = ["porn", "sexual", "nudity", "graphic-media", "gore", "!warn"]

    /// A timeline entry: the post, and who reposted it into the timeline.
    func item(from entry: BFeedItem) -> MediaItem? {
        guard let post = entry.post, var item = item(from: post) else { return nil }
        if entry.reason?.type == "app.bsky.feed.defs#reasonRepost", let by = entry.reason?.by?.handle {
            item.extra = (item.extra ?? [:]).merging(["repostedBy": "@" + by]) { $1 }
        }
        if entry.reason?.type == "app.bsky.feed.defs#reasonPin" {
            item.extra = (item.extra ?? [:]).merging(["pinned": "true"]) { $1 }
        }
        return item
    }

    /// A post: its text with mentions, links and tags from its facets (offsets turned from UTF-8
    /// bytes into Unicode scalars), its images (with alt text), video (the HLS playlist `play`
    /// hands to mpv) and link card as media and links after the text, a quoted post as a link,
    /// and its labels as a content warning.
    func item(from post: BPost) -> MediaItem? {
        guard let uri = post.uri, let native = Self.postID(uri) else { return nil }
        let text = post.record?.text ?? ""
        var entities = Self.entities(text: text, facets: post.record?.facets ?? [])
        let end = text.unicodeScalars.count
        var preview: String?
        var extra: [String: String] = [:]
        func attach(_ embed: BEmbed?) {
            guard let embed else { return }
            if let type = embed.type, !BEmbed.known.contains(type) {
                // Something a later lexicon added: said, never dropped.
                entities.append(
                    TextEntity(type: .url, start: end, end: end, text: "[unsupported embed: \(type)]", value: url(of: post)))
            }
            for image in embed.images {
                guard let url = image.fullsize ?? image.thumb else { continue }
                entities.append(
                    TextEntity(type: .media, start: end, end: end, text: Self.marker("[image]", image.alt), value: url))
                preview = preview ?? image.thumb
            }
            if let playlist = embed.playlist {
                entities.append(
                    TextEntity(type: .media, start: end, end: end, text: Self.marker("[video]", embed.alt), value: playlist))
                preview = preview ?? embed.thumbnail
            }
            if let card = embed.external, let link = card.uri {
                let title = card.title.flatMap { $0.isEmpty ? nil : $0 } ?? link
                entities.append(TextEntity(type: .url, start: end, end: end, text: title, value: link))
                preview = preview ?? card.thumb
            }
            attach(embed.media)
        }
        attach(post.embed)
        if let quoted = post.embed?.record ?? post.embed?.media?.record {
            switch quoted.type {
            case "app.bsky.embed.record#viewNotFound": extra["quoted"] = "a post that was deleted"
            case "app.bsky.embed.record#viewBlocked": extra["quoted"] = "a post hidden by a block"
            case "app.bsky.embed.record#viewDetached": extra["quoted"] = "a post its author detached"
            case nil, "app.bsky.embed.record#viewRecord":
                if let id = quoted.uri.flatMap(Self.postID) {
                    extra["quote"] = "bluesky:post:\(id)"
                    let who = quoted.author?.handle.map { "@" + $0 + ": " } ?? ""
                    extra["quoted"] = who + (quoted.value?.text ?? "")
                }
            case let type?:
                // A feed, a list, a labeler, a starter pack: a link a person can open; another
                // kind of record, said by its name.
                if let (label, link) = Self.embeddedRecord(quoted, type: type) {
                    entities.append(TextEntity(type: .url, start: end, end: end, text: label, value: link))
                } else {
                    entities.append(
                        TextEntity(type: .url, start: end, end: end, text: "[unsupported embed: \(type)]", value: url(of: post)))
                }
            }
        }
        let author = post.author
        let labels = ((post.labels ?? []) + (author?.labels ?? [])).filter { $0.neg != true }.compactMap(\.val)
        let warnings = labels.filter { Self.sensitiveLabels.contains($0) }
        if !warnings.isEmpty {
            extra["sensitive"] = "true"
            extra["contentWarning"] = Array(Set(warnings)).sorted().joined(separator: ", ")
        }
        let shownLabels = labels.filter { !$0.hasPrefix("!no-") }
        if !shownLabels.isEmpty { extra["labels"] = Array(Set(shownLabels)).sorted().joined(separator: ", ") }
        if let did = author?.did { extra["author"] = "bluesky:user:\(did)" }
        if let parent = post.record?.reply?.parent?.uri.flatMap(Self.postID) { extra["inReplyTo"] = "bluesky:post:\(parent)" }
        let handle = author?.handle.map { "@" + $0 }
        let rkey = native.split(separator: "/").last.map(String.init) ?? ""
        let headline = MediaItem.headline(text)
        var item = MediaItem(
            id: ItemID(provider: "bluesky", kind: .post, nativeID: native),
            title: extra["contentWarning"].map { "CW: " + $0 }
                ?? (headline.isEmpty
                    ? entities.first { $0.type == .media }?.text ?? "(a post by \(handle ?? "someone"))" : headline),
            subtitle: handle, summary: text,
            url: "https://bsky.app/profile/\(author?.handle ?? author?.did ?? "")/post/\(rkey)",
            // Sensitive media are not previewed: the author's avatar stands in.
            artwork: extra["sensitive"] == nil ? preview ?? author?.avatar : author?.avatar,
            published: post.record?.createdAt ?? post.indexedAt,
            creator: author?.displayName.flatMap { $0.isEmpty ? nil : $0 } ?? handle,
            entities: entities, extra: extra)
        var stats: [String: Int] = [:]
        for (name, value) in [
            ("likes", post.likeCount), ("reposts", post.repostCount), ("replies", post.replyCount), ("quotes", post.quoteCount),
        ] {
            if let value, value >= 0 { stats[name] = value }
        }
        item.stats = stats.isEmpty ? nil : stats
        return item
    }

    static func marker(_ kind: String, _ alt: String?) -> String {
        guard let alt = alt?.trimming(.whitespacesAndNewlines), !alt.isEmpty else { return kind }
        return kind + " " + alt.replacing("\n", with: " ")
    }

    /// Entities from facets. Facets count UTF-8 bytes; entities count Unicode scalars. A facet out
    /// of range, backwards, splitting a character or overlapping an earlier one is left out (it
    /// costs only itself), as is one whose features are all unknown.
    static func entities(text: String, facets: [BFacet]) -> [TextEntity] {
        let bytes = Array(text.utf8)
        // The scalar offset at each byte offset that starts a scalar (or ends the text); nil inside one.
        var scalarAt = [Int?](repeating: nil, count: bytes.count + 1)
        var scalars = 0
        for (offset, byte) in bytes.enumerated() where byte & 0xC0 != 0x80 {
            scalarAt[offset] = scalars
            scalars += 1
        }
        scalarAt[bytes.count] = scalars
        var spans: [(start: Int, end: Int, facet: BFacet)] = []
        for facet in facets {
            guard let start = facet.index?.byteStart, let end = facet.index?.byteEnd, start >= 0, start < end,
                end <= bytes.count, scalarAt[start] != nil, scalarAt[end] != nil
            else { continue }
            spans.append((start, end, facet))
        }
        spans.sort { $0.start < $1.start }
        var entities: [TextEntity] = []
        var reached = 0
        for span in spans where span.start >= reached {
            let covered = String(decoding: bytes[span.start..<span.end], as: UTF8.self)
            guard let (type, value) = entity(span.facet, covered: covered),
                let start = scalarAt[span.start], let end = scalarAt[span.end]
            else { continue }
            entities.append(TextEntity(type: type, start: start, end: end, text: covered, value: value))
            reached = span.end
        }
        return entities
    }

    private static func entity(_ facet: BFacet, covered: String) -> (TextEntity.EntityType, String)? {
        for feature in facet.features ?? [] {
            switch feature.type {
            case "app.bsky.richtext.facet#mention":
                guard let did = feature.did else { continue }
                // Shown and searched as the handle the text names; the DID when it names none.
                return (.mention, covered.hasPrefix("@") && covered.count > 1 ? String(covered.dropFirst()) : did)
            case "app.bsky.richtext.facet#link":
                guard let uri = feature.uri, !uri.isEmpty else { continue }
                return (.url, uri)
            case "app.bsky.richtext.facet#tag":
                guard let tag = feature.tag, !tag.isEmpty else { continue }
                return (.hashtag, tag)
            default: continue
            }
        }
        return nil
    }

    /// The bsky.app page of a post.
    func url(of post: BPost) -> String {
        let rkey = post.uri.flatMap(Self.postID)?.split(separator: "/").last.map(String.init) ?? ""
        return "https://bsky.app/profile/\(post.author?.handle ?? post.author?.did ?? "")/post/\(rkey)"
    }

    /// "[starter pack: Name]" and its bsky.app link, for a record a post embeds that is no post.
    static func embeddedRecord(_ record: BQuoted, type: String) -> (String, String)? {
        guard let uri = record.uri, uri.hasPrefix("at://") else { return nil }
        let parts = uri.dropFirst(5).split(separator: "/").map(String.init)
        guard parts.count == 3 else { return nil }
        let (did, rkey) = (parts[0], parts[2])
        let name = record.name ?? record.record?.name
        let by = record.creator?.handle.map { " by @" + $0 } ?? ""
        switch type {
        case "app.bsky.feed.defs#generatorView":
            return ("[feed: \(name ?? rkey)\(by)]", "https://bsky.app/profile/\(did)/feed/\(rkey)")
        case "app.bsky.graph.defs#listView":
            return ("[list: \(name ?? rkey)\(by)]", "https://bsky.app/profile/\(did)/lists/\(rkey)")
        case "app.bsky.graph.defs#starterPackViewBasic":
            return ("[starter pack: \(name ?? rkey)\(by)]", "https://bsky.app/starter-pack/\(did)/\(rkey)")
        case "app.bsky.labeler.defs#labelerView":
            return ("[labeler\(by.isEmpty ? "" : ":" + by.dropFirst(3))]", "https://bsky.app/profile/\(did)")
        default:
            return nil
        }
    }

    func item(from profile: BProfile) -> MediaItem? {
        guard let did = profile.did, did.hasPrefix("did:") else { return nil }
        let handle = profile.handle.flatMap { $0 == "handle.invalid" ? nil : $0 }
        var item = MediaItem(
            id: ItemID(provider: "bluesky", kind: .user, nativeID: did),
            title: profile.displayName.flatMap { $0.isEmpty ? nil : $0 } ?? handle ?? did,
            subtitle: handle.map { "@" + $0 }, summary: profile.description,
            url: "https://bsky.app/profile/\(handle ?? did)", artwork: profile.avatar)
        var stats: [String: Int] = [:]
        for (name, value) in [
            ("followers", profile.followersCount), ("following", profile.followsCount), ("posts", profile.postsCount),
        ] {
            if let value, value >= 0 { stats[name] = value }
        }
        item.stats = stats.isEmpty ? nil : stats
        // The post they pinned: linked from their details, and first on their page.
        if let pinned = profile.pinnedPost?.uri.flatMap(Self.postID) { item.extra = ["pinned": "bluesky:post:\(pinned)"] }
        return item
    }
}
