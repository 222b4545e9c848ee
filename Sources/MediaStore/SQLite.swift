import Basics
import CSQLite
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

// The store's own SQLite layer, on the system's libsqlite3: connections, statements, rows,
// transactions, a writer beside a few readers, and the migrator. It replaces GRDB, whose
// Foundation conformances (NSNumber, NSDecimalNumber, DateFormatter, NSRegularExpression)
// linked the whole of Foundation and its 34 MB of ICU data into the binary. Its shapes are
// GRDB's where the store used them (`Row.fetchAll(db, sql:arguments:)`, `row["id"]`,
// `pool.write { db in ... }`), and its migrator keeps GRDB's table (`grdb_migrations`), so a
// data dir made by an earlier build opens as it was.

/// SQLite copies a value bound with this destructor.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A failed SQLite call: its result code, SQLite's message and the statement.
public struct DatabaseError: Error, CustomStringConvertible, Sendable {
    public var resultCode: Int32
    public var message: String?
    public var sql: String?

    public init(resultCode: Int32, message: String? = nil, sql: String? = nil) {
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var text = "SQLite error \(resultCode)"
        if let message { text += ": \(message)" }
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}

/// A value as SQLite stores it.
public enum DatabaseValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// Column `index` of the row `statement` stands on.
    init(_ statement: OpaquePointer, _ index: Int32) {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: self = .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT: self = .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT: self = .text(columnText(statement, index))
        case SQLITE_BLOB: self = .blob(columnBlob(statement, index))
        default: self = .null
        }
    }
}

private func columnText(_ statement: OpaquePointer, _ index: Int32) -> String {
    guard let text = sqlite3_column_text(statement, index) else { return "" }
    let count = Int(sqlite3_column_bytes(statement, index))
    return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
}

private func columnBlob(_ statement: OpaquePointer, _ index: Int32) -> Data {
    let count = Int(sqlite3_column_bytes(statement, index))
    guard count > 0, let bytes = sqlite3_column_blob(statement, index) else { return Data() }
    return Data(bytes: bytes, count: count)
}

/// A Swift type stored in a column: bound as an argument, read from a row.
public protocol DatabaseValueConvertible: Sendable {
    /// Binds the value to parameter `index` (1-based) of `statement`.
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32
    /// The value of a stored one, or nil when it is NULL or of no matching type.
    static func fromDatabaseValue(_ value: DatabaseValue) -> Self?
}

extension String: DatabaseValueConvertible {
    /// Up to a NUL, as GRDB bound a String (and the store's own binding of list rows does).
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        withCString { sqlite3_bind_text(statement, index, $0, -1, sqliteTransient) }
    }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        switch value {
        case .text(let text): text
        // A blob that is no UTF-8 is no text (as GRDB had it), not text with U+FFFD in it.
        case .blob(let data): String(validating: data, as: UTF8.self)
        case .integer(let number): String(number)
        case .real(let number): String(number)
        case .null: nil
        }
    }
}

extension Int64: DatabaseValueConvertible {
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int64? {
        switch value {
        case .integer(let number): number
        case .real(let number): Int64(exactly: number.rounded(.towardZero))
        default: nil
        }
    }
}

extension Int: DatabaseValueConvertible {
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, Int64(self)) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int? {
        Int64.fromDatabaseValue(value).flatMap(Int.init(exactly:))
    }
}

extension Double: DatabaseValueConvertible {
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_double(statement, index, self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case .integer(let number): Double(number)
        case .real(let number): number
        default: nil
        }
    }
}

extension Bool: DatabaseValueConvertible {
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 { sqlite3_bind_int64(statement, index, self ? 1 : 0) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        switch value {
        case .integer(let number): number != 0
        case .real(let number): number != 0
        default: nil
        }
    }
}

extension Data: DatabaseValueConvertible {
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        withUnsafeBytes { bytes in
            // An empty blob is bound as one (a nil pointer would bind NULL).
            bytes.isEmpty
                ? sqlite3_bind_zeroblob(statement, index, 0)
                : sqlite3_bind_blob(statement, index, bytes.baseAddress, Int32(bytes.count), sqliteTransient)
        }
    }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        switch value {
        case .blob(let data): data
        case .text(let text): Data(text.utf8)
        default: nil
        }
    }
}

