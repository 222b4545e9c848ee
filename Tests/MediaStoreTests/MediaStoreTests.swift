import Foundation
import MediaKit
import Testing

@testable import MediaStore

@Suite struct MediaStoreTests {
    let directory: String
    init() throws {
        directory = NSTemporaryDirectory() + "mediahost-store-" + UUID().uuidString
    }

    func item(_ n: Int, provider: String = "catalog", kind: MediaKind = .video) -> MediaItem {
        MediaItem(id: ItemID(provider: provider, kind: kind, nativeID: "n\(n)"), title: "Item \(n)")
    }

    @Test func playbackPositionsAreKeptAndMarked() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        let a = item(1, kind: .episode).id
        let b = item(2, kind: .episode).id
        try await store.savePlayback(PlaybackRecord(id: a, position: 754.5, duration: 3000, played: false))
        // A later save without a duration keeps the one known.
        try await store.savePlayback(PlaybackRecord(id: a, position: 800, duration: nil, played: false))
        var kept = try await store.playbacks(for: [a, b])
        #expect(kept.count == 1)
        #expect(kept[a]?.position == 800 && kept[a]?.duration == 3000 && kept[a]?.played == false)
        try await store.markPlayed([a, b], played: true)
        kept = try await store.playbacks(for: [a, b])
        #expect(kept[a]?.played == true && kept[a]?.position == 0 && kept[b]?.played == true)
        try await store.markPlayed([a], played: false)
        let forgotten = try await store.playback(a)
        #expect(forgotten?.position == 0 && forgotten?.played == false)
        // A favorite's snapshot never keeps what the host fills in.
        var favorite = item(3, kind: .episode)
        favorite.played = true
        favorite.position = 12
        try await store.addFavorite(favorite)
        let snapshot = try await store.favorite(favorite.id)
        #expect(snapshot?.played == nil && snapshot?.position == nil)
    }

    @Test func finishedMeansTheLast30SecondsOr95Percent() {
        #expect(PlaybackRecord.isFinished(position: 3571, duration: 3600))
        #expect(!PlaybackRecord.isFinished(position: 3400, duration: 3600))
        #expect(PlaybackRecord.isFinished(position: 20, duration: 40))
        #expect(PlaybackRecord.isFinished(position: 96, duration: 100))
        #expect(!PlaybackRecord.isFinished(position: 5, duration: 40))
        #expect(!PlaybackRecord.isFinished(position: 5000, duration: nil))
    }

    /// A batch adds each item once (one twice in it, one there already refreshed in place), in
    /// order, and a big batch (snapshots coded on every core) reads back whole and in order.
    @Test func addingToAListTakesEachItemOnceAndKeepsItsPlace() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        try await store.createList("later")
        #expect(try await store.addToList("later", [item(1), item(2), item(1)]) == 2)
        var renamed = item(2)
        renamed.title = "Item 2, renamed"
        #expect(try await store.addToList("later", [renamed, item(3)]) == 1)
        let page = try await store.listItems("later", limit: 10).items
        #expect(page.map(\.id) == [item(1).id, item(2).id, item(3).id])
        #expect(page.map(\.title) == ["Item 1", "Item 2, renamed", "Item 3"])

        try await store.createList("big")
        let many = (0..<3000).map { item($0) }
        #expect(try await store.addToList("big", many) == 3000)
        let all = try await store.allListItems("big")
        #expect(all.map(\.id) == many.map(\.id))
        #expect(all.map(\.title) == many.map(\.title))
    }

    /// Yesterday's data dir: lists written under the v8 schema (an index on id alone, the key
    /// (list, id)) are all there, in order, after v9 rebuilds the table; and the queries that
    /// find an item's lists, or a list's rows, use an index, not a scan.
    @Test func listsOfAVersion8DatabaseSurviveTheNewKey() async throws {
        let path = directory + "/db.sqlite"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: path)
        try MediaStore.migrator.migrate(queue, upTo: "v8: downloads made by a program")
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO list (name, createdAt) VALUES ('a', 1), ('b', 2)")
            for n in 0..<50 {
                // b holds every other item of a, in reverse.
                try db.execute(
                    sql: "INSERT INTO listItem (list, id, position, addedAt, snapshot) VALUES (1, ?, ?, 1, ?)",
                    arguments: [item(n).id.description, n, Data(try MediaStore.snapshotBytes(item(n)))])
                if n % 2 == 0 {
                    try db.execute(
                        sql: "INSERT INTO listItem (list, id, position, addedAt, snapshot) VALUES (2, ?, ?, 1, ?)",
                        arguments: [item(n).id.description, 100 - n, Data(try MediaStore.snapshotBytes(item(n)))])
                }
            }
        }
        try queue.close()

        let store = try MediaStore(path: path)
        #expect(try await store.allListItems("a").map(\.id) == (0..<50).map { item($0).id })
        #expect(try await store.allListItems("b").map(\.id) == stride(from: 48, through: 0, by: -2).map { item($0).id })
        let names = try await store.listNames(for: [item(4).id, item(5).id])
        #expect(names[item(4).id] == ["a", "b"] && names[item(5).id] == ["a"])
        #expect(try await store.addToList("b", [item(4), item(7)]) == 1)
        #expect(try await store.allListItems("b").last?.id == item(7).id)
        _ = try await store.deleteList("a")
        #expect(try await store.listNames(for: [item(5).id]).isEmpty)

        let plans = try await store.pool.read { db in
            queryPlans(
                db,
                [
                    "SELECT list FROM listItem WHERE id = 'x'",
                    "SELECT id FROM listItem WHERE list = 1 ORDER BY position",
                    "UPDATE listItem SET snapshot = x'' WHERE list = 1 AND id = 'x'",
                ])
        }
        for plan in plans { #expect(plan.contains("USING") && !plan.contains("SCAN"), "\(plan)") }
        let indexes = try await store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'listItem'")
        }
        #expect(Set(indexes) == ["sqlite_autoindex_listItem_1", "listItem_order"])
    }

    /// A data dir made by the build before the store's own SQLite layer (GRDB 7.10 made this file
    /// with `mediahost call` against the sandbox: a favorite, a list, a search, a feed's episodes,
    /// a position, a setting) opens with nothing to migrate, and everything in it reads as it was
    /// written; a write then works beside it.
    @Test func aDataDirMadeWithGRDBOpensAsItWas() async throws {
        let fixture = try #require(Bundle.module.path(forResource: "grdb-7.10-v11", ofType: "sqlite", inDirectory: "Fixtures"))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/mediahost.sqlite"
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        let store = try MediaStore(path: path)
        #expect(try await store.pool.read { try MediaStore.migrator.hasCompletedMigrations($0) })
        let favorites = try await store.favorites()
        let favorite = try #require(favorites.items.first)
        #expect(favorites.items.count == 1 && favorite.title == "The Swift Journal 0")
        #expect(try await store.allListItems("Later").map(\.id) == [favorite.id])
        #expect(try await store.history().map(\.query) == ["swift"])
        let episode = try ItemID(parsing: "podcasts:episode:1000000000:1000000000-ep-457")
        let position = try await store.playback(episode)
        #expect(position?.position == 754.5 && position?.duration == 2633 && position?.played == false)
        #expect(try await store.settings()["repl.images"] == "off")
        let lists = try await store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT provider, key FROM providerList ORDER BY generation").map {
                [try $0["provider"] as String, try $0["key"] as String]
            }
        }
        let list = try #require(lists.last)
        let rows = try await store.listRows(provider: list[0], key: list[1], offset: 0, limit: 10)
        #expect(rows?.map(\.id) == ["1000000000-ep-457", "1000000000-ep-456"])
        try await store.savePlayback(PlaybackRecord(id: episode, position: 800, duration: nil, played: false))
        #expect(try await store.playback(episode)?.duration == 2633)
        // v12: the show followed before is known by its feed to a sync server.
        let feed = try #require(favorite.feed)
        #expect(try await store.followedSyncURLs() == [feed: favorite.id])
    }

    /// What changes is queued for the sync server in the same transaction as the change, only
    /// while an account is set; repeated saves of one episode leave its newest.
    @Test func changesAreQueuedForTheSyncServerOnlyWithAnAccount() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        var show = item(1, provider: "podcasts", kind: .podcast)
        show.feed = "https://example.com/feed.xml"
        let channel = item(2, provider: "youtube", kind: .channel)
        let episode = item(3, provider: "podcasts", kind: .episode).id
        try await store.addFavorite(show)
        try await store.savePlayback(PlaybackRecord(id: episode, position: 10, duration: 100, played: false))
        #expect(try await store.syncOutboxCount() == 0, "nothing queued without an account")

        try await store.beginSync(account: "gpodder alice@https://example.org desk")
        try await store.addFavorites([show, channel])  // the show again: no change to tell
        try await store.savePlayback(PlaybackRecord(id: episode, position: 20, duration: 100, played: false, started: 10))
        try await store.savePlayback(PlaybackRecord(id: episode, position: 30, duration: 100, played: false, started: 10))
        var queued = try await store.syncOutbox()
        #expect(queued.map(\.change) == [.subscribe, .play])
        #expect(queued.first?.url == "https://www.youtube.com/feeds/videos.xml?channel_id=n2")
        #expect(queued.last?.position == 30 && queued.last?.started == 10 && queued.last?.total == 100)

        try await store.markPlayed([episode], played: true)
        try await store.markPlayed([episode], played: false)
        #expect(try await store.removeFavorite(show.id))
        queued = try await store.syncOutbox()
        #expect(queued.map(\.change) == [.subscribe, .new, .unsubscribe])
        #expect(queued.last?.url == "https://example.com/feed.xml")

        // A download finished is told once; its deletion once.
        var download = DownloadRecord(
            id: episode, title: "E", url: "https://example.com/e.mp3", path: directory + "/e.mp3", expectedLength: nil)
        download = try await store.insertDownload(download)
        download.state = .completed
        try await store.updateDownload(download)
        try await store.updateDownload(download)
        #expect(try await store.deleteDownload(episode))
        queued = try await store.syncOutbox()
        #expect(queued.map(\.change) == [.subscribe, .new, .unsubscribe, .download, .delete])

        try await store.removeFromSyncOutbox(queued.prefix(2).map(\.seq))
        #expect(try await store.syncOutboxCount() == 3)
        // Another account keeps what waits; logging out forgets it.
        try await store.beginSync(account: "nextcloud alice@https://cloud.example.org desk")
        #expect(try await store.syncOutboxCount() == 3)
        try await store.endSync()
        #expect(try await store.syncOutboxCount() == 0)
        try await store.addFavorite(show)
        #expect(try await store.syncOutboxCount() == 0)
    }

    /// What other devices did: per episode the newest action by its own time, whatever order
    /// it arrived in; found by media URL, or by guid when the URL changed.
    @Test func theNewestRemoteActionOfAnEpisodeIsKept() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        func action(_ position: Double, at seconds: Double, url: String = "https://e.example/1.mp3") -> RemoteEpisode {
            RemoteEpisode(
                episode: url, podcast: "https://e.example/feed", guid: "g1", action: "play", position: position, started: nil,
                total: 3600, at: Date(timeIntervalSince1970: seconds), device: "phone")
        }
        #expect(try await store.keepRemoteEpisodes([action(50, at: 2000), action(20, at: 1000), action(70, at: 3000)]) == 2)
        #expect(try await store.keepRemoteEpisodes([action(10, at: 1500)]) == 0)
        let found = try await store.remoteEpisodes(
            urls: ["https://e.example/1.mp3"], guids: [("g1", "https://e.example/feed"), ("g1", "https://other.example/feed")])
        #expect(found.count == 2, "a guid is matched within its show only: \(found.keys)")
        #expect(found["https://e.example/1.mp3"]?.position == 70)
        let key = MediaStore.guidKey("g1", podcast: "https://e.example/feed")
        #expect(found[key]?.position == 70)
        let record = try #require(found[key]?.playback(for: item(1, kind: .episode).id))
        #expect(record.position == 70 && !record.played && record.updatedAt == Date(timeIntervalSince1970: 3000))
        #expect(action(3599, at: 4000).playback(for: item(1, kind: .episode).id)?.played == true)
    }

    /// A page read stops its cursor before the end (the row after the page only says there is a
    /// next one): the reader must not stay on the database as it was then. Every later read sees
    /// every later write, through the same readers, and a one-shot store beside it can write.
    @Test func aPageReadLeavesNoReaderBehind() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        try await store.addFavorites((0..<5).map { item($0) }, at: Date(timeIntervalSince1970: 1000))
        for round in 0..<8 {
            let page = try await store.favorites(limit: 2)
            #expect(page.next != nil)
            try await store.addFavorite(item(100 + round), at: Date(timeIntervalSince1970: 2000 + Double(round)))
            #expect(try await store.favoriteCount() == 6 + round, "round \(round)")
            #expect(try await store.favorites(limit: 1).items.first?.id == item(100 + round).id, "round \(round)")
        }
        let oneShot = try MediaStore(path: directory + "/db.sqlite", use: .oneShot)
        _ = try await oneShot.favorites(limit: 2)
        try await store.addFavorite(item(200))
        try await oneShot.addFavorite(item(201))
        #expect(try await store.favoriteCount() == 15)
    }

    /// A fetch of the same SQL while a cursor reads it gets a statement of its own: the cursor
    /// goes on where it was.
    @Test func aCursorIsNotRewoundByTheSameQuery() throws {
        let queue = try DatabaseQueue(path: directory + "-cursor.sqlite")
        let seen = try queue.write { db -> [Int] in
            try db.execute(sql: "CREATE TABLE t (n INTEGER)")
            for n in 1...4 { try db.execute(sql: "INSERT INTO t (n) VALUES (?)", arguments: [n]) }
            let sql = "SELECT n FROM t ORDER BY n"
            let cursor = try Row.fetchCursor(db, sql: sql)
            var seen: [Int] = []
            // (Bounded: a rewound cursor would read the first row for ever.)
            while seen.count < 10, let row = try cursor.next() {
                seen.append(try row[0])
                #expect(try Int.fetchAll(db, sql: sql) == [1, 2, 3, 4])
            }
            return seen
        }
        #expect(seen == [1, 2, 3, 4])
    }

    /// A new database is made in one transaction, not step by step: it must come out the same
    /// as one migrated a step at a time (every table, index and trigger, as SQLite stores their
    /// SQL, and the migrator's record), and opening it again finds nothing left to do.
    @Test func aNewDatabaseIsTheSchemaTheMigratorMakes() async throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let stepwise = try DatabaseQueue(path: directory + "/stepwise.sqlite")
        try MediaStore.migrator.migrate(stepwise)
        let store = try MediaStore(path: directory + "/new.sqlite")
        func describe(_ db: Database) throws -> [String] {
            try String.fetchAll(
                db, sql: "SELECT type || ' ' || name || ': ' || IFNULL(sql, '') FROM sqlite_master ORDER BY type, name")
                + String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier")
        }
        let expected = try stepwise.read(describe)
        let made = try store.pool.read(describe)
        #expect(expected.count > 20)
        #expect(made == expected)
        #expect(try await store.pool.read { try MediaStore.migrator.hasCompletedMigrations($0) })
        #expect(try await store.pool.read { try Bool.fetchOne($0, sql: "PRAGMA foreign_keys") } == true)
    }

    /// A page's annotations are the same whether a table is read whole (it has no more rows than
    /// the page has ids) or asked with an IN list, deleted rows and repeated ids included.
    @Test func annotationsAreTheSameWhicheverWayATableIsRead() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        try await store.addFavorites((0..<300).map { item($0) })
        for n in stride(from: 0, to: 300, by: 3) { _ = try await store.removeFavorite(item(n).id) }
        for n in stride(from: 0, to: 300, by: 7) {
            try await store.savePlayback(PlaybackRecord(id: item(n).id, position: Double(n), duration: 1000, played: false))
        }
        try await store.createList("l")
        try await store.addToList("l", (100..<200).map { item($0) })
        func expected(_ n: Int) -> (favorite: Bool, playback: Double?, lists: [String]?) {
            (n < 300 && n % 3 != 0, n < 300 && n % 7 == 0 ? Double(n) : nil, (100..<200).contains(n) ? ["l"] : nil)
        }
        // 10 ids (fewer than the rows: IN lists) and 600 (more: whole tables), one id twice.
        for ids in [[5, 7, 9, 14, 150, 151, 299, 300, 5, 1000], Array(0..<600) + [7]] {
            let known = try await store.annotations(for: ids.map { item($0).id })
            for n in ids {
                let id = item(n).id
                #expect(known.favorites.contains(id) == expected(n).favorite, "\(n)")
                #expect(known.playbacks[id]?.position == expected(n).playback, "\(n)")
                #expect(known.lists[id] == expected(n).lists, "\(n)")
            }
            #expect(known.downloads.isEmpty)
        }
    }

    @Test func databaseFileIsPrivate() throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    /// A one-shot process's big list goes into the database file while the store is still open
    /// (its own connection does not checkpoint: the checkpointer beside it does), and every row
    /// is there after the store closes and opens again.
    @Test func aOneShotListIsCheckpointedBesideTheWriter() async throws {
        let path = directory + "/db.sqlite"
        let record = Data(repeating: 0x61, count: 2000)
        func size() -> Int { ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0 }
        // The store is closed when this returns.
        func write() async throws {
            let store = try MediaStore(path: path, use: .oneShot)
            let generation = try await store.beginList(provider: "p", key: "k")
            for batch in 0..<8 {
                let rows = (0..<250).map { CachedRow(id: "r\(batch * 250 + $0)", order: nil, data: record) }
                try await store.appendRows(rows, provider: "p", key: "k", generation: generation, firstSeq: batch * 250)
            }
            try await store.commitList(provider: "p", key: "k", generation: generation, count: 2000)
            let deadline = ContinuousClock.now + .seconds(30)
            while size() < 3_000_000, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(size() >= 3_000_000, "the database file holds \(size()) bytes of 4 MB of rows")
        }
        try await write()
        let reopened = try MediaStore(path: path, use: .oneShot)
        #expect(try await reopened.listCount(provider: "p", key: "k") == 2000)
        #expect(try await reopened.listRow(provider: "p", key: "k", id: "r1999")?.data == record)
    }

    @Test func favoritesKeepSnapshotsNewestFirstAndPage() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        let base = Date(timeIntervalSince1970: 1_700_000_000)
        for n in 0..<7 { try await store.addFavorite(item(n), at: base.addingTimeInterval(Double(n))) }
        try await store.addFavorite(item(99, provider: "other"), at: base)
        let first = try await store.favorites(limit: 3)
        #expect(first.items.map(\.title) == ["Item 6", "Item 5", "Item 4"])
        #expect(first.items.allSatisfy { $0.favorite == true })
        let second = try await store.favorites(limit: 3, after: first.next)
        #expect(second.items.map(\.title) == ["Item 3", "Item 2", "Item 1"])
        let third = try await store.favorites(limit: 3, after: second.next)
        #expect(third.items.count == 2)
        #expect(third.next == nil)
        let other = try await store.favorites(provider: "other")
        #expect(other.items.map(\.title) == ["Item 99"])
        #expect(try await store.favorites(kind: .channel).items.isEmpty)
    }

    @Test func addingAgainRefreshesButKeepsPlace() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        try await store.addFavorite(item(1), at: Date(timeIntervalSince1970: 10))
        try await store.addFavorite(item(2), at: Date(timeIntervalSince1970: 20))
        var renamed = item(1)
        renamed.title = "Renamed"
        try await store.addFavorite(renamed, at: Date(timeIntervalSince1970: 30))
        #expect(try await store.favorites().items.map(\.title) == ["Item 2", "Renamed"])
        #expect(try await store.favoriteCount() == 2)
    }

    @Test func removeAndLookup() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        try await store.addFavorite(item(1))
        try await store.addFavorite(item(2))
        #expect(try await store.favoriteIDs(among: [item(1).id, item(3).id]) == [item(1).id])
        #expect(try await store.removeFavorite(item(1).id))
        #expect(try await !store.removeFavorite(item(1).id))
        #expect(try await store.favoriteIDs(among: [item(1).id, item(2).id]) == [item(2).id])
    }

    @Test func historyKeepsTheLast100NewestFirst() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        for n in 0..<130 { try await store.recordSearch(query: "q\(n)", provider: n % 2 == 0 ? "a" : "b", kind: nil) }
        let all = try await store.history()
        #expect(all.count == 100)
        #expect(all.first?.query == "q129")
        #expect(all.last?.query == "q30")
        let onlyA = try await store.history(provider: "a")
        #expect(onlyA.allSatisfy { $0.provider == "a" })
        #expect(onlyA.first?.query == "q128")
    }

    @Test func repeatedSearchMovesToTop() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        try await store.recordSearch(query: "#swift", provider: "mastodon", kind: nil)
        try await store.recordSearch(query: "@swiftlang", provider: "twitter", kind: nil)
        try await store.recordSearch(query: "all things", provider: nil, kind: .video)
        try await store.recordSearch(query: "#swift", provider: "mastodon", kind: nil)
        let history = try await store.history()
        #expect(history.map(\.query) == ["#swift", "all things", "@swiftlang"])
        #expect(history[1].provider == nil && history[1].kind == .video)
        #expect(try await store.clearHistory(provider: "twitter") == 1)
        #expect(try await store.clearHistory() == 2)
        #expect(try await store.history().isEmpty)
    }

    @Test func aSecondConnectionSeesWritesAtOnce() async throws {
        // Two stores on one file behave like a REPL and an RPC process sharing the database.
        let path = directory + "/shared.sqlite"
        let first = try MediaStore(path: path)
        let second = try MediaStore(path: path)
        try await first.addFavorite(item(42))
        #expect(try await second.favorites().items.map(\.id) == [item(42).id])
        try await second.setSetting("log.level", value: "debug")
        #expect(try await first.settings()["log.level"] == "debug")
        async let a: Void = { for n in 0..<50 { try await first.recordSearch(query: "a\(n)", provider: nil, kind: nil) } }()
        async let b: Void = { for n in 0..<50 { try await second.recordSearch(query: "b\(n)", provider: nil, kind: nil) } }()
        _ = try await (a, b)
        #expect(try await first.history().count == 100)
    }

    @Test func unopenableDatabaseSaysWhichFile() {
        #expect {
            try MediaStore(path: "/proc/definitely/not/here.sqlite")
        } throws: { error in
            "\(error)".contains("/proc/definitely/not/here.sqlite") && "\(error)".contains("MEDIAHOST_DATA_DIR")
        }
    }
}

