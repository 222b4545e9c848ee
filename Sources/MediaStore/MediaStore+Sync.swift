import Basics
import FoundationEssentials
import MediaKit

/// What a sync server is told of, queued in the same transaction as the change it reports.
public enum SyncChange: String, Sendable, Codable {
    /// A show followed (by its subscription URL).
    case subscribe
    /// A show no longer followed.
    case unsubscribe
    /// Playback stopped somewhere (an episode; position and total in seconds).
    case play
    /// Marked not played.
    case new
    /// Downloaded here.
    case download
    /// Its download deleted here.
    case delete
}

/// One change waiting for the sync server.
public struct SyncOutboxEntry: Sendable, Equatable {
    public var seq: Int64
    public var change: SyncChange
    /// The episode, for episode changes.
    public var item: ItemID?
    /// The subscription URL, for subscription changes.
    public var url: String?
    public var position: Double?
    /// Where the stretch of playback began, for `play`.
    public var started: Double?
    public var total: Double?
    public var at: Date

    public init(
        seq: Int64, change: SyncChange, item: ItemID?, url: String?, position: Double?, started: Double? = nil,
        total: Double?, at: Date
    ) {
        self.seq = seq
        self.change = change
        self.item = item
        self.url = url
        self.position = position
        self.started = started
        self.total = total
        self.at = at
    }
}

/// The newest action a sync server told of for one episode (its media URL).
public struct RemoteEpisode: Sendable, Equatable {
    public var episode: String
    public var podcast: String
    public var guid: String?
    /// play, new, download, delete (lower case).
    public var action: String
    public var position: Double?
    public var started: Double?
    public var total: Double?
    /// When the action happened (the device's clock).
    public var at: Date
    public var device: String?

    public init(
        episode: String, podcast: String, guid: String?, action: String, position: Double?, started: Double?, total: Double?,
        at: Date, device: String?
    ) {
        self.episode = episode
        self.podcast = podcast
        self.guid = guid
        self.action = action
        self.position = position
        self.started = started
        self.total = total
        self.at = at
        self.device = device
    }

    /// Where playback stands after this action, as `playback` keeps it: nil when the action says
    /// nothing of where it is (a download).
    public func playback(for id: ItemID) -> PlaybackRecord? {
        switch action {
        case "play":
            guard let position, position >= 0 else { return nil }
            let total = total.flatMap { $0 > 0 ? $0 : nil }
            let played = PlaybackRecord.isFinished(position: position, duration: total)
            return PlaybackRecord(id: id, position: played ? 0 : position, duration: total, played: played, updatedAt: at)
        case "new":
            return PlaybackRecord(id: id, position: 0, duration: total, played: false, updatedAt: at)
        default:
            return nil
        }
    }
}

