import Basics
import CSQLite
import FoundationEssentials
import Glibc
import MediaKit

extension MediaStore {
    /// Entries kept per provider; the oldest go first. Each followed show keeps two or three (its
    /// feed's channel and validators, its directory entry): a limit of a few hundred made a refresh
    /// of 500 followed shows fetch most feeds whole every time instead of answering a 304 from
    /// the copy kept (3 s against 0.4 s, measured).
    public static let providerCacheLimit = 6000

    public func cachedValue(provider: String, key: String) async throws -> CachedValue? {
        try await pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT data, etag, lastModified, storedAt FROM providerCache WHERE provider = ? AND key = ?",
                    arguments: [provider, key])
            else { return nil }
            return try CachedValue(
                data: row[0], etag: row[1], lastModified: row[2], storedAt: Date(timeIntervalSince1970: row[3]))
        }
    }

    public func storeCachedValue(_ value: CachedValue, provider: String, key: String) async throws {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO providerCache (provider, key, etag, lastModified, storedAt, data) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT(provider, key) DO UPDATE SET etag = excluded.etag, lastModified = excluded.lastModified,
                        storedAt = excluded.storedAt, data = excluded.data
                    """,
                arguments: [provider, key, value.etag, value.lastModified, value.storedAt.timeIntervalSince1970, value.data])
            try db.execute(
                sql: """
                    DELETE FROM providerCache WHERE provider = ? AND storedAt < (
                        SELECT storedAt FROM providerCache WHERE provider = ? ORDER BY storedAt DESC LIMIT 1 OFFSET ?)
                    """,
                arguments: [provider, provider, Self.providerCacheLimit - 1])
        }
    }
}

extension MediaStore {
    /// Lists kept per provider (a feed's episodes are one); the least recently stored go first.
    /// Room for 2,000 followed shows of one provider and what is browsed besides.
    public static let providerListLimit = 2000
    /// Stands for "no order": below every real one, so such rows come last.
    static let unordered = -1e300

    /// How long a list writer may take before its rows count as left behind by a crash.
    static let abandonedWriterAge: TimeInterval = 3600

    /// Starts a new generation of a list: a number never handed out before, so newer than every
    /// generation written so far. Rows left by writers that crashed are dropped.
    public func beginList(provider: String, key: String) async throws -> Int64 {
        try await pool.write { db in
            let now = Date().timeIntervalSince1970
            try db.execute(
                sql: """
                    DELETE FROM providerRow WHERE provider = ? AND key = ? AND generation IN (
                        SELECT generation FROM providerListWriter WHERE provider = ? AND key = ? AND startedAt < ?)
                    """,
                arguments: [provider, key, provider, key, now - Self.abandonedWriterAge])
            try db.execute(
                sql: "DELETE FROM providerListWriter WHERE provider = ? AND key = ? AND startedAt < ?",
                arguments: [provider, key, now - Self.abandonedWriterAge])
            // AUTOINCREMENT: a generation number is never handed out twice, even after its
            // writer's record is gone.
            try db.execute(
                sql: "INSERT INTO providerListWriter (provider, key, startedAt) VALUES (?, ?, ?)",
                arguments: [provider, key, now])
            let generation = db.lastInsertedRowID
            return generation
        }
    }

    /// Appends rows to a generation being written.
    public func appendRows(_ rows: [CachedRow], provider: String, key: String, generation: Int64, firstSeq: Int) async throws {
        guard !rows.isEmpty else { return }
        try await pool.write { db in
            try Self.insertRows(rows, db, provider: provider, key: key, generation: generation, firstSeq: firstSeq)
        }
        checkpointer?.kick()
    }

    /// Binds and steps the insert with SQLite's own calls: a feed's thousands of rows through
    /// GRDB's arguments (an array of existentials a row) cost the writer a third as much again
    /// as SQLite's own work. The list's columns are bound once; SQLite copies each value.
    private static func insertRows(
        _ rows: [CachedRow], _ db: Database, provider: String, key: String, generation: Int64, firstSeq: Int
    ) throws {
        guard !rows.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: "INSERT INTO providerRow (provider, key, generation, seq, id, sortKey, data) VALUES (?, ?, ?, ?, ?, ?, ?)")
        let handle = statement.sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        func check(_ code: CInt, _ what: String) throws {
            guard code == SQLITE_OK || code == SQLITE_DONE else {
                let message = db.sqliteConnection.map { String(cString: sqlite3_errmsg($0)) } ?? what
                throw DatabaseError(resultCode: code, message: message, sql: statement.sql)
            }
        }
        sqlite3_reset(handle)
        try check(bindText(handle, 1, provider), "provider")
        try check(bindText(handle, 2, key), "key")
        try check(sqlite3_bind_int64(handle, 3, generation), "generation")
        for (offset, row) in rows.enumerated() {
            let order = row.order.flatMap { $0.isFinite ? $0 : nil } ?? unordered
            try check(sqlite3_bind_int64(handle, 4, Int64(firstSeq + offset)), "seq")
            try check(bindText(handle, 5, row.id), "id")
            try check(sqlite3_bind_double(handle, 6, order), "sortKey")
            try check(
                row.data.withUnsafeBytes { bytes in
                    // An empty blob is still a blob (a nil pointer would bind NULL).
                    bytes.isEmpty
                        ? sqlite3_bind_zeroblob(handle, 7, 0)
                        : sqlite3_bind_blob(handle, 7, bytes.baseAddress, CInt(bytes.count), sqliteTransient)
                }, "data")
            try check(sqlite3_step(handle), "insert")
            sqlite3_reset(handle)
        }
    }

    /// As GRDB binds a String (up to a NUL, as every other query of these columns does).
    private static func bindText(_ handle: OpaquePointer, _ index: CInt, _ text: String) -> CInt {
        text.withCString { sqlite3_bind_text(handle, index, $0, -1, sqliteTransient) }
    }

    /// Makes a generation the list's current one and drops older rows (and the oldest lists
    /// beyond the limit). When a newer generation was committed meanwhile, that one stays and
    /// this one is dropped: both were read from the same source moments apart.
    /// `count` rows in all, the last of them `lastRows`, appended in the same transaction (one
    /// commit fewer at the end of a list).
    public func commitList(
        provider: String, key: String, generation: Int64, count: Int, appending lastRows: [CachedRow] = []
    ) async throws {
        try await pool.write { db in
            try Self.insertRows(
                lastRows, db, provider: provider, key: key, generation: generation, firstSeq: count - lastRows.count)
            try db.execute(sql: "DELETE FROM providerListWriter WHERE generation = ?", arguments: [generation])
            let current =
                try Int64.fetchOne(
                    db, sql: "SELECT generation FROM providerList WHERE provider = ? AND key = ?", arguments: [provider, key])
                ?? 0
            guard generation > current else {
                try db.execute(
                    sql: "DELETE FROM providerRow WHERE provider = ? AND key = ? AND generation = ?",
                    arguments: [provider, key, generation])
                return
            }
            try db.execute(
                sql: """
                    INSERT INTO providerList (provider, key, generation, count, storedAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(provider, key) DO UPDATE SET generation = excluded.generation, count = excluded.count,
                        storedAt = excluded.storedAt
                    """,
                arguments: [provider, key, generation, count, Date().timeIntervalSince1970])
            // Older generations go (the list's previous one, and older writers'); newer ones belong
            // to writers still at work. Rows are found by generation: every generation of a list
            // is its current one or a writer's.
            try db.execute(
                sql: """
                    DELETE FROM providerRow WHERE provider = ? AND key = ? AND generation IN (
                        SELECT ? UNION SELECT generation FROM providerListWriter
                            WHERE provider = ? AND key = ? AND generation < ?)
                    """,
                arguments: [provider, key, current, provider, key, generation])
            let stale = try String.fetchAll(
                db, sql: "SELECT key FROM providerList WHERE provider = ? ORDER BY storedAt DESC LIMIT -1 OFFSET ?",
                arguments: [provider, Self.providerListLimit])
            for old in stale {
                try db.execute(
                    sql: """
                        DELETE FROM providerRow WHERE provider = ? AND key = ? AND generation IN (
                            SELECT generation FROM providerList WHERE provider = ? AND key = ?
                            UNION SELECT generation FROM providerListWriter WHERE provider = ? AND key = ?)
                        """,
                    arguments: [provider, old, provider, old, provider, old])
                try db.execute(sql: "DELETE FROM providerList WHERE provider = ? AND key = ?", arguments: [provider, old])
            }
        }
    }

    /// Drops a generation that will not be committed.
    public func discardList(provider: String, key: String, generation: Int64) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "DELETE FROM providerRow WHERE provider = ? AND key = ? AND generation = ?",
                arguments: [provider, key, generation])
            try db.execute(sql: "DELETE FROM providerListWriter WHERE generation = ?", arguments: [generation])
        }
    }

    public func listRows(provider: String, key: String, offset: Int, limit: Int) async throws -> [CachedRow]? {
        try await pool.read { db in
            guard
                let generation = try Int64.fetchOne(
                    db, sql: "SELECT generation FROM providerList WHERE provider = ? AND key = ?", arguments: [provider, key])
            else { return nil }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT id, sortKey, data FROM providerRow WHERE provider = ? AND key = ? AND generation = ?
                    ORDER BY sortKey DESC, seq LIMIT ? OFFSET ?
                    """,
                arguments: [provider, key, generation, max(0, limit), max(0, offset)]
            ).map(Self.cachedRow)
        }
    }

    public func listRow(provider: String, key: String, id: String) async throws -> CachedRow? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT r.id, r.sortKey, r.data FROM providerRow r JOIN providerList l
                        ON l.provider = r.provider AND l.key = r.key AND l.generation = r.generation
                    WHERE r.provider = ? AND r.key = ? AND r.id = ? ORDER BY r.seq LIMIT 1
                    """,
                arguments: [provider, key, id]
            ).map(Self.cachedRow)
        }
    }

    public func listCount(provider: String, key: String) async throws -> Int? {
        try await pool.read { db in
            try Int.fetchOne(
                db, sql: "SELECT count FROM providerList WHERE provider = ? AND key = ?", arguments: [provider, key])
        }
    }

    private static func cachedRow(_ row: Row) throws -> CachedRow {
        let order: Double = try row[1]
        return try CachedRow(id: row[0], order: order <= unordered ? nil : order, data: row[2])
    }
}
