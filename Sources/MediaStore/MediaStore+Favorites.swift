import Basics
import FoundationEssentials
import Glibc
import MediaKit

extension MediaStore {
    /// Keeps a snapshot of `item` as a favorite; adding it again refreshes the snapshot and keeps its place.
    public func addFavorite(_ item: MediaItem, at date: Date = Date()) async throws {
        try await addFavorites([item], at: date)
    }

    /// Keeps several favorites in one transaction (imports, benchmarks).
    public func addFavorites(_ items: [MediaItem], at date: Date = Date()) async throws {
        let rows = Array(zip(items, try snapshots(items)))
        try await pool.write { db in
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO favorite (id, provider, kind, title, addedAt, snapshot, syncURL) VALUES (?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET title = excluded.title, snapshot = excluded.snapshot,
                        syncURL = COALESCE(favorite.syncURL, excluded.syncURL)
                    """)
            // A show followed anew is told to the sync server (one already followed is not).
            let syncing = try Self.recordsSync(db)
            let known = syncing ? try db.cachedStatement(sql: "SELECT 1 FROM favorite WHERE id = ?") : nil
            for (item, (title, data)) in rows {
                let url = SyncKeys.subscriptionURL(of: item)
                if let known, let url, try Int.fetchOne(known, arguments: [item.id.description]) == nil {
                    try Self.queueSync(db, .subscribe, url: url, at: date)
                }
                try statement.execute(arguments: [
                    item.id.description, item.provider, item.kind.rawValue, title, date.timeIntervalSince1970, data, url,
                ])
            }
        }
    }

    /// A newer snapshot of a favorite (its title from its feed), only while it is one: an
    /// unfollow in between is not undone.
    public func refreshFavorite(_ item: MediaItem) async throws {
        let (title, data) = try snapshots([item])[0]
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE favorite SET title = ?, snapshot = ? WHERE id = ?", arguments: [title, data, item.id.description])
        }
    }

    /// - Returns: whether the item was a favorite.
    @discardableResult
    public func removeFavorite(_ id: ItemID) async throws -> Bool {
        try await pool.write { db in
            let url = try String.fetchOne(db, sql: "SELECT syncURL FROM favorite WHERE id = ?", arguments: [id.description])
            try db.execute(sql: "DELETE FROM favorite WHERE id = ?", arguments: [id.description])
            let removed = db.changesCount > 0
            if removed, let url, try Self.recordsSync(db) { try Self.queueSync(db, .unsubscribe, url: url, at: Date()) }
            return removed
        }
    }

    /// One page of favorites, newest first, read from the stored snapshots (no network).
    /// - Parameters:
    ///   - after: the `next` of the previous page.
    public func favorites(
        provider: String? = nil, kind: MediaKind? = nil, limit: Int = 50, after: MediaKit.Cursor? = nil
    ) async throws -> Page {
        let position = after.flatMap(FavoritePosition.init)
        return try await pool.read { db in
            var sql = "SELECT id, addedAt, snapshot FROM favorite"
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let provider { conditions.append("provider = ?"); arguments += [provider] }
            if let kind { conditions.append("kind = ?"); arguments += [kind.rawValue] }
            if let position {
                conditions.append("(addedAt < ? OR (addedAt = ? AND id < ?))")
                arguments += [position.addedAt, position.addedAt, position.id]
            }
            if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
            sql += " ORDER BY addedAt DESC, id DESC LIMIT ?"
            arguments += [limit + 1]
            let decoder = JSONDecoder()
            var items: [MediaItem] = []
            var last: FavoritePosition?
            let rows = try Row.fetchCursor(db, sql: sql, arguments: arguments)
            var count = 0
            while let row = try rows.next() {
                count += 1
                if count > limit { break }
                let id: String = try row[0]
                guard var item = try? decoder.decode(MediaItem.self, from: row[2] as Data) else {
                    throw StoreError.corruptSnapshot(id: id)
                }
                item.favorite = true
                items.append(item)
                last = FavoritePosition(addedAt: try row[1], id: id)
            }
            let next = count > limit ? last.map { MediaKit.Cursor($0.encoded) } : nil
            return Page(items: items, next: next)
        }
    }

    /// One favorite's snapshot, or nil when it is not a favorite.
    public func favorite(_ id: ItemID) async throws -> MediaItem? {
        try await pool.read { db in
            guard let data = try Data.fetchOne(db, sql: "SELECT snapshot FROM favorite WHERE id = ?", arguments: [id.description])
            else {
                return nil
            }
            guard var item = try? JSONDecoder().decode(MediaItem.self, from: data) else {
                throw StoreError.corruptSnapshot(id: id.description)
            }
            item.favorite = true
            return item
        }
    }

    /// The ids among `ids` that are favorites, in one query.
    public func favoriteIDs(among ids: [ItemID]) async throws -> Set<ItemID> {
        guard !ids.isEmpty else { return [] }
        let keys = IDKeys(ids)
        return try await pool.read { db in try Self.favoriteIDs(db, keys) }
    }

    static func favoriteIDs(_ db: Database, _ keys: IDKeys) throws -> Set<ItemID> {
        var found = Set<ItemID>()
        try forEachRow(db, for: keys, columns: "id", from: "favorite") { row in
            if let id = keys.ids[try row[0]] { found.insert(id) }
        }
        return found
    }

    /// A provider's favorites of some kinds, newest first.
    public func favoriteIDs(provider: String, kinds: [MediaKind]) async throws -> [ItemID] {
        guard !kinds.isEmpty else { return [] }
        return try await pool.read { db in
            let placeholders = Array(repeating: "?", count: kinds.count).joined(separator: ",")
            return try String.fetchAll(
                db,
                sql: "SELECT id FROM favorite WHERE provider = ? AND kind IN (\(placeholders)) ORDER BY addedAt DESC, id DESC",
                arguments: StatementArguments([provider] + kinds.map(\.rawValue))
            ).compactMap { try? ItemID(parsing: $0) }
        }
    }

    public func favoriteCount() async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM favorite") ?? 0 }
    }
}

/// Where a favorites page ended: the keyset (addedAt, id) of its last row.
struct FavoritePosition {
    var addedAt: Double
    var id: String

    init(addedAt: Double, id: String) {
        self.addedAt = addedAt
        self.id = id
    }

    init?(_ cursor: MediaKit.Cursor) {
        let parts = cursor.rawValue.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "fav", let addedAt = Double(parts[1]) else { return nil }
        self.init(addedAt: addedAt, id: String(parts[2]))
    }

    var encoded: String { "fav|\(addedAt)|\(id)" }
}
