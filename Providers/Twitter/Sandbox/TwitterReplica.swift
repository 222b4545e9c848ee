import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Sandbox

/// The X/Twitter API v2 endpoints a reader uses: recent search, user lookup by username, a
/// user's tweets, one tweet; expansions (authors, media), code-point entity offsets, token
/// paging, partial `errors` in successful answers, and 429 with x-rate-limit-reset.
public struct TwitterReplica: SandboxReplica {
    public let id = "twitter"
    let data = TwitterData()
    static let files = FileHosts(replica: "twitter", hosts: ["pbs.twimg.com"])

    public init() {}

    public func environment(baseURL: String) -> [String: String] { ["TWITTER_BEARER_TOKEN": "sandbox-bearer"] }

    public func register(_ routes: SandboxRoutes) {
        Self.files.register(routes)
        let api = routes.group("2")
        api.get("tweets/search/recent") { request, _ in
            try authorized(request) {
                let query = (request.uri.queryParameters.get("query").map { String($0) } ?? "").lowercased()
                if query.contains("ratelimit") {
                    var response = Self.json(
                        ["title": "Too Many Requests", "detail": "Too Many Requests", "type": "about:blank", "status": 429],
                        status: .tooManyRequests)
                    response.headers[HTTPField.Name("x-rate-limit-reset")!] = String(Int(Date().timeIntervalSince1970) + 7)
                    response.headers[HTTPField.Name("x-rate-limit-remaining")!] = "0"
                    return response
                }
                var terms = query.split(separator: " ").map(String.init)
                var conversation: String?
                if let term = terms.first(where: { $0.hasPrefix("conversation_id:") }) {
                    conversation = String(term.dropFirst("conversation_id:".count))
                    terms.removeAll { $0 == term }
                }
                let matches = data.tweets.filter { tweet in
                    if let conversation { return tweet.replyTo == conversation }
                    let text = tweet.text.lowercased()
                    return terms.allSatisfy { text.contains($0) }
                }
                return page(matches, request, partial: query.contains("partial"))
            }
        }
        api.get("users/by/username/:username") { request, context in
            try authorized(request) {
                let name = (context.parameters.get("username") ?? "").lowercased()
                return user(data.users.first { $0.username.lowercased() == name }, parameter: "username", value: name, request)
            }
        }
        api.get("users/:id") { request, context in
            try authorized(request) {
                let id = context.parameters.get("id") ?? ""
                return user(data.users.first { $0.id == id }, parameter: "id", value: id, request)
            }
        }
        api.get("users/:id/tweets") { request, context in
            try authorized(request) {
                let id = context.parameters.get("id") ?? ""
                return page(data.tweets.filter { $0.author == id }, request, partial: false)
            }
        }
        api.get("tweets/:id") { request, context in
            try authorized(request) {
                guard let tweet = data.tweets.first(where: { $0.id == context.parameters.get("id") }) else {
                    return Self.json([
                        "errors": [
                            [
                                "value": context.parameters.get("id") ?? "", "detail": "Could not find tweet with id.",
                                "title": "Not Found Error",
                                "resource_type": "tweet", "type": "https://api.twitter.com/2/problems/resource-not-found",
                            ]
                        ]
                    ])
                }
                return Self.json(["data": data.json(tweet), "includes": data.includes([tweet])], for: request)
            }
        }
    }

    /// The API answers 200 with only an errors array for a missing user.
    private func user(_ user: TwitterData.User?, parameter: String, value: String, _ request: Request) -> Response {
        guard let user else {
            return Self.json([
                "errors": [
                    [
                        "value": value, "detail": "Could not find user with \(parameter): [\(value)].",
                        "title": "Not Found Error",
                        "resource_type": "user", "parameter": parameter, "resource_id": value,
                        "type": "https://api.twitter.com/2/problems/resource-not-found",
                    ]
                ]
            ])
        }
        return Self.json(["data": data.user(user)], for: request)
    }

    private func authorized(_ request: Request, _ body: () throws -> Response) throws -> Response {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer "), !header.hasSuffix("bad") else {
            return Self.json(
                ["title": "Unauthorized", "type": "about:blank", "status": 401, "detail": "Unauthorized"], status: .unauthorized)
        }
        return try body()
    }

    static func token(_ offset: Int) -> String { "b26v89c" + String(offset, radix: 36) + "zq" }
    static func offset(_ token: String?) -> Int? {
        guard let token else { return 0 }
        guard token.hasPrefix("b26v89c"), token.hasSuffix("zq") else { return nil }
        return Int(token.dropFirst(7).dropLast(2), radix: 36)
    }

    private func page(_ tweets: [TwitterData.Tweet], _ request: Request, partial: Bool) -> Response {
        let query = request.uri.queryParameters
        let size = min(max(Int(query.get("max_results") ?? "10") ?? 10, 5), 100)
        guard let offset = Self.offset((query.get("next_token") ?? query.get("pagination_token")).map { String($0) }) else {
            return Self.json(
                [
                    "errors": [
                        ["parameters": ["next_token": [""]], "message": "The `next_token` query parameter value is not valid"]
                    ],
                    "title": "Invalid Request", "detail": "One or more parameters to your request was invalid.",
                    "type": "https://api.twitter.com/2/problems/invalid-request",
                ],
                status: .badRequest)
        }
        let slice = offset < tweets.count ? Array(tweets[offset..<min(offset + size, tweets.count)]) : []
        var meta: [String: Any] = ["result_count": slice.count]
        if let first = slice.first, let last = slice.last { meta["newest_id"] = first.id; meta["oldest_id"] = last.id }
        if offset + size < tweets.count { meta["next_token"] = Self.token(offset + size) }
        if offset > 0 { meta["previous_token"] = Self.token(max(0, offset - size)) }
        var body: [String: Any] = ["meta": meta]
        if !slice.isEmpty {
            body["data"] = slice.map(data.json)
            body["includes"] = data.includes(slice)
        }
        if partial {
            body["errors"] = [
                [
                    "value": "999", "detail": "Could not find media with key: [3_999].", "title": "Not Found Error",
                    "resource_type": "media",
                    "type": "https://api.twitter.com/2/problems/resource-not-found",
                ]
            ]
        }
        return Self.json(body, for: request)
    }

    /// `request`: the body holds files' URLs, which point at the sandbox as it was reached.
    static func json(_ object: Any, status: HTTPResponse.Status = .ok, for request: Request? = nil) -> Response {
        var response = jsonResponse(request.map { files.localized(object, for: $0) } ?? object, status: status)
        response.headers[HTTPField.Name("x-rate-limit-limit")!] = "450"
        return response
    }
}
