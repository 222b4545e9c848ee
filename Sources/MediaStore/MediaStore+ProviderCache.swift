import Foundation
import GRDB
import MediaKit

extension MediaStore {
    /// Entries kept per provider; the oldest go first.
    public static let providerCacheLimit = 300

    public func cachedValue(provider: String, key: String) async throws -> CachedValue? {
        try await pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT data, etag, lastModified, storedAt FROM providerCache WHERE provider = ? AND key = ?",
                    arguments: [provider, key])
            else { return nil }
            return CachedValue(data: row[0], etag: row[1], lastModified: row[2], storedAt: Date(timeIntervalSince1970: row[3]))
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
