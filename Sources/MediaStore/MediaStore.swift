import Basics
import FoundationEssentials
import MediaKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The host's SQLite database: favorites, search history, settings, downloads, the artwork
/// index and what providers keep (parsed feeds as lists of episodes).
///
/// WAL mode and a busy timeout let a REPL and an RPC process share one file; the file is created
/// with mode 0600 because it holds what a person watched and searched.
public final class MediaStore: Sendable {
    public let path: String
    let pool: any DatabaseWriter
    let checkpointer: Checkpointer?
    /// What every stored snapshot and title passes through on its way to disk: the host's
    /// redactor, so a secret a service echoed into an item (a token in a post's text) is never
    /// written to the database. Identity until the host sets it.
    public let secretFilter = Mutex<(@Sendable ([UInt8]) -> [UInt8])?>(nil)

    /// How a process uses the database.
    public enum Use: Sendable {
        /// A long-lived process (REPL, service, RPC, MCP): a pool, readers beside the writer.
        case shared
        /// One call and out (`mediahost call`): one connection, and nothing written or synced
        /// when the call only reads. A pool writes at every opening (GRDB makes sure the WAL
        /// file is not empty, and SQLite deletes it again at close), which cost a read-only
        /// call four fdatasyncs.
        case oneShot
    }

    /// How long a writer waits for another process's lock before failing.
    public static let busyTimeout: TimeInterval = 5

