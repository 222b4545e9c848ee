import Foundation
import HTTPTypes
import Hummingbird
import MediaKit
import NIOCore
import Sandbox
import Synchronization

/// Bluesky's public AppView, the bsky.social entryway, a PDS and the PLC directory in one:
/// `xrpc/…` answers without an account (post search refused, as the public AppView does),
/// `pds/xrpc/…` with a session (app password login, token refresh that rotates, likes), and
/// `plc/<did>` the accounts' DID documents naming that PDS. Rate-limit headers on every answer;
/// `POST control/expire` makes every access token expired, to test refreshing.
public struct BlueskyReplica: SandboxReplica {
    public let id = "bluesky"
    let data = BlueskyData()
    let state = SessionState()
    static let files = FileHosts(replica: "bluesky", hosts: ["cdn.bsky.app"])

    final class SessionState: Sendable {
        private let mutex = Mutex(Sessions())
        func withLock<T: Sendable>(_ body: (inout Sessions) -> T) -> T { mutex.withLock { body(&$0) } }
    }

    struct Sessions {
        var access: [String: String] = [:]
        var refresh: [String: String] = [:]
        var expired: Set<String> = []
        /// Tokens of an earlier run that were used up here (a refresh) or revoked.
        var ended: Set<String> = []
        /// Every token this run made: only others are an earlier run's (this run's are known
        /// by `access` and `refresh`, which tests empty to revoke them).
        var issued: Set<String> = []
        var counter = 0
        /// Likes by account DID: post URI -> like record URI.
        var likes: [String: [String: String]] = [:]
    }

    public init() {}

    public func register(_ routes: SandboxRoutes) {
        Self.files.register(routes)
        for (prefix, pds) in [("xrpc", false), ("pds/xrpc", true)] {
            routes.get("\(prefix)/:method") { request, context in
                handle(context.parameters.get("method") ?? "", request, body: [:], pds: pds)
            }
            routes.post("\(prefix)/:method") { request, context in
                let buffer = try await request.body.collect(upTo: 1 << 20)
                let body = (try? JSONSerialization.jsonObject(with: Data(buffer: buffer))) as? [String: Any] ?? [:]
                return handle(context.parameters.get("method") ?? "", request, body: body, pds: pds)
            }
        }
        routes.get("plc/:did") { request, context in
            let did = context.parameters.get("did") ?? ""
            guard let account = BlueskyData.accounts.first(where: { $0.did == did }) else {
                return jsonResponse(["message": "DID not registered: \(did)"], status: .notFound)
            }
            return jsonResponse([
                "id": did, "alsoKnownAs": ["at://\(account.handle)"],
                "service": [
                    [
                        "id": "#atproto_pds", "type": "AtprotoPersonalDataServer",
                        "serviceEndpoint": "\(Self.base(request))/pds",
                    ]
                ],
            ])
        }
        routes.get("video/:name/playlist.m3u8") { _, _ in
            let playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:3\n#EXTINF:3.0,\nsegment.wav\n#EXT-X-ENDLIST\n"
            return Response(
                status: .ok, headers: [.contentType: "application/vnd.apple.mpegurl"],
                body: .init(byteBuffer: ByteBuffer(string: playlist)))
        }
        routes.get("video/:name/segment.wav") { request, context in
            MediaFile.wave(seconds: 3, etag: "\"bluesky-video\"").response(
                to: request, bytesPerSecond: context.mediaBytesPerSecond)
        }
        routes.get("video/:name/thumbnail.jpg") { request, _ in
            Response(
                status: .ok, headers: [.contentType: "image/png"],
                body: .init(byteBuffer: ByteBuffer(bytes: SandboxPicture.png(for: request.uri.path))))
        }
        routes.post("control/expire") { _, _ in
            state.withLock { $0.expired.formUnion($0.access.keys) }
            return Response(status: .noContent)
        }
    }

