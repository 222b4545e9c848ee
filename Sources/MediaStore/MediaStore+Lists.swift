import Basics
import FoundationEssentials
import Glibc
import HostAPI
import MediaKit

/// Why a list operation was refused, said so a person can act.
public enum ListError: Error, CustomStringConvertible, Sendable, Equatable {
    case noSuchList(String)
    case exists(String)
    case notInList(id: String, list: String)
    case full(String, limit: Int)

    public var description: String {
        switch self {
        case .noSuchList(let name): "there is no list '\(name)' (`lists` shows them; `list new \(Self.typed(name))` makes it)"
        case .exists(let name): "a list '\(name)' already exists"
        case .notInList(let id, let list): "\(id) is not in the list '\(list)'"
        case .full(let name, let limit): "the list '\(name)' is full (\(limit) items at most)"
        }
    }

    /// A name as typed at the REPL: quoted when it has spaces or quotes, so a hint runs as shown.
    static func typed(_ name: String) -> String {
        guard name.contains(where: { $0.isWhitespace || $0 == "\"" || $0 == "'" || $0 == "\\" }) else { return name }
        return "\"" + name.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
    }
}

extension MediaStore {
    /// The most items a list holds.
    public static let listLimit = 10_000

    /// How a write notes the list it changes (`StoreChange.lists`).
    static func listNote(_ name: String) -> String { "list:" + name }

