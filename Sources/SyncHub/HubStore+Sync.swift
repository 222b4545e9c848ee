import FoundationEssentials
import MediaStore

/// One episode action as the server keeps it.
public struct HubAction: Sendable, Equatable {
    public var device: String?
    public var podcast: String
    public var episode: String
    public var guid: String?
    public var action: String
    /// Seconds since 1970, UTC.
    public var at: Int64
    public var started: Int?
    public var position: Int?
    public var total: Int?
}

public struct HubDevice: Sendable, Equatable {
    public var name: String
    public var caption: String
    public var type: String
    public var subscriptions: Int
    public var group: Int64?
}

extension HubStore {
    static func now() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// The device's row id, made when it is not there yet (mygpo makes a device that uploads).
    func deviceID(_ db: Database, user: Int64, name: String) throws -> Int64 {
        if let id = try Int64.fetchOne(
            db, sql: "SELECT id FROM devices WHERE user_id = ? AND name = ?", arguments: [user, name])
        {
            try db.execute(sql: "UPDATE devices SET seen = ? WHERE id = ?", arguments: [Self.now(), id])
            return id
        }
        try db.execute(
            sql: "INSERT INTO devices (user_id, name, seen) VALUES (?, ?, ?)", arguments: [user, name, Self.now()])
        return db.lastInsertedRowID
    }

    func group(_ db: Database, _ device: Int64) throws -> Int64? {
        try Row.fetchOne(db, sql: "SELECT grp FROM devices WHERE id = ?", arguments: [device]).flatMap { try $0["grp"] as Int64? }
    }

