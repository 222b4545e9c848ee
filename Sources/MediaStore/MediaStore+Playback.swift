import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// Where an item's playback was left.
public struct PlaybackRecord: Sendable, Equatable {
    public var id: ItemID
    /// Seconds in.
    public var position: Double
    public var duration: Double?
    public var played: Bool
    public var updatedAt: Date
    /// Where this stretch of playback began (told to a sync server with the position; not kept).
    public var started: Double?

    public init(
        id: ItemID, position: Double, duration: Double?, played: Bool, updatedAt: Date = Date(), started: Double? = nil
    ) {
        self.id = id
        self.position = position
        self.duration = duration
        self.played = played
        self.updatedAt = updatedAt
        self.started = started
    }

    /// Whether playback that stopped at `position` of `duration` counts as finished: within the
    /// last 30 seconds, or past 95 %.
    public static func isFinished(position: Double, duration: Double?) -> Bool {
        guard let duration, duration > 0 else { return false }
        return position >= duration - 30 || position >= duration * 0.95
    }
}

extension MediaStore {
    /// Where a moved show's episodes were left, carried to the same episodes at its new address:
    /// ids that differ only by `old` and `new` at their start (a show's part of its episodes'
    /// ids). An episode already kept under its new id keeps what it has.
    /// - Returns: how many were carried.
    @discardableResult
    public func movePlayback(from old: String, to new: String) async throws -> Int {
        try await pool.write { db in
            try db.execute(
                sql: """
                    UPDATE OR IGNORE playback SET id = ? || substr(id, ?)
                    WHERE length(id) > ? AND substr(id, 1, ?) = ?
                    """,
                arguments: [new, old.utf8.count + 1, old.utf8.count, old.utf8.count, old])
            return db.changesCount
        }
    }

    /// Keeps where `record.id` was left (replacing what was kept).
    public func savePlayback(_ record: PlaybackRecord) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO playback (id, position, duration, played, updatedAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET position = excluded.position,
                        duration = COALESCE(excluded.duration, playback.duration),
                        played = excluded.played, updatedAt = excluded.updatedAt
                    """,
                arguments: [
                    record.id.description, max(0, record.position), record.duration, record.played,
                    record.updatedAt.timeIntervalSince1970,
                ])
            if SyncKeys.mayHaveEpisodeURL(record.id), try Self.recordsSync(db) {
                // Played to the end is told as a play up to the end (what AntennaPod sends).
                let total = try Double.fetchOne(
                    db, sql: "SELECT duration FROM playback WHERE id = ?", arguments: [record.id.description])
                try Self.queueSync(
                    db, .play, item: record.id, position: record.played ? (total ?? record.position) : max(0, record.position),
                    started: record.started, total: total, at: record.updatedAt)
            }
        }
    }

    /// Marks items played (position back to the start) or not played (the position forgotten:
    /// back to the start, not played, as of `date`, so an older action from another device
    /// does not bring the old place back).
    public func markPlayed(_ ids: [ItemID], played: Bool, at date: Date = Date()) async throws {
        try await pool.write { db in
            let syncing = try Self.recordsSync(db)
            for id in ids {
                if syncing, SyncKeys.mayHaveEpisodeURL(id) {
                    let total = try Double.fetchOne(
                        db, sql: "SELECT duration FROM playback WHERE id = ?", arguments: [id.description])
                    try Self.queueSync(
                        db, played ? .play : .new, item: id, position: played ? total : nil, total: total, at: date)
                }
                if played {
                    try db.execute(
                        sql: """
                            INSERT INTO playback (id, position, played, updatedAt) VALUES (?, 0, 1, ?)
                            ON CONFLICT(id) DO UPDATE SET position = 0, played = 1, updatedAt = excluded.updatedAt
                            """, arguments: [id.description, date.timeIntervalSince1970])
                } else {
                    try db.execute(
                        sql: """
                            INSERT INTO playback (id, position, played, updatedAt) VALUES (?, 0, 0, ?)
                            ON CONFLICT(id) DO UPDATE SET position = 0, played = 0, updatedAt = excluded.updatedAt
                            """, arguments: [id.description, date.timeIntervalSince1970])
                }
            }
        }
    }

    public func playback(_ id: ItemID) async throws -> PlaybackRecord? {
        try await playbacks(for: [id])[id]
    }

    /// What is kept for those of `ids` that were played.
    public func playbacks(for ids: [ItemID]) async throws -> [ItemID: PlaybackRecord] {
        guard !ids.isEmpty else { return [:] }
        let keys = IDKeys(ids)
        return try await pool.read { db in try Self.playbacks(db, keys) }
    }

    static func playbacks(_ db: Database, _ keys: IDKeys) throws -> [ItemID: PlaybackRecord] {
        var found: [ItemID: PlaybackRecord] = [:]
        try forEachRow(db, for: keys, columns: "id, position, duration, played, updatedAt", from: "playback") { row in
            guard let id = keys.ids[try row[0]] else { return }
            found[id] = try PlaybackRecord(
                id: id, position: row[1], duration: row[2], played: row[3], updatedAt: Date(timeIntervalSince1970: row[4]))
        }
        return found
    }
}
