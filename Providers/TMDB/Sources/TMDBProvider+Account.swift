import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// TMDB's user login: request token -> validate with login -> session -> account.
extension TMDBProvider: AccountProvider {
    struct RequestToken: Decodable { var success: Bool?; var request_token: String? }
    struct Session: Decodable { var success: Bool?; var session_id: String? }
    struct Account: Decodable { var id: Int?; var username: String?; var name: String? }

    public func login(_ credentials: LoginCredentials, prompt: @escaping @Sendable (AuthPrompt) async -> Void) async throws
        -> AuthSession
    {
        guard let username = credentials.username, !username.isEmpty, let password = credentials.password else {
            throw ProviderError.invalidArgument("TMDB login needs a username and a password")
        }
        let token: RequestToken = try await get("authentication/token/new", [:])
        guard let requestToken = token.request_token else { throw ProviderError.invalidResponse("TMDB sent no request token") }
        let validated: RequestToken = try decode(
            try await send(
                "POST", "authentication/token/validate_with_login", [:],
                body: ["username": username, "password": password, "request_token": requestToken]))
        let session: Session = try decode(
            try await send(
                "POST", "authentication/session/new", [:], body: ["request_token": validated.request_token ?? requestToken]))
        guard let sessionID = session.session_id else { throw ProviderError.unauthorized("TMDB did not open a session") }
        let probe = AuthSession(provider: "tmdb", accessToken: sessionID)
        let account: Account = try await get("account", [:], session: probe)
        guard let accountID = account.id else { throw ProviderError.invalidResponse("TMDB sent no account id") }
        return AuthSession(
            provider: "tmdb", account: account.username ?? account.name, accessToken: sessionID,
            values: ["account_id": String(accountID)])
    }

    /// TMDB sessions do not expire on their own.
    public func refresh(_ session: AuthSession) async throws -> AuthSession {
        throw ProviderError.unauthorized("the TMDB session is no longer valid; run `login tmdb`")
    }

    public func logout(_ session: AuthSession) async throws {
        _ = try await send("DELETE", "authentication/session", [:], body: ["session_id": session.accessToken])
    }

    public func setAccountFavorite(_ id: ItemID, _ favorite: Bool, session: AuthSession) async throws {
        guard id.kind == .movie, let movie = Int(id.nativeID) else {
            throw ProviderError.unsupported("only movies are TMDB favorites")
        }
        _ = try await send(
            "POST", "account/\(try accountID(session))/favorite", [:],
            body: ["media_type": "movie", "media_id": movie, "favorite": favorite],
            session: session)
    }

    public func accountFavorites(cursor: Cursor?, session: AuthSession) async throws -> Page {
        try await movies(
            "account/\(try accountID(session))/favorite/movies",
            ["language": language, "page": String(try Self.page(cursor)), "sort_by": "created_at.desc"], session: session)
    }

    private func accountID(_ session: AuthSession) throws -> String {
        guard let id = session.values["account_id"] else {
            throw ProviderError.unauthorized("the TMDB session has no account; run `login tmdb`")
        }
        return id
    }
}