    /// Opens (creating and migrating when needed) the database at `path`.
    /// - Throws: `StoreError.cannotOpen` saying which file and why.
    public init(path: String, use: Use = .shared) throws {
        self.path = path
        let directory = Path.directory(of: path)
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "cannot create \(directory): \(describe(error))")
        }
        // What a person watched and searched is theirs alone: the folder too, even when it existed
        // before (never a shared folder with the sticky bit, like /tmp).
        var folderInfo = stat()
        if stat(directory, &folderInfo) == 0, folderInfo.st_uid == getuid(), folderInfo.st_mode & S_ISVTX == 0,
            folderInfo.st_mode & 0o077 != 0
        {
            chmod(directory, 0o700)
        }
        // Create the file ourselves so it is never readable by others, even for an instant.
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError.cannotOpen(path: path, reason: String(cString: strerror(errno)))
        }
        fchmod(fd, 0o600)
        close(fd)

        var config = Configuration()
        config.busyTimeout = Self.busyTimeout
        // The write-ahead log is copied into the database every 1 MB (SQLite's default is 4 MB):
        // a feed's thousands of episodes are then checkpointed while it is still being parsed
        // (rows are written alongside), not by the closing connection, which a one-shot
        // `mediahost call` waits for before it exits. A one-shot leaves that to a `Checkpointer`.
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.checkpointPages)") }
        // Two processes creating the database at once would race on switching it to WAL (which
        // the busy timeout does not cover) and on migrations: opening is serialized with a lock
        // on the folder. Not on the database file: closing another descriptor of that file
        // would drop SQLite's own POSIX locks.
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 { flock(folder, LOCK_EX) }
        defer {
            if folder >= 0 {
                flock(folder, LOCK_UN)
                close(folder)
            }
        }
        do {
            switch use {
            case .shared:
                pool = try DatabasePool(path: path, configuration: config)
                checkpointer = nil
            case .oneShot:
                // WAL is kept in the file: only a new database is switched to it (a write).
                config.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
                // Big writes (a feed's episodes) are checkpointed by a connection of their own
                // beside this one; the rest at close.
                checkpointer = Checkpointer(path: path, configuration: config)
                config.prepareDatabase { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
                let queue = try DatabaseQueue(path: path, configuration: config)
                if try queue.read({ try String.fetchOne($0, sql: "PRAGMA journal_mode") }) != "wal" {
                    try queue.writeWithoutTransaction { try $0.execute(sql: "PRAGMA journal_mode = WAL") }
                }
                pool = queue
            }
            // Migrating takes a write transaction (and its syncs): only when there is something to
            // do. A new database gets every step in one transaction.
            let schema = Self.schema
            let (completed, empty) = try pool.read { db in
                (try schema.migrator.hasCompletedMigrations(db), try db.tableExists("grdb_migrations") == false)
            }
            if !completed {
                if empty { try pool.writeWithoutTransaction(schema.create) } else { try schema.migrator.migrate(pool) }
            }
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
    }

    /// `updates` in one transaction; with `roomy`, the connection's page cache is 32 MB for it
    /// (SQLite's default is 2 MB), so a big batch's pages (an import of 10,000 list items makes
    /// 6 MB) stay in memory until the commit instead of spilling to the write-ahead log and being
    /// written there again. The cache is back to its default afterwards.
    func write<T: Sendable>(roomy: Bool, _ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        guard roomy else { return try await pool.write(updates) }
        return try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA cache_size = -32768")
            defer { try? db.execute(sql: "PRAGMA cache_size = -2000") }
            return try db.transaction(.immediate) { try updates(db) }
        }
    }

    /// Pages (4 KiB) of write-ahead log that trigger a checkpoint.
    static let checkpointPages = 256

    /// The migrator for an existing database: it runs the steps the database lacks.
    static var migrator: DatabaseMigrator { schema.migrator }

    /// The schema, step by step, oldest first.
    static var schema: SchemaSteps {
        var steps = SchemaSteps()
        steps.registerMigration("v1: favorites, history, settings") { db in
            try db.execute(
                sql: """
                    CREATE TABLE favorite (
                        id TEXT PRIMARY KEY NOT NULL,
                        provider TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        title TEXT NOT NULL,
                        addedAt REAL NOT NULL,
                        snapshot BLOB NOT NULL
                    );
                    CREATE INDEX favorite_added ON favorite(addedAt DESC, id DESC);
                    CREATE INDEX favorite_provider_added ON favorite(provider, addedAt DESC, id DESC);
                    CREATE TABLE searchHistory (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        provider TEXT NOT NULL,
                        query TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        searchedAt REAL NOT NULL,
                        UNIQUE(provider, query, kind)
                    );
                    CREATE TABLE setting (
                        key TEXT PRIMARY KEY NOT NULL,
                        value TEXT NOT NULL
                    );
                    """)
        }
        steps.registerMigration("v2: provider cache") { db in
            try db.execute(
                sql: """
                    CREATE TABLE providerCache (
                        provider TEXT NOT NULL,
                        key TEXT NOT NULL,
                        etag TEXT,
                        lastModified TEXT,
                        storedAt REAL NOT NULL,
                        data BLOB NOT NULL,
                        PRIMARY KEY (provider, key)
                    );
                    CREATE INDEX providerCache_age ON providerCache(provider, storedAt);
                    """)
        }
        steps.registerMigration("v3: downloads and the artwork index") { db in
            try db.execute(
                sql: """
                    CREATE TABLE download (
                        id TEXT PRIMARY KEY NOT NULL,
                        provider TEXT NOT NULL,
                        title TEXT NOT NULL,
                        url TEXT NOT NULL,
                        path TEXT NOT NULL,
                        state TEXT NOT NULL,
                        bytes INTEGER NOT NULL DEFAULT 0,
                        total INTEGER,
                        expectedLength INTEGER,
                        etag TEXT,
                        lastModified TEXT,
                        error TEXT,
                        note TEXT,
                        seq INTEGER NOT NULL,
                        createdAt REAL NOT NULL,
                        updatedAt REAL NOT NULL
                    );
                    CREATE UNIQUE INDEX download_path ON download(path);
                    CREATE INDEX download_state ON download(state, seq);
                    CREATE TABLE artwork (
                        url TEXT PRIMARY KEY NOT NULL,
                        hash TEXT NOT NULL,
                        size INTEGER NOT NULL,
                        contentType TEXT,
                        lastAccess REAL NOT NULL
                    );
                    CREATE INDEX artwork_access ON artwork(lastAccess);
                    CREATE INDEX artwork_hash ON artwork(hash);
                    """)
        }
        steps.registerMigration("v4: provider lists") { db in
            // Lists a provider keeps (a feed's episodes): written in a new generation, then made
            // current in one transaction, so readers never see half a list.
            try db.execute(
                sql: """
                    CREATE TABLE providerList (
                        provider TEXT NOT NULL,
                        key TEXT NOT NULL,
                        generation INTEGER NOT NULL,
                        count INTEGER NOT NULL,
                        storedAt REAL NOT NULL,
                        PRIMARY KEY (provider, key)
                    );
                    CREATE TABLE providerRow (
                        provider TEXT NOT NULL,
                        key TEXT NOT NULL,
                        generation INTEGER NOT NULL,
                        seq INTEGER NOT NULL,
                        id TEXT NOT NULL,
                        sortKey REAL NOT NULL,
                        data BLOB NOT NULL
                    );
                    CREATE INDEX providerRow_order ON providerRow(provider, key, generation, sortKey DESC, seq);
                    CREATE INDEX providerRow_id ON providerRow(provider, key, generation, id);
                    """)
        }
        steps.registerMigration("v5: list writers") { db in
            // Each write of a list reserves its generation here, so two writers of one list (two
            // requests, or two processes, fetching the same feed) never share or delete each
            // other's rows; the newest generation to commit wins.
            try db.execute(
                sql: """
                    CREATE TABLE providerListWriter (
                        generation INTEGER PRIMARY KEY AUTOINCREMENT,
                        provider TEXT NOT NULL,
                        key TEXT NOT NULL,
                        startedAt REAL NOT NULL
                    );
                    INSERT INTO sqlite_sequence (name, seq) VALUES ('providerListWriter', (
                        SELECT MAX(g) FROM (SELECT COALESCE(MAX(generation), 0) AS g FROM providerRow
                            UNION ALL SELECT COALESCE(MAX(generation), 0) FROM providerList)));
                    """)
        }
        steps.registerMigration("v6: playback positions") { db in
            // Where each item played was left, so `play` resumes it and listings say what is new.
            try db.execute(
                sql: """
                    CREATE TABLE playback (
                        id TEXT PRIMARY KEY NOT NULL,
                        position REAL NOT NULL,
                        duration REAL,
                        played INTEGER NOT NULL,
                        updatedAt REAL NOT NULL
                    );
                    """)
        }
        steps.registerMigration("v7: lists") { db in
            // Named, ordered lists of items from any provider, each item kept with a snapshot
            // (as favorites are) so a list works offline and exports without the network.
            try db.execute(
                sql: """
                    CREATE TABLE list (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
                        createdAt REAL NOT NULL
                    );
                    CREATE TABLE listItem (
                        list INTEGER NOT NULL REFERENCES list(seq) ON DELETE CASCADE,
                        id TEXT NOT NULL,
                        position INTEGER NOT NULL,
                        addedAt REAL NOT NULL,
                        snapshot BLOB NOT NULL,
                        PRIMARY KEY (list, id)
                    );
                    CREATE INDEX listItem_order ON listItem(list, position);
                    CREATE INDEX listItem_id ON listItem(id);
                    """)
        }
        steps.registerMigration("v8: downloads made by a program") { db in
            try db.execute(sql: "ALTER TABLE download ADD COLUMN program TEXT")
        }
        // One index fewer for every list item (an import of 10,000 wrote four B-trees a row): the
        // key is (id, list), which also finds the lists an item is in, so the index on id alone
        // goes; a list's own rows are found by (list, position).
        steps.registerMigration("v9: list items keyed by id, then list") { db in
            try db.execute(
                sql: """
                    CREATE TABLE listItemNew (
                        list INTEGER NOT NULL REFERENCES list(seq) ON DELETE CASCADE,
                        id TEXT NOT NULL,
                        position INTEGER NOT NULL,
                        addedAt REAL NOT NULL,
                        snapshot BLOB NOT NULL,
                        PRIMARY KEY (id, list)
                    );
                    INSERT INTO listItemNew (list, id, position, addedAt, snapshot)
                        SELECT list, id, position, addedAt, snapshot FROM listItem ORDER BY list, position;
                    DROP TABLE listItem;
                    ALTER TABLE listItemNew RENAME TO listItem;
                    CREATE INDEX listItem_order ON listItem(list, position);
                    """)
        }
        // A list's rows are found by generation (a list's generations are numbered apart from
        // every other list's since v5): the indexes no longer repeat the provider and the key in
        // every entry, and a feed's thousands of rows are written with a fifth less work and a
        // third less log. Rows of no current list and no writer (an interrupted write from
        // before v5) go now, since nothing finds them by generation.
        steps.registerMigration("v10: provider rows indexed by generation") { db in
            try db.execute(
                sql: """
                    DELETE FROM providerRow WHERE generation NOT IN (SELECT generation FROM providerList)
                        AND generation NOT IN (SELECT generation FROM providerListWriter);
                    DROP INDEX providerRow_order;
                    DROP INDEX providerRow_id;
                    CREATE INDEX providerRow_order ON providerRow(generation, sortKey DESC, seq);
                    CREATE INDEX providerRow_id ON providerRow(generation, id);
                    """)
        }
        // Transcripts fetched, and their passages for full-text search (SQLite's FTS5; words
        // matched without their accents, so "cafe" finds "café").
        steps.registerMigration("v11: transcripts") { db in
            try db.execute(
                sql: """
                    CREATE TABLE transcript (
                        id TEXT PRIMARY KEY NOT NULL,
                        provider TEXT NOT NULL,
                        title TEXT NOT NULL,
                        show TEXT,
                        format TEXT NOT NULL,
                        fetchedAt REAL NOT NULL,
                        cues BLOB NOT NULL,
                        firstRow INTEGER,
                        lastRow INTEGER
                    );
                    CREATE INDEX transcript_fetched ON transcript(fetchedAt);
                    CREATE VIRTUAL TABLE transcriptText USING fts5(
                        text, item UNINDEXED, start UNINDEXED, speaker UNINDEXED,
                        tokenize = 'unicode61 remove_diacritics 2'
                    );
                    """)
        }
        // Podcast sync (gpodder.net's API, Nextcloud's gpoddersync): what changed here waits in
        // `syncOutbox`, written in the same transaction as the change, until a server took it;
        // `syncEpisode` keeps the newest action the server told of per episode (by its media
        // URL), read beside `playback`; `syncState` keeps the cursors and the account's mark.
        // A favorite keeps the URL it is subscribed by, to match the server's.
        steps.registerMigration("v12: sync") { db in
            try db.execute(
                sql: """
                    CREATE TABLE syncOutbox (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        action TEXT NOT NULL,
                        item TEXT,
                        url TEXT,
                        position REAL,
                        started REAL,
                        total REAL,
                        at REAL NOT NULL
                    );
                    CREATE TABLE syncEpisode (
                        episode TEXT PRIMARY KEY NOT NULL,
                        podcast TEXT NOT NULL,
                        guid TEXT,
                        action TEXT NOT NULL,
                        position REAL,
                        started REAL,
                        total REAL,
                        at REAL NOT NULL,
                        device TEXT
                    );
                    CREATE INDEX syncEpisode_guid ON syncEpisode(guid) WHERE guid IS NOT NULL;
                    CREATE TABLE syncState (
                        key TEXT PRIMARY KEY NOT NULL,
                        value TEXT NOT NULL
                    );
                    ALTER TABLE favorite ADD COLUMN syncURL TEXT;
                    CREATE INDEX favorite_syncURL ON favorite(syncURL) WHERE syncURL IS NOT NULL;
                    """)
            // Favorites kept before: the URL each is followed by, from its snapshot.
            let update = try db.makeStatement(sql: "UPDATE favorite SET syncURL = ? WHERE id = ?")
            let rows = try Row.fetchCursor(db, sql: "SELECT id, snapshot FROM favorite WHERE kind IN ('podcast', 'channel')")
            var found: [(String, String)] = []
            while let row = try rows.next() {
                let id: String = try row[0]
                guard let item = try? JSONDecoder().decode(MediaItem.self, from: row[1] as Data),
                    let url = SyncKeys.subscriptionURL(of: item)
                else { continue }
                found.append((url, id))
            }
            for (url, id) in found { try update.execute(arguments: [url, id]) }
        }
        // The queue is looked up by episode and by show at every change queued (an earlier
        // change of the same one is dropped): without these, a first sync queuing 10,000 kept
        // positions scanned the queue 20,000 times (2.3 s in one write, against 0.04 s).
        steps.registerMigration("v13: sync queue indexes") { db in
            try db.execute(
                sql: """
                    CREATE INDEX syncOutbox_item ON syncOutbox(item) WHERE item IS NOT NULL;
                    CREATE INDEX syncOutbox_url ON syncOutbox(url) WHERE url IS NOT NULL;
                    """)
        }
        // The queue ("up next"): ordered, an item once, with the snapshot it was added with.
        steps.registerMigration("v14: queue") { db in
            try db.execute(
                sql: """
                    CREATE TABLE queueItem (
                        id TEXT PRIMARY KEY NOT NULL,
                        position INTEGER NOT NULL,
                        addedAt REAL NOT NULL,
                        snapshot BLOB NOT NULL
                    );
                    CREATE UNIQUE INDEX queueItem_position ON queueItem(position);
                    """)
        }
        // Refreshing what is followed: every episode a show's first page held when read (an
        // arrival; its snapshot kept while it waits in the inbox, `seenAt` NULL), each show's
        // feed health, and each show's own rules and playback settings ('' is the default of all).
        steps.registerMigration("v15: refresh, inbox and show settings") { db in
            try db.execute(
                sql: """
                    CREATE TABLE arrival (
                        id TEXT PRIMARY KEY NOT NULL,
                        show TEXT NOT NULL,
                        published REAL,
                        arrivedAt REAL NOT NULL,
                        seenAt REAL,
                        snapshot BLOB
                    );
                    CREATE INDEX arrival_show ON arrival(show);
                    CREATE INDEX arrival_inbox ON arrival(published DESC) WHERE seenAt IS NULL;
                    CREATE TABLE feedState (
                        show TEXT PRIMARY KEY NOT NULL,
                        lastAttempt REAL NOT NULL,
                        lastSuccess REAL,
                        failingSince REAL,
                        failures INTEGER NOT NULL DEFAULT 0,
                        lastError TEXT
                    );
                    CREATE TABLE showSetting (
                        show TEXT NOT NULL,
                        key TEXT NOT NULL,
                        value TEXT NOT NULL,
                        PRIMARY KEY (show, key)
                    );
                    """)
        }
        return steps
    }
}

