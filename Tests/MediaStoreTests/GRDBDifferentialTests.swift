import Foundation
import JSONRPC
import MediaKit
import Testing

@testable import MediaStore

/// The store's own SQLite layer reads every cell as GRDB 7.10 read it, the library it replaced:
/// each cell of a data dir GRDB's build wrote (Fixtures/grdb-7.10-v11.sqlite) and of a table of
/// hostile values (every storage class and the edges between them), as each type the store asks
/// for, through rows copied and rows read where SQLite holds them. The recording
/// (Fixtures/grdb-7.10-reads.json) was made by GRDB itself (`Tests/Tools/grdb-record`); this test
/// never builds GRDB.
///
/// Each read is as GRDB's `decodeIfPresent` answers it: the value, "null" for NULL, "error" where
/// the cell holds no such value. The one intended difference is said where it is tested: GRDB's
/// non-throwing reads stopped the process on "error", this layer's throw or give nil.
@Suite struct GRDBDifferentialTests {
    let directory = NSTemporaryDirectory() + "mediahost-grdb-diff-" + UUID().uuidString

    static func recording() throws -> JSONValue {
        let path = try #require(Bundle.module.path(forResource: "grdb-7.10-reads", ofType: "json", inDirectory: "Fixtures"))
        return try JSONValue(parsing: String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self))
    }

    /// One cell as each type, in the recording's terms.
    static func reads(_ row: Row, _ index: Int, column: String) -> JSONValue {
        let stored = row.databaseValue(at: index)
        func read<T: DatabaseValueConvertible>(_ type: T.Type, _ show: (T) -> JSONValue) -> JSONValue {
            if stored == .null { return "null" }
            guard let value = T.fromDatabaseValue(stored) else { return "error" }
            return show(value)
        }
        let storage: String =
            switch stored {
            case .null: "null"
            case .integer: "integer"
            case .real: "real"
            case .text: "text"
            case .blob: "blob"
            }
        return [
            "column": .string(column), "storage": .string(storage),
            "int64": read(Int64.self) { .number(String($0)) }, "int": read(Int.self) { .number(String($0)) },
            "double": read(Double.self) { $0.isFinite ? JSONValue($0) : .string("\($0)") },
            "bool": read(Bool.self) { .bool($0) }, "string": read(String.self) { .string($0) },
            "data": read(Data.self) { .string($0.base64EncodedString()) },
        ]
    }

    /// The same reads, made by this layer, of every table the recording names.
    func differences(_ recorded: [JSONValue], in writer: any DatabaseWriter) throws -> [String] {
        var found: [String] = []
        for table in recorded {
            let name = table["table"]?.stringValue ?? "?"
            let sql = try #require(table["sql"]?.stringValue)
            let (copied, live) = try writer.read { db -> ([JSONValue], [JSONValue]) in
                let names = try db.makeStatement(sql: sql).columnNames
                let copied = try Row.fetchAll(db, sql: sql).map { row in
                    JSONValue.array(names.indices.map { Self.reads(row, $0, column: names[$0]) })
                }
                var live: [JSONValue] = []
                let cursor = try Row.fetchCursor(db, sql: sql)
                while let row = try cursor.next() {
                    live.append(.array(names.indices.map { Self.reads(row, $0, column: names[$0]) }))
                }
                return (copied, live)
            }
            // Compared with GRDB's copied rows both ways: GRDB's cursor let SQLite convert ("abc"
            // read as 0, 1e300 as Int64.max), this layer reads a cursor's row as a copied one
            // (`whereGRDBsCursorMadeValuesUpThisLayerDoesNot`).
            let theirs = table["copied"]?.arrayValue ?? []
            for (way, ours) in [("copied", copied), ("live", live)] {
                if theirs.count != ours.count {
                    found.append("\(name) (\(way)): GRDB read \(theirs.count) rows, this layer \(ours.count)")
                }
                for (index, (a, b)) in zip(theirs, ours).enumerated() {
                    let cells = zip(a.arrayValue ?? [], b.arrayValue ?? [])
                    for (grdb, mine) in cells {
                        for key in ["storage", "int64", "int", "double", "bool", "string", "data"]
                        where !Self.same(grdb[key] ?? .null, mine[key] ?? .null) && !Self.intended(key, grdb, mine) {
                            found.append(
                                "\(name) row \(index) \(grdb["column"]?.stringValue ?? "?") as \(key) (\(way)): "
                                    + "GRDB \(grdb[key]?.jsonString ?? "-"), this layer \(mine[key]?.jsonString ?? "-")")
                        }
                    }
                }
            }
        }
        return found
    }

    /// The two differences kept on purpose, each where GRDB's copied rows disagreed with its own
    /// cursor: a number read as text is its text (GRDB's copied row refused it, its cursor gave
    /// the text, as SQLite does), and text holding a NUL is read whole (GRDB's copied row cut it at
    /// the NUL, its cursor did not).
    static func intended(_ key: String, _ grdb: JSONValue, _ mine: JSONValue) -> Bool {
        let storage = grdb["storage"]?.stringValue
        let text = mine["string"]?.stringValue ?? ""
        switch key {
        case "string", "data":
            if storage == "integer" || storage == "real" { return grdb[key] == "error" && mine[key] != "error" }
            return storage == "text" && text.contains("\u{0}")
        default: return false
        }
    }

    /// Equal, numbers within a part in 10^15 (the recording's JSON writes doubles in its own digits).
    static func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.number(let x), .number(let y)):
            if let x = Int64(x), let y = Int64(y) {
                x == y
            } else if let x = Double(x), let y = Double(y) {
                x == y || abs(x - y) <= abs(x) * 1e-15
            } else {
                false
            }
        case (.array(let x), .array(let y)): x.count == y.count && zip(x, y).allSatisfy(same)
        case (.object(let x), .object(let y)): x.keys == y.keys && x.allSatisfy { same($0.value, y[$0.key] ?? .null) }
        default: a == b
        }
    }

    @Test func aDataDirGRDBWroteReadsAsGRDBReadIt() throws {
        let recording = try Self.recording()
        let fixture = try #require(
            Bundle.module.path(forResource: "grdb-7.10-v11", ofType: "sqlite", inDirectory: "Fixtures"))
        #expect(recording["fixture"]?.stringValue == "grdb-7.10-v11.sqlite")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/mediahost.sqlite"
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        let tables = try #require(recording["tables"]?.arrayValue)
        // Every table of the data dir, the full-text index's too.
        #expect(tables.count >= 15)
        let found = try differences(tables, in: try DatabaseQueue(path: path))
        #expect(found.isEmpty, "\(found.count) cells read otherwise:\n\(found.prefix(20).joined(separator: "\n"))")
    }

    @Test func hostileValuesReadAsGRDBReadThem() throws {
        let recording = try Self.recording()
        let sql = try #require(recording["hostileSQL"]?.stringValue)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: directory + "/hostile.sqlite")
        try queue.write { db in
            for statement in sql.split(separator: ";") where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                try db.execute(sql: String(statement))
            }
        }
        let tables = try #require(recording["hostile"]?.arrayValue)
        let rows = tables.first?["copied"]?.arrayValue ?? []
        #expect(rows.count == 24)
        let found = try differences(tables, in: queue)
        #expect(found.isEmpty, "\(found.count) cells read otherwise:\n\(found.joined(separator: "\n"))")
    }

    /// GRDB's cursor let SQLite convert what a copied row refused: text "abc" read as the integer
    /// 0, 1e300 as Int64.max. This layer reads a cursor's row as a copied one: no value made up.
    @Test func whereGRDBsCursorMadeValuesUpThisLayerDoesNot() throws {
        let recording = try Self.recording()
        let hostile = try #require(recording["hostile"]?.arrayValue?.first)
        let copied = try #require(hostile["copied"]?.arrayValue)
        let live = try #require(hostile["live"]?.arrayValue)
        let abc = 15  // rowid 16: 'abc'
        #expect(live[abc].arrayValue?.first?["int64"] == .number("0"), "GRDB's cursor read 'abc' as 0")
        #expect(copied[abc].arrayValue?.first?["int64"] == "error")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: directory + "/cursor.sqlite")
        try queue.write { try $0.execute(sql: "CREATE TABLE t(v); INSERT INTO t VALUES ('abc'), (1e300)") }
        let reads = try queue.read { db -> [[Int64?]] in
            let cursor = try Row.fetchCursor(db, sql: "SELECT v FROM t ORDER BY rowid")
            var reads: [[Int64?]] = []
            while let row = try cursor.next() { reads.append([row[0] as Int64?]) }
            return reads
        }
        #expect(reads == [[nil], [nil]])
    }

    /// Where GRDB's plain reads stopped the process ("error" in the recording), this layer's
    /// throwing read throws and its optional read gives nil: a changed data dir is an error to
    /// report, never a crash, and never a value GRDB would not have given.
    @Test func whereGRDBStoppedTheProcessThisLayerThrows() throws {
        let recording = try Self.recording()
        let sql = try #require(recording["hostileSQL"]?.stringValue)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: directory + "/errors.sqlite")
        try queue.write { db in
            for statement in sql.split(separator: ";") where !statement.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                try db.execute(sql: String(statement))
            }
        }
        let recorded = try #require(recording["hostile"]?.arrayValue?.first?["copied"]?.arrayValue)
        let rows = try queue.read { try Row.fetchAll($0, sql: "SELECT v FROM hostile ORDER BY rowid") }
        try #require(rows.count == recorded.count)
        var errors = 0
        for (row, cells) in zip(rows, recorded) {
            let cell = try #require(cells.arrayValue?.first)
            let mine = Self.reads(row, 0, column: "v")
            func check<T: DatabaseValueConvertible>(_ key: String, _ type: T.Type) {
                // A number read as text: kept on purpose (`intended`).
                if Self.intended(key, cell, mine) { return }
                let throwing = Result { () throws -> T in try row[0] }
                let optional: T? = row[0]
                switch cell[key]?.stringValue {
                case "error":
                    errors += 1
                    #expect(throws: DatabaseError.self) { try throwing.get() }
                    #expect(optional == nil)
                case "null":
                    #expect(throws: DatabaseError.self) { try throwing.get() }
                    #expect(optional == nil)
                default:
                    #expect(optional != nil)
                }
            }
            check("int64", Int64.self)
            check("double", Double.self)
            check("string", String.self)
            check("data", Data.self)
            check("bool", Bool.self)
        }
        #expect(errors > 10, "the hostile table has values GRDB would not read as some type")
    }
}
