import Basics
import FoundationEssentials
import HostAPI
import MediaKit

/// What refreshing the followed shows keeps: the episodes each show held when it was last read
/// (so the next refresh tells what arrived), the inbox of arrivals not seen yet (`new`), and each
/// feed's health (when it last worked, since when it fails and why).
extension MediaStore {
    /// A followed show's refresh history.
    public struct FeedState: Sendable, Equatable {
        public var show: ItemID
        public var lastAttempt: Date
        public var lastSuccess: Date?
        /// The first failure since the last success.
        public var failingSince: Date?
        /// Failures in a row.
        public var failures: Int
        public var lastError: String?
    }

    /// How long an episode no longer in its show's first page is remembered once seen (after
    /// that, one coming back would arrive again).
    static let arrivalMemory: TimeInterval = 180 * 86_400

    /// The episodes of `episodes` that are new for `show`, without keeping anything (a dry run);
    /// the same choice `recordRefresh` makes.
    public func arrivals(of show: ItemID, in episodes: [MediaItem]) async throws -> [MediaItem] {
        try await pool.read { db in
            let (first, known) = try Self.knownEpisodes(db, show)
            return Self.arrived(episodes, known: known, first: first)
        }
    }

    /// Keeps a successful refresh of `show` whose first page is `episodes` (newest first, as the
    /// provider lists them): those not known before arrive, into the inbox unless in `seen` (already
    /// played). On the show's first refresh only its newest episode arrives; the rest are known.
    /// - Returns: the episodes that arrived.
    @discardableResult
    /// - Parameter expected: what `arrivals(of:in:)` answered just before, when the caller asked.
    public func recordRefresh(
        of show: ItemID, episodes: [MediaItem], seen: Set<ItemID> = [], expected: [MediaItem]? = nil,
        at date: Date = Date()
    ) async throws -> [MediaItem] {
        // Only what arrives is kept whole: snapshots are made of those alone, before the write
        // (a refresh of 500 unchanged shows spent a tenth of its time encoding episodes it kept
        // no copy of). One that arrives between this read and the write is snapshotted in it.
        var arriving = expected ?? []
        if expected == nil { arriving = try await arrivals(of: show, in: episodes) }
        var made: [ItemID: Data] = [:]
        for (item, snapshot) in zip(arriving, try snapshots(arriving)) { made[item.id] = snapshot.data }
        let prepared = made
        return try await pool.write { db in
            let (first, known) = try Self.knownEpisodes(db, show)
            let arrived = Self.arrived(episodes, known: known, first: first)
            let arrivedIDs = Set(arrived.map(\.id))
            var snapshots = prepared
            let late = arrived.filter { snapshots[$0.id] == nil }
            for (item, snapshot) in zip(late, try self.snapshots(late)) { snapshots[item.id] = snapshot.data }
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO arrival (id, show, published, arrivedAt, seenAt, snapshot) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO NOTHING
                    """)
            let now = date.timeIntervalSince1970
            for episode in episodes where known[episode.id.description] == nil {
                let inInbox = arrivedIDs.contains(episode.id) && !seen.contains(episode.id)
                try insert.execute(arguments: [
                    episode.id.description, show.description, episode.published.flatMap(ISODate.parse)?.timeIntervalSince1970,
                    now, inInbox ? nil : now, inInbox ? snapshots[episode.id] : nil,
                ])
            }
            // Seen episodes that left the first page long ago are forgotten.
            let current = Set(episodes.map(\.id.description))
            let forget = try db.cachedStatement(sql: "DELETE FROM arrival WHERE id = ?")
            for (id, entry) in known where !current.contains(id) && entry.seen && entry.arrivedAt < now - Self.arrivalMemory {
                try forget.execute(arguments: [id])
            }
            try db.execute(
                sql: """
                    INSERT INTO feedState (show, lastAttempt, lastSuccess, failingSince, failures, lastError)
                    VALUES (?, ?, ?, NULL, 0, NULL)
                    ON CONFLICT(show) DO UPDATE SET lastAttempt = excluded.lastAttempt, lastSuccess = excluded.lastSuccess,
                        failingSince = NULL, failures = 0, lastError = NULL
                    """, arguments: [show.description, now, now])
            return arrived.filter { !seen.contains($0.id) }
        }
    }

    /// Keeps that `shows` were read and nothing arrived of them, in one write (the refresh of
    /// hundreds of unchanged shows makes one write, not one each).
    public func recordUnchanged(_ shows: [ItemID], at date: Date = Date()) async throws {
        guard !shows.isEmpty else { return }
        let now = date.timeIntervalSince1970
        try await pool.write { db in
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO feedState (show, lastAttempt, lastSuccess, failingSince, failures, lastError)
                    VALUES (?, ?, ?, NULL, 0, NULL)
                    ON CONFLICT(show) DO UPDATE SET lastAttempt = excluded.lastAttempt, lastSuccess = excluded.lastSuccess,
                        failingSince = NULL, failures = 0, lastError = NULL
                    """)
            for show in shows { try upsert.execute(arguments: [show.description, now, now]) }
        }
    }

    /// Keeps a failed refresh of `show`: its episodes stay as they were.
    public func recordRefreshFailure(of show: ItemID, _ message: String, at date: Date = Date()) async throws {
        let now = date.timeIntervalSince1970
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO feedState (show, lastAttempt, lastSuccess, failingSince, failures, lastError)
                    VALUES (?, ?, NULL, ?, 1, ?)
                    ON CONFLICT(show) DO UPDATE SET lastAttempt = excluded.lastAttempt,
                        failingSince = COALESCE(feedState.failingSince, excluded.failingSince),
                        failures = feedState.failures + 1, lastError = excluded.lastError
                    """, arguments: [show.description, now, now, message])
        }
    }

    /// Every followed show's refresh history, or those of `shows`.
    public func feedStates(_ shows: [ItemID]? = nil) async throws -> [ItemID: FeedState] {
        try await pool.read { db in
            var states: [ItemID: FeedState] = [:]
            let rows = try Row.fetchAll(
                db, sql: "SELECT show, lastAttempt, lastSuccess, failingSince, failures, lastError FROM feedState")
            let wanted = shows.map(Set.init)
            for row in rows {
                guard let show = try? ItemID(parsing: try row[0] as String), wanted?.contains(show) ?? true else { continue }
                states[show] = FeedState(
                    show: show, lastAttempt: Date(timeIntervalSince1970: try row[1]),
                    lastSuccess: (row[2] as Double?).map(Date.init(timeIntervalSince1970:)),
                    failingSince: (row[3] as Double?).map(Date.init(timeIntervalSince1970:)), failures: try row[4],
                    lastError: row[5])
            }
            return states
        }
    }

    /// When a refresh last read a followed show, if one ever did.
    public func lastRefresh() async throws -> Date? {
        try await pool.read { db in
            try Double.fetchOne(db, sql: "SELECT MAX(lastAttempt) FROM feedState").map(Date.init(timeIntervalSince1970:))
        }
    }

    // MARK: The inbox

    /// What arrived and was not seen yet, of shows still followed: newest first by publication
    /// (undated last), then by arrival.
    public func inbox(limit: Int = 500, offset: Int = 0) async throws -> (items: [MediaItem], total: Int) {
        try await pool.read { db in
            let followed = "show IN (SELECT id FROM favorite)"
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM arrival WHERE seenAt IS NULL AND \(followed)") ?? 0
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT id, snapshot FROM arrival WHERE seenAt IS NULL AND \(followed)
                    ORDER BY published IS NULL, published DESC, arrivedAt DESC, id LIMIT ? OFFSET ?
                    """, arguments: [limit, max(0, offset)]
            ).map { row -> (id: String, data: Data) in (try row["id"], try row["snapshot"]) }
            return (try Self.items(fromSnapshots: rows), total)
        }
    }

    /// Marks `ids` seen (out of the inbox).
    /// - Returns: how many were in it.
    @discardableResult
    public func markSeen(_ ids: [ItemID], at date: Date = Date()) async throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try await pool.write { db in
            let update = try db.cachedStatement(
                sql: "UPDATE arrival SET seenAt = ?, snapshot = NULL WHERE id = ? AND seenAt IS NULL")
            var marked = 0
            for id in Set(ids.map(\.description)) {
                try update.execute(arguments: [date.timeIntervalSince1970, id])
                marked += db.changesCount
            }
            return marked
        }
    }

    /// Empties the inbox.
    /// - Returns: how many it held.
    @discardableResult
    public func markAllSeen(at date: Date = Date()) async throws -> Int {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE arrival SET seenAt = ?, snapshot = NULL WHERE seenAt IS NULL",
                arguments: [date.timeIntervalSince1970])
            return db.changesCount
        }
    }

    // MARK: Choosing

    /// Whether `show` was read before, and what it held (by id: when it arrived, whether seen).
    private static func knownEpisodes(_ db: Database, _ show: ItemID) throws -> (
        first: Bool, known: [String: (arrivedAt: Double, seen: Bool)]
    ) {
        let refreshed = try Double.fetchOne(
            db, sql: "SELECT lastSuccess FROM feedState WHERE show = ?", arguments: [show.description])
        var known: [String: (arrivedAt: Double, seen: Bool)] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT id, arrivedAt, seenAt IS NOT NULL FROM arrival WHERE show = ?", arguments: [show.description])
        {
            known[try row[0]] = (try row[1], try row[2])
        }
        return (refreshed == nil, known)
    }

    /// The episodes not known; on a first read, only the newest of them (by date, else the first).
    private static func arrived(
        _ episodes: [MediaItem], known: [String: (arrivedAt: Double, seen: Bool)], first: Bool
    ) -> [MediaItem] {
        var seen = Set<ItemID>()
        let unknown = episodes.filter { known[$0.id.description] == nil && seen.insert($0.id).inserted }
        guard first else { return unknown }
        let dated = unknown.compactMap { item in item.published.flatMap(ISODate.parse).map { (item, $0) } }
        if let newest = dated.max(by: { $0.1 < $1.1 }) { return [newest.0] }
        return Array(unknown.prefix(1))
    }
}
