import Basics
import FoundationEssentials
import HostAPI
import MediaKit

/// The queue ("up next"): what plays after what plays now, in order, kept in the store so every
/// front end sees one queue and it outlives the player, the service and a reboot. An item is in
/// it once; the one playing is not in it (the player takes the head when it starts it).
extension MediaStore {
    /// The most items the queue holds.
    public static let queueLimit = 10_000

    /// The queue in order, from the snapshots kept when each was added.
    public func queue(limit: Int = queueLimit, offset: Int = 0) async throws -> (items: [MediaItem], total: Int) {
        try await pool.read { db in
            let total = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM queueItem") ?? 0
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, snapshot FROM queueItem ORDER BY position LIMIT ? OFFSET ?",
                arguments: [limit, max(0, offset)]
            ).map { row -> (id: String, data: Data) in (try row["id"], try row["snapshot"]) }
            return (try Self.items(fromSnapshots: rows), total)
        }
    }

    /// Puts `items` at the end of the queue, or at its front (`next`), in the order given; one
    /// already queued moves there (an item is queued once).
    /// - Returns: the queue's length after.
    @discardableResult
    public func enqueue(_ items: [MediaItem], next: Bool = false, at date: Date = Date()) async throws -> Int {
        let rows: [(id: String, data: Data)] = Array(zip(items.map(\.id.description), try snapshots(items).map(\.data)))
        return try await write(roomy: rows.count > 1000) { db in
            var order = try String.fetchAll(db, sql: "SELECT id FROM queueItem ORDER BY position")
            var seen = Set<String>()
            let adding = rows.filter { seen.insert($0.id).inserted }
            let ids = Set(adding.map(\.id))
            order.removeAll { ids.contains($0) }
            guard order.count + adding.count <= Self.queueLimit else { throw QueueError.full(limit: Self.queueLimit) }
            order = next ? adding.map(\.id) + order : order + adding.map(\.id)
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO queueItem (id, position, addedAt, snapshot) VALUES (?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET snapshot = excluded.snapshot
                    """)
            // Out of the way of every position until renumbered.
            for (index, (id, data)) in adding.enumerated() {
                try upsert.execute(arguments: [id, -2_000_000 - index, date.timeIntervalSince1970, data])
            }
            try Self.renumberQueue(db, order)
            return order.count
        }
    }

    /// Moves the item at `from` to `to` (0 first; past the end: last).
    /// - Throws: `QueueError.noSuchPosition` when nothing is at `from`.
    public func moveInQueue(from: Int, to: Int) async throws {
        try await pool.write { db in
            var order = try String.fetchAll(db, sql: "SELECT id FROM queueItem ORDER BY position")
            guard order.indices.contains(from) else { throw QueueError.noSuchPosition(from + 1, count: order.count) }
            let id = order.remove(at: from)
            order.insert(id, at: min(max(0, to), order.count))
            try Self.renumberQueue(db, order)
        }
    }

    /// Takes `ids` out of the queue.
    /// - Returns: how many were in it.
    @discardableResult
    public func dequeue(_ ids: [ItemID]) async throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try await pool.write { db in
            var removed = 0
            for id in Set(ids.map(\.description)) {
                try db.execute(sql: "DELETE FROM queueItem WHERE id = ?", arguments: [id])
                removed += db.changesCount
            }
            if removed > 0 {
                try Self.renumberQueue(db, try String.fetchAll(db, sql: "SELECT id FROM queueItem ORDER BY position"))
            }
            return removed
        }
    }

    /// Empties the queue.
    /// - Returns: how many items it held.
    @discardableResult
    public func clearQueue() async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: "DELETE FROM queueItem")
            return db.changesCount
        }
    }

    /// Positions 0, 1, 2, … in `order`'s order. The positions are unique: every row is first
    /// moved where no final position is (kept ones below zero, new ones far above).
    private static func renumberQueue(_ db: Database, _ order: [String]) throws {
        try db.execute(sql: "UPDATE queueItem SET position = -1 - position")
        let update = try db.cachedStatement(sql: "UPDATE queueItem SET position = ? WHERE id = ?")
        for (position, id) in order.enumerated() { try update.execute(arguments: [position, id]) }
    }
}

/// Why a queue operation was refused, said so a person can act.
public enum QueueError: Error, CustomStringConvertible, Sendable, Equatable {
    case full(limit: Int)
    case noSuchPosition(Int, count: Int)

    public var description: String {
        switch self {
        case .full(let limit): "the queue is full (\(limit) items at most); `queue clear` empties it"
        case .noSuchPosition(let position, let count):
            count == 0 ? "the queue is empty" : "there is no item \(position) in the queue (it has \(count))"
        }
    }
}
