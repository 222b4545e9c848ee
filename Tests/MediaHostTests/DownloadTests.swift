import Foundation
import JSONRPC
import MediaHTTP
import MediaKit
import MediaStore
import Sandbox
import Synchronization
import TestSupport
import Testing

@testable import MediaHost

/// A host whose catalog videos download from an in-process sandbox.
struct DownloadFixture {
    let server = SandboxServer(replicas: [])
    let fixture: HostFixture
    let log: NotificationLog

    init(concurrency: Int = 3, dataDir: String? = nil) async throws {
        let port = try await server.start()
        var configuration = MediaHTTPClient.Configuration()
        configuration.maxRetries = 0
        fixture = try HostFixture(
            environment: [
                "MEDIAHOST_CATALOG_MEDIA_BASE": "http://127.0.0.1:\(port)/_sandbox/file",
                "MEDIAHOST_DOWNLOADS_CONCURRENCY": String(concurrency),
            ], http: MediaHTTPClient(configuration: configuration))
        log = NotificationLog()
        let log = self.log
        fixture.host.events.subscribe { event in log.append(event.method, event.params) }
    }

    var host: HostRuntime { fixture.host }

    static func video(_ n: Int) -> String { "catalog:video:v\(n)" }

    func start(_ n: Int) async throws -> JSONValue { try await fixture.call("downloads.start", ["id": .string(Self.video(n))]) }

    func record(_ n: Int) async throws -> DownloadRecord? {
        try await host.store.download(ItemID(parsing: Self.video(n)))
    }

    /// Waits until video n's download reaches `state`.
    func wait(_ n: Int, for state: DownloadRecord.State, timeout: Duration = .seconds(30)) async throws -> DownloadRecord {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let record = try await record(n), record.state == state { return record }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw TimeoutError(what: "video \(n) never became \(state); it is \(String(describing: try await record(n)?.state))")
    }

    /// The bytes the sandbox serves for video n (the same function that generated them).
    static func expected(_ n: Int, version: UInt64 = 1) -> [UInt8] {
        let size = CatalogProvider.videoSize(n)
        return MediaFile(seed: 42 &+ version, size: size, etag: "", type: "").bytes(0..<size)
    }

    /// Starts video n throttled to 100 kB/s (four seconds or more for any catalog video), waits
    /// until its part file holds bytes, then calls `method` (pause or cancel) on it. A fixed sleep
    /// here let a busy machine finish the download first, and the test then checked the wrong thing.
    func interruptMidway(_ n: Int, with method: String) async throws -> JSONValue {
        server.media.bytesPerSecond = 100_000
        _ = try await start(n)
        let running = try await wait(n, for: .running)
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: running.partPath)[.size] as? Int) ?? 0
            if size > 0 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try await fixture.call(method, ["id": .string(Self.video(n))])
    }

    func stop() { server.stop() }
}

struct TimeoutError: Error, CustomStringConvertible { var what: String; var description: String { what } }

final class NotificationLog: Sendable {
    private let entries = Mutex<[(String, JSONValue)]>([])
    func append(_ method: String, _ params: JSONValue) { entries.withLock { $0.append((method, params)) } }
    var all: [(String, JSONValue)] { entries.withLock { $0 } }
    func states(of id: String) -> [String] {
        all.filter { $0.0 == "downloads.state" && $0.1["id"]?.stringValue == id }.compactMap { $0.1["state"]?.stringValue }
    }
}

@Suite struct DownloadTests {
    @Test func downloadsToASanitizedPathAtomically() async throws {
        let d = try await DownloadFixture()
        defer { d.stop() }
        let started = try await d.start(3)
        try expectConforms(started, to: "downloads.start")
        #expect(started["state"] == "queued" || started["state"] == "running")
        let done = try await d.wait(3, for: .completed)
        #expect(done.path == d.fixture.directory + "/data/downloads/catalog/Channel 4/2026-01-04 Video 3 about science.bin")
        let data = try #require(FileManager.default.contents(atPath: done.path))
        #expect(Array(data) == DownloadFixture.expected(3))
        #expect(!FileManager.default.fileExists(atPath: done.partPath))
        #expect(done.bytes == Int64(CatalogProvider.videoSize(3)))
        #expect(d.log.states(of: DownloadFixture.video(3)) == ["queued", "running", "completed"])
        // Starting it again gives the same download; items carry its state and path.
        #expect(try await d.start(3)["path"]?.stringValue == done.path)
        let item = try await d.fixture.call("media.get", ["id": "catalog:video:v3"])
        #expect(item["download"]?["state"] == "completed")
        #expect(item["download"]?["path"]?.stringValue == done.path)
        let list = try await d.fixture.call("downloads.list")
        try expectConforms(list, to: "downloads.list")
        #expect(list.arrayValue?.count == 1)
    }