/// A statement's arguments, bound in order to its `?` parameters.
public struct StatementArguments: ExpressibleByArrayLiteral, Sendable {
    var values: [(any DatabaseValueConvertible)?]

    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) { values = elements }

    public init<S: Sequence>(_ sequence: S) where S.Element: DatabaseValueConvertible { values = sequence.map { $0 } }

    public static func += (lhs: inout StatementArguments, rhs: StatementArguments) { lhs.values += rhs.values }
}

/// A compiled statement of one connection.
public final class Statement {
    public let sqliteStatement: OpaquePointer
    public let sql: String
    unowned let database: Database
    private(set) lazy var columnNames: [String] = (0..<sqlite3_column_count(sqliteStatement)).map {
        String(cString: sqlite3_column_name(sqliteStatement, $0))
    }

    init(_ handle: OpaquePointer, sql: String, database: Database) {
        sqliteStatement = handle
        self.sql = sql
        self.database = database
    }

    deinit { sqlite3_finalize(sqliteStatement) }

    /// Resets the statement and binds `arguments`.
    /// Counts the statement's uses, so a cursor abandoned on an earlier use leaves a later one be.
    private(set) var uses = 0

    func prepare(_ arguments: StatementArguments) throws {
        uses += 1
        sqlite3_reset(sqliteStatement)
        sqlite3_clear_bindings(sqliteStatement)
        let expected = Int(sqlite3_bind_parameter_count(sqliteStatement))
        guard arguments.values.count == expected else {
            throw DatabaseError(
                resultCode: SQLITE_MISUSE, message: "\(arguments.values.count) arguments for \(expected) parameters", sql: sql)
        }
        for (offset, value) in arguments.values.enumerated() {
            let index = Int32(offset + 1)
            let code = value.map { $0.bind(to: sqliteStatement, at: index) } ?? sqlite3_bind_null(sqliteStatement, index)
            guard code == SQLITE_OK else { throw database.error(code, sql: sql) }
        }
    }

    /// One step: true when it stands on a row.
    func step() throws -> Bool {
        switch sqlite3_step(sqliteStatement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            sqlite3_reset(sqliteStatement)
            throw database.error(code, sql: sql)
        }
    }

    /// Runs the statement to its end with `arguments`.
    public func execute(arguments: StatementArguments = []) throws {
        try prepare(arguments)
        while try step() {}
        sqlite3_reset(sqliteStatement)
    }

    func index(ofColumn name: String) -> Int32? {
        if let index = columnNames.firstIndex(of: name) { return Int32(index) }
        let lowered = name.lowercased()
        return columnNames.firstIndex { $0.lowercased() == lowered }.map(Int32.init)
    }
}

/// A row: read where SQLite holds it (a cursor's, valid until the cursor moves) or copied.
public final class Row {
    private enum Storage {
        case live(Statement)
        case copied([DatabaseValue], [String], sql: String)
    }
    private let storage: Storage

    init(live statement: Statement) { storage = .live(statement) }

    init(copying statement: Statement) {
        let handle = statement.sqliteStatement
        storage = .copied(
            (0..<sqlite3_column_count(handle)).map { DatabaseValue(handle, $0) }, statement.columnNames, sql: statement.sql)
    }

    public var count: Int {
        switch storage {
        case .live(let statement): Int(sqlite3_column_count(statement.sqliteStatement))
        case .copied(let values, _, _): values.count
        }
    }

    /// The value of column `index`.
    public func databaseValue(at index: Int) -> DatabaseValue {
        switch storage {
        case .live(let statement):
            guard index >= 0, index < count else { return .null }
            return DatabaseValue(statement.sqliteStatement, Int32(index))
        case .copied(let values, _, _): return values.indices.contains(index) ? values[index] : .null
        }
    }

    func index(of name: String) -> Int? {
        switch storage {
        case .live(let statement): return statement.index(ofColumn: name).map(Int.init)
        case .copied(_, let names, _):
            if let index = names.firstIndex(of: name) { return index }
            let lowered = name.lowercased()
            return names.firstIndex { $0.lowercased() == lowered }
        }
    }

    public subscript<Value: DatabaseValueConvertible>(_ index: Int) -> Value? {
        Value.fromDatabaseValue(databaseValue(at: index))
    }

