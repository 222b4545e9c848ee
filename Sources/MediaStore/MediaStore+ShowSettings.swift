import FoundationEssentials
import MediaKit

/// Each followed show's own rules and playback settings, and the defaults of every show (kept
/// under the show ''), as text the host checks before they are kept.
extension MediaStore {
    /// The show kept for the defaults of every show.
    public static let everyShow = ""

    /// What is set for each show (and `everyShow`), by key.
    public func showSettings() async throws -> [String: [String: String]] {
        try await pool.read { db in
            var settings: [String: [String: String]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT show, key, value FROM showSetting ORDER BY show, key") {
                settings[try row[0] as String, default: [:]][try row[1] as String] = try row[2] as String
            }
            return settings
        }
    }

    /// What is set for `show` and for every show: (the show's, the defaults).
    public func showSettings(of show: String) async throws -> (own: [String: String], defaults: [String: String]) {
        try await pool.read { db in
            var own: [String: String] = [:]
            var defaults: [String: String] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT show, key, value FROM showSetting WHERE show IN (?, ?)", arguments: [show, Self.everyShow])
            {
                if try row[0] as String == show, !show.isEmpty {
                    own[try row[1]] = try row[2] as String
                } else {
                    defaults[try row[1]] = try row[2] as String
                }
            }
            return (own, defaults)
        }
    }

    /// Sets one of a show's settings, or removes it (`value` nil).
    public func setShowSetting(_ show: String, key: String, value: String?) async throws {
        try await pool.write { db in
            if let value {
                try db.execute(
                    sql: """
                        INSERT INTO showSetting (show, key, value) VALUES (?, ?, ?)
                        ON CONFLICT(show, key) DO UPDATE SET value = excluded.value
                        """, arguments: [show, key, value])
            } else {
                try db.execute(sql: "DELETE FROM showSetting WHERE show = ? AND key = ?", arguments: [show, key])
            }
        }
    }

    /// Removes every setting of a show.
    /// - Returns: how many there were.
    @discardableResult
    /// A show's own settings, moved to another id (the show followed at its new address); the
    /// other's own settings win where both have one.
    public func moveShowSettings(from old: String, to new: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO showSetting (show, key, value) SELECT ?, key, value FROM showSetting WHERE show = ?",
                arguments: [new, old])
            try db.execute(sql: "DELETE FROM showSetting WHERE show = ?", arguments: [old])
        }
    }

    public func clearShowSettings(_ show: String) async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM showSetting WHERE show = ?", arguments: [show])
            return db.changesCount
        }
    }

    /// The followed show each episode arrived from, and when it was published, for those a
    /// refresh has seen.
    public func shows(of episodes: [ItemID]) async throws -> [ItemID: (show: ItemID, published: Date?)] {
        guard !episodes.isEmpty else { return [:] }
        let keys = IDKeys(episodes)
        return try await pool.read { db in
            var found: [ItemID: (show: ItemID, published: Date?)] = [:]
            try Self.forEachRow(db, for: keys, columns: "id, show, published", from: "arrival") { row in
                guard let episode = keys.ids[try row[0]], let show = try? ItemID(parsing: try row[1] as String) else { return }
                found[episode] = (show, (row[2] as Double?).map(Date.init(timeIntervalSince1970:)))
            }
            return found
        }
    }
}
