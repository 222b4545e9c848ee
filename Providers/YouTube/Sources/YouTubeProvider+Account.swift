import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// The account: Google's OAuth 2.0 device flow for limited-input devices, and likes as favorites.
extension YouTubeProvider: AccountProvider {
    static let scope = "https://www.googleapis.com/auth/youtube"

    struct DeviceCode: Decodable {
        var device_code: String
        var user_code: String
        var verification_url: String?
        var verification_uri: String?
        var expires_in: Int?
        var interval: Int?
    }

    struct TokenAnswer: Decodable {
        var access_token: String?
        var refresh_token: String?
        var expires_in: Double?
        var error: String?
        var error_description: String?
    }

    public func login(_ credentials: LoginCredentials, prompt: @escaping @Sendable (AuthPrompt) async -> Void) async throws
        -> AuthSession
    {
        let (clientID, clientSecret) = try client()
        let device: DeviceCode = try await oauth("device/code", ["client_id": clientID, "scope": Self.scope])
        let expiresIn = device.expires_in ?? 1800
        await prompt(
            AuthPrompt(
                provider: "youtube", url: device.verification_url ?? device.verification_uri ?? "https://www.google.com/device",
                code: device.user_code, expiresIn: expiresIn))
        var interval = Double(max(1, device.interval ?? 5))
        let deadline = now().addingTimeInterval(Double(expiresIn))
        while now() < deadline {
            try await Task.sleep(for: .seconds(interval))
            let answer: TokenAnswer = try await oauth(
                "token",
                [
                    "client_id": clientID, "client_secret": clientSecret, "device_code": device.device_code,
                    "grant_type": "urn:ietf:params:oauth:grant-type:device_code",
                ], acceptErrors: true)
            switch answer.error {
            case nil:
                guard let access = answer.access_token else { throw ProviderError.invalidResponse("Google sent no access token") }
                var session = AuthSession(
                    provider: "youtube", accessToken: access, refreshToken: answer.refresh_token,
                    expiresAt: answer.expires_in.map { now().addingTimeInterval($0) })
                session.account = try? await accountName(session)
                return session
            case "authorization_pending": continue
            case "slow_down": interval += 5  // RFC 8628: wait five seconds longer from now on
            case "access_denied": throw ProviderError.unauthorized("the sign-in was denied on the device page")
            case "expired_token":
                throw ProviderError.unauthorized("the code expired before it was approved; run `login youtube` again")
            case let other?: throw ProviderError.unauthorized("Google refused the sign-in: \(answer.error_description ?? other)")
            }
        }
        throw ProviderError.unauthorized("the code expired before it was approved; run `login youtube` again")
    }

    public func refresh(_ session: AuthSession) async throws -> AuthSession {
        let (clientID, clientSecret) = try client()
        guard let refreshToken = session.refreshToken else {
            throw ProviderError.unauthorized("the YouTube session expired; run `login youtube`")
        }
        let answer: TokenAnswer = try await oauth(
            "token",
            ["client_id": clientID, "client_secret": clientSecret, "refresh_token": refreshToken, "grant_type": "refresh_token"],
            acceptErrors: true)
        guard let access = answer.access_token else {
            throw ProviderError.unauthorized(
                "the YouTube session can no longer be refreshed (\(answer.error ?? "no token")); run `login youtube`")
        }
        var refreshed = session
        refreshed.accessToken = access
        refreshed.refreshToken = answer.refresh_token ?? refreshToken
        refreshed.expiresAt = answer.expires_in.map { now().addingTimeInterval($0) }
        return refreshed
    }

    public func logout(_ session: AuthSession) async throws {
        let _: TokenAnswer = try await oauth("revoke", ["token": session.refreshToken ?? session.accessToken], acceptErrors: true)
    }

    /// A like on the account, or no rating.
    /// Only videos can be liked.
    public var accountFavoriteKinds: [MediaKind] { [.video] }

    public func setAccountFavorite(_ id: ItemID, _ favorite: Bool, session: AuthSession) async throws {
        guard id.kind == .video else { throw ProviderError.unsupported("only videos can be liked on YouTube") }
        _ = try await call(
            "videos/rate", ["id": id.nativeID, "rating": favorite ? "like" : "none"], session: session, method: "POST")
    }

    /// The account's liked videos.
    public func accountFavorites(cursor: Cursor?, session: AuthSession) async throws -> Page {
        var parameters = ["part": "snippet,contentDetails,statistics", "myRating": "like", "maxResults": String(Self.pageSize)]
        if let cursor { parameters["pageToken"] = cursor.rawValue }
        let list: YTList<YTVideo> = try await get("videos", parameters, session: session)
        return Page(
            items: (list.items ?? []).compactMap { item(from: $0) }, next: list.nextPageToken.map { Cursor($0) },
            prev: list.prevPageToken.map { Cursor($0) }, total: list.pageInfo?.totalResults)
    }

    private func accountName(_ session: AuthSession) async throws -> String? {
        let list: YTList<YTChannel> = try await get("channels", ["part": "snippet", "mine": "true"], session: session)
        return list.items?.first?.snippet?.title
    }

    private func client() throws -> (String, String) {
        guard let clientID, let clientSecret else {
            throw ProviderError.notConfigured(
                "`login youtube` needs an OAuth client: set providers.youtube.client_id and client_secret (a Google OAuth client of type 'TV and Limited Input devices')"
            )
        }
        return (clientID, clientSecret)
    }

    /// A form POST to Google's OAuth endpoint; errors in the body are answers when `acceptErrors`.
    private func oauth<T: Decodable>(_ path: String, _ form: [String: String], acceptErrors: Bool = false) async throws -> T {
        guard let url = oauthBase?.appendingPathComponent(path) else {
            throw ProviderError.notConfigured("providers.youtube.oauth_base_url is not a URL")
        }
        let body = form.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.formEncode($0.value))" }.joined(separator: "&")
        let response = try await http.send(
            HTTPRequest(
                method: "POST", url: url,
                headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
                body: Data(body.utf8)))
        guard (200..<300).contains(response.status) || acceptErrors else {
            throw ProviderError.upstream(status: response.status, message: "Google's OAuth endpoint refused \(path)")
        }
        if response.body.isEmpty, let empty = try? JSONDecoder().decode(T.self, from: Data("{}".utf8)) { return empty }
        do {
            return try JSONDecoder().decode(T.self, from: response.body)
        } catch {
            throw ProviderError.invalidResponse(
                "Google's OAuth endpoint answered \(path) with JSON that cannot be read (HTTP \(response.status))")
        }
    }

    static func formEncode(_ value: String) -> String { QueryEncoding.encode(value) }
}
