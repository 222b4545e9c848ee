import CSQLite
import Dispatch
import Foundation
import MediaKit
import Synchronization
import Testing

@testable import MediaStore

/// The store's own SQLite layer, apart from the store: what a caller's mistake, a cancelled task
/// and a database changed behind the store's back come to.
@Suite struct SQLiteLayerTests {
    let directory = NSTemporaryDirectory() + "mediahost-sqlite-" + UUID().uuidString

    init() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// A write inside a write on the same connection (a store method calling another store
    /// method from inside its transaction) throws at once instead of waiting for itself for ever;
    /// the outer write goes on and commits, and the connection is usable after.
    @Test(.timeLimit(.minutes(1)))
    func aNestedWriteThrowsInsteadOfWaitingForItself() throws {
        let pool = try DatabasePool(path: directory + "/pool.sqlite")
        let queue = try DatabaseQueue(path: directory + "/queue.sqlite")
        for writer in [pool as any DatabaseWriter, queue] {
            try writer.write { try $0.execute(sql: "CREATE TABLE t (n INTEGER)") }
            let inner = try writer.write { db -> (any Error)? in
                try db.execute(sql: "INSERT INTO t (n) VALUES (1)")
                do {
                    try writer.write { try $0.execute(sql: "INSERT INTO t (n) VALUES (2)") }
                    return nil
                } catch {
                    return error
                }
            }
            let error = try #require(inner as? DatabaseError, "\(String(describing: inner))")
            #expect(error.resultCode == SQLITE_MISUSE)
            #expect(error.description.contains("inside another"), "\(error)")
            #expect(try writer.read { try Int.fetchAll($0, sql: "SELECT n FROM t") } == [1])
            // A read inside a write on the one connection of a queue is the same mistake.
            if writer is DatabaseQueue {
                #expect(throws: DatabaseError.self) { try writer.write { _ in try writer.read { _ in 1 } } }
            }
            try writer.write { try $0.execute(sql: "INSERT INTO t (n) VALUES (3)") }
            #expect(try writer.read { try Int.fetchAll($0, sql: "SELECT n FROM t ORDER BY n") } == [1, 3])
        }
    }

    /// A read running when its task is cancelled stops where it stands (a query that would run
    /// for minutes), with CancellationError; the reader it used then reads for the next task as
    /// if nothing happened.
    @Test(.timeLimit(.minutes(2)))
    func aCancelledReadStopsWhereItStands() async throws {
        for writer in [
            try DatabasePool(path: directory + "/pool.sqlite") as any DatabaseWriter,
            try DatabaseQueue(path: directory + "/queue.sqlite"),
        ] {
            try await writer.write { try $0.execute(sql: "CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (7)") }
            let started = Counter()
            let task = Task {
                try await writer.read { db in
                    started.add()
                    return try Int.fetchOne(
                        db,
                        sql: """
                            WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100000000000)
                            SELECT count(*) FROM c
                            """)
                }
            }
            while started.value == 0 { try await Task.sleep(for: .milliseconds(5)) }
            try await Task.sleep(for: .milliseconds(50))
            task.cancel()
            let outcome = await task.result
            #expect(throws: CancellationError.self) { try outcome.get() }
            for _ in 0..<DatabasePool.maximumReaders + 1 {
                #expect(try await writer.read { try Int.fetchOne($0, sql: "SELECT n FROM t") } == 7)
            }
        }
    }

    /// A read whose task is cancelled while it waits for a reader (all five busy) never runs.
    @Test(.timeLimit(.minutes(1)))
    func aReadCancelledBeforeItsTurnNeverRuns() async throws {
        let pool = try DatabasePool(path: directory + "/pool.sqlite")
        try await pool.write { try $0.execute(sql: "CREATE TABLE t (n INTEGER)") }
        let release = DispatchSemaphore(value: 0)
        let reading = Counter()
        let holders = (0..<DatabasePool.maximumReaders).map { _ in
            Task {
                try await pool.read { db -> Int in
                    reading.add()
                    release.wait()
                    return try Int.fetchOne(db, sql: "SELECT count(*) FROM t") ?? -1
                }
            }
        }
        while reading.value < DatabasePool.maximumReaders {
            try await Task.sleep(for: .milliseconds(5))
        }
        let ran = Counter()
        let waiting = Task {
            try await pool.read { _ in ran.add() }
        }
        try await Task.sleep(for: .milliseconds(100))
        waiting.cancel()
        for _ in holders { release.signal() }
        for holder in holders { #expect(try await holder.value == 0) }
        let outcome = await waiting.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        #expect(ran.value == 0)
        // A task cancelled before it asks is not read for either.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pool.read { _ in ran.add() }
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(ran.value == 0)
    }

    /// A write is not cancelled: a task being cancelled still records what it was asked to (a
    /// download's "cancelled" state is written by the task cancelled).
    @Test func aWriteFromACancelledTaskIsDone() async throws {
        let pool = try DatabasePool(path: directory + "/pool.sqlite")
        try await pool.write { try $0.execute(sql: "CREATE TABLE t (n INTEGER)") }
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await pool.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") }
        }
        try await task.value
        #expect(try await pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM t") } == 1)
    }

    /// A column that must hold a value of one type and holds another (a data dir edited by hand,
    /// or written by another version) is an error naming the column, the value's kind and the
    /// statement, not a crash; the other rows and the other methods read on.
    @Test func aColumnOfTheWrongTypeIsAnErrorNotACrash() async throws {
        let path = directory + "/mediahost.sqlite"
        let store = try MediaStore(path: path)
        let episode = ItemID(provider: "podcasts", kind: .episode, nativeID: "e1")
        try await store.savePlayback(PlaybackRecord(id: episode, position: 12, duration: 100, played: false))
        try await store.addFavorite(MediaItem(id: episode, title: "E"))
        // Behind the store's back, as sqlite3 at a prompt would.
        var handle: OpaquePointer?
        #expect(sqlite3_open(path, &handle) == SQLITE_OK)
        #expect(
            sqlite3_exec(handle, "UPDATE playback SET position = 'twelve'; UPDATE setting SET value = value", nil, nil, nil)
                == SQLITE_OK)
        sqlite3_close(handle)

        do {
            _ = try await store.playback(episode)
            Issue.record("a text position read as a number")
        } catch let error as DatabaseError {
            #expect(error.resultCode == SQLITE_MISMATCH)
            #expect(error.description.contains("column position holds text (6 bytes) where a number belongs"), "\(error)")
            #expect(error.description.contains("FROM playback"), "\(error)")
        }
        #expect(try await store.favorites().items.map(\.id) == [episode])
        try readByName()
    }

    /// By name: a NULL or a missing column where a value must be is an error too.
    func readByName() throws {
        let queue = try DatabaseQueue(path: directory + "/named.sqlite")
        let row = try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (a TEXT, b REAL); INSERT INTO t VALUES (NULL, 1.5)")
            return try #require(try Row.fetchOne(db, sql: "SELECT a, b FROM t"))
        }
        #expect(throws: DatabaseError.self) { try row["a"] as String }
        #expect(throws: DatabaseError.self) { try row["c"] as Double }
        #expect(try row["b"] as Double == 1.5)
        #expect((row["a"] as String?) == nil)
    }
}

/// A count threads add to.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