/// Provider lists (a feed's episodes): written in a generation, made current at once, read page
/// by page in order; a failed write leaves the old list.
@Suite struct ProviderListTests {
    let store: MediaStore
    init() throws { store = try MediaStore(path: NSTemporaryDirectory() + "mediahost-lists-" + UUID().uuidString + "/db.sqlite") }

    func row(_ id: String, _ order: Double?) -> CachedRow { CachedRow(id: id, order: order, data: Data(id.utf8)) }

    func write(_ key: String, _ rows: [CachedRow]) async throws {
        let generation = try await store.beginList(provider: "p", key: key)
        try await store.appendRows(Array(rows.prefix(2)), provider: "p", key: key, generation: generation, firstSeq: 0)
        try await store.appendRows(Array(rows.dropFirst(2)), provider: "p", key: key, generation: generation, firstSeq: 2)
        try await store.commitList(provider: "p", key: key, generation: generation, count: rows.count)
    }

    @Test func highestOrderFirstTiesInOrderUnorderedLast() async throws {
        try await write("k", [row("a", 1), row("b", nil), row("c", 3), row("d", 1), row("e", nil), row("f", -5)])
        let all = try await store.listRows(provider: "p", key: "k", offset: 0, limit: 10)
        #expect(all?.map(\.id) == ["c", "a", "d", "f", "b", "e"])
        #expect(all?.first?.order == 3)
        #expect(all?.last?.order == nil)
        #expect(try await store.listRows(provider: "p", key: "k", offset: 2, limit: 2)?.map(\.id) == ["d", "f"])
        #expect(try await store.listRows(provider: "p", key: "k", offset: 99, limit: 2) == [])
        #expect(try await store.listRow(provider: "p", key: "k", id: "d")?.data == Data("d".utf8))
        #expect(try await store.listCount(provider: "p", key: "k") == 6)
        #expect(try await store.listRows(provider: "p", key: "other", offset: 0, limit: 2) == nil)
    }