/// The schema's steps, each registered with the migrator too. The migrator runs what an
/// existing database lacks, each step in its own transaction with its own foreign key check;
/// a new database gets all of them in one transaction (`create`): nine transactions, each with
/// its own checks, made a first `mediahost call` about 3 ms slower.
struct SchemaSteps {
    private(set) var migrator = DatabaseMigrator()
    private var steps: [(identifier: String, migrate: @Sendable (Database) throws -> Void)] = []

    mutating func registerMigration(_ identifier: String, migrate: @escaping @Sendable (Database) throws -> Void) {
        migrator.registerMigration(identifier, migrate: migrate)
        steps.append((identifier, migrate))
    }

    /// Creates the whole schema in a database that has none, recording every step as the
    /// migrator does (the same table, the same identifiers), so later steps migrate it as usual.
    func create(_ db: Database) throws {
        try db.execute(sql: "PRAGMA foreign_keys = OFF")
        defer { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
        try db.inTransaction(.immediate) {
            try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
            let record = try db.makeStatement(sql: "INSERT INTO grdb_migrations (identifier) VALUES (?)")
            for step in steps {
                try step.migrate(db)
                try record.execute(arguments: [step.identifier])
            }
            try db.checkForeignKeys()
            return .commit
        }
    }
}

/// Copies the write-ahead log into the database on a connection (and a thread) of its own,
/// beside the writer, in a one-shot process: when the writer checkpointed every 1 MB of log
/// itself, each checkpoint waited for two fdatasyncs, and a feed's episodes were written slower
/// than they were parsed. Passive: it never waits for the writer, nor the writer for it; what
/// it has not copied when the process ends is copied by the closing connection.
final class Checkpointer: @unchecked Sendable {
    private let path: String
    private let configuration: Configuration
    private let lock = Lock()
    /// One checkpoint runs at a time (`running`); `again` asks it for one more after it.
    private var running = false
    private var again = false
    /// Opened by the first checkpoint; only the thread that checkpoints uses it.
    private var queue: DatabaseQueue?

