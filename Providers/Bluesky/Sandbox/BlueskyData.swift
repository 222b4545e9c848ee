import Foundation
import Sandbox

/// Deterministic accounts, posts and feeds. Facets are computed from the texts as Bluesky's
/// clients do (UTF-8 byte offsets of `@handle`, links and `#tags`), over text with emoji, CJK,
/// right-to-left script and combining marks; posts carry images with alt text, a link card, a
/// video, a quote, labels, reposts and a thread of nested replies.
struct BlueskyData: Sendable {
    struct Account: Sendable { var did: String; var handle: String; var name: String; var bio: String }
    struct Post: Sendable {
        var rkey: String
        var author: Int
        var text: String
        var created: Date
        var embed: Embed?
        var labels: [String] = []
        var replyTo: Int?
        var quote: Int?
        var repostedBy: Int?
        var likes: Int
    }
    enum Embed: Sendable { case images([(String, String)]), video(String), card(String, String) }
    struct Feed: Sendable { var rkey: String; var name: String; var tag: String?; var about: String }

    static let accounts = [
        Account(did: "did:plc:sbxalice2vq7y4ojgwgkhtcx", handle: "alice.test", name: "Alice 🦋", bio: "Writes about Swift."),
        Account(did: "did:plc:sbxkenji5jmhfzkbmdqxu3wr", handle: "kenji.test", name: "健二", bio: "日本語で投稿します"),
        Account(did: "did:plc:sbxnoa7ruqhqxq4fwlcdkbyz", handle: "noa.test", name: "נועה", bio: "שלום"),
        Account(did: "did:plc:sbxnewsxdz3kcyfdgkalbmd2", handle: "news.test", name: "Sandbox News", bio: "Links, cards, video."),
        Account(did: "did:plc:sbxcats6sb3hhfx7tmkbjbsh", handle: "cats.test", name: "Cat Pictures 🐈", bio: "Cats."),
    ]
    static let feeds = [
        Feed(rkey: "whats-hot", name: "Discover", tag: nil, about: "Everything, newest first"),
        Feed(rkey: "cats", name: "Cats 🐈", tag: "caturday", about: "Posts tagged #caturday"),
        Feed(rkey: "swift", name: "Swift", tag: "swift", about: "Posts tagged #swift"),
    ]
    static let feedOwner = 3
    /// The sandbox accounts' app password (any handle logs in with it).
    static let appPassword = "sand-box1-test-pass"

    let posts: [Post]

    init() {
        let start = Date(timeIntervalSince1970: 1_763_900_000)
        var posts: [Post] = []
        func add(
            _ author: Int, _ text: String, embed: Embed? = nil, labels: [String] = [], replyTo: Int? = nil, quote: Int? = nil,
            repostedBy: Int? = nil
        ) {
            let index = posts.count
            posts.append(
                Post(
                    rkey: "3lsbx\(String(format: "%07d", 1_000 + index))", author: author, text: text,
                    created: start.addingTimeInterval(Double(-index * 1800)), embed: embed, labels: labels, replyTo: replyTo,
                    quote: quote, repostedBy: repostedBy, likes: (index * 7) % 23))
        }
        add(0, "Shipping a new release today 🎉 #swift with @kenji.test — notes at example.com/release")
        add(1, "おめでとう！🎉 @alice.test #swift の新しいリリース", replyTo: 0)
        add(2, "שלום! Congratulations @alice.test 🎉 #swift", replyTo: 0)
        add(0, "Thanks both 🙏 combining marks stay whole: e\u{301}le\u{300}ve #swift", replyTo: 1)
        add(4, "Saturday nap 😺 #caturday", embed: .images([("cat1.jpg", "A grey cat asleep on a sofa"), ("cat2.jpg", "")]))
        add(3, "Our explainer, in two minutes 🎬 #science", embed: .video("explainer"))
        add(3, "Read the full story 📰", embed: .card("https://example.com/story", "The full story"))
        add(0, "This one is worth a read 👇 #swift", quote: 6)
        add(
            3, "Surgery footage from the conference", embed: .images([("or.jpg", "An operating theatre")]),
            labels: ["graphic-media"])
        add(4, "Three emoji 👩‍💻🚀✨ then a tag #caturday", repostedBy: 0)
        for n in 0..<30 {
            add(n % 5, "Post number \(n + 1) 📮 #sandbox \(["日本語", "עברית", "Café", "naïve", "🎈"][n % 5])")
        }
        self.posts = posts
    }

    func uri(_ post: Post) -> String { "at://\(Self.accounts[post.author].did)/app.bsky.feed.post/\(post.rkey)" }
    func index(ofURI uri: String) -> Int? { posts.firstIndex { self.uri($0) == uri } }
    static func account(_ actor: String) -> Int? {
        let actor = actor.hasPrefix("@") ? String(actor.dropFirst()) : actor.lowercased()
        return accounts.firstIndex { $0.did == actor || $0.handle == actor }
    }
    static func feedURI(_ feed: Feed) -> String { "at://\(accounts[feedOwner].did)/app.bsky.feed.generator/\(feed.rkey)" }

    /// A curated list of the sandbox's first two accounts, read with getListFeed.
    static let listURI = "at://did:plc:sandbox-list-owner/app.bsky.graph.list/3kfriends"
    static let listMembers = [0, 1]

    func tags(_ post: Post) -> [String] {
        post.text.split(separator: " ").filter { $0.hasPrefix("#") && $0.count > 1 }.map { String($0.dropFirst()).lowercased() }
    }