extension MediaStore {
    /// Whether changes are queued for a sync server: from `beginSync` to `endSync`.
    static func recordsSync(_ db: Database) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT 1 FROM syncState WHERE key = 'account'") != nil
    }

    /// Queues a change; an earlier unsent change of the same episode or show is dropped (only
    /// where it stands now matters, and a player saves every few seconds).
    static func queueSync(
        _ db: Database, _ change: SyncChange, item: ItemID? = nil, url: String? = nil, position: Double? = nil,
        started: Double? = nil, total: Double? = nil, at: Date
    ) throws {
        if let item {
            try db.execute(
                sql: "DELETE FROM syncOutbox WHERE item = ? AND action IN ('play', 'new')", arguments: [item.description])
        } else if let url {
            try db.execute(
                sql: "DELETE FROM syncOutbox WHERE url = ? AND action IN ('subscribe', 'unsubscribe')", arguments: [url])
        }
        try db.execute(
            sql: "INSERT INTO syncOutbox (action, item, url, position, started, total, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            arguments: [change.rawValue, item?.description, url, position, started, total, at.timeIntervalSince1970])
    }

    /// Changes are queued from now on, for the account `name` (a server, user and device); for
    /// a different account than before the cursors and what the old server told are dropped
    /// (its first round sends everything kept here), the changes waiting are kept for it.
    public func beginSync(account name: String) async throws {
        try await pool.write { db in
            let before = try String.fetchOne(db, sql: "SELECT value FROM syncState WHERE key = 'account'")
            if before != name {
                try db.execute(sql: "DELETE FROM syncState")
                try db.execute(sql: "DELETE FROM syncEpisode")
            }
            try db.execute(
                sql:
                    "INSERT INTO syncState (key, value) VALUES ('account', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                arguments: [name])
        }
    }

    /// Nothing is queued any more; what was queued, the cursors and what the server told are dropped.
    public func endSync() async throws {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM syncState")
            try db.execute(sql: "DELETE FROM syncOutbox")
            try db.execute(sql: "DELETE FROM syncEpisode")
        }
    }

    public func syncValue(_ key: String) async throws -> String? {
        try await pool.read { db in try String.fetchOne(db, sql: "SELECT value FROM syncState WHERE key = ?", arguments: [key]) }
    }

    public func setSyncValues(_ values: [String: String]) async throws {
        try await pool.write { db in
            for (key, value) in values {
                try db.execute(
                    sql: "INSERT INTO syncState (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    arguments: [key, value])
            }
        }
    }

    /// The oldest queued changes, at most `limit`.
    public func syncOutbox(limit: Int = 10_000) async throws -> [SyncOutboxEntry] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT seq, action, item, url, position, started, total, at FROM syncOutbox ORDER BY seq LIMIT ?",
                arguments: [limit]
            ).compactMap { row in
                guard let change = SyncChange(rawValue: try row[1]) else { return nil }
                let item: String? = row[2]
                return try SyncOutboxEntry(
                    seq: row[0], change: change, item: item.flatMap { try? ItemID(parsing: $0) }, url: row[3], position: row[4],
                    started: row[5], total: row[6], at: Date(timeIntervalSince1970: row[7]))
            }
        }
    }

    public func syncOutboxCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM syncOutbox") ?? 0 }
    }

    /// Forgets queued changes the server took.
    public func removeFromSyncOutbox(_ seqs: [Int64]) async throws {
        guard !seqs.isEmpty else { return }
        try await pool.write { db in
            let statement = try db.cachedStatement(sql: "DELETE FROM syncOutbox WHERE seq = ?")
            for seq in seqs { try statement.execute(arguments: [seq]) }
        }
    }

    /// Keeps what the server told of episodes, each only when it is newer than what is kept for
    /// that episode (the newest action wins, by the action's own time).
    /// - Returns: how many were newer.
    @discardableResult
    public func keepRemoteEpisodes(_ episodes: [RemoteEpisode]) async throws -> Int {
        guard !episodes.isEmpty else { return 0 }
        return try await pool.write { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO syncEpisode (episode, podcast, guid, action, position, started, total, at, device)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(episode) DO UPDATE SET podcast = excluded.podcast, guid = COALESCE(excluded.guid, syncEpisode.guid),
                        action = excluded.action, position = excluded.position, started = excluded.started,
                        total = COALESCE(excluded.total, syncEpisode.total), at = excluded.at, device = excluded.device
                    WHERE excluded.at > syncEpisode.at
                    """)
            var newer = 0
            for episode in episodes {
                try statement.execute(arguments: [
                    episode.episode, episode.podcast, episode.guid, episode.action, episode.position, episode.started,
                    episode.total, episode.at.timeIntervalSince1970, episode.device,
                ])
                newer += db.changesCount
            }
            return newer
        }
    }

    /// The key `remoteEpisodes` gives an episode found by its guid within its show.
    public static func guidKey(_ guid: String, podcast: String) -> String { "guid:\(guid)\u{1}\(podcast)" }

    /// What the server told of these episodes, by media URL; an episode whose URL is not known
    /// there is found by its guid within its show (`guidKey`: guids like "1" repeat across shows).
    public func remoteEpisodes(urls: [String], guids: [(guid: String, podcast: String)] = []) async throws -> [String:
        RemoteEpisode]
    {
        guard !urls.isEmpty || !guids.isEmpty else { return [:] }
        return try await pool.read { db in
            guard try Int.fetchOne(db, sql: "SELECT 1 FROM syncEpisode LIMIT 1") != nil else { return [:] }
            var found: [String: RemoteEpisode] = [:]
            let byURL = try db.cachedStatement(
                sql:
                    "SELECT episode, podcast, guid, action, position, started, total, at, device FROM syncEpisode WHERE episode = ?"
            )
            let byGUID = try db.cachedStatement(
                sql: """
                    SELECT episode, podcast, guid, action, position, started, total, at, device FROM syncEpisode
                    WHERE guid = ? AND podcast = ? ORDER BY at DESC LIMIT 1
                    """)
            func episode(_ row: Row) throws -> RemoteEpisode {
                try RemoteEpisode(
                    episode: row[0], podcast: row[1], guid: row[2], action: row[3], position: row[4], started: row[5],
                    total: row[6], at: Date(timeIntervalSince1970: row[7]), device: row[8])
            }
            for url in Set(urls) {
                if let row = try Row.fetchOne(byURL, arguments: [url]) { found[url] = try episode(row) }
            }
            for (guid, podcast) in guids {
                if let row = try Row.fetchOne(byGUID, arguments: [guid, podcast]) {
                    found[Self.guidKey(guid, podcast: podcast)] = try episode(row)
                }
            }
            return found
        }
    }

    public func remoteEpisodeCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM syncEpisode") ?? 0 }
    }

    /// Every favorite followed by a subscription URL, by that URL.
    public func followedSyncURLs() async throws -> [String: ItemID] {
        try await pool.read { db in
            var found: [String: ItemID] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT syncURL, id FROM favorite WHERE syncURL IS NOT NULL")
            while let row = try rows.next() {
                if let id = try? ItemID(parsing: row[1] as String) { found[try row[0]] = id }
            }
            return found
        }
    }

    /// Followed shows still titled by `placeholder(url)` (followed from the server; their feeds
    /// not read yet).
    public func followsTitledByURL(_ placeholder: (String) -> String) async throws -> [ItemID] {
        let rows = try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, title, syncURL FROM favorite WHERE syncURL IS NOT NULL").map {
                (try $0[0] as String, try $0[1] as String, try $0[2] as String)
            }
        }
        return rows.filter { $0.1 == placeholder($0.2) }.compactMap { try? ItemID(parsing: $0.0) }
    }

    /// The server renamed subscription URLs (`update_urls`): favorites, the queue and what the
    /// server told follow, so the next sync does not see them as different shows.
    /// Renames a server made (`update_urls`), each kept only where its new URL is no show's
    /// yet: two shows never share one sync URL (A→B then B→A, or B taken already), which would
    /// send one removal twice and never the other.
    public func renameSyncURLs(_ pairs: [(old: String, new: String)]) async throws {
        guard !pairs.isEmpty else { return }
        try await pool.write { db in
            for (old, new) in pairs where old != new && !new.isEmpty {
                guard try Int.fetchOne(db, sql: "SELECT 1 FROM favorite WHERE syncURL = ?", arguments: [new]) == nil else {
                    continue
                }
                try db.execute(sql: "UPDATE favorite SET syncURL = ? WHERE syncURL = ?", arguments: [new, old])
                try db.execute(sql: "UPDATE syncOutbox SET url = ? WHERE url = ?", arguments: [new, old])
                try db.execute(sql: "UPDATE syncEpisode SET podcast = ? WHERE podcast = ?", arguments: [new, old])
            }
        }
    }

    /// A first sync with an account: every position kept here is queued (those not queued
    /// already), in the transaction that records it was done, so a round cut short sends the
    /// rest and never the same twice.
    public func queueKeptPlaybacks() async throws {
        try await pool.write { db in
            guard try String.fetchOne(db, sql: "SELECT value FROM syncState WHERE key = 'playbacksQueued'") == nil else {
                return
            }
            let rows = try Row.fetchAll(db, sql: "SELECT id, position, duration, played, updatedAt FROM playback")
            for row in rows {
                guard let id = try? ItemID(parsing: row[0] as String), SyncKeys.mayHaveEpisodeURL(id),
                    try Int.fetchOne(db, sql: "SELECT 1 FROM syncOutbox WHERE item = ?", arguments: [id.description]) == nil
                else { continue }
                let position: Double = try row[1]
                let duration: Double? = row[2]
                let played: Bool = try row[3]
                try Self.queueSync(
                    db, played ? .play : (position > 0 ? .play : .new), item: id, position: played ? duration : position,
                    total: duration, at: Date(timeIntervalSince1970: row[4]))
            }
            try db.execute(sql: "INSERT INTO syncState (key, value) VALUES ('playbacksQueued', '1')")
        }
    }
}
