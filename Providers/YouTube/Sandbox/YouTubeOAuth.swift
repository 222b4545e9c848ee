import Foundation
import Hummingbird
import NIOCore
import Sandbox
import Synchronization

/// Google's OAuth 2.0 device flow for limited-input devices, as oauth2.googleapis.com answers
/// it, plus the account state behind ratings. The sandbox approves a device code by itself
/// after `approveAfter` seconds (or denies it), so a login runs end to end offline.
public final class YouTubeAccounts: Sendable {
    struct Device {
        var userCode: String
        var created: Date
        var expires: Date
        var interval: Double
        var lastPoll: Date?
        var consumed = false
        var polls = 0
        var slowDowns = 0
    }

    struct State {
        var approveAfter: Double = 2
        /// Polls answered "pending" before approval, whatever the time (tests that must see
        /// polling happen, on a machine of any speed).
        var pendingPolls = 0
        /// Polls answered "slow_down" first, however far apart (tests of the client's back-off
        /// on a machine of any speed).
        var slowDownPolls = 0
        var deny = false
        var codeLifetime: Double = 300
        var tokenLifetime: Double = 3600
        var interval: Double = 1
        /// The interval enforced, when it differs from the one advertised (to provoke slow_down).
        var enforcedInterval: Double?
        var devices: [String: Device] = [:]
        var accessTokens: [String: Date] = [:]
        var refreshTokens: Set<String> = []
        /// Tokens of an earlier run revoked in this one.
        var revoked: Set<String> = []
        /// Every token this run made: only others are an earlier run's.
        var issued: Set<String> = []
        /// Liked videos, newest first.
        var likes: [String] = []
        var counter = 0
    }

    let state = Mutex(State())

    /// Changes how the next logins behave (tests): approval delay, denial, lifetimes.
    public func configure(
        approveAfter: Double? = nil, deny: Bool? = nil, codeLifetime: Double? = nil, tokenLifetime: Double? = nil,
        interval: Double? = nil,
        enforcedInterval: Double? = nil, pendingPolls: Int? = nil, slowDownPolls: Int? = nil
    ) {
        state.withLock { state in
            if let slowDownPolls { state.slowDownPolls = slowDownPolls }
            if let pendingPolls { state.pendingPolls = pendingPolls }
            if let enforcedInterval { state.enforcedInterval = enforcedInterval }
            if let approveAfter { state.approveAfter = approveAfter }
            if let deny { state.deny = deny }
            if let codeLifetime { state.codeLifetime = codeLifetime }
            if let tokenLifetime { state.tokenLifetime = tokenLifetime }
            if let interval { state.interval = interval }
        }
    }

    public var likes: [String] { state.withLock { $0.likes } }

    /// Invalidates every access token, as their expiry would (refresh tokens stay valid).
    public func expireAccessTokens() { state.withLock { $0.accessTokens = [:] } }

    /// Whether `request` carries a live access token.
    func authorized(_ request: Request) -> Bool {
        guard let header = request.headers[.authorization], header.hasPrefix("Bearer ") else { return false }
        let token = String(header.dropFirst(7))
        return state.withLock { state in
            let earlier = state.issued.contains(token) ? nil : Self.earlierExpiry(token)
            guard let expiry = state.accessTokens[token] ?? earlier, !state.revoked.contains(token) else {
                return false
            }
            return expiry > Date()
        }
    }

    /// A new access token, naming when it ends, so a sandbox restarted on the same port still
    /// takes the tokens a login in its data dir kept (`earlierExpiry`).
    static func newAccessToken(lifetime: Double) -> (token: String, expires: Date) {
        let expires = Date().addingTimeInterval(lifetime)
        return ("ya29.sandbox-\(Int(expires.timeIntervalSince1970))-\(UUID().uuidString)", expires)
    }

    /// When an access token of an earlier run ends.
    static func earlierExpiry(_ token: String) -> Date? {
        guard token.hasPrefix("ya29.sandbox-"), let seconds = Int(token.dropFirst(13).prefix { $0.isNumber }) else {
            return nil
        }
        return Date(timeIntervalSince1970: Double(seconds))
    }

    func like(_ id: String, _ rating: String) {
        state.withLock { state in
            state.likes.removeAll { $0 == id }
            if rating == "like" { state.likes.insert(id, at: 0) }
        }
    }

