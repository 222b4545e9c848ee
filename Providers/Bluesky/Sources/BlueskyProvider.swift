import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// Bluesky through the AT Protocol's XRPC: people's posts, threads, feeds as categories and
/// people search without an account (the public AppView); text and #tag search, likes as
/// account favorites and liking with an app password, every call then going to the account's
/// own server (its PDS, from its DID document) with the session's token.
public struct BlueskyProvider: CompiledProvider {
    public static let descriptor = ProviderDescriptor(
        id: "bluesky", name: "Bluesky", kinds: [.post, .user],
        capabilities: [.categories, .browse, .search, .item, .children, .login, .remoteFavorites],
        configKeys: [
            .init(
                name: "appview", summary: "Where posts are read without an account",
                defaultValue: "https://public.api.bsky.app"),
            .init(
                name: "service", summary: "Where to log in when the handle names no server (bsky.social, or your PDS)",
                defaultValue: "https://bsky.social"),
            .init(name: "plc_directory", summary: "Where did:plc documents are read", defaultValue: "https://plc.directory"),
            .init(name: "base_url", summary: "One URL standing in for all three (a proxy, the sandbox)"),
        ],
        auth: .sessionLogin,
        notes:
            "Reads people, posts, threads and feeds without an account. Text and #tag search and likes need `login bluesky` "
            + "with an app password (Settings > Privacy and security > App passwords), never your account password.")

    static let pageSize = 25
    let appView: URL
    let service: URL
    let plcDirectory: URL
    let http: any HTTPClient
    let sessions: any SessionKeeper
    let now: @Sendable () -> Date
    let logger: Logger
    let refreshes = RefreshQueue()

    public init(context: ProviderContext) throws {
        let config = context.config.declared(by: Self.descriptor)
        if config["base_url"] != nil {
            let base = try config.url("base_url")
            (appView, service, plcDirectory) = (base, base, base.appendingPathComponent("plc"))
        } else {
            (appView, service, plcDirectory) = (
                try config.url("appview"), try config.url("service"), try config.url("plc_directory")
            )
        }
        http = context.http
        sessions = context.sessions
        now = context.now
        logger = context.logger
    }

    // MARK: Reading

    /// Popular feeds (feed generators) are the categories.
    public func categories() async throws -> [MediaCategory] {
        let page: BGeneratorsPage = try await query("app.bsky.unspecced.getPopularFeedGenerators", ["limit": "30"])
        return (page.feeds ?? []).compactMap { feed in
            guard let uri = feed.uri, let name = feed.displayName, !name.isEmpty else { return nil }
            return MediaCategory(id: uri, name: name)
        }
    }

    /// A feed's posts: the category is a feed generator's or a list's AT URI, or its bsky.app
    /// link (a list is read with getListFeed: getFeed serves only feed generators).
    public func browse(category: String, cursor: Cursor?) async throws -> Page {
        let uri = try await feedURI(category)
        if uri.contains("/app.bsky.graph.list/") {
            return try await feed("app.bsky.feed.getListFeed", ["list": uri], cursor: cursor)
        }
        return try await feed("app.bsky.feed.getFeed", ["feed": uri], cursor: cursor)
    }

    /// The AT URI of a feed or a list: as it is, or from a bsky.app link
    /// (`/profile/<handle or did>/feed/<rkey>`, `/profile/<…>/lists/<rkey>`).
    func feedURI(_ text: String) async throws -> String {
        if text.hasPrefix("at://") { return text }
        if let url = URL(string: text), url.host?.hasSuffix("bsky.app") == true {
            let parts = url.path.split(separator: "/").map(String.init)
            if parts.count == 4, parts[0] == "profile", ["feed", "lists"].contains(parts[2]) {
                let did = parts[1].hasPrefix("did:") ? parts[1] : try await resolve(handle: parts[1])
                return "at://\(did)/\(parts[2] == "feed" ? "app.bsky.feed.generator" : "app.bsky.graph.list")/\(parts[3])"
            }
        }
        throw ProviderError.invalidArgument(
            "'\(text)' is not a Bluesky feed or list (an at:// URI or a bsky.app link); `categories bluesky` lists feeds")
    }

