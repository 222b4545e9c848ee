import Basics
import FoundationEssentials
import Glibc
import HostAPI
import MediaKit

/// A download as the store keeps it.
public struct DownloadRecord: Codable, Sendable, Equatable {
    public typealias State = DownloadState

    public var id: ItemID
    public var provider: String
    public var title: String
    public var url: String
    /// The final file; while downloading, bytes go to `path + ".part"`.
    public var path: String
    public var state: State
    public var bytes: Int64
    public var total: Int64?
    /// What the provider said the size would be (the RSS enclosure length).
    public var expectedLength: Int64?
    /// Validators of the response the `.part` file came from, for If-Range.
    public var etag: String?
    public var lastModified: String?
    /// Why it failed, when it did.
    public var error: String?
    /// Something worth knowing, e.g. a size that differs from the feed's.
    public var note: String?
    /// FIFO order of the queue.
    public var seq: Int64
    /// When a program makes the file rather than an HTTP transfer (yt-dlp merging formats): its
    /// words as JSON (`ProgramDownload`).
    public var program: String?
    public var createdAt: Date
    public var updatedAt: Date

    public var partPath: String { path + ".part" }

    public init(
        id: ItemID, title: String, url: String, path: String, expectedLength: Int64?, seq: Int64 = 0, now: Date = Date()
    ) {
        self.id = id
        self.provider = id.provider
        self.title = title
        self.url = url
        self.path = path
        self.state = .queued
        self.bytes = 0
        self.expectedLength = expectedLength
        self.seq = seq
        self.createdAt = now
        self.updatedAt = now
    }
}

extension DownloadRecord {
    init(row: Row) throws {
        guard let id = try? ItemID(parsing: row["id"]), let state = State(rawValue: try row["state"]) else {
            throw StoreError.corruptSnapshot(id: row["id"] ?? "?")
        }
        self.id = id
        provider = try row["provider"]
        title = try row["title"]
        url = try row["url"]
        path = try row["path"]
        self.state = state
        bytes = try row["bytes"]
        total = row["total"]
        expectedLength = row["expectedLength"]
        etag = row["etag"]
        lastModified = row["lastModified"]
        error = row["error"]
        note = row["note"]
        seq = try row["seq"]
        program = row["program"]
        createdAt = Date(timeIntervalSince1970: try row["createdAt"])
        updatedAt = Date(timeIntervalSince1970: try row["updatedAt"])
    }

    var arguments: StatementArguments {
        [
            id.description, provider, title, url, path, state.rawValue, bytes, total, expectedLength, etag, lastModified, error,
            note,
            seq, createdAt.timeIntervalSince1970, updatedAt.timeIntervalSince1970, program,
        ]
    }
}

extension MediaStore {
    /// Inserts a new download at the end of the queue.
    /// - Returns: the record with its queue position.
    public func insertDownload(_ record: DownloadRecord) async throws -> DownloadRecord {
        try await pool.write { db in
            var record = record
            record.seq = (try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM download") ?? 0) + 1
            try db.execute(
                sql: """
                    INSERT INTO download (id, provider, title, url, path, state, bytes, total, expectedLength, etag, lastModified,
                        error, note, seq, createdAt, updatedAt, program) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, arguments: record.arguments)
            return record
        }
    }

    public func updateDownload(_ record: DownloadRecord) async throws {
        var record = record
        record.updatedAt = Date()
        try await pool.write { [record] db in
            let before = try String.fetchOne(
                db, sql: "SELECT state FROM download WHERE id = ?", arguments: [record.id.description])
            try db.execute(
                sql: """
                    UPDATE download SET title = ?, url = ?, path = ?, state = ?, bytes = ?, total = ?, expectedLength = ?, etag = ?,
                        lastModified = ?, error = ?, note = ?, seq = ?, updatedAt = ?, program = ? WHERE id = ?
                    """,
                arguments: [
                    record.title, record.url, record.path, record.state.rawValue, record.bytes, record.total,
                    record.expectedLength,
                    record.etag, record.lastModified, record.error, record.note, record.seq,
                    record.updatedAt.timeIntervalSince1970, record.program,
                    record.id.description,
                ])
            // A download finished is told to the sync server, once.
            if record.state == .completed, before != nil, before != "completed", SyncKeys.mayHaveEpisodeURL(record.id),
                try Self.recordsSync(db)
            {
                try db.execute(
                    sql: "INSERT INTO syncOutbox (action, item, at) VALUES ('download', ?, ?)",
                    arguments: [record.id.description, record.updatedAt.timeIntervalSince1970])
            }
        }
    }

    /// Records the validators and size of the response a `.part` file comes from.
    public func updateDownloadValidators(_ id: ItemID, etag: String?, lastModified: String?, total: Int64?) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE download SET etag = ?, lastModified = ?, total = COALESCE(?, total) WHERE id = ?",
                arguments: [etag, lastModified, total, id.description])
        }
    }

    /// A running download's byte count, written while it runs (never over a row that has
    /// finished, paused or been cancelled since).
    public func updateRunningDownloadBytes(_ id: ItemID, bytes: Int64) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE download SET bytes = ? WHERE id = ? AND state = 'running'", arguments: [bytes, id.description])
        }
    }

    public func download(_ id: ItemID) async throws -> DownloadRecord? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM download WHERE id = ?", arguments: [id.description]).map(
                DownloadRecord.init(row:))
        }
    }

    /// Downloads in queue order, optionally only in some states.
    public func downloads(in states: [DownloadRecord.State]? = nil) async throws -> [DownloadRecord] {
        try await pool.read { db in
            if let states {
                let marks = states.map { _ in "?" }.joined(separator: ",")
                return try Row.fetchAll(
                    db, sql: "SELECT * FROM download WHERE state IN (\(marks)) ORDER BY seq",
                    arguments: StatementArguments(states.map(\.rawValue))
                ).map(DownloadRecord.init(row:))
            }
            return try Row.fetchAll(db, sql: "SELECT * FROM download ORDER BY seq").map(DownloadRecord.init(row:))
        }
    }

    /// The downloads of some items, in one query (to annotate listings).
    public func downloads(for ids: [ItemID]) async throws -> [ItemID: DownloadRecord] {
        guard !ids.isEmpty else { return [:] }
        let keys = IDKeys(ids)
        return try await pool.read { db in try Self.downloads(db, keys) }
    }

    static func downloads(_ db: Database, _ keys: IDKeys) throws -> [ItemID: DownloadRecord] {
        var found: [ItemID: DownloadRecord] = [:]
        try forEachRow(db, for: keys, columns: "*", from: "download") { row in
            let record = try DownloadRecord(row: row)
            found[record.id] = record
        }
        return found
    }

    /// Whether another download already owns `path` (or its .part).
    public func downloadPathTaken(_ path: String) async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM download WHERE path = ?", arguments: [path]) ?? false
        }
    }

    @discardableResult
    public func deleteDownload(_ id: ItemID) async throws -> Bool {
        try await pool.write { db in
            let completed =
                try String.fetchOne(db, sql: "SELECT state FROM download WHERE id = ?", arguments: [id.description])
                == "completed"
            try db.execute(sql: "DELETE FROM download WHERE id = ?", arguments: [id.description])
            let deleted = db.changesCount > 0
            if deleted, completed, SyncKeys.mayHaveEpisodeURL(id), try Self.recordsSync(db) {
                try db.execute(
                    sql: "INSERT INTO syncOutbox (action, item, at) VALUES ('delete', ?, ?)",
                    arguments: [id.description, Date().timeIntervalSince1970])
            }
            return deleted
        }
    }
}