    /// The value of column `index`, which must be there and of the type. Where GRDB stopped the
    /// process, this throws: a data dir edited by hand or written by another version can hold
    /// anything in any column, and that is an error to report, not a crash.
    public subscript<Value: DatabaseValueConvertible>(_ index: Int) -> Value {
        get throws {
            let stored = databaseValue(at: index)
            guard let value = Value.fromDatabaseValue(stored) else {
                throw mismatch(column: index < count ? columnName(at: index) : "\(index)", Value.self, stored)
            }
            return value
        }
    }

    public subscript<Value: DatabaseValueConvertible>(_ name: String) -> Value? {
        index(of: name).flatMap { Value.fromDatabaseValue(databaseValue(at: $0)) }
    }

    public subscript<Value: DatabaseValueConvertible>(_ name: String) -> Value {
        get throws {
            guard let index = index(of: name) else {
                throw DatabaseError(resultCode: SQLITE_MISMATCH, message: "no column \(name)", sql: sql)
            }
            let stored = databaseValue(at: index)
            guard let value = Value.fromDatabaseValue(stored) else { throw mismatch(column: name, Value.self, stored) }
            return value
        }
    }

    private func columnName(at index: Int) -> String {
        switch storage {
        case .live(let statement): statement.columnNames[index]
        case .copied(_, let names, _): names[index]
        }
    }

    private var sql: String? {
        switch storage {
        case .live(let statement): statement.sql
        case .copied(_, _, let sql): sql
        }
    }

    private func mismatch(column: String, _ type: Any.Type, _ stored: DatabaseValue) -> DatabaseError {
        let found =
            switch stored {
            case .null: "NULL"
            case .integer(let number): "the integer \(number)"
            case .real(let number): "the number \(number)"
            case .text(let text): "text (\(text.utf8.count) bytes)"
            case .blob(let data): "a blob (\(data.count) bytes)"
            }
        let expected =
            switch type {
            case is String.Type: "text"
            case is Int.Type, is Int64.Type: "an integer"
            case is Double.Type: "a number"
            case is Bool.Type: "a boolean"
            case is Data.Type: "a blob"
            default: "\(type)"
            }
        return DatabaseError(
            resultCode: SQLITE_MISMATCH,
            message: "column \(column) holds \(found) where \(expected) belongs (the database was changed by hand "
                + "or by another program)",
            sql: sql)
    }
}

/// The rows of a statement, one at a time; each is valid until the next.
public final class RowCursor {
    private let statement: Statement
    private let row: Row
    private let use: Int
    private var done = false

    init(_ statement: Statement) {
        self.statement = statement
        row = Row(live: statement)
        use = statement.uses
    }

    /// A cursor left before its end resets its statement: a statement that is not reset keeps its
    /// connection reading the database as it was (a reader would never see a later write, and
    /// the write-ahead log could not be checkpointed past it).
    deinit {
        if !done, statement.uses == use { sqlite3_reset(statement.sqliteStatement) }
    }

    public func next() throws -> Row? {
        guard !done else { return nil }
        if try statement.step() { return row }
        done = true
        sqlite3_reset(statement.sqliteStatement)
        return nil
    }
}

extension Row {
    public static func fetchCursor(_ statement: Statement, arguments: StatementArguments = []) throws -> RowCursor {
        try statement.prepare(arguments)
        return RowCursor(statement)
    }

    public static func fetchCursor(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> RowCursor {
        try fetchCursor(db.cachedStatement(sql: sql), arguments: arguments)
    }

    public static func fetchAll(_ statement: Statement, arguments: StatementArguments = []) throws -> [Row] {
        try statement.prepare(arguments)
        defer { sqlite3_reset(statement.sqliteStatement) }
        var rows: [Row] = []
        while try statement.step() { rows.append(Row(copying: statement)) }
        return rows
    }

    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Row] {
        try fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    public static func fetchOne(_ statement: Statement, arguments: StatementArguments = []) throws -> Row? {
        try statement.prepare(arguments)
        defer { sqlite3_reset(statement.sqliteStatement) }
        return try statement.step() ? Row(copying: statement) : nil
    }

    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Row? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }
}

