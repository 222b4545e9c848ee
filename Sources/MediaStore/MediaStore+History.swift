import Basics
import FoundationEssentials
import Glibc
import HostAPI
import MediaKit

extension MediaStore {
    /// How many searches are kept; older ones are dropped as new ones are made.
    public static let historyLimit = 100
    /// Notes a write that `observeChanges` does not tell.
    static let quietNote = "quiet"

    /// Records a search; searching the same thing again moves it to the top.
    /// The search keeping itself is not told in `observeChanges` (each search would tell every
    /// client); forgetting searches is.
    public func recordSearch(query: String, provider: String?, kind: MediaKind?, at date: Date = Date()) async throws {
        try await pool.write { db in
            db.noteChange(Self.quietNote)
            try db.execute(
                sql: "DELETE FROM searchHistory WHERE provider = ? AND query = ? AND kind = ?",
                arguments: [provider ?? "", query, kind?.rawValue ?? ""])
            try db.execute(
                sql: "INSERT INTO searchHistory (provider, query, kind, searchedAt) VALUES (?, ?, ?, ?)",
                arguments: [provider ?? "", query, kind?.rawValue ?? "", date.timeIntervalSince1970])
            try db.execute(
                sql: "DELETE FROM searchHistory WHERE seq <= (SELECT seq FROM searchHistory ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                arguments: [Self.historyLimit])
        }
    }

    /// Searches newest first, optionally only those made on one provider.
    public func history(provider: String? = nil, limit: Int = MediaStore.historyLimit) async throws -> [SearchRecord] {
        try await pool.read { db in
            let rows: [Row]
            if let provider {
                rows = try Row.fetchAll(
                    db,
                    sql:
                        "SELECT provider, query, kind, searchedAt FROM searchHistory WHERE provider = ? ORDER BY seq DESC LIMIT ?",
                    arguments: [provider, limit])
            } else {
                rows = try Row.fetchAll(
                    db, sql: "SELECT provider, query, kind, searchedAt FROM searchHistory ORDER BY seq DESC LIMIT ?",
                    arguments: [limit])
            }
            return try rows.map { row in
                let provider: String = try row[0]
                let kind: String = try row[2]
                return try SearchRecord(
                    query: row[1], provider: provider.isEmpty ? nil : provider, kind: MediaKind(rawValue: kind),
                    at: ISODate.string(from: Date(timeIntervalSince1970: row[3])))
            }
        }
    }

    /// - Returns: how many searches were forgotten.
    @discardableResult
    public func clearHistory(provider: String? = nil) async throws -> Int {
        try await pool.write { db in
            if let provider {
                try db.execute(sql: "DELETE FROM searchHistory WHERE provider = ?", arguments: [provider])
            } else {
                try db.execute(sql: "DELETE FROM searchHistory")
            }
            return db.changesCount
        }
    }
}
