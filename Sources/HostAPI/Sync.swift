import JSONRPC
import MediaKit

/// Sets the sync server: checks the account on it, keeps it (0600) and starts queueing what
/// changes here. The password is never returned, logged or listed.
public struct SyncLogin: APIMethod {
    public static let method = "sync.login"
    public static let effect = MethodEffect(.changes, idempotent: false, reachesOut: true)
    public typealias Response = SyncState
    /// The server: `https://gpodder.net`, a mygpo or opodsync, or a Nextcloud's address; or
    /// `here`: this machine's own sync server (`mediahost users`), with an empty password.
    public var server: String
    public var username: String
    /// The password (a Nextcloud app password).
    public var password: String
    /// gpodder or nextcloud; found out when not given.
    public var dialect: SyncDialect?
    /// This machine's device id on a gpodder.net server (default `mediahost-<host name>`).
    public var device: String?

    public init(server: String, username: String, password: String, dialect: SyncDialect? = nil, device: String? = nil) {
        self.server = server
        self.username = username
        self.password = password
        self.dialect = dialect
        self.device = device
    }

    public var secretsInFlight: [String] { SecretForms.password(password, user: username) }
}

/// Forgets the sync server: the account, the queue and what the server told.
public struct SyncLogout: APIMethod {
    public static let method = "sync.logout"
    public static let effect = MethodEffect(.removes)
    public typealias Response = SyncState
    public init() {}
}

/// The account, the last round, what waits.
public struct SyncStatus: APIMethod {
    public static let method = "sync.status"
    public static let effect = MethodEffect(.reads)
    public typealias Response = SyncState
    public init() {}
}

/// A sync round now: subscriptions and episode actions both ways.
public struct SyncNow: APIMethod {
    public static let method = "sync.now"
    public static let effect = MethodEffect(.changes, library: .favorites, reachesOut: true)
    public typealias Response = SyncReport
    /// Each request is bounded by http.timeout; a first sync of thousands of actions takes longer as a whole.
    public static var hasDeadline: Bool { false }
    public init() {}
}

/// What `sync.status` and `sync.login` answer: the account (never its password), the last
/// round and what waits.
public struct SyncState: Codable, Sendable, Equatable {
    public var configured: Bool
    public var server: String?
    public var dialect: SyncDialect?
    public var username: String?
    public var device: String?
    /// When the last round ended well (ISO 8601).
    public var lastSync: String?
    /// Why the last round failed, when it did (the changes wait).
    public var lastError: String?
    /// Changes of this machine waiting for the server.
    public var queued: Int
    /// Episodes another device told of (positions, played marks).
    public var remoteEpisodes: Int
    /// The last round's figures.
    public var lastReport: SyncReport?
    /// Why the last round's figures cannot be read (kept by another version, or edited by
    /// hand): said, not taken for "no round yet".
    public var lastReportError: String?

    public init(
        configured: Bool, server: String? = nil, dialect: SyncDialect? = nil, username: String? = nil, device: String? = nil,
        lastSync: String? = nil, lastError: String? = nil, queued: Int, remoteEpisodes: Int, lastReport: SyncReport? = nil,
        lastReportError: String? = nil
    ) {
        self.configured = configured
        self.server = server
        self.dialect = dialect
        self.username = username
        self.device = device
        self.lastSync = lastSync
        self.lastError = lastError
        self.queued = queued
        self.remoteEpisodes = remoteEpisodes
        self.lastReport = lastReport
        self.lastReportError = lastReportError
    }
}

/// What one sync round did.
public struct SyncReport: Codable, Sendable, Equatable {
    public var server: String
    public var dialect: SyncDialect
    public var device: String
    /// Shows followed here because the server listed them.
    public var followed: Int
    /// Shows no longer followed here because another device stopped.
    public var unfollowed: Int
    /// Subscription changes of this machine the server took.
    public var subscriptionsSent: Int
    /// Shows whose URL the server rewrote (`update_urls`).
    public var renamed: Int
    /// Episode actions the server sent.
    public var actionsReceived: Int
    /// Of those, newer than what was known of their episode (they move positions here).
    public var actionsNewer: Int
    /// Episode actions of this machine the server took.
    public var actionsSent: Int
    /// What was passed over, one sentence each.
    public var skipped: [String]
    /// Changes still waiting for the server.
    public var queued: Int
    public var seconds: Double

    public init(
        server: String, dialect: SyncDialect, device: String, followed: Int, unfollowed: Int, subscriptionsSent: Int,
        renamed: Int, actionsReceived: Int, actionsNewer: Int, actionsSent: Int, skipped: [String], queued: Int, seconds: Double
    ) {
        self.server = server
        self.dialect = dialect
        self.device = device
        self.followed = followed
        self.unfollowed = unfollowed
        self.subscriptionsSent = subscriptionsSent
        self.renamed = renamed
        self.actionsReceived = actionsReceived
        self.actionsNewer = actionsNewer
        self.actionsSent = actionsSent
        self.skipped = skipped
        self.queued = queued
        self.seconds = seconds
    }
}

/// Which API a sync server speaks.
public enum SyncDialect: String, Codable, Sendable, CaseIterable {
    /// gpodder.net's API v2: gpodder.net, mygpo, opodsync, micro-gpodder-server.
    case gpodder
    /// Nextcloud's gpoddersync app (`/index.php/apps/gpoddersync/`).
    case nextcloud
}
