import Basics
import FoundationEssentials
import Glibc

/// One cached image: which URL, which content (by hash), how big, when last used.
public struct ArtworkEntry: Sendable, Equatable {
    public var url: String
    public var hash: String
    public var size: Int64
    public var contentType: String?
    public var lastAccess: Date

    public init(url: String, hash: String, size: Int64, contentType: String?, lastAccess: Date) {
        self.url = url
        self.hash = hash
        self.size = size
        self.contentType = contentType
        self.lastAccess = lastAccess
    }
}

extension MediaStore {
    public func artwork(url: String) async throws -> ArtworkEntry? {
        try await pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT url, hash, size, contentType, lastAccess FROM artwork WHERE url = ?", arguments: [url]
            )
            .map {
                try ArtworkEntry(
                    url: $0[0], hash: $0[1], size: $0[2], contentType: $0[3], lastAccess: Date(timeIntervalSince1970: $0[4]))
            }
        }
    }

    public func touchArtwork(url: String, at date: Date = Date()) async throws {
        try await pool.write { db in
            try db.execute(sql: "UPDATE artwork SET lastAccess = ? WHERE url = ?", arguments: [date.timeIntervalSince1970, url])
        }
    }

    /// Records an entry, then evicts least-recently-used ones until the total fits `limit`.
    /// - Returns: the hashes no entry uses any more (their files can go).
    public func storeArtwork(_ entry: ArtworkEntry, limit: Int64) async throws -> [String] {
        try await pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO artwork (url, hash, size, contentType, lastAccess) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT(url) DO UPDATE SET hash = excluded.hash, size = excluded.size,
                        contentType = excluded.contentType, lastAccess = excluded.lastAccess
                    """,
                arguments: [entry.url, entry.hash, entry.size, entry.contentType, entry.lastAccess.timeIntervalSince1970])
            var orphans: [String] = []
            // Sizes count once per distinct content: files are shared by hash.
            func total() throws -> Int64 {
                try Int64.fetchOne(
                    db, sql: "SELECT COALESCE(SUM(size), 0) FROM (SELECT hash, MAX(size) AS size FROM artwork GROUP BY hash)")
                    ?? 0
            }
            while try total() > limit {
                guard
                    let oldest = try Row.fetchOne(
                        db, sql: "SELECT url, hash FROM artwork WHERE url != ? ORDER BY lastAccess LIMIT 1",
                        arguments: [entry.url])
                else { break }
                let hash: String = try oldest[1]
                try db.execute(sql: "DELETE FROM artwork WHERE url = ?", arguments: [try oldest[0] as String])
                if try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM artwork WHERE hash = ?", arguments: [hash]) == 0 {
                    orphans.append(hash)
                }
            }
            return orphans
        }
    }

    /// (entries, bytes on disk counted once per content).
    public func artworkStats() async throws -> (entries: Int, bytes: Int64) {
        try await pool.read { db in
            let entries = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM artwork") ?? 0
            let bytes =
                try Int64.fetchOne(
                    db, sql: "SELECT COALESCE(SUM(size), 0) FROM (SELECT hash, MAX(size) AS size FROM artwork GROUP BY hash)")
                ?? 0
            return (entries, bytes)
        }
    }

    /// Forgets every entry. - Returns: the hashes that were cached.
    public func clearArtwork() async throws -> [String] {
        try await pool.write { db in
            let hashes = try String.fetchAll(db, sql: "SELECT DISTINCT hash FROM artwork")
            try db.execute(sql: "DELETE FROM artwork")
            return hashes
        }
    }
}