    init(path: String, configuration: Configuration) {
        self.path = path
        self.configuration = configuration
    }

    /// Starts a checkpoint unless one is running (then one more follows it).
    func kick() {
        let start = lock.withLock { () -> Bool in
            defer { running = true }
            again = running
            return !running
        }
        guard start else { return }
        detachThread { [self] in
            repeat {
                // A checkpoint that fails (the disk) leaves the log to the next one, or to the close.
                do {
                    let queue = try self.queue ?? DatabaseQueue(path: path, configuration: configuration)
                    self.queue = queue
                    try queue.writeWithoutTransaction { try $0.checkpoint(.passive) }
                } catch {}
            } while lock.withLock { () -> Bool in
                defer { again = false }
                running = again
                return again
            }
        }
    }
}

extension MediaStore {
    /// Ids as the store keys them (each once), and the id each key stands for: rows found by
    /// key give back the caller's id without parsing it again.
    struct IDKeys {
        let keys: [String]
        let ids: [String: ItemID]

        init(_ ids: [ItemID]) {
            var map = [String: ItemID](minimumCapacity: ids.count)
            for id in ids { map[id.description] = id }
            self.ids = map
            keys = Array(map.keys)
        }
    }

    /// `body` with each row `sql` selects for the ids of `keys`, asked 500 at a time (SQLite bounds the
    /// number of parameters); `sql` is given the `?, ?, ...` list for `IN (...)`. The list is as
    /// long as the next multiple of 50 (the last id repeated), so each query is compiled once
    /// for a page size and then reused, and at most ten sizes of it are kept.
    static func forEachRow(
        _ db: Database, for keys: IDKeys, _ sql: (String) -> String, _ body: (Row) throws -> Void
    ) throws {
        for chunk in stride(from: 0, to: keys.keys.count, by: 500) {
            var part = Array(keys.keys[chunk..<min(chunk + 500, keys.keys.count)])
            let size = (part.count + 49) / 50 * 50
            part += repeatElement(part[part.count - 1], count: size - part.count)
            let statement = try db.cachedStatement(sql: sql(String(repeating: "?,", count: size - 1) + "?"))
            // Read where SQLite holds them (a cursor's row is not copied; `body` reads values).
            let rows = try Row.fetchCursor(statement, arguments: StatementArguments(part))
            while let row = try rows.next() { try body(row) }
        }
    }