    /// `@handle`: their posts (`@handle replies|media|videos` filters them); people (kind user): people search; `#tag` and words: post search,
    /// which Bluesky answers only with an account (without one, words find people).
    public func search(_ query: SearchQuery) async throws -> Page {
        let text = query.text.trimming(.whitespaces)
        guard !text.isEmpty else { throw ProviderError.invalidArgument("search for something: words, #tag or @handle") }
        let words = text.split(separator: " ").map(String.init)
        if let first = words.first, first.hasPrefix("@"), first.count > 1, words.count <= 2 {
            // `@handle`: their posts and threads; `@handle replies`, `@handle media`, `@handle videos`.
            let filters = [
                "posts": "posts_and_author_threads", "replies": "posts_with_replies", "media": "posts_with_media",
                "videos": "posts_with_video",
            ]
            let wanted = words.count == 2 ? words[1].lowercased() : "posts"
            if let filter = filters[wanted] {
                return try await feed(
                    "app.bsky.feed.getAuthorFeed", ["actor": String(first.dropFirst()), "filter": filter], cursor: query.cursor)
            }
        }
        // Without an account, words find people (the public AppView answers that), so a search of
        // every provider finds what Bluesky can give; a #tag asks for posts, which need one.
        let anonymous = sessions.load() == nil
        if query.kind == .user || (anonymous && !text.hasPrefix("#") && query.kind != .post) {
            var parameters = ["q": text, "limit": String(Self.pageSize)]
            parameters["cursor"] = query.cursor?.rawValue
            let page: BActorsPage = try await self.query("app.bsky.actor.searchActors", parameters)
            return Page(items: (page.actors ?? []).compactMap(item(from:)), next: page.cursor.map { Cursor($0) })
        }
        guard !anonymous else {
            throw ProviderError.unauthorized(
                "Bluesky answers post and #tag search only with an account: run `login bluesky` with an app password "
                    + "(without one, words find people and @handle shows their posts)")
        }
        var parameters = ["q": text, "limit": String(Self.pageSize), "sort": "latest"]
        parameters["cursor"] = query.cursor?.rawValue
        let page: BPostsPage = try await self.query("app.bsky.feed.searchPosts", parameters)
        return Page(items: (page.posts ?? []).compactMap { item(from: $0) }, next: page.cursor.map { Cursor($0) })
    }

    public func item(_ id: ItemID) async throws -> MediaItem {
        switch id.kind {
        case .post:
            let uri = try await postURI(id.nativeID)
            let page: BPostsPage = try await query("app.bsky.feed.getPosts", ["uris": uri])
            guard let post = page.posts?.first, let item = item(from: post) else {
                throw ProviderError.notFound("no Bluesky post \(id.nativeID): deleted, or its author blocks you")
            }
            return item
        case .user:
            let profile: BProfile = try await query("app.bsky.actor.getProfile", ["actor": Self.actor(id.nativeID)])
            guard let item = item(from: profile) else { throw ProviderError.notFound("no Bluesky account \(id.nativeID)") }
            return item
        default:
            throw ProviderError.unsupported("Bluesky has posts and people, not \(id.kind.rawValue)s")
        }
    }

