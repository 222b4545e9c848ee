import Basics
import FoundationEssentials
import Glibc
import MediaKit
import MediaStore

/// The household's sync server's data, in `<data dir>/hub.sqlite` (0600, beside the library,
/// never in it): accounts and their password hashes, devices, each device's subscriptions, the
/// account's list as Nextcloud's clients see it, and the episode actions. Opened by the web
/// server that answers the phones, by `mediahost users`, and by the desk's own sync rounds
/// (the desk is a device of the account it is linked to): SQLite in WAL mode lets them share it.
public final class HubStore: Sendable {
    let pool: DatabasePool
    public let path: String

    /// Subscriptions one device may hold, and actions one upload may carry: what no household
    /// reaches (an OPML of every podcast there is is about 4 million) but a runaway script does.
    public static let maxSubscriptions = 100_000
    public static let maxActionsPerUpload = 100_000

    public init(dataDir: String) throws {
        path = dataDir + "/hub.sqlite"
        try FileManager.default.createDirectory(
            atPath: dataDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if fd >= 0 { close(fd) }
        var configuration = Configuration()
        configuration.busyTimeout = 10
        pool = try DatabasePool(path: path, configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("hub-1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created INTEGER NOT NULL);
                    CREATE TABLE credentials (
                        id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        kind TEXT NOT NULL, label TEXT NOT NULL DEFAULT '', hash TEXT NOT NULL,
                        created INTEGER NOT NULL, used INTEGER);
                    CREATE INDEX credentials_user ON credentials(user_id);
                    CREATE TABLE sessions (
                        hash TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        credential_id INTEGER NOT NULL REFERENCES credentials(id) ON DELETE CASCADE,
                        expires INTEGER NOT NULL);
                    CREATE INDEX sessions_credential ON sessions(credential_id);
                    CREATE TABLE devices (
                        id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        name TEXT NOT NULL, caption TEXT NOT NULL DEFAULT '', type TEXT NOT NULL DEFAULT 'other',
                        grp INTEGER, seen INTEGER, UNIQUE(user_id, name));
                    CREATE TABLE subscriptions (
                        device_id INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE, url TEXT NOT NULL,
                        subscribed INTEGER NOT NULL, changed INTEGER NOT NULL, PRIMARY KEY (device_id, url)) WITHOUT ROWID;
                    CREATE INDEX subscriptions_changed ON subscriptions(device_id, changed);
                    CREATE TABLE account_subscriptions (
                        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE, url TEXT NOT NULL,
                        subscribed INTEGER NOT NULL, changed INTEGER NOT NULL, PRIMARY KEY (user_id, url)) WITHOUT ROWID;
                    CREATE TABLE actions (
                        id INTEGER PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                        device TEXT, podcast TEXT NOT NULL, episode TEXT NOT NULL, guid TEXT, action TEXT NOT NULL,
                        at INTEGER NOT NULL, started INTEGER, position INTEGER, total INTEGER, uploaded INTEGER NOT NULL);
                    CREATE INDEX actions_uploaded ON actions(user_id, uploaded);
                    CREATE UNIQUE INDEX actions_once ON actions(
                        user_id, episode, action, at, IFNULL(position, -1), IFNULL(device, ''));
                    """)
        }
        try migrator.migrate(pool)
        _ = chmod(path, 0o600)
    }

    // MARK: Accounts

    /// A household account's name: what a URL path carries as it is.
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
            } && !name.hasPrefix(".")
    }

    /// A device id, as gpodder.net allows them (letters, digits, '.', '-', '_'; no '/').
    public static func isValidDevice(_ name: String) -> Bool { isValidName(name) }

    public struct Account: Sendable, Equatable {
        public var id: Int64
        public var name: String
        public var created: Date
        public var devices: Int
        public var subscriptions: Int
        public var actions: Int
        public var appPasswords: Int
        public var lastSeen: Date?
    }

    public struct UserError: Error, CustomStringConvertible, Sendable {
        public let message: String
        public var description: String { message }
        init(_ message: String) { self.message = message }
    }

    func userID(_ db: Database, _ name: String) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE name = ?", arguments: [name])
    }

    /// Adds an account with its password's hash.
    public func addUser(_ name: String, passwordHash: String) throws {
        guard Self.isValidName(name) else {
            throw UserError("a user name is 1 to 64 letters, digits, '.', '-' or '_' (not starting with '.')")
        }
        try pool.write { db in
            guard try userID(db, name) == nil else { throw UserError("\(name) is already an account here") }
            let now = Int64(Date().timeIntervalSince1970)
            try db.execute(sql: "INSERT INTO users (name, created) VALUES (?, ?)", arguments: [name, now])
            try db.execute(
                sql: "INSERT INTO credentials (user_id, kind, hash, created) VALUES (?, 'password', ?, ?)",
                arguments: [db.lastInsertedRowID, passwordHash, now])
        }
    }

    /// Replaces an account's password; its sessions end (its app passwords stay).
    public func setPassword(_ name: String, passwordHash: String) throws {
        try pool.write { db in
            guard let id = try userID(db, name) else { throw UserError("no account \(name) here; `mediahost users list`") }
            try db.execute(sql: "DELETE FROM credentials WHERE user_id = ? AND kind = 'password'", arguments: [id])
            try db.execute(
                sql: "INSERT INTO credentials (user_id, kind, hash, created) VALUES (?, 'password', ?, ?)",
                arguments: [id, passwordHash, Int64(Date().timeIntervalSince1970)])
            try db.execute(sql: "DELETE FROM sessions WHERE user_id = ?", arguments: [id])
        }
    }

    /// Removes an account and everything of it.
    public func removeUser(_ name: String) throws {
        try pool.write { db in
            guard let id = try userID(db, name) else { throw UserError("no account \(name) here; `mediahost users list`") }
            try db.execute(sql: "DELETE FROM users WHERE id = ?", arguments: [id])
        }
    }

    /// App passwords one account may have: each is checked in turn against a password not
    /// remembered, so their number bounds what a wrong password costs.
    public static let maxAppPasswords = 16

    /// A password of its own for one device (or app): shown once, kept hashed, revoked alone
    /// (and the sessions made with it).
    /// - Returns: its id.
    public func addAppPassword(_ name: String, label: String, passwordHash: String) throws -> Int64 {
        try pool.write { db in try Self.insertAppPassword(db, name, label: label, passwordHash: passwordHash) }
    }

    func addAppPassword(_ name: String, label: String, passwordHash: String) async throws -> Int64 {
        try await pool.write { db in try Self.insertAppPassword(db, name, label: label, passwordHash: passwordHash) }
    }

    private static func insertAppPassword(_ db: Database, _ name: String, label: String, passwordHash: String) throws -> Int64 {
        do {
            guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE name = ?", arguments: [name]) else {
                throw UserError("no account \(name) here; `mediahost users list`")
            }
            let count =
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM credentials WHERE user_id = ? AND kind = 'app'", arguments: [id]) ?? 0
            guard count < maxAppPasswords else {
                throw UserError(
                    "\(name) has \(maxAppPasswords) app passwords already; revoke one first (`users app-password \(name) --list`)"
                )
            }
            try db.execute(
                sql: "INSERT INTO credentials (user_id, kind, label, hash, created) VALUES (?, 'app', ?, ?, ?)",
                arguments: [id, label, passwordHash, Int64(Date().timeIntervalSince1970)])
            return db.lastInsertedRowID
        }
    }

    public struct AppPassword: Sendable, Equatable {
        public var id: Int64
        public var label: String
        public var created: Date
        public var used: Date?
    }

    public func appPasswords(_ name: String) throws -> [AppPassword] {
        try pool.read { db in
            guard let id = try userID(db, name) else { throw UserError("no account \(name) here; `mediahost users list`") }
            return try Row.fetchAll(
                db, sql: "SELECT id, label, created, used FROM credentials WHERE user_id = ? AND kind = 'app' ORDER BY id",
                arguments: [id]
            ).map { row in
                AppPassword(
                    id: try row["id"], label: try row["label"],
                    created: Date(timeIntervalSince1970: Double(try row["created"] as Int64)),
                    used: (try row["used"] as Int64?).map { Date(timeIntervalSince1970: Double($0)) })
            }
        }
    }

    /// - Returns: whether there was such an app password.
    public func revokeAppPassword(_ name: String, id: Int64) throws -> Bool {
        try pool.write { db in
            guard let user = try userID(db, name) else { throw UserError("no account \(name) here; `mediahost users list`") }
            try db.execute(
                sql: "DELETE FROM credentials WHERE user_id = ? AND id = ? AND kind = 'app'", arguments: [user, id])
            return db.changesCount > 0
        }
    }

    public func accounts() throws -> [Account] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT u.id, u.name, u.created,
                        (SELECT COUNT(*) FROM devices d WHERE d.user_id = u.id) AS devices,
                        (SELECT COUNT(*) FROM account_subscriptions s WHERE s.user_id = u.id AND s.subscribed = 1) AS subs,
                        (SELECT COUNT(*) FROM actions a WHERE a.user_id = u.id) AS actions,
                        (SELECT COUNT(*) FROM credentials c WHERE c.user_id = u.id AND c.kind = 'app') AS apps,
                        (SELECT MAX(seen) FROM devices d WHERE d.user_id = u.id) AS seen
                    FROM users u ORDER BY u.name
                    """
            ).map { row in
                Account(
                    id: try row["id"], name: try row["name"],
                    created: Date(timeIntervalSince1970: Double(try row["created"] as Int64)),
                    devices: try row["devices"], subscriptions: try row["subs"], actions: try row["actions"],
                    appPasswords: try row["apps"],
                    lastSeen: (try row["seen"] as Int64?).map { Date(timeIntervalSince1970: Double($0)) })
            }
        }
    }

    public func hasUser(_ name: String) throws -> Bool { try pool.read { db in try userID(db, name) != nil } }

    /// An account's id and the hashes of its credentials (the password first).
    func credentials(_ name: String) throws -> (user: Int64, hashes: [(id: Int64, kind: String, hash: String)])? {
        try pool.read { db in
            guard let user = try userID(db, name) else { return nil }
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, kind, hash FROM credentials WHERE user_id = ? ORDER BY kind = 'app', id", arguments: [user])
            return (user, try rows.map { (try $0["id"], try $0["kind"], try $0["hash"]) })
        }
    }

    /// Whether a credential still has the hash it had (a password changed or an app password
    /// revoked ends what was let in with it).
    func credentialHolds(id: Int64, hash: String) throws -> Bool {
        try pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT 1 FROM credentials WHERE id = ? AND hash = ?", arguments: [id, hash]) != nil
        }
    }

    func noteUsed(credential: Int64) async throws {
        let now = Int64(Date().timeIntervalSince1970)
        try await pool.write { db in
            try db.execute(sql: "UPDATE credentials SET used = ? WHERE id = ?", arguments: [now, credential])
        }
    }

    func addSession(hash: String, user: Int64, credential: Int64, expires: Int64) async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM sessions WHERE expires < ?", arguments: [Int64(Date().timeIntervalSince1970)])
            try db.execute(
                sql: "INSERT OR REPLACE INTO sessions (hash, user_id, credential_id, expires) VALUES (?, ?, ?, ?)",
                arguments: [hash, user, credential, expires])
        }
    }

    func session(hash: String) throws -> (user: Int64, name: String)? {
        try pool.read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT u.id, u.name FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = ? AND s.expires >= ?",
                arguments: [hash, Int64(Date().timeIntervalSince1970)]
            ).map { (try $0["id"], try $0["name"]) }
        }
    }

    func endSession(hash: String) async throws {
        try await pool.write { db in try db.execute(sql: "DELETE FROM sessions WHERE hash = ?", arguments: [hash]) }
    }

    func user(named name: String) throws -> Int64? { try pool.read { db in try userID(db, name) } }
}