    func register(_ routes: SandboxRoutes) {
        let oauth = routes.group("oauth2")
        oauth.post("device/code") { request, _ in
            let form = try await Self.form(request)
            guard let client = form["client_id"], !client.isEmpty else {
                return Self.oauthError(401, "invalid_client", "The OAuth client was not found.")
            }
            let (device, user, lifetime, interval) = self.state.withLock { state -> (String, String, Double, Double) in
                state.counter += 1
                let device = "AH-device-\(state.counter)-\(UUID().uuidString.prefix(8))"
                let user = String(format: "SBX-%03d", state.counter % 1000)
                state.devices[device] = Device(
                    userCode: user, created: Date(), expires: Date().addingTimeInterval(state.codeLifetime),
                    interval: state.enforcedInterval ?? state.interval)
                return (device, user, state.codeLifetime, state.interval)
            }
            return Self.json([
                "device_code": device, "user_code": user, "verification_url": "https://www.google.com/device",
                "expires_in": Int(lifetime), "interval": Int(interval.rounded(.up)),
            ])
        }
        oauth.post("token") { request, _ in
            let form = try await Self.form(request)
            switch form["grant_type"] {
            case "urn:ietf:params:oauth:grant-type:device_code":
                return self.poll(form["device_code"] ?? "", client: form["client_id"], secret: form["client_secret"])
            case "refresh_token":
                let refresh = form["refresh_token"] ?? ""
                let (access, lifetime) = self.state.withLock { state -> (String?, Double) in
                    // This run's, or an earlier run's that was not revoked here.
                    guard
                        state.refreshTokens.contains(refresh)
                            || (refresh.hasPrefix("1//sandbox-refresh-") && !state.revoked.contains(refresh)
                                && !state.issued.contains(refresh))
                    else { return (nil, 0) }
                    let (access, expires) = Self.newAccessToken(lifetime: state.tokenLifetime)
                    state.accessTokens[access] = expires
                    state.issued.insert(access)
                    return (access, state.tokenLifetime)
                }
                guard let access else { return Self.oauthError(400, "invalid_grant", "Token has been expired or revoked.") }
                return Self.json([
                    "access_token": access, "expires_in": Int(lifetime), "scope": "https://www.googleapis.com/auth/youtube",
                    "token_type": "Bearer",
                ])
            default:
                return Self.oauthError(400, "unsupported_grant_type", "Invalid grant_type.")
            }
        }
        oauth.post("revoke") { request, _ in
            let form = try await Self.form(request)
            let token = form["token"] ?? request.uri.queryParameters.get("token") ?? ""
            let known = self.state.withLock { state in
                let known = state.accessTokens.removeValue(forKey: token) != nil || state.refreshTokens.remove(token) != nil
                let earlier =
                    !state.issued.contains(token) && (Self.earlierExpiry(token) != nil || token.hasPrefix("1//sandbox-refresh-"))
                if earlier { state.revoked.insert(token) }
                return known || earlier
            }
            return known ? Response(status: .ok) : Self.oauthError(400, "invalid_token", "Token expired or revoked")
        }
    }

    private func poll(_ code: String, client: String?, secret: String?) -> Response {
        guard client?.isEmpty == false, secret?.isEmpty == false else {
            return Self.oauthError(401, "invalid_client", "Unauthorized")
        }
        enum Answer { case pending, slowDown, denied, expired, unknown, tokens(String, String, Double) }
        let answer: Answer = state.withLock { state in
            guard var device = state.devices[code], !device.consumed else { return .unknown }
            let now = Date()
            defer { state.devices[code] = device }
            if now > device.expires { return .expired }
            let since = device.lastPoll ?? device.created
            if now.timeIntervalSince(since) < device.interval * 0.9 || device.slowDowns < state.slowDownPolls {
                device.slowDowns += 1
                device.lastPoll = now
                return .slowDown
            }
            device.lastPoll = now
            device.polls += 1
            if now.timeIntervalSince(device.created) < state.approveAfter || device.polls <= state.pendingPolls {
                return .pending
            }
            if state.deny { return .denied }
            device.consumed = true
            let (access, expires) = Self.newAccessToken(lifetime: state.tokenLifetime)
            let refresh = "1//sandbox-refresh-\(UUID().uuidString)"
            state.accessTokens[access] = expires
            state.issued.formUnion([access, refresh])
            state.refreshTokens.insert(refresh)
            return .tokens(access, refresh, state.tokenLifetime)
        }
        switch answer {
        case .pending: return Self.oauthError(428, "authorization_pending", "Precondition Required")
        case .slowDown: return Self.oauthError(403, "slow_down", "Forbidden")
        case .denied: return Self.oauthError(403, "access_denied", "Forbidden")
        case .expired: return Self.oauthError(400, "expired_token", "Bad Request")
        case .unknown: return Self.oauthError(400, "invalid_grant", "Malformed auth code.")
        case .tokens(let access, let refresh, let lifetime):
            return Self.json([
                "access_token": access, "expires_in": Int(lifetime), "refresh_token": refresh,
                "scope": "https://www.googleapis.com/auth/youtube", "token_type": "Bearer",
            ])
        }
    }

    static func form(_ request: Request) async throws -> [String: String] {
        var request = request
        let buffer = try await request.collectBody(upTo: 64 * 1024)
        let text = String(buffer: buffer)
        var values: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if parts.count == 2 { values[parts[0]] = parts[1] }
        }
        return values
    }

    static func oauthError(_ status: Int, _ error: String, _ description: String) -> Response {
        json(["error": error, "error_description": description], status: .init(code: status))
    }

    static func json(_ object: Any, status: HTTPResponse.Status = .ok) -> Response {
        jsonResponse(object, status: status, contentType: "application/json; charset=utf-8")
    }
}
