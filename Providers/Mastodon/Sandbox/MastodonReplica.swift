import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Sandbox

/// A Mastodon instance's public API: tag timelines, account lookup and statuses, statuses and
/// their context, trending tags, v2 search (with a token), Link-header paging and rate-limit
/// headers, over posts that use every kind of entity and every kind of text.
public struct MastodonReplica: SandboxReplica {
    public let id = "mastodon"
    let data = MastodonData()
    static let files = FileHosts(replica: "mastodon", hosts: ["files.mastodon.social"])

    public init() {}

    /// Text search needs a token; the replica accepts any.
    public func environment(baseURL: String) -> [String: String] { ["MASTODON_ACCESS_TOKEN": "sandbox-token"] }

    public func register(_ routes: SandboxRoutes) {
        Self.files.register(routes)
        let v1 = routes.group("api/v1")
        v1.get("timelines/tag/:tag") { request, context in
            let tag = (context.parameters.get("tag") ?? "").lowercased()
            return page(data.statuses.filter { $0.tags.contains(tag) }, request, path: "/api/v1/timelines/tag/\(tag)")
        }
        v1.get("accounts/lookup") { request, _ in
            let acct = (request.uri.queryParameters.get("acct").map { String($0) } ?? "").trimmingCharacters(
                in: CharacterSet(charactersIn: "@")
            ).lowercased()
            guard let account = data.accounts.first(where: { $0.username.lowercased() == acct }) else { return Self.notFound() }
            return Self.json(data.account(account), for: request)
        }
        v1.get("accounts/:id") { request, context in
            guard let account = data.accounts.first(where: { $0.id == context.parameters.get("id") }) else {
                return Self.notFound()
            }
            return Self.json(data.account(account), for: request)
        }
        v1.get("accounts/:id/statuses") { request, context in
            let id = context.parameters.get("id") ?? ""
            guard data.accounts.contains(where: { $0.id == id }) else { return Self.notFound() }
            return page(data.statuses.filter { $0.author == id }, request, path: "/api/v1/accounts/\(id)/statuses")
        }
        v1.get("statuses/:id") { request, context in
            guard let status = data.statuses.first(where: { $0.id == context.parameters.get("id") }) else {
                return Self.notFound()
            }
            return Self.json(data.json(status), for: request)
        }
        v1.get("statuses/:id/context") { request, context in
            let id = context.parameters.get("id") ?? ""
            guard data.statuses.contains(where: { $0.id == id }) else { return Self.notFound() }
            return Self.json(
                ["ancestors": [Any](), "descendants": data.statuses.filter { $0.replyTo == id }.map(data.json)], for: request)
        }
        v1.get("trends/tags") { request, _ in
            let limit = min(Int(request.uri.queryParameters.get("limit") ?? "10") ?? 10, 20)
            return Self.json(
                MastodonData.trending.prefix(limit).map { tag in
                    [
                        "name": tag, "url": "https://mastodon.social/tags/\(tag)",
                        "history": [
                            [
                                "day": "1763683200", "uses": String(data.statuses.filter { $0.tags.contains(tag) }.count),
                                "accounts": "7",
                            ]
                        ],
                    ]
                })
        }
        routes.group("api/v2").get("search") { request, _ in
            let query = request.uri.queryParameters
            let text = (query.get("q").map { String($0) } ?? "").lowercased()
            guard request.headers[.authorization]?.hasPrefix("Bearer ") == true else {
                return Self.json(["error": "The access token is invalid"], status: .unauthorized)
            }
            // A boost is found by the post it shows.
            let statuses = data.statuses.filter { ($0.boostOf.map { data.statuses[$0] } ?? $0).plain.lowercased().contains(text) }
                .prefix(20).map(data.json)
            return Self.json(["accounts": [Any](), "statuses": Array(statuses), "hashtags": [Any]()], for: request)
        }
    }

    /// Newest first; `max_id` pages to older posts and `min_id` back to newer, both in Link.
    private func page(_ all: [MastodonData.Status], _ request: Request, path: String) -> Response {
        let query = request.uri.queryParameters
        let limit = min(max(Int(query.get("limit") ?? "20") ?? 20, 1), 40)
        var slice: [MastodonData.Status]
        if let max = query.get("max_id").map { String($0) } {
            slice = Array(all.filter { MastodonData.compare($0.id, max) < 0 }.prefix(limit))
        } else if let min = query.get("min_id").map { String($0) } {
            slice = Array(all.filter { MastodonData.compare($0.id, min) > 0 }.suffix(limit))
        } else {
            slice = Array(all.prefix(limit))
        }
        var response = Self.json(slice.map(data.json), for: request)
        let base = "http://\(request.head.authority ?? "127.0.0.1")/mastodon\(path)"
        var links: [String] = []
        if let last = slice.last, all.contains(where: { MastodonData.compare($0.id, last.id) < 0 }) {
            links.append("<\(base)?limit=\(limit)&max_id=\(last.id)>; rel=\"next\"")
        }
        if let first = slice.first, all.contains(where: { MastodonData.compare($0.id, first.id) > 0 }) {
            links.append("<\(base)?limit=\(limit)&min_id=\(first.id)>; rel=\"prev\"")
        }
        if !links.isEmpty { response.headers[HTTPField.Name("Link")!] = links.joined(separator: ", ") }
        return response
    }

    static func notFound() -> Response { json(["error": "Record not found"], status: .notFound) }

    /// `request`: the body holds files' URLs, which point at the sandbox as it was reached.
    static func json(_ object: Any, status: HTTPResponse.Status = .ok, for request: Request? = nil) -> Response {
        var response = jsonResponse(request.map { files.localized(object, for: $0) } ?? object, status: status)
        response.headers[HTTPField.Name("X-RateLimit-Limit")!] = "300"
        response.headers[HTTPField.Name("X-RateLimit-Remaining")!] = "299"
        response.headers[HTTPField.Name("X-RateLimit-Reset")!] = ISO8601DateFormatter().string(
            from: Date().addingTimeInterval(300))
        return response
    }
}