extension DatabaseValueConvertible {
    /// The first column of the first row (nil when there is none, or it is NULL).
    public static func fetchOne(_ statement: Statement, arguments: StatementArguments = []) throws -> Self? {
        try statement.prepare(arguments)
        defer { sqlite3_reset(statement.sqliteStatement) }
        guard try statement.step() else { return nil }
        return fromDatabaseValue(DatabaseValue(statement.sqliteStatement, 0))
    }

    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Self? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// The first column of every row, NULLs left out.
    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Self] {
        let statement = try db.cachedStatement(sql: sql)
        try statement.prepare(arguments)
        defer { sqlite3_reset(statement.sqliteStatement) }
        var values: [Self] = []
        while try statement.step() {
            if let value = fromDatabaseValue(DatabaseValue(statement.sqliteStatement, 0)) { values.append(value) }
        }
        return values
    }
}

/// How connections are opened.
public struct Configuration: Sendable {
    /// How long a statement waits for another connection's lock before failing.
    public var busyTimeout: Double = 5
    /// What runs on every new connection, in order.
    var preparations: [@Sendable (Database) throws -> Void] = []

    public init() {}

    public mutating func prepareDatabase(_ preparation: @escaping @Sendable (Database) throws -> Void) {
        preparations.append(preparation)
    }
}

/// One connection to the database. Not for two threads at once: a `DatabaseQueue` or a
/// `DatabasePool` hands it to one closure at a time.
public final class Database: @unchecked Sendable {
    public let sqliteConnection: OpaquePointer?
    public let path: String
    private var statements: [String: Statement] = [:]
    /// Raised while the access using the connection is cancelled: its statement stops.
    let interrupted = Atomic<Bool>(false)
    /// What the transaction under way changed, and what transactions committed since it was
    /// last taken (`takeCommitted`): on a writer whose changes are observed.
    private var changing = DatabaseChange()
    private var committed = DatabaseChange()

    public enum TransactionKind: String, Sendable { case deferred = "DEFERRED", immediate = "IMMEDIATE" }
    public enum TransactionCompletion: Sendable { case commit, rollback }
    public enum CheckpointMode: Sendable { case passive, full, truncate }

