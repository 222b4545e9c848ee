import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// A Mastodon instance: `#tag` timelines, `@user` posts, trending tags as categories, and text
/// search with an access token. Posts carry their hashtags, mentions, links and media as entities.
public struct MastodonProvider: CompiledProvider {
    public static let descriptor = ProviderDescriptor(
        id: "mastodon", name: "Mastodon", kinds: [.post, .user],
        capabilities: [.categories, .browse, .search, .item, .children],
        configKeys: [
            .init(
                name: "instance", summary: "The Mastodon server", defaultValue: "https://mastodon.social",
                environment: ["MASTODON_INSTANCE"]),
            .init(
                name: "access_token", summary: "An access token (needed for text search)", secret: true,
                environment: ["MASTODON_ACCESS_TOKEN"]),
            .init(name: "base_url", summary: "The API's base URL when it differs from the instance (a proxy, the sandbox)"),
        ],
        auth: .optionalToken,
        notes: "Works without a token: #tags, @users, trending tags. Text search needs MASTODON_ACCESS_TOKEN.")

    static let pageSize = 20
    let base: URL
    let token: String?
    let http: any HTTPClient

    public init(context: ProviderContext) throws {
        let config = context.config.declared(by: Self.descriptor)
        // base_url, when set, is where the instance's API is reached (a proxy, the sandbox).
        base = try config.url(config["base_url"] == nil ? "instance" : "base_url")
        token = config["access_token"]
        http = context.http
    }

    public func categories() async throws -> [MediaCategory] {
        struct Trend: Decodable { @Lenient var name: String? }
        let (list, _): (LossyList<Trend>, HTTPResponse) = try await get("api/v1/trends/tags", ["limit": "20"])
        let trends = list.wrappedValue ?? []
        return trends.compactMap { $0.name.map { MediaCategory(id: $0, name: "#" + $0) } }
    }

    public func browse(category: String, cursor: Cursor?) async throws -> Page {
        try await timeline("api/v1/timelines/tag/\(Self.tag(category))", cursor: cursor)
    }

    /// `#tag`: the tag's timeline; `@user`: their posts; other words: text search (with a token).
    public func search(_ query: SearchQuery) async throws -> Page {
        let text = query.text.trimming(.whitespaces)
        if text.hasPrefix("#") { return try await timeline("api/v1/timelines/tag/\(Self.tag(text))", cursor: query.cursor) }
        if text.hasPrefix("@") {
            let user = try await lookup(String(text.dropFirst()))
            return try await timeline("api/v1/accounts/\(user.id ?? "")/statuses", cursor: query.cursor)
        }
        guard token != nil else {
            throw ProviderError.unsupported(
                "Mastodon searches #tags and @users without a token; text search needs MASTODON_ACCESS_TOKEN")
        }
        let (result, _): (MSearch, HTTPResponse) = try await get(
            "api/v2/search", ["q": text, "type": "statuses", "limit": String(Self.pageSize)])
        return Page(items: (result.statuses ?? []).compactMap(item(from:)))
    }

    public func item(_ id: ItemID) async throws -> MediaItem {
        switch id.kind {
        case .post:
            let (status, _): (MStatus, HTTPResponse) = try await get("api/v1/statuses/\(id.nativeID)", [:])
            guard let item = item(from: status) else { throw ProviderError.invalidResponse("a Mastodon status without an id") }
            return item
        case .user:
            let (account, _): (MAccount, HTTPResponse) = try await get("api/v1/accounts/\(id.nativeID)", [:])
            return item(from: account)
        default:
            throw ProviderError.unsupported("Mastodon has posts and users, not \(id.kind.rawValue)s")
        }
    }

    /// A user's posts; a post's replies.
    public func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        switch id.kind {
        case .user: return try await timeline("api/v1/accounts/\(id.nativeID)/statuses", cursor: cursor)
        case .post:
            let (context, _): (MContext, HTTPResponse) = try await get("api/v1/statuses/\(id.nativeID)/context", [:])
            return Page(items: (context.descendants ?? []).compactMap(item(from:)))
        default: throw ProviderError.unsupported("Mastodon \(id.kind.rawValue)s have no children")
        }
    }

    // MARK: Requests

    func lookup(_ acct: String) async throws -> MAccount {
        let (account, _): (MAccount, HTTPResponse) = try await get("api/v1/accounts/lookup", ["acct": acct])
        return account
    }

    /// A timeline page; cursors come from the Link header (`max:<id>` older, `min:<id>` newer).
    func timeline(_ path: String, cursor: Cursor?) async throws -> Page {
        var parameters = ["limit": String(Self.pageSize)]
        if let cursor {
            let parts = cursor.rawValue.split(separator: ":", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0] == "max" || parts[0] == "min" else {
                throw ProviderError.invalidArgument("cursor '\(cursor)' is not from a Mastodon timeline")
            }
            parameters["\(parts[0])_id"] = parts[1]
        }
        // A top-level list: a bad element costs that element only.
        let (list, response): (LossyList<MStatus>, HTTPResponse) = try await get(path, parameters)
        let statuses = list.wrappedValue ?? []
        let links = Self.links(response.header("link") ?? "")
        return Page(
            items: statuses.compactMap(item(from:)), next: links["next"].flatMap { Self.cursor($0, "max_id", "max") },
            prev: links["prev"].flatMap { Self.cursor($0, "min_id", "min") })
    }

    func get<T: Decodable>(_ path: String, _ parameters: [String: String]) async throws -> (T, HTTPResponse) {
        guard let url = base.endpoint(path, query: parameters) else {
            throw ProviderError.invalidArgument("cannot build a Mastodon URL for \(path)")
        }
        var headers = ["Accept": "application/json"]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        let response = try await http.fetch(HTTPRequest(url: url, headers: headers), failure: Self.error(for:))
        return (try response.json(service: "Mastodon", what: path), response)
    }

    /// Mastodon says when its rate limit resets as a date (`x-ratelimit-reset`).
    static func error(for response: HTTPResponse) -> ProviderError {
        let reset = response.header("x-ratelimit-reset").flatMap(ISODate.parse)
        return .from(response, reset: reset.map { min(RetryAfter.maximum, max(0, $0.timeIntervalSinceNow)) })
    }

    /// `<url>; rel="next", <url>; rel="prev"` -> ["next": url, "prev": url].
    static func links(_ header: String) -> [String: String] {
        var links: [String: String] = [:]
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimming(.whitespaces) }
            guard let target = pieces.first, target.hasPrefix("<"), target.hasSuffix(">"),
                let rel = pieces.dropFirst().first(where: { $0.hasPrefix("rel=") })
            else { continue }
            links[rel.dropFirst(4).trimming(.characters(in: "\""))] = String(
                target.dropFirst().dropLast())
        }
        return links
    }

    static func cursor(_ url: String, _ parameter: String, _ prefix: String) -> Cursor? {
        URLComponents(string: url)?.queryItems?.first { $0.name == parameter }?.value.map { Cursor("\(prefix):\($0)") }
    }

    static func tag(_ text: String) -> String {
        let tag = text.trimming(.characters(in: "# ")).lowercased()
        return tag.percentEncoded(allowing: .urlPathSegment)
    }
}
