import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// X/Twitter through API v2 with an app bearer token: `#tag` and text search of recent posts,
/// `@user` posts, one post and its replies. There are no categories (v2 has no public trends).
public struct TwitterProvider: CompiledProvider {
    public static let descriptor = ProviderDescriptor(
        id: "twitter", name: "X (Twitter)", kinds: [.post, .user], capabilities: [.search, .item, .children],
        configKeys: [
            .init(
                name: "bearer_token", summary: "App bearer token (developer portal)", secret: true, required: true,
                environment: ["TWITTER_BEARER_TOKEN"]),
            .init(name: "base_url", summary: "The API's base URL", defaultValue: "https://api.twitter.com"),
        ],
        auth: .apiKey,
        notes: "No categories: API v2 has no public trends. Recent search covers the last 7 days.")

    static let pageSize = 20
    static let fields = [
        "expansions": "author_id,attachments.media_keys",
        "tweet.fields":
            "created_at,entities,public_metrics,attachments,author_id,possibly_sensitive,referenced_tweets,conversation_id",
        "user.fields": "name,username,profile_image_url,description,public_metrics",
        "media.fields": "type,url,preview_image_url,alt_text",
    ]

    let base: URL
    let token: String
    let http: any HTTPClient
    let now: @Sendable () -> Date

    public init(context: ProviderContext) throws {
        let config = context.config.declared(by: Self.descriptor)
        base = try config.url("base_url")
        token = config["bearer_token"] ?? ""
        http = context.http
        now = context.now
    }

    public func categories() async throws -> [MediaCategory] {
        throw ProviderError.unsupported("X has no categories: API v2 offers no public trends; search #tags or @users instead")
    }

    /// `#tag` and words: recent search; `@user`: that user's posts.
    public func search(_ query: SearchQuery) async throws -> Page {
        let text = query.text.trimming(.whitespaces)
        if text.hasPrefix("@"), !text.contains(" ") {
            let user = try await lookup(String(text.dropFirst()))
            return try await timeline("2/users/\(user)/tweets", [:], cursor: query.cursor, tokenName: "pagination_token")
        }
        return try await timeline("2/tweets/search/recent", ["query": text], cursor: query.cursor, tokenName: "next_token")
    }

    public func item(_ id: ItemID) async throws -> MediaItem {
        if id.kind == .user {
            let response: TWResponse<TWUser> = try await get(
                "2/users/\(id.nativeID)", ["user.fields": Self.fields["user.fields"]!])
            guard let user = response.data else {
                throw ProviderError.notFound(response.errors?.first?.detail ?? "no user \(id.nativeID)")
            }
            return item(from: user)
        }
        guard id.kind == .post else { throw ProviderError.unsupported("X details are available for posts and users") }
        let response: TWResponse<TWTweet> = try await get("2/tweets/\(id.nativeID)", Self.fields)
        guard let tweet = response.data, let item = item(from: tweet, includes: response.includes) else {
            throw ProviderError.notFound(response.errors?.first?.detail ?? "no post \(id.nativeID)")
        }
        return item
    }

    /// A user's posts; a post's replies (its conversation).
    public func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        switch id.kind {
        case .user: return try await timeline("2/users/\(id.nativeID)/tweets", [:], cursor: cursor, tokenName: "pagination_token")
        case .post:
            return try await timeline(
                "2/tweets/search/recent", ["query": "conversation_id:\(id.nativeID)"], cursor: cursor, tokenName: "next_token")
        default: throw ProviderError.unsupported("X \(id.kind.rawValue)s have no children")
        }
    }

    // MARK: Requests

    func lookup(_ username: String) async throws -> String {
        let response: TWResponse<TWUser> = try await get(
            "2/users/by/username/\(username)", ["user.fields": Self.fields["user.fields"]!])
        guard let id = response.data?.id else {
            throw ProviderError.notFound(response.errors?.first?.detail ?? "no user @\(username)")
        }
        return id
    }

    func timeline(_ path: String, _ parameters: [String: String], cursor: Cursor?, tokenName: String) async throws -> Page {
        var query = parameters.merging(Self.fields) { a, _ in a }
        query["max_results"] = String(Self.pageSize)
        if let cursor { query[tokenName] = cursor.rawValue }
        // A bad post costs that post only.
        let response: TWResponse<LossyList<TWTweet>> = try await get(path, query)
        // Partial errors (a missing media item, say) come beside good data, which is kept.
        return Page(
            items: (response.data?.wrappedValue ?? []).compactMap { item(from: $0, includes: response.includes) },
            next: response.meta?.next_token.map { Cursor($0) }, prev: response.meta?.previous_token.map { Cursor($0) })
    }

    func get<T: Decodable>(_ path: String, _ parameters: [String: String]) async throws -> T {
        guard let url = base.endpoint(path, query: parameters) else {
            throw ProviderError.invalidArgument("cannot build an X URL for \(path)")
        }
        let request = HTTPRequest(url: url, headers: ["Authorization": "Bearer \(token)", "Accept": "application/json"])
        return try await http.fetch(request, failure: error(for:)).json(service: "X", what: path)
    }

    /// X says when its rate limit resets as epoch seconds, and what a refusal means here.
    func error(for response: HTTPResponse) -> ProviderError {
        switch response.status {
        case 401: return .unauthorized("X refused the bearer token; set TWITTER_BEARER_TOKEN")
        case 403:
            let reason = ServiceReason.from(response.body) ?? "forbidden"
            return .unauthorized("\(reason) (your access level may not include this endpoint)")
        default: return .from(response, reset: RetryAfter.untilEpoch(response.header("x-rate-limit-reset"), now: now()))
        }
    }
}
