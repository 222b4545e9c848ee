import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// The session's access token was refused as expired or invalid: refresh it and try once more.
struct SessionExpired: Error {}

extension BlueskyProvider {
    /// A query. Logged in, it goes to the account's server with the session's token (refreshed
    /// when about to expire, or when refused as expired); otherwise to the public AppView.
    /// A session that can no longer be refreshed is set aside for calls that need no account,
    /// with a notice, and reported for those that do.
    func query<T: Decodable>(_ method: String, _ parameters: [String: String]) async throws -> T {
        guard let session = sessions.load() else {
            return try await send("GET", method, parameters, to: appView, token: nil)
        }
        do {
            return try await withFreshSession(session) { session in
                try await send("GET", method, parameters, to: try pds(session), token: session.accessToken)
            }
        } catch ProviderError.unauthorized(let why) where !Self.needsAccount(method) {
            logger.notice("bluesky: \(why); reading without the account")
            return try await send("GET", method, parameters, to: appView, token: nil)
        }
    }

    static func needsAccount(_ method: String) -> Bool {
        ["app.bsky.feed.searchPosts", "app.bsky.feed.getActorLikes"].contains(method)
    }

    /// Runs `body` with the session, refreshed first when it is about to expire and once more
    /// when the server refuses its token; a refresh is kept for the next call.
    func withFreshSession<T>(_ session: AuthSession, _ body: (AuthSession) async throws -> T) async throws -> T {
        var session = session
        if session.needsRefresh(now: now()) { session = try await refreshedAndKept(session) }
        do {
            return try await body(session)
        } catch is SessionExpired {
            session = try await refreshedAndKept(session)
            do {
                return try await body(session)
            } catch is SessionExpired {
                throw Self.loginAgain
            }
        }
    }

    /// One refresh at a time: refresh tokens are used once, so a second call refused with the same
    /// expired token takes the session the first one kept instead of refreshing it again.
    func refreshedAndKept(_ session: AuthSession) async throws -> AuthSession {
        try await refreshes.one {
            if let kept = sessions.load(), kept.accessToken != session.accessToken, !kept.needsRefresh(now: now()) {
                return kept
            }
            let fresh = try await refresh(session)
            try sessions.save(fresh)
            return fresh
        }
    }

    static let loginAgain = ProviderError.unauthorized(
        "your Bluesky session has ended (expired or revoked): run `login bluesky` again with an app password")

    /// The account's server: its PDS, as its DID document named it at login.
    func pds(_ session: AuthSession) throws -> URL {
        guard let text = session.values["pds"] else { return service }
        guard let url = Self.serverURL(text) else {
            throw ProviderError.unauthorized("the Bluesky session names no usable server; run `login bluesky` again")
        }
        return url
    }

    /// A server address from a DID document: https only (a token never crosses the network in
    /// clear), except on the loopback interface.
    static func serverURL(_ text: String) -> URL? {
        guard let url = URL(string: text.hasSuffix("/") ? String(text.dropLast()) : text), let host = url.host?.lowercased(),
            !host.isEmpty
        else { return nil }
        switch url.scheme?.lowercased() {
        case "https": return url
        case "http": return ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host) ? url : nil
        default: return nil
        }
    }

    /// One XRPC call. A refused session token (as expired or invalid) is `SessionExpired`;
    /// every other failure a typed `ProviderError` with the service's own words.
    func send<T: Decodable>(
        _ verb: String, _ method: String, _ parameters: [String: String] = [:], body: [String: Any]? = nil, to base: URL,
        token: String?
    ) async throws -> T {
        guard let url = base.endpoint("xrpc/\(method)", query: parameters) else {
            throw ProviderError.invalidArgument("cannot build a Bluesky URL for \(method)")
        }
        var headers = ["Accept": "application/json"]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        var data: Data?
        if let body {
            guard let json = JSONValue(plain: body) else {
                throw ProviderError.invalidArgument("a Bluesky request body that is not JSON")
            }
            data = Data(JSONWriter.bytes(json))
            headers["Content-Type"] = "application/json"
        }
        let response = try await http.send(HTTPRequest(method: verb, url: url, headers: headers, body: data))
        guard (200..<300).contains(response.status) else {
            let (code, _) = Self.reason(response)
            if token != nil, ["ExpiredToken", "InvalidToken"].contains(code) { throw SessionExpired() }
            throw error(for: response)
        }
        if T.self == Empty.self, response.body.isEmpty { return Empty() as! T }
        return try response.json(service: "Bluesky", what: method)
    }

    struct Empty: Decodable {}

    /// XRPC's error body: `{"error": "<Code>", "message": "…"}`.
    static func reason(_ response: HTTPResponse) -> (code: String?, message: String?) {
        struct Body: Decodable { @Lenient var error: String?; @Lenient var message: String? }
        let body = try? JSONDecoder().decode(Body.self, from: response.body)
        return (body?.error, body?.message.flatMap { $0.isEmpty ? nil : DisplayText.cut($0, to: 300) })
    }

    func error(for response: HTTPResponse) -> ProviderError {
        let (code, message) = Self.reason(response)
        let said = message ?? code ?? ServiceReason.from(response.body) ?? "no reason given"
        switch (response.status, code) {
        case (429, _):
            return .rateLimited(
                retryAfter: response.retryAfter ?? RetryAfter.untilEpoch(response.header("ratelimit-reset"), now: now()))
        case (_, "ExpiredToken"?), (_, "InvalidToken"?): return Self.loginAgain
        case (_, "AuthenticationRequired"?), (401, _):
            return .unauthorized("Bluesky refused: \(said)")
        case (_, "AccountTakedown"?), (_, "AccountDeactivated"?): return .unauthorized("Bluesky: \(said)")
        case (_, "BlockedActor"?), (_, "BlockedByActor"?):
            return .notFound("a block stands between you and that account (\(said))")
        case (_, "NotFound"?), (404, _): return .notFound(said)
        case (400, _)
        where said.hasPrefix("Profile not found") || said.contains("Unable to resolve handle")
            || said.hasPrefix("Could not find"):
            return .notFound(said)
        case (403, _):
            return .unauthorized("Bluesky refused this without an account (\(said)): run `login bluesky` with an app password")
        case (400, _): return .invalidArgument("Bluesky: \(said)")
        default: return .upstream(status: response.status, message: said)
        }
    }
}

/// Runs refreshes one after another.
actor RefreshQueue {
    private var running = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func one<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        while running { await withCheckedContinuation { waiting.append($0) } }
        running = true
        defer {
            running = false
            if !waiting.isEmpty { waiting.removeFirst().resume() }
        }
        return try await body()
    }
}