    init(path: String, configuration: Configuration, readOnly: Bool = false) throws {
        self.path = path
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        sqliteConnection = handle
        guard code == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            throw DatabaseError(resultCode: code, message: message)
        }
        sqlite3_busy_timeout(handle, Int32(configuration.busyTimeout * 1000))
        // As GRDB set them: "string" is an identifier only, foreign keys are enforced.
        csqlite_disable_double_quoted_strings(handle)
        try execute(sql: "PRAGMA foreign_keys = ON")
        if readOnly { try execute(sql: "PRAGMA query_only = 1") }
        // Asked every thousand steps of a statement: a non-zero answer interrupts it.
        sqlite3_progress_handler(
            handle, 1000,
            { context in
                guard let context else { return 0 }
                return Unmanaged<Database>.fromOpaque(context).takeUnretainedValue().interrupted.load(ordering: .relaxed)
                    ? 1 : 0
            }, Unmanaged.passUnretained(self).toOpaque())
        for preparation in configuration.preparations { try preparation(self) }
    }

    private var closed = false

    /// Closes the connection (done at deinit otherwise); nothing may use it after.
    public func close() {
        guard !closed else { return }
        closed = true
        statements.removeAll()
        sqlite3_close_v2(sqliteConnection)
    }

    deinit { close() }

    func error(_ code: Int32, sql: String?) -> DatabaseError {
        DatabaseError(resultCode: code, message: sqliteConnection.map { String(cString: sqlite3_errmsg($0)) }, sql: sql)
    }

    /// A new statement for one SQL statement.
    public func makeStatement(sql: String) throws -> Statement {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v2(sqliteConnection, sql, -1, &handle, nil)
        guard code == SQLITE_OK, let handle else {
            throw error(code == SQLITE_OK ? SQLITE_MISUSE : code, sql: sql)
        }
        return Statement(handle, sql: sql, database: self)
    }

    /// The statement for `sql`, compiled once per connection.
    public func cachedStatement(sql: String) throws -> Statement {
        if let statement = statements[sql] {
            // One a cursor is still reading is not taken from under it: this use gets its own.
            guard sqlite3_stmt_busy(statement.sqliteStatement) == 0 else { return try makeStatement(sql: sql) }
            return statement
        }
        let statement = try makeStatement(sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Runs `sql`: one statement with `arguments`, or several separated by semicolons without.
    public func execute(sql: String, arguments: StatementArguments = []) throws {
        if !arguments.values.isEmpty {
            try cachedStatement(sql: sql).execute(arguments: arguments)
            return
        }
        try sql.withCString { start in
            var next: UnsafePointer<CChar>? = start
            while let current = next, current.pointee != 0 {
                var handle: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let code = sqlite3_prepare_v2(sqliteConnection, current, -1, &handle, &tail)
                guard code == SQLITE_OK else { throw error(code, sql: sql) }
                next = tail
                // Whitespace or a comment after the last statement compiles to nothing.
                guard let handle else { continue }
                defer { sqlite3_finalize(handle) }
                var step = sqlite3_step(handle)
                while step == SQLITE_ROW { step = sqlite3_step(handle) }
                guard step == SQLITE_DONE else { throw error(step, sql: sql) }
            }
        }
    }

    /// Records what each transaction changes, as GRDB's `DatabaseRegionObservation` does: the
    /// update hook names the table of every row inserted, updated or deleted; the commit hook
    /// keeps a transaction's tables and the rollback hook forgets them. The authorizer turns off
    /// SQLite's truncate optimization (a `DELETE` without `WHERE` emptying a table at once,
    /// unseen by the update hook): such a delete goes row by row.
    func trackChanges() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_update_hook(
            sqliteConnection,
            { context, _, _, table, _ in
                guard let context, let table else { return }
                Unmanaged<Database>.fromOpaque(context).takeUnretainedValue().changing.tables.insert(String(cString: table))
            }, context)
        sqlite3_commit_hook(
            sqliteConnection,
            { context in
                guard let context else { return 0 }
                let database = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                database.committed.merge(database.changing)
                database.changing = DatabaseChange()
                return 0
            }, context)
        sqlite3_rollback_hook(
            sqliteConnection,
            { context in
                guard let context else { return }
                Unmanaged<Database>.fromOpaque(context).takeUnretainedValue().changing = DatabaseChange()
            }, context)
        sqlite3_set_authorizer(
            sqliteConnection,
            { _, action, _, _, _, _ in action == SQLITE_DELETE ? SQLITE_IGNORE : SQLITE_OK }, nil)
    }

    /// Notes `note` on the transaction under way, told with its tables when it commits (a
    /// list's name, which the tables alone do not say).
    public func noteChange(_ note: String) { changing.notes.insert(note) }

    /// What committed since the last call, or nil when nothing did.
    func takeCommitted() -> DatabaseChange? {
        defer { committed = DatabaseChange() }
        return committed.tables.isEmpty ? nil : committed
    }

    /// Rows the last INSERT, UPDATE or DELETE changed.
    public var changesCount: Int { Int(sqlite3_changes(sqliteConnection)) }
    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(sqliteConnection) }

    /// Resets every statement still stepping: each would keep the connection's read of the
    /// database open past the transaction's end.
    func resetBusyStatements() {
        var next = sqlite3_next_stmt(sqliteConnection, nil)
        while let statement = next {
            if sqlite3_stmt_busy(statement) != 0 { sqlite3_reset(statement) }
            next = sqlite3_next_stmt(sqliteConnection, statement)
        }
    }

    /// `block` in a transaction, committed when it says so and rolled back when it throws.
    public func inTransaction(
        _ kind: TransactionKind = .deferred, _ block: () throws -> TransactionCompletion
    ) throws {
        try execute(sql: "BEGIN \(kind.rawValue) TRANSACTION")
        // Notes of an earlier transaction that wrote nothing (no commit hook) are not this one's.
        changing = DatabaseChange()
        let completion: TransactionCompletion
        do {
            completion = try block()
        } catch {
            resetBusyStatements()
            try? execute(sql: "ROLLBACK TRANSACTION")
            throw error
        }
        resetBusyStatements()
        switch completion {
        case .commit:
            do { try execute(sql: "COMMIT TRANSACTION") } catch {
                try? execute(sql: "ROLLBACK TRANSACTION")
                throw error
            }
        case .rollback: try execute(sql: "ROLLBACK TRANSACTION")
        }
    }

    /// `block`'s result, computed in a transaction committed when it returns (rolled back when
    /// it throws).
    public func transaction<T>(_ kind: TransactionKind, _ block: () throws -> T) throws -> T {
        var result: T?
        try inTransaction(kind) {
            result = try block()
            return .commit
        }
        guard let result else { throw DatabaseError(resultCode: SQLITE_INTERNAL) }
        return result
    }

    /// Whether the connection is in a transaction.
    public var isInsideTransaction: Bool { sqlite3_get_autocommit(sqliteConnection) == 0 }

    public func tableExists(_ name: String) throws -> Bool {
        try Bool.fetchOne(
            self, sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", arguments: [name])
            ?? false
    }

    /// Throws when a row refers to one that is not there.
    public func checkForeignKeys() throws {
        if let violation = try Row.fetchOne(self, sql: "PRAGMA foreign_key_check") {
            let table: String = violation[0] ?? "?"
            let parent: String = violation[2] ?? "?"
            throw DatabaseError(
                resultCode: 787,  // SQLITE_CONSTRAINT_FOREIGNKEY
                message: "a row of \(table) refers to a missing row of \(parent)")
        }
    }

    /// Copies the write-ahead log into the database.
    public func checkpoint(_ mode: CheckpointMode = .passive) throws {
        let code =
            switch mode {
            case .passive: SQLITE_CHECKPOINT_PASSIVE
            case .full: SQLITE_CHECKPOINT_FULL
            case .truncate: SQLITE_CHECKPOINT_TRUNCATE
            }
        let result = sqlite3_wal_checkpoint_v2(sqliteConnection, nil, code, nil, nil)
        guard result == SQLITE_OK else { throw error(result, sql: nil) }
    }
}

