import Basics
import Foundation
import JSONRPC
import MediaHTTP
import MediaKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// New episodes without asking, through the binary against the sandbox (which publishes new
/// episodes on request): `mediahost refresh` and its dry run, the inbox (`new`, `seen`), a feed
/// that fails (its episodes kept, the reason said), the service's own timer, two refreshes at
/// once, and a refresh killed with SIGKILL halfway.
@Suite struct RefreshEndToEndTests {
    static let radio = "podcasts:podcast:1999999997"
    static let journal = "podcasts:podcast:1000000000"
    static let circle = "podcasts:podcast:1000007919"

    struct Setup {
        var sandbox: MediahostProcess
        var base: String
        var dataDir: String
        var environment: [String: String]

        /// A sandbox control call (`/podcasts/_publish/…`, `/_sandbox/faults`).
        func post(_ path: String, _ body: String = "") async throws {
            let root = base.replacingOccurrences(of: "/podcasts", with: "")
            let response = try await MediaHTTPClient().send(
                HTTPRequest(method: "POST", url: URL(string: root + path)!, body: Data(body.utf8)))
            #expect((200..<300).contains(response.status), "\(path): \(response.status)")
        }

        func publish(_ show: String, _ count: Int) async throws {
            try await post("/podcasts/_publish/\(show.split(separator: ":").last!)?count=\(count)")
        }

        func call(_ method: String, _ params: String = "{}") async throws -> JSONValue {
            let result = try await runMediahost(["call", method, params], dataDir: dataDir, environment: environment)
            #expect(result.status == 0, "\(method): \(result.stderr)")
            return try JSONValue(parsing: result.stdout)
        }

        func refresh(_ arguments: [String] = []) async throws -> (status: Int32, stdout: String, stderr: String) {
            try await runMediahost(["refresh"] + arguments, dataDir: dataDir, environment: environment)
        }
    }