    /// `body` with the rows of `table` (its `columns`, the first of them `id`) whose id is one
    /// of `keys`. A table with no more rows than there are keys (max(rowid) bounds its rows:
    /// none downloaded, a few favorites) is read whole and its rows picked here, which costs less
    /// than the `IN` list SQLite first makes into an index of its own.
    static func forEachRow(
        _ db: Database, for keys: IDKeys, columns: String, from table: String, _ body: (Row) throws -> Void
    ) throws {
        let most = try Int.fetchOne(db.cachedStatement(sql: "SELECT max(rowid) FROM \(table)")) ?? 0
        guard most > keys.keys.count else {
            let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT \(columns) FROM \(table)"))
            while let row = try rows.next() {
                if let key = row[0] as String?, keys.ids[key] != nil { try body(row) }
            }
            return
        }
        try forEachRow(db, for: keys, { "SELECT \(columns) FROM \(table) WHERE id IN (\($0))" }, body)
    }

    /// What the store knows of each of `ids` (a page's items): whether it is a favorite (every
    /// one is with `allFavorites`), its download, its playback and the lists holding it, in one
    /// read.
    public func annotations(for ids: [ItemID], allFavorites: Bool = false) async throws -> Annotations {
        guard !ids.isEmpty else { return Annotations() }
        let keys = IDKeys(ids)
        return try await pool.read { db in
            Annotations(
                favorites: allFavorites ? Set(ids) : try Self.favoriteIDs(db, keys),
                downloads: try Self.downloads(db, keys),
                playbacks: try Self.playbacks(db, keys),
                lists: try Self.listNames(db, keys))
        }
    }