/// What committed transactions changed: the tables their rows were in, and what their code noted
/// (`Database.noteChange`).
public struct DatabaseChange: Sendable, Equatable {
    public var tables: Set<String> = []
    public var notes: Set<String> = []

    mutating func merge(_ other: DatabaseChange) {
        tables.formUnion(other.tables)
        notes.formUnion(other.notes)
    }
}

/// What reads and writes a database: one connection (`DatabaseQueue`) or a writer beside
/// readers (`DatabasePool`). Each access runs on a thread of the writer's or readers' own,
/// never on Swift's cooperative threads, which a lock held by another process (waited for up
/// to the busy timeout) would otherwise hold up.
public protocol DatabaseWriter: Sendable {
    /// `block` in a read transaction: it sees one state of the database throughout.
    func read<T>(_ block: (Database) throws -> T) throws -> T
    func read<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T
    /// `block` on the writer in no transaction.
    func writeWithoutTransaction<T>(_ block: (Database) throws -> T) throws -> T
    /// Calls `observer` after each write access that committed changes, with what they changed
    /// (the transactions of one access told at once), outside the access: it may use the
    /// database itself.
    func observeChanges(_ observer: @escaping @Sendable (DatabaseChange) -> Void)
    func writeWithoutTransaction<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T
}

extension DatabaseWriter {
    /// `block` in an immediate write transaction, committed when it returns.
    public func write<T>(_ block: (Database) throws -> T) throws -> T {
        try writeWithoutTransaction { db in try Self.inWriteTransaction(db, block) }
    }

    public func write<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writeWithoutTransaction { db in try Self.inWriteTransaction(db, block) }
    }

    private static func inWriteTransaction<T>(_ db: Database, _ block: (Database) throws -> T) throws -> T {
        try db.transaction(.immediate) { try block(db) }
    }

    static func inReadTransaction<T>(_ db: Database, _ block: (Database) throws -> T) throws -> T {
        try db.transaction(.deferred) { try block(db) }
    }
}

/// One async access to a connection, as a task's cancellation sees it: a read not begun when
/// its task is cancelled does not begin, and one under way is interrupted where it stands (its
/// connection's progress handler asks, every thousand steps of SQLite's machine). A write is not
/// cancelled: what a caller asked to record is recorded even from a task being cancelled (a
/// download's "cancelled" state is written by the very task cancelled), and a write is short.
final class DatabaseAccess: Sendable {
    private enum State { case waiting, running(Database), done, cancelled }
    private let state = Mutex<State>(.waiting)

    /// False when the task was cancelled before the access's turn came.
    func begin(_ database: Database) -> Bool {
        state.withLock {
            guard case .waiting = $0 else { return false }
            $0 = .running(database)
            return true
        }
    }

    /// After the access: the connection's flag is down before another access may use it.
    func end() {
        state.withLock {
            if case .running(let database) = $0 { database.interrupted.store(false, ordering: .relaxed) }
            if case .cancelled = $0 { return }
            $0 = .done
        }
    }