    @Test func concurrencyLimitAndFIFOQueue() async throws {
        let d = try await DownloadFixture(concurrency: 2)
        defer { d.stop() }
        d.server.media.bytesPerSecond = 10_000
        for n in [10, 11, 12, 13] { _ = try await d.start(n) }
        // Throttled to take half a minute each: once two run, the state holds while it is checked.
        _ = try await d.wait(10, for: .running)
        _ = try await d.wait(11, for: .running)
        let running = try await d.host.store.downloads(in: [.running]).map(\.id.nativeID)
        #expect(Set(running) == ["v10", "v11"], "the two oldest run, the others wait")
        #expect(try await d.host.store.downloads(in: [.queued]).map(\.id.nativeID) == ["v12", "v13"])
        d.server.media.bytesPerSecond = nil
        for n in [10, 11, 12, 13] { _ = try await d.wait(n, for: .completed) }
        // The waiting two were asked for only after the first two (they start together when both
        // slots free at once, so their own order is the network's).
        let order = d.server.traffic.requests.filter { $0.path.hasPrefix("/_sandbox/file/") }.map(\.path)
        #expect(
            Set(order.suffix(2)) == [
                "/_sandbox/file/\(CatalogProvider.videoSize(12))", "/_sandbox/file/\(CatalogProvider.videoSize(13))",
            ], "\(order)")
    }

    @Test func pauseKeepsThePartAndResumeUsesRangeWithIfRange() async throws {
        let d = try await DownloadFixture()
        defer { d.stop() }
        let paused = try await d.interruptMidway(20, with: "downloads.pause")
        #expect(paused["state"] == "paused")
        let record = try #require(try await d.record(20))
        let partSize = (try FileManager.default.attributesOfItem(atPath: record.partPath)[.size] as? Int) ?? 0
        #expect(partSize > 0)
        #expect(record.etag != nil)
        d.server.media.bytesPerSecond = nil
        _ = try await d.fixture.call("downloads.resume", ["id": "catalog:video:v20"])
        let done = try await d.wait(20, for: .completed)
        #expect(Array(try #require(FileManager.default.contents(atPath: done.path))) == DownloadFixture.expected(20))
        let resumed = try #require(d.server.traffic.requests.last { $0.path.hasPrefix("/_sandbox/file/") })
        #expect(resumed.headers["range"] == "bytes=\(partSize)-")
        #expect(resumed.headers["if-range"] == record.etag)
    }

    @Test func changedFileRestartsFromZero() async throws {
        let d = try await DownloadFixture()
        defer { d.stop() }
        let paused = try await d.interruptMidway(21, with: "downloads.pause")
        try #require(paused["state"] == "paused", "\(paused)")
        d.server.media.bytesPerSecond = nil
        d.server.media.setVersion(2, for: "/_sandbox/file/\(CatalogProvider.videoSize(21))")
        _ = try await d.fixture.call("downloads.resume", ["id": "catalog:video:v21"])
        let done = try await d.wait(21, for: .completed)
        #expect(Array(try #require(FileManager.default.contents(atPath: done.path))) == DownloadFixture.expected(21, version: 2))
    }

    @Test func serverIgnoringRangeRestartsFromZero() async throws {
        let d = try await DownloadFixture()
        defer { d.stop() }
        let paused = try await d.interruptMidway(22, with: "downloads.pause")
        try #require(paused["state"] == "paused", "\(paused)")
        d.server.media.bytesPerSecond = nil
        d.server.faults.add(FaultRule(path: "/_sandbox/file/", ignoreRange: true))
        _ = try await d.fixture.call("downloads.resume", ["id": "catalog:video:v22"])
        let done = try await d.wait(22, for: .completed)
        #expect(Array(try #require(FileManager.default.contents(atPath: done.path))) == DownloadFixture.expected(22))
    }

    @Test func truncatedBodiesAndServerErrorsAreRetried() async throws {
        let d = try await DownloadFixture()
        defer { d.stop() }
        d.server.faults.add(FaultRule(path: "/_sandbox/file/", truncateAfterBytes: 50_000, times: 1))
        d.server.faults.add(FaultRule(path: "/_sandbox/file/", status: 503, times: 1))
        _ = try await d.start(23)
        let done = try await d.wait(23, for: .completed)
        #expect(Array(try #require(FileManager.default.contents(atPath: done.path))) == DownloadFixture.expected(23))
        #expect(d.server.traffic.count(prefix: "/_sandbox/file/") == 3)
    }

    @Test func goneFilesFailWithAReason() async throws {
        let d = try await DownloadFixture()
        defer { d.stop() }
        d.server.faults.add(FaultRule(path: "/_sandbox/file/", status: 404))
        _ = try await d.start(24)
        let failed = try await d.wait(24, for: .failed)
        #expect(failed.error?.contains("HTTP 404") == true)
        #expect(!FileManager.default.fileExists(atPath: failed.path))
        // Starting it again queues it again.
        d.server.faults.clear()
        _ = try await d.start(24)
        _ = try await d.wait(24, for: .completed)
    }

    @Test func throttledBodiesReportProgressAtMostFourTimesASecond() async throws {
        let d = try await DownloadFixture()
        defer { d.stop() }
        d.server.media.bytesPerSecond = 300_000
        let start = ContinuousClock.now
        _ = try await d.start(40)
        _ = try await d.wait(40, for: .completed)
        let seconds = Double((ContinuousClock.now - start).components.seconds) + 1
        let progress = d.log.all.filter { $0.0 == "downloads.progress" }
        #expect(progress.count >= 2)
        #expect(Double(progress.count) <= seconds * 4 + 2, "\(progress.count) in \(seconds) s")
        let last = try #require(progress.last?.1)
        #expect(last["bytes"] == JSONValue(CatalogProvider.videoSize(40)))
        #expect(last["total"] == JSONValue(CatalogProvider.videoSize(40)))
        #expect(last["rate"] != nil)
    }

    @Test func listingsShowTheBytesArrivingNow() async throws {
        let d = try await DownloadFixture()
        defer { d.stop() }
        d.server.media.bytesPerSecond = 100_000
        _ = try await d.start(31)
        _ = try await d.wait(31, for: .running)
        var rows: [JSONValue] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let list = try await d.fixture.checked("downloads.list")
            let row = try #require(list.arrayValue?.first)
            if let bytes = row["bytes"]?.intValue, bytes > 0, rows.last?["bytes"]?.intValue.map({ $0 < bytes }) ?? true {
                rows.append(row)
            }
            if rows.count >= 2 { break }
            try await Task.sleep(for: .milliseconds(300))
        }
        #expect(rows.count >= 2, "downloads.list never showed the bytes growing: \(rows)")
        #expect(rows.last?["state"] == "running")
        #expect((rows.last?["rate"]?.doubleValue ?? 0) > 0)
        #expect(rows.last?["total"] == JSONValue(CatalogProvider.videoSize(31)))
        // Another process reads the store: the byte count is saved while the download runs.
        var saved: Int64 = 0
        while ContinuousClock.now < deadline, saved == 0 {
            saved = try await d.record(31)?.bytes ?? 0
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(saved > 0)
        _ = try await d.fixture.call("downloads.cancel", ["id": "catalog:video:v31"])
    }

    @Test func cancelDeletesThePartAndRemoveDeletesTheFile() async throws {
        let d = try await DownloadFixture()
        defer { d.stop() }
        let cancelled = try await d.interruptMidway(30, with: "downloads.cancel")
        #expect(cancelled["state"] == "cancelled")
        let record = try #require(try await d.record(30))
        #expect(!FileManager.default.fileExists(atPath: record.partPath))
        let announced = d.log.all.filter { $0.0 == "downloads.state" && $0.1["state"] == "cancelled" }
        #expect(announced.count == 1, "one cancellation, one notification: \(announced)")
        d.server.media.bytesPerSecond = nil
        _ = try await d.fixture.call("downloads.resume", ["id": "catalog:video:v30"])
        let done = try await d.wait(30, for: .completed)
        let removed = try await d.fixture.call("downloads.remove", ["id": "catalog:video:v30"])
        #expect(removed == ["id": "catalog:video:v30", "removed": true])
        #expect(!FileManager.default.fileExists(atPath: done.path))
        #expect(try await d.fixture.call("downloads.list") == [])
    }

    @Test func sizeDifferentFromTheFeedIsReported() async throws {
        let d = try await DownloadFixture()
        defer { d.stop() }
        let id = try ItemID(parsing: "catalog:video:v60")
        var source = try await d.host.withProvider("catalog") { try await $0.downloadSource(for: id) }
        source.expectedLength = 123
        _ = try await d.host.downloads.start(id, source: source, title: "Video 60")
        let done = try await d.wait(60, for: .completed)
        #expect(done.note == "the feed says 123 bytes; the server sent \(CatalogProvider.videoSize(60))")
        // Favorites carry the download too.
        _ = try await d.fixture.call("favorites.add", ["id": "catalog:video:v60"])
        let favorites = try await d.fixture.call("favorites.list")
        #expect(favorites["items"]?.arrayValue?.first?["download"]?["state"] == "completed")
    }

    /// A full disk pauses the download with the reason, and every queued one with it (each
    /// would fail the same way): nothing half-written becomes a file, nothing is deleted, no
    /// download tries again and again; `resume` goes on once there is room.
    @Test func aFullDiskPausesTheDownloadsSayingWhy() async throws {
        // A real full disk: a 256 KB tmpfs as the downloads folder where mounting works (as
        // root), else the .part path pointed at /dev/full, which fails every write with ENOSPC.
        let directory = try makeTemporaryDirectory()
        let mounted = await runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", directory]).status == 0
        defer { if mounted { umount(directory) } }
        let d = try await DownloadFixture()
        defer { d.stop() }
        if mounted {
            let manager = DownloadManager(
                store: d.host.store, http: MediaHTTPClient(), events: EventHub(), logger: d.host.logger, root: directory,
                concurrency: { 1 }, refreshSource: { _ in nil })
            let ids = try [51, 52].map { try ItemID(parsing: "catalog:video:v\($0)") }
            for id in ids {
                let source = try await d.host.withProvider("catalog") { try await $0.downloadSource(for: id) }
                _ = try await manager.start(id, source: source, title: "big \(id.nativeID)")
            }
            await manager.idle()
            let full = try #require(try await d.host.store.download(ids[0]))
            #expect(full.state == .paused)
            #expect(
                full.error?.contains("the disk is full") == true && full.error?.contains("`resume`") == true,
                "\(full.error ?? "")")
            #expect(!FileManager.default.fileExists(atPath: full.path))
            #expect(full.bytes > 0, "what was written is kept to resume from")
            let queued = try #require(try await d.host.store.download(ids[1]))
            #expect(queued.state == .paused && queued.error?.contains("the disk is full") == true, "\(queued)")
        } else {
            let started = try await d.start(50)  // 700 kB
            let path = try #require(started["path"]?.stringValue)
            _ = try? await d.fixture.call("downloads.pause", ["id": "catalog:video:v50"])
            try? FileManager.default.removeItem(atPath: path + ".part")
            try FileManager.default.createSymbolicLink(atPath: path + ".part", withDestinationPath: "/dev/full")
            _ = try await d.fixture.call("downloads.resume", ["id": "catalog:video:v50"])
            let paused = try await d.wait(50, for: .paused)
            #expect(paused.error?.contains("the disk is full") == true, "\(paused.error ?? "")")
            #expect(!FileManager.default.fileExists(atPath: paused.path))
        }
    }

}