    @Test func anUncommittedGenerationIsInvisibleAndDiscarded() async throws {
        try await write("k", [row("old", 1)])
        let generation = try await store.beginList(provider: "p", key: "k")
        try await store.appendRows([row("new", 2)], provider: "p", key: "k", generation: generation, firstSeq: 0)
        #expect(try await store.listRows(provider: "p", key: "k", offset: 0, limit: 10)?.map(\.id) == ["old"])
        #expect(try await store.listRow(provider: "p", key: "k", id: "new") == nil)
        try await store.discardList(provider: "p", key: "k", generation: generation)
        try await write("k", [row("newer", 3)])
        #expect(try await store.listRows(provider: "p", key: "k", offset: 0, limit: 10)?.map(\.id) == ["newer"])
    }

    /// Two requests (or processes) fetching one feed at once write the same list concurrently:
    /// neither may lose or delete the other's rows, and the list ends whole.
    @Test func concurrentWritersOfOneListNeverMixOrLoseRows() async throws {
        for newerCommitsFirst in [false, true] {
            let key = "k\(newerCommitsFirst)"
            let a = try await store.beginList(provider: "p", key: key)
            try await store.appendRows([row("a1", 2), row("a2", 1)], provider: "p", key: key, generation: a, firstSeq: 0)
            let b = try await store.beginList(provider: "p", key: key)
            #expect(b != a)
            try await store.appendRows([row("b1", 2)], provider: "p", key: key, generation: b, firstSeq: 0)
            try await store.appendRows([row("b2", 1)], provider: "p", key: key, generation: b, firstSeq: 1)
            if newerCommitsFirst {
                try await store.commitList(provider: "p", key: key, generation: b, count: 2)
                try await store.commitList(provider: "p", key: key, generation: a, count: 2)
            } else {
                try await store.commitList(provider: "p", key: key, generation: a, count: 2)
                #expect(try await store.listRows(provider: "p", key: key, offset: 0, limit: 10)?.map(\.id) == ["a1", "a2"])
                try await store.commitList(provider: "p", key: key, generation: b, count: 2)
            }
            #expect(try await store.listRows(provider: "p", key: key, offset: 0, limit: 10)?.map(\.id) == ["b1", "b2"])
            #expect(try await store.listCount(provider: "p", key: key) == 2)
            #expect(try await rowCount(key) == 2, "the losing writer's rows are gone")
        }
    }