    var wasCancelled: Bool { state.withLock { if case .cancelled = $0 { true } else { false } } }

    func cancel() {
        state.withLock {
            switch $0 {
            case .waiting: $0 = .cancelled
            case .running(let database):
                database.interrupted.store(true, ordering: .relaxed)
                $0 = .cancelled
            case .done, .cancelled: break
            }
        }
    }

    /// `block` on `database` as this access: a CancellationError when it was cancelled before it
    /// began or interrupted because it was.
    func run<T>(on database: Database, _ block: (Database) throws -> T) throws -> T {
        guard begin(database) else { throw CancellationError() }
        defer { end() }
        do {
            return try block(database)
        } catch let error as DatabaseError where error.resultCode & 0xff == SQLITE_INTERRUPT && wasCancelled {
            throw CancellationError()
        }
    }

    /// `operation` (which runs the access on some thread) with the task's cancellation passed on.
    static func cancellable<T: Sendable>(
        _ operation: (DatabaseAccess, CheckedContinuation<T, any Error>) -> Void
    ) async throws -> T {
        try Task.checkCancellation()
        let access = DatabaseAccess()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { operation(access, $0) }
        } onCancel: {
            access.cancel()
        }
    }
}

/// A connection used by one access at a time: on the caller's thread for a blocking access, on
/// a thread of its own for an async one (never on the threads Swift's tasks share: a write waits
/// up to the busy timeout for another process's lock). An access from inside another on the
/// same connection (a write calling the store's own write) throws: it would wait for itself.
final class SerializedDatabase: @unchecked Sendable {
    let database: Database
    private let lock = Lock()
    /// The thread inside an access (0: none).
    private let owner = Atomic<UInt>(0)
    private let thread: WorkerThreads

    init(path: String, configuration: Configuration, label: String, readOnly: Bool = false) throws {
        database = try Database(path: path, configuration: configuration, readOnly: readOnly)
        thread = WorkerThreads(name: label, maximum: 1)
    }

    func sync<T>(_ block: (Database) throws -> T) throws -> T {
        let current = UInt(pthread_self())
        guard owner.load(ordering: .acquiring) != current else {
            throw DatabaseError(
                resultCode: SQLITE_MISUSE,
                message: "a database access inside another on the same connection (use the db the outer one was given)")
        }
        lock.lock()
        owner.store(current, ordering: .releasing)
        let result = Result { try block(database) }
        let change = observed.withLock { $0 } == nil ? nil : database.takeCommitted()
        owner.store(0, ordering: .releasing)
        lock.unlock()
        if let change, let observer = observed.withLock({ $0 }) { observer(change) }
        return try result.get()
    }

    private let observed = Mutex<(@Sendable (DatabaseChange) -> Void)?>(nil)

    func observeChanges(_ observer: @escaping @Sendable (DatabaseChange) -> Void) {
        // (`sync` throws only when called inside an access of this connection.)
        try? sync { $0.trackChanges() }
        observed.withLock { $0 = observer }
    }

    func async<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            thread.run { continuation.resume(with: Result { try self.sync(block) }) }
        }
    }

    /// `block` as an access the task's cancellation stops.
    func cancellable<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await DatabaseAccess.cancellable { access, continuation in
            thread.run { continuation.resume(with: Result { try self.sync { try access.run(on: $0, block) } }) }
        }
    }
}

/// One connection for reads and writes, one access at a time.
public final class DatabaseQueue: DatabaseWriter {
    let connection: SerializedDatabase

    public init(path: String, configuration: Configuration = Configuration()) throws {
        connection = try SerializedDatabase(path: path, configuration: configuration, label: "mediahost-db")
    }

    public func read<T>(_ block: (Database) throws -> T) throws -> T {
        try connection.sync { try Self.inReadTransaction($0, block) }
    }

    public func read<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.cancellable { try Self.inReadTransaction($0, block) }
    }

    public func writeWithoutTransaction<T>(_ block: (Database) throws -> T) throws -> T { try connection.sync(block) }

    public func writeWithoutTransaction<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.async(block)
    }

    public func observeChanges(_ observer: @escaping @Sendable (DatabaseChange) -> Void) {
        connection.observeChanges(observer)
    }

    /// Closes the connection (done when the queue goes otherwise); nothing may use it after.
    public func close() throws { try connection.sync { $0.close() } }
}