    func existingDevice(_ db: Database, user: Int64, name: String) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT id FROM devices WHERE user_id = ? AND name = ?", arguments: [user, name])
    }

    func saveDevice(user: Int64, name: String, caption: String?, type: String?) async throws {
        try await pool.write { db in
            let id = try self.deviceID(db, user: user, name: name)
            if let caption { try db.execute(sql: "UPDATE devices SET caption = ? WHERE id = ?", arguments: [caption, id]) }
            if let type { try db.execute(sql: "UPDATE devices SET type = ? WHERE id = ?", arguments: [type, id]) }
        }
    }

    func devices(user: Int64) async throws -> [HubDevice] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT d.name, d.caption, d.type, d.grp,
                        (SELECT COUNT(*) FROM subscriptions s WHERE s.device_id = d.id AND s.subscribed = 1) AS subs
                    FROM devices d WHERE d.user_id = ? ORDER BY d.id
                    """, arguments: [user]
            ).map {
                HubDevice(
                    name: try $0["name"], caption: try $0["caption"], type: try $0["type"], subscriptions: try $0["subs"],
                    group: try $0["grp"])
            }
        }
    }

    /// Applies subscription changes of `device` (and of the devices synchronized with it), and
    /// to the account's own list (the shows any of its devices follows).
    ///
    /// The rows changed are stamped with the time at the end of the write, just before it
    /// commits, and that is the answer's: a reader that began before cannot have answered a
    /// later time, so the `since` it gives out sees them (a 100,000-row write takes seconds).
    func changeSubscriptions(user: Int64, device: String?, add: [String], remove: [String]) async throws -> Int64 {
        try await pool.write { db in
            var devices: [Int64] = []
            if let device {
                let id = try self.deviceID(db, user: user, name: device)
                if let group = try self.group(db, id) {
                    devices = try Int64.fetchAll(
                        db, sql: "SELECT id FROM devices WHERE user_id = ? AND grp = ?", arguments: [user, group])
                } else {
                    devices = [id]
                }
            }
            let own = try db.cachedStatement(
                sql: """
                    INSERT INTO subscriptions (device_id, url, subscribed, changed) VALUES (?, ?, ?, ?)
                    ON CONFLICT (device_id, url) DO UPDATE SET subscribed = excluded.subscribed, changed = excluded.changed
                    WHERE subscribed != excluded.subscribed
                    """)
            let account = try db.cachedStatement(
                sql: """
                    INSERT INTO account_subscriptions (user_id, url, subscribed, changed) VALUES (?, ?, ?, ?)
                    ON CONFLICT (user_id, url) DO UPDATE SET subscribed = excluded.subscribed, changed = excluded.changed
                    WHERE subscribed != excluded.subscribed
                    """)
            // A show dropped on one device stays on the account's list while another follows it
            // (as mygpo's list of all devices).
            let elsewhere = try db.cachedStatement(
                sql: """
                    SELECT 1 FROM subscriptions s JOIN devices d ON d.id = s.device_id
                    WHERE d.user_id = ? AND s.url = ? AND s.subscribed = 1 LIMIT 1
                    """)
            for url in add {
                for id in devices { try own.execute(arguments: [id, url, Int64(1), Self.pending]) }
                try account.execute(arguments: [user, url, Int64(1), Self.pending])
            }
            for url in remove {
                for id in devices { try own.execute(arguments: [id, url, Int64(0), Self.pending]) }
                guard try Row.fetchOne(elsewhere, arguments: [user, url]) == nil else { continue }
                try account.execute(arguments: [user, url, Int64(0), Self.pending])
            }
            for id in devices {
                let count =
                    try Int.fetchOne(
                        db, sql: "SELECT COUNT(*) FROM subscriptions WHERE device_id = ? AND subscribed = 1", arguments: [id])
                    ?? 0
                guard count <= Self.maxSubscriptions else {
                    throw UserError("a device may follow at most \(Self.maxSubscriptions) shows")
                }
            }
            return try Self.stamp(db, user: user)
        }
    }

    /// What rows changed in a write carry until `stamp` gives them its time.
    static let pending: Int64 = -1

    /// Gives the rows this write changed the time now, at its end.
    static func stamp(_ db: Database, user: Int64) throws -> Int64 {
        let now = Self.now()
        try db.execute(
            sql: """
                UPDATE subscriptions SET changed = ?1 WHERE changed = ?2
                    AND device_id IN (SELECT id FROM devices WHERE user_id = ?3)
                """, arguments: [now, pending, user])
        try db.execute(
            sql: "UPDATE account_subscriptions SET changed = ?1 WHERE user_id = ?3 AND changed = ?2",
            arguments: [now, pending, user])
        try db.execute(
            sql: "UPDATE actions SET uploaded = ?1 WHERE user_id = ?3 AND uploaded = ?2", arguments: [now, pending, user])
        return now
    }

    /// Subscription changes since `since` (inclusive: a change in the second of the last answer
    /// comes again rather than never): of a device, or of the account when `device` is nil.
    func subscriptionChanges(user: Int64, device: String?, since: Int64) async throws -> (
        add: [String], remove: [String], timestamp: Int64
    ) {
        try await pool.read { db in
            let now = Self.now()
            let rows: [Row]
            if let device {
                guard let id = try self.existingDevice(db, user: user, name: device) else { return ([], [], now) }
                rows = try Row.fetchAll(
                    db,
                    sql: "SELECT url, subscribed FROM subscriptions WHERE device_id = ? AND changed >= ? ORDER BY changed, url",
                    arguments: [id, since])
            } else {
                rows = try Row.fetchAll(
                    db,
                    sql:
                        "SELECT url, subscribed FROM account_subscriptions WHERE user_id = ? AND changed >= ? ORDER BY changed, url",
                    arguments: [user, since])
            }
            var add: [String] = []
            var remove: [String] = []
            for row in rows {
                // At the first look, what was dropped long ago is history, not news.
                if try row["subscribed"] as Int64 == 1 {
                    add.append(try row["url"])
                } else if since > 0 {
                    remove.append(try row["url"])
                }
            }
            return (add, remove, now)
        }
    }

    /// A device's whole list now (or the account's).
    func subscriptions(user: Int64, device: String?) async throws -> [String]? {
        try await pool.read { db in
            if let device {
                guard let id = try self.existingDevice(db, user: user, name: device) else { return nil }
                return try String.fetchAll(
                    db, sql: "SELECT url FROM subscriptions WHERE device_id = ? AND subscribed = 1 ORDER BY url", arguments: [id])
            }
            return try String.fetchAll(
                db, sql: "SELECT url FROM account_subscriptions WHERE user_id = ? AND subscribed = 1 ORDER BY url",
                arguments: [user])
        }
    }

    /// Stores actions; one already there (the same episode, action, time, position and device:
    /// an upload sent again after its answer was lost) is not stored twice. Stamped at the end
    /// of the write, as subscriptions are.
    func addActions(user: Int64, _ actions: [HubAction]) async throws -> Int64 {
        try await pool.write { db in
            var devices = Set<String>()
            let insert = try db.cachedStatement(
                sql: """
                    INSERT OR IGNORE INTO actions
                        (user_id, device, podcast, episode, guid, action, at, started, position, total, uploaded)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for action in actions {
                if let device = action.device, devices.insert(device).inserted {
                    _ = try self.deviceID(db, user: user, name: device)
                }
                try insert.execute(arguments: [
                    user, action.device, action.podcast, action.episode, action.guid, action.action, action.at, action.started,
                    action.position, action.total, Self.pending,
                ])
            }
            return try Self.stamp(db, user: user)
        }
    }

    /// Actions uploaded since `since` (inclusive), oldest first, and the time before they were
    /// read: the cursor for the next time (what commits meanwhile is stamped later).
    func actions(user: Int64, since: Int64, podcast: String?, device: String?) async throws -> (
        actions: [HubAction], timestamp: Int64
    ) {
        try await pool.read { db in
            let timestamp = Self.now()
            var sql = """
                SELECT device, podcast, episode, guid, action, at, started, position, total FROM actions
                WHERE user_id = ? AND uploaded >= ?
                """
            var arguments: StatementArguments = [user, since]
            if let podcast {
                sql += " AND podcast = ?"
                arguments += [podcast]
            }
            if let device {
                sql += " AND device = ?"
                arguments += [device]
            }
            sql += " ORDER BY at, id"
            var out: [HubAction] = []
            let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            while let row = try cursor.next() {
                out.append(
                    HubAction(
                        device: try row[0], podcast: try row[1], episode: try row[2], guid: try row[3], action: try row[4],
                        at: try row[5], started: try row[6],
                        position: try row[7], total: try row[8]))
            }
            return (out, timestamp)
        }
    }

    /// Links devices into sync groups and unlinks others; linked devices share one list (the
    /// union of theirs).
    func synchronize(user: Int64, link: [[String]], unlink: [String]) async throws {
        try await pool.write { db in
            for name in unlink {
                try db.execute(sql: "UPDATE devices SET grp = NULL WHERE user_id = ? AND name = ?", arguments: [user, name])
            }
            try Self.dissolveLoneGroups(db, user: user)
            for group in link where group.count >= 2 {
                let ids = try group.map { try self.deviceID(db, user: user, name: $0) }
                // Joined to the group one of them is in, or a new one: never an id another group
                // still has.
                let existing = try ids.compactMap { try self.group(db, $0) }
                let fresh =
                    (try Int64.fetchOne(db, sql: "SELECT MAX(grp) FROM devices WHERE user_id = ?", arguments: [user]) ?? 0) + 1
                let target = existing.first ?? fresh
                var members = Set(ids)
                for old in Set(existing) {
                    members.formUnion(
                        try Int64.fetchAll(
                            db, sql: "SELECT id FROM devices WHERE user_id = ? AND grp = ?", arguments: [user, old]))
                }
                for id in members { try db.execute(sql: "UPDATE devices SET grp = ? WHERE id = ?", arguments: [target, id]) }
                let union = try String.fetchAll(
                    db,
                    sql:
                        "SELECT DISTINCT url FROM subscriptions WHERE subscribed = 1 AND device_id IN (\(members.map { String($0) }.joined(separator: ",")))"
                )
                let statement = try db.cachedStatement(
                    sql: """
                        INSERT INTO subscriptions (device_id, url, subscribed, changed) VALUES (?, ?, 1, ?)
                        ON CONFLICT (device_id, url) DO UPDATE SET subscribed = 1, changed = excluded.changed WHERE subscribed = 0
                        """)
                for id in members { for url in union { try statement.execute(arguments: [id, url, Self.pending]) } }
            }
            try Self.dissolveLoneGroups(db, user: user)
            _ = try Self.stamp(db, user: user)
        }
    }

    /// A group left with one device is none (mygpo deletes it).
    static func dissolveLoneGroups(_ db: Database, user: Int64) throws {
        try db.execute(
            sql: """
                UPDATE devices SET grp = NULL WHERE user_id = ?1 AND grp IN (
                    SELECT grp FROM devices WHERE user_id = ?1 AND grp IS NOT NULL GROUP BY grp HAVING COUNT(*) < 2)
                """, arguments: [user])
    }
}
