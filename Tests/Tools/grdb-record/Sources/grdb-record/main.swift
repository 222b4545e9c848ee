import Foundation
import GRDB

/// Values of every storage class and the edges between them, written by SQL (the test runs the
/// same SQL on its side).
let hostileSQL = """
    CREATE TABLE hostile(v);
    INSERT INTO hostile(rowid, v) VALUES
      (1, NULL), (2, 0), (3, 1), (4, -1), (5, 9223372036854775807), (6, -9223372036854775808),
      (7, 12.0), (8, 12.5), (9, -0.0), (10, 1e300), (11, 9223372036854775808.0), (12, -12.9),
      (13, ''), (14, '12'), (15, '12.5'), (16, 'abc'), (17, 'é ☃'), (18, ' 7'), (19, 'true'),
      (20, x''), (21, x'00ff'), (22, x'3132'), (23, 'nul' || char(0) || 'inside'), (24, x'c328');
    """

/// How GRDB reads one cell as each type the store asks for: the value, "null" or "error".
func reads(_ row: Row, _ index: Int, _ column: String) -> [String: Any] {
    func read<T: DatabaseValueConvertible & StatementColumnConvertible>(_ type: T.Type, _ show: (T) -> Any) -> Any {
        do {
            guard let value = try row.decode(T?.self, atIndex: index) else { return "null" }
            return show(value)
        } catch {
            return "error"
        }
    }
    let storage: String
    switch row[index] as DatabaseValue {
    case let value where value.isNull: storage = "null"
    case let value:
        switch value.storage {
        case .int64: storage = "integer"
        case .double: storage = "real"
        case .string: storage = "text"
        case .blob: storage = "blob"
        case .null: storage = "null"
        }
    }
    return [
        "column": column, "storage": storage,
        "int64": read(Int64.self) { $0 }, "int": read(Int.self) { $0 },
        "double": read(Double.self) { $0.isFinite ? $0 as Any : "\($0)" as Any }, "bool": read(Bool.self) { $0 },
        "string": read(String.self) { $0 }, "data": read(Data.self) { $0.base64EncodedString() },
    ]
}

func tables(_ db: Database) throws -> [[String: Any]] {
    let names = try String.fetchAll(
        db, sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    return try names.map { name in
        // Both ways GRDB gives rows: copied (fetchAll) and live on the statement (a cursor).
        // In a fixed order: by rowid, or by the first column for a table without one.
        let hasRowID = (try? db.makeStatement(sql: "SELECT rowid FROM \(name.quotedDatabaseIdentifier)")) != nil
        let sql = "SELECT * FROM \(name.quotedDatabaseIdentifier) ORDER BY \(hasRowID ? "rowid" : "1")"
        let copied = try Row.fetchAll(db, sql: sql).map { row in
            Array(row.columnNames).enumerated().map { reads(row, $0.offset, $0.element) }
        }
        var live: [[[String: Any]]] = []
        let cursor = try Row.fetchCursor(db, sql: sql)
        while let row = try cursor.next() {
            live.append(Array(row.columnNames).enumerated().map { reads(row, $0.offset, $0.element) })
        }
        return ["table": name, "sql": sql, "copied": copied, "live": live]
    }
}

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: grdb-record <data dir's mediahost.sqlite>\n".utf8))
    exit(2)
}
// A copy is read: opening a WAL database makes files beside it, which the fixture's folder keeps out.
let copy = NSTemporaryDirectory() + "grdb-record-" + UUID().uuidString + ".sqlite"
try FileManager.default.copyItem(atPath: CommandLine.arguments[1], toPath: copy)
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + suffix) } }
let fixture = try DatabaseQueue(path: copy)
let hostile = try DatabaseQueue()
try hostile.write { try $0.execute(sql: hostileSQL) }
let recording: [String: Any] = [
    "recordedWith": "GRDB 7.10.0 (Tests/Tools/grdb-record)",
    "fixture": (CommandLine.arguments[1] as NSString).lastPathComponent,
    "tables": try fixture.read(tables),
    "hostileSQL": hostileSQL,
    "hostile": try hostile.read(tables),
]
let json = try JSONSerialization.data(withJSONObject: recording, options: [.prettyPrinted, .sortedKeys])
FileHandle.standardOutput.write(json)
FileHandle.standardOutput.write(Data("\n".utf8))
