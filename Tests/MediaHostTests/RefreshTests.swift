import Foundation
import JSONRPC
import MediaKit
import MediaStore
import Synchronization
import TestSupport
import Testing

@testable import MediaHost

#if canImport(Glibc)
    import Glibc
#endif

/// `refresh.run`, `new.list` and `new.seen` through the dispatcher: what arrives, failures kept
/// with why, one refresh at a time, a few requests per host, the doctor's word on failing feeds,
/// and bad params.
@Suite struct RefreshTests {
    @Test func aFirstRefreshLearnsEachShowAndADryRunKeepsNothing() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c1"])
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c2"])
        // A video is watched, not followed.
        _ = try await fixture.checked("favorites.add", ["id": "catalog:video:v3"])
        let dry = try await fixture.checked("refresh.run", ["dryRun": true])
        #expect(dry["dryRun"] == true && dry["shows"] == 2)
        #expect(dry["arrived"]?.arrayValue?.count == 2)
        #expect(try await fixture.checked("new.list", ["keep": true])["total"] == 0)
        #expect(try await fixture.checked("new.list")["refreshed"] == nil, "a dry run is no refresh")

        let run = try await fixture.checked("refresh.run")
        let arrived = run["arrived"]?.arrayValue ?? []
        #expect(arrived.count == 2 && run["failed"] == [] && run["dryRun"] == nil)
        // Each show's newest (by date) of its first page.
        for channel in ["c1", "c2"] {
            let page = try await fixture.checked("media.children", ["id": .string("catalog:channel:\(channel)")])
            let newest = page["items"]?.arrayValue?.max {
                ($0["published"]?.stringValue ?? "") < ($1["published"]?.stringValue ?? "")
            }
            #expect(arrived.contains { $0["id"] == newest?["id"] }, "the newest of \(channel)")
        }
        let inbox = try await fixture.checked("new.list")
        #expect(inbox["total"] == 2 && inbox["items"]?.arrayValue?.count == 2)
        #expect(inbox["refreshed"]?.stringValue?.hasPrefix("20") == true)
        #expect(try await fixture.checked("new.list")["total"] == 0, "listed is seen")
        #expect(try await fixture.checked("refresh.run")["arrived"] == [], "nothing twice")
    }

    /// A provider that fails costs its shows only; each is reported with why, and since when
    /// from its second failure on.
    @Test func failuresAreReportedWithWhyAndSince() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c1"])
        try await fixture.host.store.addFavorite(
            MediaItem(id: ItemID(provider: "catalog", kind: .channel, nativeID: "c9"), title: "Gone"))
        let run = try await fixture.checked("refresh.run")
        #expect(run["shows"] == 2 && run["arrived"]?.arrayValue?.count == 1)
        let failed = try #require(run["failed"]?.arrayValue?.first)
        #expect(failed["id"] == "catalog:channel:c9" && failed["title"] == "Gone" && failed["since"] == nil)
        #expect(failed["message"]?.stringValue?.contains("has no children") == true, "\(failed)")

        fixture.control.failure = .network("the catalog is down")
        let down = try await fixture.checked("refresh.run")
        #expect(down["failed"]?.arrayValue?.count == 2)
        #expect(
            down["failed"]?.arrayValue?.allSatisfy { $0["message"]?.stringValue?.contains("the catalog is down") == true } == true
        )
        #expect(down["failed"]?.arrayValue?.first { $0["id"] == "catalog:channel:c9" }?["since"]?.stringValue != nil)
        fixture.control.failure = nil
    }

    /// A second refresh while one runs (here: another process's, holding the lock) is refused
    /// with Busy and who holds it; a dry run is not refused.
    @Test func oneRefreshAtATime() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c1"])
        let path = fixture.directory + "/data/run/refresh.lock"
        try FileManager.default.createDirectory(atPath: fixture.directory + "/data/run", withIntermediateDirectories: true)
        let fd = open(path, O_RDWR | O_CREAT, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
        _ = pwrite(fd, "process 4242, since 2026-11-29T10:00:00Z", 41, 0)
        let busy = await fixture.error("refresh.run")
        #expect(busy?.code == AppErrorCode.busy)
        #expect(busy?.message.contains("a refresh is already running (process 4242, since 2026-11-29T10:00:00Z)") == true)
        #expect(try await fixture.checked("refresh.run", ["dryRun": true])["shows"] == 1)
        _ = flock(fd, LOCK_UN)
        #expect(try await fixture.checked("refresh.run")["shows"] == 1)
    }

    /// At most `perHost` shows of one host and `total` in all are read at once; every show gets
    /// its own result, in order.
    @Test func aFewRequestsPerHostAtOnce() async throws {
        let shows = (0..<40).map { n in
            var show = MediaItem(id: ItemID(provider: "podcasts", kind: .podcast, nativeID: "\(n)"), title: "Show \(n)")
            show.feed = n < 30 ? "https://Feeds.Example/\(n).xml" : "https://other\(n).example/feed"
            return show
        }
        let running = Mutex<(byHost: [String: Int], all: Int, peakHost: Int, peakAll: Int)>(([:], 0, 0, 0))
        let results = await HostRuntime.eachShow(shows, limits: (total: 6, perHost: 3)) { show in
            let host = HostRuntime.refreshHost(show)
            running.withLock { state in
                state.byHost[host, default: 0] += 1
                state.all += 1
                state.peakHost = max(state.peakHost, state.byHost["feeds.example"] ?? 0)
                state.peakAll = max(state.peakAll, state.all)
            }
            try? await Task.sleep(for: .milliseconds(5))
            running.withLock { state in
                state.byHost[host, default: 0] -= 1
                state.all -= 1
            }
            return .success(show.title)
        }
        #expect(results.compactMap { try? $0.get() } == shows.map(\.title))
        let peaks = running.withLock { ($0.peakHost, $0.peakAll) }
        #expect(peaks.0 <= 3 && peaks.1 <= 6, "\(peaks)")
        #expect(HostRuntime.refreshHost(shows[0]) == "feeds.example")
        #expect(
            HostRuntime.refreshHost(MediaItem(id: ItemID(provider: "youtube", kind: .channel, nativeID: "x"), title: ""))
                == "youtube")
    }

    /// The doctor names feeds failing for days as a warning, and those that failed at the last
    /// refresh in its note.
    @Test func theDoctorNamesFeedsThatFailForDays() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c1"])
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c2"])
        func check() async throws -> JSONValue? {
            try await fixture.checked("host.doctor")["checks"]?.arrayValue?.first { $0["name"] == "refresh" }
        }
        #expect(try await check()?["detail"]?.stringValue?.contains("never refreshed") == true)
        let c1 = ItemID(provider: "catalog", kind: .channel, nativeID: "c1")
        let c2 = ItemID(provider: "catalog", kind: .channel, nativeID: "c2")
        try await fixture.host.store.recordRefreshFailure(of: c2, "HTTP 503", at: Date().addingTimeInterval(-3600))
        let recent = try #require(try await check())
        #expect(recent["status"] == "ok")
        #expect(
            recent["detail"]?.stringValue?.contains("1 failed at the last refresh: Channel 2 (since today: HTTP 503)") == true,
            "\(recent)")
        try await fixture.host.store.recordRefreshFailure(of: c1, "HTTP 410", at: Date().addingTimeInterval(-3 * 86_400))
        let old = try #require(try await check())
        #expect(old["status"] == "warning")
        #expect(old["detail"] == "1 of 2 followed feeds fail: Channel 1 (for 3 days: HTTP 410)", "\(old)")
    }

    @Test func badParamsAreRefused() async throws {
        let fixture = try HostFixture()
        #expect(await fixture.error("refresh.run", ["provider": "nosuch"])?.code == AppErrorCode.unknownProvider)
        let notFollowed = await fixture.error("refresh.run", ["show": "catalog:channel:c1"])
        #expect(notFollowed?.code == RPCError.invalidParamsCode)
        #expect(notFollowed?.message.contains("is not followed here") == true)
        #expect(await fixture.error("new.list", ["limit": 0])?.code == RPCError.invalidParamsCode)
        #expect(await fixture.error("new.seen", [:])?.code == RPCError.invalidParamsCode)
        #expect(await fixture.error("new.seen", ["ids": []])?.code == RPCError.invalidParamsCode)
        #expect(await fixture.error("new.seen", ["ids": ["catalog:video:v1"], "all": true])?.code == RPCError.invalidParamsCode)
        // A misspelt param is refused, not ignored: `dryrun` must not run a real refresh.
        let misspelt = await fixture.error("refresh.run", ["dryrun": true])
        #expect(misspelt?.code == RPCError.invalidParamsCode)
        #expect(
            misspelt?.message
                == "Invalid params: refresh.run has no param 'dryrun' (did you mean 'dryRun'?); it takes dryRun, provider, show",
            "\(String(describing: misspelt))")
        #expect(try await fixture.host.store.lastRefresh() == nil, "nothing ran")
        let empty = try await fixture.checked("refresh.run")
        #expect(empty["shows"] == 0 && empty["arrived"] == [])
    }
}