    func rowCount(_ key: String? = nil) async throws -> Int {
        try await store.pool.read { db in
            try key.map { try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM providerRow WHERE key = ?", arguments: [$0]) }
                ?? Int.fetchOne(db, sql: "SELECT COUNT(*) FROM providerRow") ?? -1
        } ?? -1
    }

    /// A list written again and again keeps only its current rows.
    @Test func rewritingAListLeavesOnlyItsCurrentRows() async throws {
        for round in 0..<4 { try await write("k", (0..<5).map { row("r\(round)-\($0)", Double($0)) }) }
        #expect(try await rowCount("k") == 5)
        #expect(try await store.listRows(provider: "p", key: "k", offset: 0, limit: 10)?.first?.id == "r3-4")
    }

    @Test func rowsOfAnInterruptedWriteAreDroppedByTheNextOne() async throws {
        let crashed = try await store.beginList(provider: "p", key: "k")
        try await store.appendRows([row("lost", 1)], provider: "p", key: "k", generation: crashed, firstSeq: 0)
        try await store.pool.write { db in
            try db.execute(sql: "UPDATE providerListWriter SET startedAt = 0 WHERE generation = ?", arguments: [crashed])
        }
        try await write("k", [row("kept", 1)])
        let left = try await store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM providerRow WHERE generation = ?", arguments: [crashed])
        }
        #expect(left == 0)
        #expect(try await store.listRows(provider: "p", key: "k", offset: 0, limit: 10)?.map(\.id) == ["kept"])
        #expect(try await store.beginList(provider: "p", key: "k") > crashed + 1, "generations are never reused")
    }

