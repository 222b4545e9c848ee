import JSONRPC
import MediaKit

/// Login state of every provider with accounts, or of one.
public struct AuthStatus: APIMethod {
    public static let method = "auth.status"
    public static let effect = MethodEffect(.reads)
    public typealias Response = [AuthStatusEntry]
    public var provider: String?

    public init(provider: String? = nil) {
        self.provider = provider
    }
}

/// Logs in to a provider. Device flows send an `auth.prompt` notification (and the REPL shows
/// it) and answer once the user approved; session logins take a username and password, which
/// are never stored or returned.
public struct AuthLogin: APIMethod {
    public static let method = "auth.login"
    public static let effect = MethodEffect(.changes, idempotent: false, reachesOut: true)
    /// A device login waits for a person to approve it, for minutes.
    public static var hasDeadline: Bool { false }
    public typealias Response = AuthStatusEntry
    public var provider: String
    public var username: String?
    public var password: String?

    public init(provider: String, username: String? = nil, password: String? = nil) {
        self.provider = provider
        self.username = username
        self.password = password
    }

    public var secretsInFlight: [String] { password.map { [$0] } ?? [] }
}

/// Logs out: revokes the session on the service (best effort) and forgets it here.
public struct AuthLogout: APIMethod {
    public static let method = "auth.logout"
    public static let effect = MethodEffect(.removes, reachesOut: true)
    public typealias Response = AuthStatusEntry
    public var provider: String

    public init(provider: String) {
        self.provider = provider
    }
}

/// Whether a provider has a logged-in account.
public struct AuthStatusEntry: Codable, Sendable, Equatable {
    public var provider: String
    public var auth: ProviderDescriptor.AuthKind
    public var loggedIn: Bool
    public var account: String?
    /// When the access token expires (it is refreshed before use).
    public var expiresAt: String?
    /// After a login: how many favorites kept here are not on the account (`favorites.sync`
    /// adds them).
    public var unsyncedFavorites: Int?

    public init(
        provider: String, auth: ProviderDescriptor.AuthKind, loggedIn: Bool, account: String? = nil, expiresAt: String? = nil,
        unsyncedFavorites: Int? = nil
    ) {
        self.provider = provider
        self.auth = auth
        self.loggedIn = loggedIn
        self.account = account
        self.expiresAt = expiresAt
        self.unsyncedFavorites = unsyncedFavorites
    }
}