/// A writer beside up to five readers, in WAL mode: reads do not wait for writes, nor writes
/// for reads.
public final class DatabasePool: DatabaseWriter {
    let writer: SerializedDatabase
    private let path: String
    private let configuration: Configuration
    private let readThreads = WorkerThreads(name: "mediahost-db-read", maximum: DatabasePool.maximumReaders)
    private let readSlots = DispatchSemaphore(value: DatabasePool.maximumReaders)
    private let idleReaders = Mutex<[Database]>([])
    static let maximumReaders = 5

    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.path = path
        self.configuration = configuration
        writer = try SerializedDatabase(path: path, configuration: configuration, label: "mediahost-db-write")
        try writer.sync { db in
            guard try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL") == "wal" else {
                throw DatabaseError(resultCode: SQLITE_ERROR, message: "cannot switch \(path) to WAL mode")
            }
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
    }

    /// `block` with an idle reader (opened when none is), at most `maximumReaders` at once; as
    /// `access` when one is given.
    private func withReader<T>(_ access: DatabaseAccess? = nil, _ block: (Database) throws -> T) throws -> T {
        readSlots.wait()
        defer { readSlots.signal() }
        if access?.wasCancelled == true { throw CancellationError() }
        let reader =
            try idleReaders.withLock { $0.popLast() }
            ?? Database(path: path, configuration: configuration, readOnly: true)
        defer {
            // Back to the pool reading nothing: no statement stepping, no transaction open.
            reader.resetBusyStatements()
            if reader.isInsideTransaction { try? reader.execute(sql: "ROLLBACK TRANSACTION") }
            idleReaders.withLock { $0.append(reader) }
        }
        guard let access else { return try Self.inReadTransaction(reader, block) }
        return try access.run(on: reader) { try Self.inReadTransaction($0, block) }
    }

    public func read<T>(_ block: (Database) throws -> T) throws -> T { try withReader(nil, block) }

    public func read<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await DatabaseAccess.cancellable { access, continuation in
            readThreads.run { continuation.resume(with: Result { try self.withReader(access, block) }) }
        }
    }

    public func writeWithoutTransaction<T>(_ block: (Database) throws -> T) throws -> T { try writer.sync(block) }

    public func writeWithoutTransaction<T: Sendable>(_ block: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.async(block)
    }

    public func observeChanges(_ observer: @escaping @Sendable (DatabaseChange) -> Void) {
        writer.observeChanges(observer)
    }
}

/// The schema's steps, run in order, each once, recorded in `grdb_migrations` by identifier (the
/// table GRDB's migrator kept, so databases it migrated continue where they were).
public struct DatabaseMigrator: Sendable {
    private var migrations: [(identifier: String, migrate: @Sendable (Database) throws -> Void)] = []

    public init() {}

    public mutating func registerMigration(
        _ identifier: String, migrate: @escaping @Sendable (Database) throws -> Void
    ) {
        migrations.append((identifier, migrate))
    }

    /// The identifiers already applied.
    public func appliedIdentifiers(_ db: Database) throws -> Set<String> {
        guard try db.tableExists("grdb_migrations") else { return [] }
        return Set(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
    }

    public func hasCompletedMigrations(_ db: Database) throws -> Bool {
        let applied = try appliedIdentifiers(db)
        return migrations.allSatisfy { applied.contains($0.identifier) }
    }

    /// Runs every step not applied yet (up to and including `last`), each in its own immediate
    /// transaction with foreign keys checked before it commits.
    public func migrate(_ writer: any DatabaseWriter, upTo last: String? = nil) throws {
        let steps: ArraySlice<(identifier: String, migrate: @Sendable (Database) throws -> Void)>
        if let last {
            guard let end = migrations.firstIndex(where: { $0.identifier == last }) else {
                throw DatabaseError(resultCode: SQLITE_MISUSE, message: "no migration named \(last)")
            }
            steps = migrations[...end]
        } else {
            steps = migrations[...]
        }
        try writer.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            let applied = try appliedIdentifiers(db)
            for step in steps where !applied.contains(step.identifier) {
                try db.execute(sql: "PRAGMA foreign_keys = OFF")
                defer { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
                try db.inTransaction(.immediate) {
                    try step.migrate(db)
                    try db.checkForeignKeys()
                    try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)", arguments: [step.identifier])
                    return .commit
                }
            }
        }
    }
}