    /// A token this replica made in an earlier run (a sandbox restarted on the same port, whose
    /// data dir kept the login): its account from the payload, and for an access token whether
    /// its two hours are over, so the session goes on as it would on a real server.
    static func earlierSession(_ token: String, refresh: Bool) -> (did: String, expired: Bool)? {
        let parts = token.split(separator: ".")
        guard parts.count == 3, parts[2].hasPrefix(refresh ? "sbxrefresh" : "sbxaccess") else { return nil }
        var payload = String(parts[1])
        while payload.count % 4 != 0 { payload += "=" }
        guard let data = Data(base64Encoded: payload),
            let claims = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let did = claims["sub"] as? String, BlueskyData.account(did) != nil
        else { return nil }
        let expiry = (claims["exp"] as? NSNumber)?.doubleValue ?? 0
        return (did, !refresh && expiry < Date().timeIntervalSince1970)
    }

    static func base(_ request: Request) -> String { "http://\(request.head.authority ?? "127.0.0.1")/bluesky" }

    // MARK: XRPC

    func handle(_ method: String, _ request: Request, body: [String: Any], pds: Bool) -> Response {
        let query = request.uri.queryParameters
        func parameter(_ name: String) -> String? { query.get(name).map { String($0) } }
        let base = Self.base(request)
        // Who is asking: nobody, an account, or a token the server refuses.
        var viewer: String?
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
            let token = String(header.dropFirst(7))
            let refreshing = ["com.atproto.server.refreshSession", "com.atproto.server.deleteSession"].contains(method)
            let (did, expired) = state.withLock { state in
                (
                    refreshing ? state.refresh[token] : state.access[token],
                    state.expired.contains(token)
                )
            }
            let issuedHere = state.withLock { $0.issued.contains(token) }
            let earlier = did == nil && !issuedHere ? Self.earlierSession(token, refresh: refreshing) : nil
            if let earlier, earlier.expired { return Self.error(400, "ExpiredToken", "Token has expired") }
            if expired { return Self.error(400, "ExpiredToken", "Token has expired") }
            guard let did = did ?? earlier.flatMap({ state.withLock { $0.ended }.contains(token) ? nil : $0.did }) else {
                return Self.error(401, "InvalidToken", "Token could not be verified")
            }
            viewer = did
        }
        let likes = viewer.map { did in state.withLock { $0.likes[did] ?? [:] } } ?? [:]
        func page(_ indexes: [Int], key: String = "feed", wrap: Bool = true) -> Response {
            let limit = min(max(Int(parameter("limit") ?? "50") ?? 50, 1), 100)
            let offset = parameter("cursor").flatMap(Int.init) ?? 0
            let slice = Array(indexes.dropFirst(offset).prefix(limit))
            var answer: [String: Any] = [
                key: slice.map { index -> [String: Any] in
                    let view = data.view(index, base: base, liked: likes[data.uri(data.posts[index])])
                    guard wrap else { return view }
                    var item: [String: Any] = ["post": view]
                    if let by = data.posts[index].repostedBy {
                        item["reason"] = [
                            "$type": "app.bsky.feed.defs#reasonRepost", "by": data.profile(by),
                            "indexedAt": "2025-11-23T10:00:00.000Z",
                        ]
                    }
                    return item
                }
            ]
            if offset + limit < indexes.count { answer["cursor"] = String(offset + limit) }
            return json(answer, request)
        }
        switch method {
        case "com.atproto.server.createSession":
            let identifier = (body["identifier"] as? String ?? "").lowercased()
            guard
                let account = BlueskyData.account(identifier)
                    ?? BlueskyData.accounts.firstIndex(where: { identifier == "\($0.handle)@mail.test" }),
                body["password"] as? String == BlueskyData.appPassword
            else { return Self.error(401, "AuthenticationRequired", "Invalid identifier or password") }
            return json(newSession(account, base: base), request)
        case "com.atproto.server.refreshSession":
            guard let did = viewer, let index = BlueskyData.account(did) else {
                return Self.error(401, "AuthenticationRequired", "")
            }
            let token = String(request.headers[.authorization]?.dropFirst(7) ?? "")
            // Refresh tokens are used once.
            state.withLock {
                _ = $0.refresh.removeValue(forKey: token)
                $0.ended.insert(token)
            }
            return json(newSession(index, base: base, document: false), request)
        case "com.atproto.server.deleteSession":
            let token = String(request.headers[.authorization]?.dropFirst(7) ?? "")
            state.withLock { state in
                state.refresh[token] = nil
                state.ended.insert(token)
                for (access, did) in state.access where did == viewer { state.access[access] = nil }
            }
            return Response(status: .ok)
        case "com.atproto.identity.resolveHandle":
            guard let index = BlueskyData.account(parameter("handle") ?? ""), !(parameter("handle") ?? "").hasPrefix("did:")
            else {
                return Self.error(400, "InvalidRequest", "Unable to resolve handle")
            }
            return json(["did": BlueskyData.accounts[index].did], request)
        case "app.bsky.actor.getProfile":
            guard let index = BlueskyData.account(parameter("actor") ?? "") else {
                return Self.error(400, "InvalidRequest", "Profile not found")
            }
            return json(data.profile(index, detailed: true), request)
        case "app.bsky.actor.searchActors":
            let text = (parameter("q") ?? "").lowercased()
            let found = BlueskyData.accounts.indices.filter {
                let account = BlueskyData.accounts[$0]
                return account.handle.contains(text) || account.name.lowercased().contains(text)
            }
            return json(["actors": found.map { data.profile($0, detailed: true) }], request)
        case "app.bsky.unspecced.getPopularFeedGenerators":
            return json(
                [
                    "feeds": BlueskyData.feeds.map { feed in
                        [
                            "uri": BlueskyData.feedURI(feed), "cid": "bafyreifeed\(feed.rkey)",
                            "did": "did:web:feeds.sandbox.test", "creator": data.profile(BlueskyData.feedOwner),
                            "displayName": feed.name, "description": feed.about, "likeCount": 42,
                            "indexedAt": "2025-11-01T10:00:00.000Z",
                        ] as [String: Any]
                    }
                ], request)
        case "app.bsky.feed.getFeed":
            guard let feed = BlueskyData.feeds.first(where: { BlueskyData.feedURI($0) == parameter("feed") }) else {
                return Self.error(400, "UnknownFeed", "Unknown feed generator")
            }
            return page(data.posts.indices.filter { feed.tag == nil || data.tags(data.posts[$0]).contains(feed.tag!) })
        case "app.bsky.feed.getListFeed":
            guard parameter("list") == BlueskyData.listURI else { return Self.error(400, "InvalidRequest", "List not found") }
            return page(data.posts.indices.filter { BlueskyData.listMembers.contains(data.posts[$0].author) })
        case "app.bsky.feed.getAuthorFeed":
            guard let index = BlueskyData.account(parameter("actor") ?? "") else {
                return Self.error(400, "InvalidRequest", "Profile not found")
            }
            let filter = parameter("filter") ?? "posts_with_replies"
            let replies = filter == "posts_with_replies"
            if filter == "posts_with_media" || filter == "posts_with_video" {
                return page(
                    data.posts.indices.filter {
                        let post = data.posts[$0]
                        guard post.author == index, let embed = post.embed else { return false }
                        if case .video = embed { return true }
                        if case .images = embed { return filter == "posts_with_media" }
                        return false
                    })
            }
            return page(
                data.posts.indices.filter {
                    let post = data.posts[$0]
                    let own = post.author == index || post.repostedBy == index
                    let threadOfTheirs = post.replyTo.map { data.posts[data.rootOf($0)].author == index } ?? true
                    return own && (replies || threadOfTheirs)
                })
        case "app.bsky.feed.getPosts":
            let uris = query[values: "uris"].map(String.init)
            return json(
                [
                    "posts": uris.compactMap(data.index(ofURI:)).map {
                        data.view($0, base: base, liked: likes[data.uri(data.posts[$0])])
                    }
                ],
                request)
        case "app.bsky.feed.getPostThread":
            guard let index = data.index(ofURI: parameter("uri") ?? "") else {
                return Self.error(400, "NotFound", "Post not found: \(parameter("uri") ?? "")")
            }
            return json(
                ["thread": data.thread(index, depth: Int(parameter("depth") ?? "6") ?? 6, base: base, likes: likes)], request)
        case "app.bsky.feed.searchPosts":
            guard viewer != nil else { return Self.error(403, "Forbidden", "Forbidden") }
            let text = (parameter("q") ?? "").lowercased()
            let words = text.split(separator: " ")
            return page(
                data.posts.indices.filter { index in words.allSatisfy { data.posts[index].text.lowercased().contains($0) } },
                key: "posts", wrap: false)
        case "app.bsky.feed.getActorLikes":
            guard let did = viewer else { return Self.error(401, "AuthenticationRequired", "Authentication Required") }
            guard BlueskyData.account(parameter("actor") ?? "").map({ BlueskyData.accounts[$0].did }) == did else {
                return Self.error(400, "InvalidRequest", "Profile not found")
            }
            return page(likes.keys.compactMap(data.index(ofURI:)).sorted())
        case "com.atproto.repo.createRecord":
            guard pds, let did = viewer else { return Self.error(401, "AuthenticationRequired", "Authentication Required") }
            guard body["repo"] as? String == did, body["collection"] as? String == "app.bsky.feed.like",
                let record = body["record"] as? [String: Any], let subject = record["subject"] as? [String: Any],
                let uri = subject["uri"] as? String, let index = data.index(ofURI: uri),
                subject["cid"] as? String == data.cid(index)
            else { return Self.error(400, "InvalidRequest", "Invalid app.bsky.feed.like record") }
            let like = state.withLock { state in
                state.counter += 1
                let like = "at://\(did)/app.bsky.feed.like/3lsbxlike\(state.counter)"
                state.likes[did, default: [:]][uri] = like
                return like
            }
            return json(["uri": like, "cid": "bafyreilike", "validationStatus": "valid"], request)
        case "com.atproto.repo.deleteRecord":
            guard pds, let did = viewer else { return Self.error(401, "AuthenticationRequired", "Authentication Required") }
            let rkey = body["rkey"] as? String ?? ""
            state.withLock { state in
                state.likes[did] = state.likes[did]?.filter { !$0.value.hasSuffix("/" + rkey) }
            }
            return json(["commit": ["cid": "bafyreicommit", "rev": "3lsbxrev"]], request)
        default:
            return Self.error(501, "MethodNotImplemented", "Method Not Implemented")
        }
    }

    func newSession(_ index: Int, base: String, document: Bool = true) -> [String: Any] {
        let account = BlueskyData.accounts[index]
        let (access, refresh) = state.withLock { state in
            state.counter += 1
            let payload = Data(
                #"{"scope":"com.atproto.appPass","sub":"\#(account.did)","exp":\#(Int(Date().timeIntervalSince1970) + 7200)}"#
                    .utf8
            )
            .base64EncodedString().replacingOccurrences(of: "=", with: "")
            let access = "eyJhbGciOiJFUzI1NksifQ.\(payload).sbxaccess\(state.counter)"
            let refresh = "eyJhbGciOiJFUzI1NksifQ.\(payload).sbxrefresh\(state.counter)"
            state.access[access] = account.did
            state.refresh[refresh] = account.did
            state.issued.formUnion([access, refresh])
            return (access, refresh)
        }
        var session: [String: Any] = [
            "did": account.did, "handle": account.handle, "accessJwt": access, "refreshJwt": refresh, "active": true,
        ]
        if document {
            session["didDoc"] = [
                "id": account.did,
                "service": [["id": "#atproto_pds", "type": "AtprotoPersonalDataServer", "serviceEndpoint": "\(base)/pds"]],
            ]
        }
        return session
    }

    func json(_ object: Any, _ request: Request) -> Response {
        var response = jsonResponse(Self.files.localized(object, for: request))
        Self.limits(&response)
        return response
    }

    static func error(_ status: Int, _ code: String, _ message: String) -> Response {
        var response = jsonResponse(["error": code, "message": message], status: HTTPResponse.Status(code: status))
        limits(&response)
        return response
    }

    static func limits(_ response: inout Response) {
        response.headers[HTTPField.Name("RateLimit-Limit")!] = "3000"
        response.headers[HTTPField.Name("RateLimit-Remaining")!] = "2999"
        response.headers[HTTPField.Name("RateLimit-Reset")!] = String(Int(Date().timeIntervalSince1970) + 300)
        response.headers[HTTPField.Name("RateLimit-Policy")!] = "3000;w=300"
    }
}