    static func setUp(following shows: [String] = [radio, journal]) async throws -> Setup {
        let (sandbox, base) = try await startSandboxProcess()
        let setup = Setup(
            sandbox: sandbox, base: base, dataDir: try makeTemporaryDirectory(),
            environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
        for show in shows { _ = try await setup.call("favorites.add", #"{"id":"\#(show)"}"#) }
        return setup
    }

    static func titles(_ value: JSONValue?) -> [String] {
        (value?.arrayValue ?? []).compactMap { $0["title"]?.stringValue }
    }

    /// The first refresh learns each show (its newest episode arrives); what the sandbox
    /// publishes then arrives at the next, which a dry run announces without keeping; `new`
    /// lists it once, as rows, and `seen` empties what is left.
    @Test func whatIsPublishedArrivesInTheInboxOnce() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        let first = try await setup.refresh()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("Refreshed 2 shows in"), "\(first.stdout)")
        #expect(first.stdout.contains("2 new"), "each show's newest: \(first.stdout)")
        #expect(first.stdout.contains("Sandbox Radio: Tone 3 (180 s)"), "\(first.stdout)")
        _ = try await setup.call("new.seen", #"{"all":true}"#)

        try await setup.publish(Self.radio, 2)
        let dry = try await setup.refresh(["--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout.hasPrefix("Dry run (nothing kept or changed), 2 shows read"), "\(dry.stdout)")
        // (The lines come back without their indent: the test's reader trims them.)
        #expect(dry.stdout.contains("Would arrive\nSandbox Radio: Tone 5 (120 s)"), "\(dry.stdout)")
        #expect(try await setup.call("new.list", #"{"keep":true}"#)["total"] == 0, "a dry run keeps nothing")

        let json = try await setup.refresh(["--json"])
        let report = try JSONValue(parsing: json.stdout)
        #expect(Self.titles(report["arrived"]) == ["Tone 5 (120 s)", "Tone 4 (4 s)"], "newest first: \(json.stdout)")
        #expect(report["arrived"]?.arrayValue?.first?["subtitle"] == "Sandbox Radio")
        #expect(report["failed"] == [])
        // Nothing twice: the next refresh finds nothing new.
        let again = try await setup.refresh()
        #expect(again.stdout.contains(": 0 new."), "\(again.stdout)")

        // The REPL's `new` lists them as rows (then seen): `play`, `download` work on them.
        let repl = try await runMediahost(
            [], input: "new\nnew\n", dataDir: setup.dataDir, environment: setup.environment)
        #expect(repl.status == 0, "\(repl.stderr)")
        #expect(repl.stdout.contains("1  Tone 5 (120 s)") && repl.stdout.contains("2  Tone 4 (4 s)"), "\(repl.stdout)")
        #expect(repl.stdout.contains("(nothing new since you looked; refreshed"), "\(repl.stdout)")

        try await setup.publish(Self.journal, 3)
        _ = try await setup.refresh()
        let inbox = try await setup.call("new.list", #"{"keep":true}"#)
        #expect(inbox["total"] == 3)
        let first3 = try #require(inbox["items"]?.arrayValue?.first?["id"]?.stringValue)
        let seen = try await setup.call("new.seen", #"{"ids":["\#(first3)"]}"#)
        #expect(seen["marked"] == 1 && seen["left"] == 2)
        let unfollowed = try await setup.call("favorites.remove", #"{"id":"\#(Self.journal)"}"#)
        #expect(unfollowed["removed"] == true)
        #expect(try await setup.call("new.list")["total"] == 0, "what is no longer followed leaves the inbox")
    }

    /// A feed that fails is listed with the server's reason and keeps its episodes (opened
    /// offline as before); the others are read; every show failing is exit status 1.
    @Test func aFeedThatFailsKeepsItsEpisodesAndSaysWhy() async throws {
        let setup = try await Self.setUp(following: [Self.radio, Self.circle])
        defer { setup.sandbox.process.terminate() }
        _ = try await setup.refresh()
        let before = try await setup.call("media.children", #"{"id":"\#(Self.circle)"}"#)
        let episodes = Self.titles(before["items"])
        #expect(!episodes.isEmpty)
        try await setup.post("/_sandbox/faults", #"{"path":"/podcasts/feeds/1000007919.xml","status":500}"#)
        try await setup.publish(Self.radio, 1)
        let failing = try await setup.refresh()
        #expect(failing.status == 0, "one show of two failed: \(failing.stderr)")
        #expect(failing.stdout.contains("1 new, 1 not read"), "\(failing.stdout)")
        #expect(
            failing.stdout.contains("Not read\nThe Daily Circle 1: podcasts: the service answered HTTP 500"), "\(failing.stdout)")
        // The second failure in a row says since when.
        let json = try JSONValue(parsing: try await setup.refresh(["--json"]).stdout)
        #expect(json["failed"]?.arrayValue?.first?["since"]?.stringValue?.hasPrefix("20") == true, "\(json)")
        // Browsing still works from the copy kept.
        let after = try await setup.call("media.children", #"{"id":"\#(Self.circle)"}"#)
        #expect(Self.titles(after["items"]) == episodes)
        // The doctor names the feed.
        let doctor = try await runMediahost(["doctor"], dataDir: setup.dataDir, environment: setup.environment)
        #expect(doctor.stdout.contains("The Daily Circle 1"), "\(doctor.stdout)")

        try await setup.post("/_sandbox/faults", #"{"path":"/podcasts/feeds/1999999997.xml","status":503}"#)
        let all = try await setup.refresh()
        #expect(all.status == 1, "every show failed: \(all.stdout)")
    }

    /// The service refreshes on its own every refresh.interval_minutes (here one minute, the
    /// shortest), and an attached client hears `library.changed` for the inbox.
    @Test func theServiceRefreshesOnItsOwn() async throws {
        let setup = try await Self.setUp(following: [Self.radio])
        defer { setup.sandbox.process.terminate() }
        // Shorter than a minute is refused: a few seconds would hammer every feed's server.
        let tooOften = try await runMediahost(
            ["call", "config.set", #"{"key":"refresh.interval_minutes","value":"0.05"}"#], dataDir: setup.dataDir,
            environment: setup.environment)
        #expect(tooOften.status == 1 && tooOften.stderr.contains("0 (off) or a number of minutes from 1 to 10080"))
        _ = try await setup.call("config.set", #"{"key":"refresh.interval_minutes","value":"1"}"#)
        let service = try MediahostProcess(["serve"], dataDir: setup.dataDir, environment: setup.environment)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(setup.dataDir)
        // The refresh at its start learns the show.
        var deadline = ContinuousClock.now + .seconds(30)
        var inbox = JSONValue.null
        while ContinuousClock.now < deadline {
            inbox = try await setup.call("new.list", #"{"keep":true}"#)
            if inbox["refreshed"] != nil { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(inbox["refreshed"] != nil, "the service refreshed at its start: \(service.errors.suffix(2000))")
        _ = try await setup.call("new.seen", #"{"all":true}"#)

        let client = try MediahostProcess(["rpc"], dataDir: setup.dataDir, environment: setup.environment)
        defer { client.process.terminate() }
        client.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"host.info"}"#)
        _ = try #require(await client.messages(1).first)
        try await setup.publish(Self.radio, 1)
        deadline = ContinuousClock.now + .seconds(120)
        var heard = false
        while !heard, ContinuousClock.now < deadline {
            // The timer's next refresh is up to a minute away: quiet stretches are waited through.
            guard let message = await client.next(timeout: .seconds(5)) else { continue }
            let value = try? JSONValue(parsing: String(decoding: message.raw, as: UTF8.self))
            heard = value?["method"] == "library.changed" && value?["params"]?["what"] == "new"
        }
        #expect(heard, "an attached client heard the inbox change")
        let arrived = try await setup.call("new.list")
        #expect(Self.titles(arrived["items"]) == ["Tone 4 (4 s)"], "\(arrived)")
    }

    /// One refresh at a time on a data dir: a second while one runs is refused, naming the
    /// first; a refresh killed with SIGKILL halfway keeps what it read, lets go of its lock,
    /// and the next one finds the rest (nothing lost, nothing twice).
    @Test func twoRefreshesNeverRunAtOnceAndAKillLosesNothing() async throws {
        let setup = try await Self.setUp(following: [Self.radio, Self.journal, Self.circle])
        defer { setup.sandbox.process.terminate() }
        _ = try await setup.refresh()
        _ = try await setup.call("new.seen", #"{"all":true}"#)
        try await setup.publish(Self.radio, 1)
        try await setup.publish(Self.circle, 1)
        // The journal's feed answers after 8 s: the refresh is halfway when it is looked at.
        try await setup.post("/_sandbox/faults", #"{"path":"/podcasts/feeds/1000000000.xml","latencyMs":8000,"times":1}"#)
        let slow = try MediahostProcess(["refresh"], dataDir: setup.dataDir, environment: setup.environment)
        defer { slow.process.terminate() }
        var inbox = JSONValue.null
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            inbox = try await setup.call("new.list", #"{"keep":true}"#)
            if inbox["total"] == 2 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(inbox["total"] == 2, "what was read is kept as it is read: \(inbox)")
        let second = try await setup.refresh()
        #expect(second.status == 1)
        #expect(
            second.stderr.contains("a refresh is already running (process \(slow.process.processIdentifier)"), "\(second.stderr)")
        kill(slow.process.processIdentifier, SIGKILL)
        slow.process.waitUntilExit()

        try await setup.publish(Self.journal, 1)
        let next = try await setup.refresh(["--json"])
        #expect(next.status == 0, "the lock went with the killed process: \(next.stderr)")
        let report = try JSONValue(parsing: next.stdout)
        #expect(Self.titles(report["arrived"]).count == 1, "only the journal's new one: \(next.stdout)")
        #expect(try await setup.call("new.list", #"{"keep":true}"#)["total"] == 3)
    }
}

extension RefreshEndToEndTests {
    /// auto_download through the binary: what arrives is downloaded by the rule, and `mediahost
    /// refresh` (as cron runs it) ends when its downloads do. Killed with SIGKILL halfway through
    /// the download, the next refresh resumes it to a whole file, and nothing arrives twice.
    @Test func autoDownloadSurvivesAKillHalfway() async throws {
        // 1.44 MB of tone at 400 kB/s: about 3.6 s to download.
        let (sandbox, base) = try await startSandboxProcess(rate: 400_000)
        defer { sandbox.process.terminate() }
        let setup = Setup(
            sandbox: sandbox, base: base, dataDir: try makeTemporaryDirectory(),
            environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
        _ = try await setup.call("favorites.add", #"{"id":"\#(Self.radio)"}"#)
        _ = try await setup.call("rules.set", #"{"show":"\#(Self.radio)","key":"auto_download","value":"all"}"#)
        let dry = try await setup.refresh(["--dry-run"])
        #expect(dry.stdout.contains("Would download\nSandbox Radio: Tone 3 (180 s): auto_download all"), "\(dry.stdout)")

        let first = try MediahostProcess(["refresh"], dataDir: setup.dataDir, environment: setup.environment)
        defer { first.process.terminate() }
        // Halfway: some of the file is there.
        var part = 0
        let deadline = ContinuousClock.now + .seconds(30)
        while part < 200_000, ContinuousClock.now < deadline {
            let downloads = try await setup.call("downloads.list")
            part = downloads.arrayValue?.first?["bytes"]?.intValue ?? 0
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(part >= 200_000, "the automatic download ran")
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()

        let second = try await setup.refresh()
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains(": 0 new."), "nothing twice: \(second.stdout)")
        let downloads = try await setup.call("downloads.list")
        let record = try #require(downloads.arrayValue?.first)
        #expect(downloads.arrayValue?.count == 1)
        #expect(record["state"] == "completed", "the next refresh finished it: \(downloads)")
        let path = try #require(record["path"]?.stringValue)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        #expect(size == 44 + 180 * 8000, "a whole file, resumed from where it was")
    }

    /// An automatic download that fails (the server errs for a while) is tried again at the next
    /// refresh, saying why, until it is whole.
    @Test func aFailedAutomaticDownloadIsTriedAgain() async throws {
        let setup = try await Self.setUp(following: [Self.radio])
        defer { setup.sandbox.process.terminate() }
        _ = try await setup.call("rules.set", #"{"show":"\#(Self.radio)","key":"auto_download","value":"all"}"#)
        try await setup.post("/_sandbox/faults", #"{"path":"/podcasts/media/1999999997/3.wav","status":500}"#)
        let first = try await setup.refresh()
        #expect(first.stdout.contains("Tone 3 (180 s): failed"), "\(first.stdout)")
        let _ = try await MediaHTTPClient().send(
            HTTPRequest(
                method: "DELETE", url: URL(string: setup.base.replacingOccurrences(of: "/podcasts", with: "/_sandbox/faults"))!))
        let dry = try await setup.refresh(["--dry-run"])
        #expect(dry.stdout.contains("auto_download: trying again (it failed: "), "\(dry.stdout)")
        let second = try await setup.refresh()
        #expect(second.stdout.contains("Tone 3 (180 s): completed"), "\(second.stdout)")
        let third = try await setup.refresh(["--dry-run"])
        #expect(!third.stdout.contains("trying again"), "once whole, not again: \(third.stdout)")
    }
}