    /// How favorites and list items are encoded: keys sorted, so equal snapshots are equal bytes.
    static let snapshotEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// An item's snapshot as it is stored (before `secretFilter`).
    static func snapshotBytes(_ item: MediaItem) throws -> [UInt8] {
        let snapshot = item.snapshot
        return try MediaItemJSON.encode(snapshot, escapingSlashes: true) ?? Array(snapshotEncoder.encode(snapshot))
    }

    /// Each item's snapshot, encoded (a big batch on every core: encoding is most of the time an
    /// import of thousands takes), and its title, both through `secretFilter`.
    func snapshots(_ items: [MediaItem]) throws -> [(title: String, data: Data)] {
        let filter = secretFilter.withLock { $0 }
        return try items.mapInSlices(smallest: 512) { part in
            try part.map { item in
                let bytes = try Self.snapshotBytes(item)
                guard let filter else { return (item.title, Data(bytes)) }
                let filtered = filter(bytes)
                let title = filtered == bytes ? item.title : String(decoding: filter(Array(item.title.utf8)), as: UTF8.self)
                return (title, Data(filtered))
            }
        }
    }

    /// The items stored as `rows` (an id and its snapshot each), decoded as `snapshots` encodes.
    /// - Throws: `StoreError.corruptSnapshot` naming the first that cannot be read.
    static func items(fromSnapshots rows: [(id: String, data: Data)]) throws -> [MediaItem] {
        try rows.mapInSlices(smallest: 256) { part in
            let decoder = JSONDecoder()
            return try part.map { row in
                if let item = row.data.withUnsafeBytes({ MediaItemJSON.decode($0) }) { return item }
                guard let item = try? decoder.decode(MediaItem.self, from: row.data) else {
                    throw StoreError.corruptSnapshot(id: row.id)
                }
                return item
            }
        }
    }
}

/// Why the store failed, with what a person needs to act.
public enum StoreError: Error, CustomStringConvertible, Sendable {
    case cannotOpen(path: String, reason: String)
    case corruptSnapshot(id: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason):
            "cannot open the database \(path): \(reason) (set MEDIAHOST_DATA_DIR or --data-dir to use another folder)"
        case .corruptSnapshot(let id): "the stored copy of favorite \(id) cannot be read"
        }
    }
}