    public func lists() async throws -> [ListInfo] {
        try await pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT name, createdAt, (SELECT COUNT(*) FROM listItem WHERE list = list.seq) AS count
                    FROM list ORDER BY createdAt, seq
                    """
            ).map(Self.listInfo)
        }
    }

    private static func listInfo(_ row: Row) throws -> ListInfo {
        try ListInfo(
            name: row["name"], count: row["count"], created: ISODate.string(from: Date(timeIntervalSince1970: row["createdAt"])))
    }

    public func list(named name: String) async throws -> ListInfo? {
        try await pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT name, createdAt, (SELECT COUNT(*) FROM listItem WHERE list = list.seq) AS count
                    FROM list WHERE name = ? COLLATE NOCASE
                    """, arguments: [name]
            ).map(Self.listInfo)
        }
    }

    @discardableResult
    public func createList(_ name: String, at date: Date = Date()) async throws -> ListInfo {
        try await pool.write { db in
            db.noteChange(Self.listNote(name))
            if try Self.listSeq(db, name) != nil { throw ListError.exists(name) }
            try db.execute(
                sql: "INSERT INTO list (name, createdAt) VALUES (?, ?)", arguments: [name, date.timeIntervalSince1970])
        }
        return ListInfo(name: name, count: 0, created: ISODate.string(from: date))
    }

    public func renameList(_ name: String, to newName: String) async throws {
        try await pool.write { db in
            db.noteChange(Self.listNote(name))
            guard let seq = try Self.listSeq(db, name) else { throw ListError.noSuchList(name) }
            if let other = try Self.listSeq(db, newName), other != seq { throw ListError.exists(newName) }
            try db.execute(sql: "UPDATE list SET name = ? WHERE seq = ?", arguments: [newName, seq])
        }
    }

    /// - Returns: whether there was such a list.
    @discardableResult
    public func deleteList(_ name: String) async throws -> Bool {
        try await pool.write { db in
            db.noteChange(Self.listNote(name))
            guard let seq = try Self.listSeq(db, name) else { return false }
            try db.execute(sql: "DELETE FROM listItem WHERE list = ?", arguments: [seq])
            try db.execute(sql: "DELETE FROM list WHERE seq = ?", arguments: [seq])
            return true
        }
    }

    /// Appends items to a list (an item already there keeps its place and gets the new snapshot).
    /// - Returns: how many were new to the list.
    @discardableResult
    public func addToList(_ name: String, _ items: [MediaItem], at date: Date = Date()) async throws -> Int {
        let rows = Array(zip(items.map(\.id.description), try snapshots(items).map(\.data)))
        return try await write(roomy: rows.count > 1000) { db in
            db.noteChange(Self.listNote(name))
            guard let seq = try Self.listSeq(db, name) else { throw ListError.noSuchList(name) }
            var count = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM listItem WHERE list = ?", arguments: [seq]) ?? 0
            var next =
                (try Int.fetchOne(db, sql: "SELECT MAX(position) FROM listItem WHERE list = ?", arguments: [seq]) ?? -1) + 1
            var added = 0
            // Compiled once for the whole batch (an import adds thousands).
            let update = try db.cachedStatement(sql: "UPDATE listItem SET snapshot = ? WHERE list = ? AND id = ?")
            let insert = try db.cachedStatement(
                sql: "INSERT INTO listItem (list, id, position, addedAt, snapshot) VALUES (?, ?, ?, ?, ?)")
            // Which are there already, asked once (not a statement per item); an item twice in
            // the batch is added once.
            var present =
                count == 0 ? [] : Set(try String.fetchAll(db, sql: "SELECT id FROM listItem WHERE list = ?", arguments: [seq]))
            for (id, data) in rows {
                if present.contains(id) {
                    try update.execute(arguments: [data, seq, id])
                    continue
                }
                guard count < Self.listLimit else { throw ListError.full(name, limit: Self.listLimit) }
                try insert.execute(arguments: [seq, id, next, date.timeIntervalSince1970, data])
                present.insert(id)
                next += 1
                count += 1
                added += 1
            }
            return added
        }
    }

    /// - Returns: whether the item was in the list.
    @discardableResult
    public func removeFromList(_ name: String, _ id: ItemID) async throws -> Bool {
        try await pool.write { db in
            db.noteChange(Self.listNote(name))
            guard let seq = try Self.listSeq(db, name) else { throw ListError.noSuchList(name) }
            try db.execute(sql: "DELETE FROM listItem WHERE list = ? AND id = ?", arguments: [seq, id.description])
            return db.changesCount > 0
        }
    }

    /// Moves an item to `index` (0 first; past the end: last).
    public func moveInList(_ name: String, _ id: ItemID, to index: Int) async throws {
        try await pool.write { db in
            db.noteChange(Self.listNote(name))
            guard let seq = try Self.listSeq(db, name) else { throw ListError.noSuchList(name) }
            var ids = try String.fetchAll(
                db, sql: "SELECT id FROM listItem WHERE list = ? ORDER BY position", arguments: [seq])
            guard let from = ids.firstIndex(of: id.description) else {
                throw ListError.notInList(id: id.description, list: name)
            }
            ids.remove(at: from)
            ids.insert(id.description, at: min(max(0, index), ids.count))
            for (position, item) in ids.enumerated() {
                try db.execute(
                    sql: "UPDATE listItem SET position = ? WHERE list = ? AND id = ?", arguments: [position, seq, item])
            }
        }
    }

    /// A page of a list's items in their order, from their snapshots.
    /// - Parameter after: the `next` of the previous page (an offset).
    public func listItems(_ name: String, limit: Int = 50, after: MediaKit.Cursor? = nil) async throws -> Page {
        let offset = after.flatMap { Int($0.rawValue) }.map { max(0, $0) } ?? 0
        return try await pool.read { db in
            guard let seq = try Self.listSeq(db, name) else { throw ListError.noSuchList(name) }
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM listItem WHERE list = ?", arguments: [seq]) ?? 0
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, snapshot FROM listItem WHERE list = ? ORDER BY position LIMIT ? OFFSET ?",
                arguments: [seq, limit, offset]
            ).map { row -> (id: String, data: Data) in (try row["id"], try row["snapshot"]) }
            let items = try Self.items(fromSnapshots: rows)
            let end = offset + items.count
            return Page(
                items: items, next: end < total ? MediaKit.Cursor(String(end)) : nil,
                prev: offset > 0 ? MediaKit.Cursor(String(max(0, offset - limit))) : nil, total: total)
        }
    }

    /// Every item of a list, in order (exports, downloads).
    public func allListItems(_ name: String) async throws -> [MediaItem] {
        try await listItems(name, limit: Self.listLimit).items
    }

    /// The names of the lists that hold each of `ids`.
    public func listNames(for ids: [ItemID]) async throws -> [ItemID: [String]] {
        guard !ids.isEmpty else { return [:] }
        let keys = IDKeys(ids)
        return try await pool.read { db in try Self.listNames(db, keys) }
    }

    static func listNames(_ db: Database, _ keys: IDKeys) throws -> [ItemID: [String]] {
        var found: [ItemID: [String]] = [:]
        let sql = { (marks: String) in
            """
            SELECT listItem.id, list.name FROM listItem JOIN list ON list.seq = listItem.list
            WHERE listItem.id IN (\(marks)) ORDER BY list.createdAt, list.seq
            """
        }
        try forEachRow(db, for: keys, sql) { row in
            guard let id = keys.ids[try row[0]] else { return }
            found[id, default: []].append(try row[1])
        }
        return found
    }

    private static func listSeq(_ db: Database, _ name: String) throws -> Int64? {
        try Int64.fetchOne(db, sql: "SELECT seq FROM list WHERE name = ? COLLATE NOCASE", arguments: [name])
    }
}