    /// A person's posts (with their own threads, not their replies elsewhere); a post's thread:
    /// its replies in the order Bluesky gives, each with its depth (`extra.depth`, 1 = a reply).
    public func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        switch id.kind {
        case .user:
            // The pinned post first (Bluesky puts it there when asked, reason `reasonPin`).
            var parameters = ["actor": Self.actor(id.nativeID), "filter": "posts_and_author_threads"]
            if cursor == nil { parameters["includePins"] = "true" }
            return try await feed("app.bsky.feed.getAuthorFeed", parameters, cursor: cursor)
        case .post:
            let uri = try await postURI(id.nativeID)
            let answer: BThreadAnswer = try await query(
                "app.bsky.feed.getPostThread", ["uri": uri, "depth": "10", "parentHeight": "0"])
            guard let thread = answer.thread else { throw ProviderError.invalidResponse("Bluesky sent a thread without a post") }
            switch thread.type {
            case "app.bsky.feed.defs#notFoundPost": throw ProviderError.notFound("that Bluesky post was deleted")
            case "app.bsky.feed.defs#blockedPost":
                throw ProviderError.notFound("that Bluesky post's author blocks you, or you them")
            default: break
            }
            var items: [MediaItem] = []
            func walk(_ node: BThread, depth: Int) {
                for reply in node.replies {
                    guard var item = reply.post.flatMap({ item(from: $0) }) else { continue }
                    item.extra = (item.extra ?? [:]).merging(["depth": String(depth)]) { $1 }
                    items.append(item)
                    if depth < 10 { walk(reply, depth: depth + 1) }
                }
            }
            walk(thread, depth: 1)
            return Page(items: items)
        default:
            throw ProviderError.unsupported("Bluesky \(id.kind.rawValue)s have no children")
        }
    }

    func feed(_ method: String, _ parameters: [String: String], cursor: Cursor?) async throws -> Page {
        var parameters = parameters
        parameters["limit"] = String(Self.pageSize)
        parameters["cursor"] = cursor?.rawValue
        let page: BFeedPage = try await query(method, parameters)
        return Page(items: (page.feed ?? []).compactMap(item(from:)), next: page.cursor.map { Cursor($0) })
    }

    // MARK: Identifiers

    /// The AT URI of a post id: `<did>/<rkey>` (ours), an `at://` URI, or a bsky.app link.
    func postURI(_ native: String) async throws -> String {
        if native.hasPrefix("at://") { return native }
        if let url = URL(string: native), url.host?.hasSuffix("bsky.app") == true {
            let parts = url.path.split(separator: "/").map(String.init)
            guard parts.count == 4, parts[0] == "profile", parts[2] == "post" else {
                throw ProviderError.invalidArgument("\(native) is not a link to a Bluesky post")
            }
            let did = parts[1].hasPrefix("did:") ? parts[1] : try await resolve(handle: parts[1])
            return "at://\(did)/app.bsky.feed.post/\(parts[3])"
        }
        let parts = native.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].hasPrefix("did:"), !parts[1].isEmpty else {
            throw ProviderError.invalidArgument("'\(native)' is not a Bluesky post id (did/rkey or an at:// URI)")
        }
        return "at://\(parts[0])/app.bsky.feed.post/\(parts[1])"
    }

    /// Ours: `<did>/<rkey>` of `at://<did>/app.bsky.feed.post/<rkey>`.
    static func postID(_ uri: String) -> String? {
        guard uri.hasPrefix("at://") else { return nil }
        let parts = uri.dropFirst(5).split(separator: "/")
        guard parts.count == 3, parts[0].hasPrefix("did:"), parts[1] == "app.bsky.feed.post" else { return nil }
        return "\(parts[0])/\(parts[2])"
    }

    /// A person as the API takes them: a DID, or a handle without its `@`.
    static func actor(_ text: String) -> String {
        text.hasPrefix("@") ? String(text.dropFirst()) : text
    }

    /// A handle's DID (`com.atproto.identity.resolveHandle`).
    func resolve(handle: String) async throws -> String {
        struct Resolved: Decodable { @Lenient var did: String? }
        let resolved: Resolved
        do {
            resolved = try await query("com.atproto.identity.resolveHandle", ["handle": Self.actor(handle)])
        } catch ProviderError.notFound {
            throw ProviderError.notFound("the handle @\(Self.actor(handle)) does not resolve to a Bluesky account")
        }
        guard let did = resolved.did, did.hasPrefix("did:") else {
            throw ProviderError.invalidResponse("Bluesky resolved @\(Self.actor(handle)) to no DID")
        }
        return did
    }
}