    /// Facets as clients compute them: the UTF-8 byte range of each `@handle`, link and `#tag`.
    static func facets(_ text: String) -> [[String: Any]] {
        var facets: [[String: Any]] = []
        var offset = 0
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let length = word.utf8.count
            defer { offset += length + 1 }
            let token = String(word)
            let index = ["byteStart": offset, "byteEnd": offset + length]
            if token.hasPrefix("@"), let account = account(String(token.dropFirst())) {
                facets.append([
                    "index": index, "features": [["$type": "app.bsky.richtext.facet#mention", "did": accounts[account].did]],
                ])
            } else if token.hasPrefix("#"), token.count > 1 {
                facets.append([
                    "index": index, "features": [["$type": "app.bsky.richtext.facet#tag", "tag": String(token.dropFirst())]],
                ])
            } else if token.hasPrefix("example.com/") {
                facets.append([
                    "index": index, "features": [["$type": "app.bsky.richtext.facet#link", "uri": "https://" + token]],
                ])
            }
        }
        return facets
    }

    func profile(_ index: Int, detailed: Bool = false) -> [String: Any] {
        let account = Self.accounts[index]
        var profile: [String: Any] = [
            "did": account.did, "handle": account.handle, "displayName": account.name,
            "avatar": "https://cdn.bsky.app/img/avatar/plain/\(account.did)/avatar@jpeg", "labels": [Any](),
            "createdAt": "2024-01-0\(index + 1)T10:00:00.000Z",
        ]
        if detailed {
            profile["description"] = account.bio
            profile["followersCount"] = 100 * (index + 1)
            profile["followsCount"] = 10 * (index + 1)
            profile["postsCount"] = posts.filter { $0.author == index }.count
        }
        return profile
    }

    /// A post view as the AppView writes it; `liked`: the viewer's like record, when logged in.
    func view(_ index: Int, base: String, liked: String? = nil, quoting: Bool = true) -> [String: Any] {
        let post = posts[index]
        let did = Self.accounts[post.author].did
        var record: [String: Any] = [
            "$type": "app.bsky.feed.post", "text": post.text, "createdAt": ISO8601DateFormatter().string(from: post.created),
            "langs": ["en"],
        ]
        let facets = Self.facets(post.text)
        if !facets.isEmpty { record["facets"] = facets }
        if let parent = post.replyTo {
            let root = rootOf(parent)
            record["reply"] = [
                "root": ["uri": uri(posts[root]), "cid": cid(root)], "parent": ["uri": uri(posts[parent]), "cid": cid(parent)],
            ]
        }
        var view: [String: Any] = [
            "uri": uri(post), "cid": cid(index), "author": profile(post.author), "record": record,
            "replyCount": posts.filter { $0.replyTo == index }.count, "repostCount": index % 5, "likeCount": post.likes,
            "quoteCount": posts.filter { $0.quote == index }.count,
            "indexedAt": ISO8601DateFormatter().string(from: post.created),
            "labels": post.labels.map { ["src": did, "uri": uri(post), "val": $0, "cts": "2025-11-20T10:00:00.000Z"] },
            "viewer": liked.map { ["like": $0] } ?? [String: Any](),
        ]
        switch post.embed {
        case .images(let images):
            view["embed"] = [
                "$type": "app.bsky.embed.images#view",
                "images": images.map { name, alt in
                    [
                        "thumb": "https://cdn.bsky.app/img/feed_thumbnail/plain/\(did)/\(name)",
                        "fullsize": "https://cdn.bsky.app/img/feed_fullsize/plain/\(did)/\(name)", "alt": alt,
                    ]
                },
            ]
        case .video(let name):
            view["embed"] = [
                "$type": "app.bsky.embed.video#view", "cid": "bafkrei\(name)",
                "playlist": "\(base)/video/\(name)/playlist.m3u8", "thumbnail": "\(base)/video/\(name)/thumbnail.jpg",
                "alt": "A two-minute explainer", "aspectRatio": ["width": 1920, "height": 1080],
            ]
        case .card(let link, let title):
            view["embed"] = [
                "$type": "app.bsky.embed.external#view",
                "external": [
                    "uri": link, "title": title, "description": "What happened, and why",
                    "thumb": "https://cdn.bsky.app/img/feed_thumbnail/plain/\(did)/card.jpg",
                ],
            ]
        case nil: break
        }
        if let quoted = post.quote, quoting {
            let inner = self.view(quoted, base: base, quoting: false)
            view["embed"] = [
                "$type": "app.bsky.embed.record#view",
                "record": [
                    "$type": "app.bsky.embed.record#viewRecord", "uri": inner["uri"] as Any, "cid": inner["cid"] as Any,
                    "author": inner["author"] as Any, "value": inner["record"] as Any, "indexedAt": inner["indexedAt"] as Any,
                ],
            ]
        }
        return view
    }

    func rootOf(_ index: Int) -> Int {
        var index = index
        while let parent = posts[index].replyTo { index = parent }
        return index
    }

    func cid(_ index: Int) -> String { "bafyreisbx\(String(format: "%06d", index))" }

    /// A thread node with its replies, `depth` levels down.
    func thread(_ index: Int, depth: Int, base: String, likes: [String: String]) -> [String: Any] {
        var node: [String: Any] = [
            "$type": "app.bsky.feed.defs#threadViewPost", "post": view(index, base: base, liked: likes[uri(posts[index])]),
        ]
        if depth > 0 {
            node["replies"] = posts.indices.filter { posts[$0].replyTo == index }.map {
                thread($0, depth: depth - 1, base: base, likes: likes)
            }
        }
        return node
    }
}
