import Basics
import FoundationEssentials
import Glibc

/// A provider with user accounts: login, logout, token refresh, and favorites kept on the account.
public protocol AccountProvider: MediaProvider {
    /// Logs in. Device-code flows show the user what to do through `prompt` and return once the
    /// user approved (or throw `unauthorized` when denied or expired).
    func login(_ credentials: LoginCredentials, prompt: @escaping @Sendable (AuthPrompt) async -> Void) async throws
        -> AuthSession
    /// A fresh session from `session`'s refresh token.
    func refresh(_ session: AuthSession) async throws -> AuthSession
    /// Ends the session on the service (revokes its token).
    func logout(_ session: AuthSession) async throws
    /// Marks or unmarks an item as a favorite on the account (a like, an account favorite).
    func setAccountFavorite(_ id: ItemID, _ favorite: Bool, session: AuthSession) async throws
    /// The account's favorites, newest first.
    func accountFavorites(cursor: Cursor?, session: AuthSession) async throws -> Page
    /// The kinds of item the account keeps as favorites (YouTube likes videos, not channels);
    /// all the provider's kinds unless it says otherwise.
    var accountFavoriteKinds: [MediaKind] { get }
}

extension AccountProvider {
    public var accountFavoriteKinds: [MediaKind] { descriptor.kinds }
}

/// What a login takes: nothing for device flows, a username and password for session logins.
public struct LoginCredentials: Sendable {
    public var username: String?
    public var password: String?
    public init(username: String? = nil, password: String? = nil) {
        self.username = username
        self.password = password
    }
}

/// What a person must do to finish a device login (`auth.prompt`).
public struct AuthPrompt: Codable, Sendable, Equatable {
    public var provider: String
    /// Where to go.
    public var url: String
    /// What to enter there.
    public var code: String
    /// Seconds until the code expires.
    public var expiresIn: Int
    public var message: String

    public init(provider: String, url: String, code: String, expiresIn: Int) {
        self.provider = provider
        self.url = url
        self.code = code
        self.expiresIn = expiresIn
        message = "To sign in to \(provider), open \(url) and enter the code \(code)"
    }
}

/// A logged-in session, kept by the host in a file only the user can read.
public struct AuthSession: Codable, Sendable, Equatable {
    public var provider: String
    /// Who is logged in, when the service says.
    public var account: String?
    public var accessToken: String
    public var refreshToken: String?
    public var expiresAt: Date?
    /// Provider-specific values (e.g. an account id).
    public var values: [String: String]
    /// The provider's server settings when the login was made (its base URL, instance…): the
    /// host drops a session whose servers have changed since, saying why, rather than sending
    /// its tokens elsewhere or failing every call. Kept by the host; nil in older files.
    public var endpoints: [String: String]?

    public init(
        provider: String, account: String? = nil, accessToken: String, refreshToken: String? = nil, expiresAt: Date? = nil,
        values: [String: String] = [:]
    ) {
        self.provider = provider
        self.account = account
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.values = values
    }

    /// Expired, or about to (within a minute).
    public func needsRefresh(now: Date = Date()) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) < 60
    }
}

/// The logged-in session, for a provider's own calls that need it (Bluesky's search goes to the
/// account's server with its token). The host keeps it in the same 0600 file as `auth.login`
/// wrote; a provider that refreshes its tokens saves the new session here.
public protocol SessionKeeper: Sendable {
    /// The session, or nil when not logged in.
    func load() -> AuthSession?
    /// Keeps a refreshed session (and tells the host its new tokens are secrets).
    func save(_ session: AuthSession) throws
}

/// No account: what a provider is given outside a host (tests, `plugin check`).
public struct NoSessions: SessionKeeper {
    public init() {}
    public func load() -> AuthSession? { nil }
    public func save(_ session: AuthSession) throws {}
}