    @Test func theOldestListsGoBeyondTheLimit() async throws {
        for n in 0..<(MediaStore.providerListLimit + 3) { try await write("k\(n)", [row("r", 1)]) }
        #expect(try await store.listCount(provider: "p", key: "k0") == nil)
        #expect(try await store.listCount(provider: "p", key: "k\(MediaStore.providerListLimit + 2)") == 1)
        #expect(try await rowCount() == MediaStore.providerListLimit, "the evicted lists' rows are gone")
    }

    /// Yesterday's data dir: provider lists written under v9 (indexes led by provider and key)
    /// read the same after v10 indexes their rows by generation; rows no list or writer owns
    /// are gone; reading and replacing a list use the indexes, not a scan of every list's rows.
    @Test func listsOfAVersion9DatabaseSurviveTheGenerationIndexes() async throws {
        let directory = NSTemporaryDirectory() + "mediahost-v9-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/db.sqlite"
        let queue = try DatabaseQueue(path: path)
        try MediaStore.migrator.migrate(queue, upTo: "v9: list items keyed by id, then list")
        try await queue.write { db in
            try db.execute(
                sql:
                    "INSERT INTO providerListWriter (provider, key, startedAt) VALUES ('p', 'a', 1), ('p', 'b', 1), ('p', 'c', 1)"
            )
            try db.execute(sql: "DELETE FROM providerListWriter WHERE generation IN (1, 2)")
            try db.execute(
                sql:
                    "INSERT INTO providerList (provider, key, generation, count, storedAt) VALUES ('p', 'a', 1, 3, 1), ('p', 'b', 2, 1, 1)"
            )
            for (key, generation, ids) in [
                ("a", 1, ["a1", "a2", "a3"]), ("b", 2, ["b1"]), ("c", 3, ["c1"]), ("x", 9, ["orphan"]),
            ] {
                for (seq, id) in ids.enumerated() {
                    try db.execute(
                        sql:
                            "INSERT INTO providerRow (provider, key, generation, seq, id, sortKey, data) VALUES ('p', ?, ?, ?, ?, ?, ?)",
                        arguments: [key, generation, seq, id, Double(10 - seq), Data(id.utf8)])
                }
            }
        }
        try queue.close()

        let store = try MediaStore(path: path)
        #expect(try await store.listRows(provider: "p", key: "a", offset: 0, limit: 10)?.map(\.id) == ["a1", "a2", "a3"])
        #expect(try await store.listRow(provider: "p", key: "b", id: "b1")?.data == Data("b1".utf8))
        let ids = try await store.pool.read { db in try String.fetchAll(db, sql: "SELECT id FROM providerRow ORDER BY id") }
        #expect(ids == ["a1", "a2", "a3", "b1", "c1"], "the live writer's rows stay, the orphan's go")
        let plans = try await store.pool.read { db in
            queryPlans(
                db,
                [
                    "SELECT id FROM providerRow WHERE provider = 'p' AND key = 'a' AND generation = 1 ORDER BY sortKey DESC, seq",
                    "SELECT r.id FROM providerRow r JOIN providerList l ON l.provider = r.provider AND l.key = r.key AND l.generation = r.generation WHERE r.provider = 'p' AND r.key = 'a' AND r.id = 'a2'",
                    "DELETE FROM providerRow WHERE provider = 'p' AND key = 'a' AND generation IN (SELECT 1 UNION SELECT generation FROM providerListWriter WHERE provider = 'p' AND key = 'a' AND generation < 5)",
                ])
        }
        for plan in plans {
            #expect(
                plan.contains("USING INDEX providerRow_") && !plan.contains("SCAN providerRow") && !plan.contains("SCAN r"),
                "\(plan)")
        }
        let indexed = try await store.pool.read { db in
            try ["providerRow_order", "providerRow_id"].map { index in
                try String.fetchAll(db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [index])
            }
        }
        #expect(indexed == [["generation", "sortKey", "seq"], ["generation", "id"]])
        try await write("a", [row("a4", 1)], in: store)
        #expect(try await store.listRows(provider: "p", key: "a", offset: 0, limit: 10)?.map(\.id) == ["a4"])
        let left = try await store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT id FROM providerRow WHERE key = 'a'")
        }
        #expect(left == ["a4"])
    }

    func write(_ key: String, _ rows: [CachedRow], in store: MediaStore) async throws {
        let generation = try await store.beginList(provider: "p", key: key)
        try await store.appendRows(rows, provider: "p", key: key, generation: generation, firstSeq: 0)
        try await store.commitList(provider: "p", key: key, generation: generation, count: rows.count)
    }
}

/// What SQLite's planner says it does for each statement, its steps joined by "; ".
func queryPlans(_ db: Database, _ statements: [String]) -> [String] {
    statements.map { sql in
        (try? Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql).map { try $0["detail"] as String }.joined(separator: "; ")) ?? ""
    }
}