/// What the store knows of some items, by id (`MediaStore.annotations(for:)`).
public struct Annotations: Sendable {
    public var favorites: Set<ItemID> = []
    public var downloads: [ItemID: DownloadRecord] = [:]
    public var playbacks: [ItemID: PlaybackRecord] = [:]
    /// The names of the lists holding each, oldest list first.
    public var lists: [ItemID: [String]] = [:]
}

/// What a committed write changed of what a person sees as their library.
public struct StoreChange: Sendable, Equatable {
    public enum Part: String, Sendable, CaseIterable {
        case favorites, lists, history, queue, new, rules
    }
    public var parts: Set<Part>
    /// The lists changed, by the names the writes were given.
    public var lists: Set<String>

    /// The parts `tables` belong to.
    static func parts(of tables: Set<String>) -> Set<Part> {
        var parts: Set<Part> = []
        if tables.contains("favorite") { parts.insert(.favorites) }
        if tables.contains("list") || tables.contains("listItem") { parts.insert(.lists) }
        if tables.contains("searchHistory") { parts.insert(.history) }
        if tables.contains("queueItem") { parts.insert(.queue) }
        if tables.contains("arrival") { parts.insert(.new) }
        if tables.contains("showSetting") { parts.insert(.rules) }
        return parts
    }
}

extension MediaStore {
    /// Calls `handler` after every write of this process that changed favorites, lists or the
    /// search history (but a search keeping itself), whichever method made it (a sync round, an import, a call): once per
    /// write, after it committed. Another process's writes are not seen.
    public func observeChanges(_ handler: @escaping @Sendable (StoreChange) -> Void) {
        pool.observeChanges { change in
            guard !change.notes.contains(Self.quietNote) else { return }
            let parts = StoreChange.parts(of: change.tables)
            guard !parts.isEmpty else { return }
            let prefix = Self.listNote("")
            let lists = change.notes.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
            handler(StoreChange(parts: parts, lists: Set(lists)))
        }
    }
}
