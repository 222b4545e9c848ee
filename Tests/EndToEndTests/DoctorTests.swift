import Foundation
import JSONRPC
import TestSupport
import Testing

/// `mediahost doctor` (`host.doctor`), as a person runs it on a machine before and after setup.
@Suite struct DoctorTests {
    /// Before `make run`: no yt-dlp where YouTube without a key needs it. It fails with the
    /// command that fixes it; the checks that need the network are named, not run.
    @Test func withoutYTDLPItSaysWhatToRun() async throws {
        let dataDir = try makeTemporaryDirectory()
        let result = try await runMediahost(
            ["doctor"], dataDir: dataDir,
            environment: ["MEDIAHOST_YOUTUBE_YTDLP": "/nonexistent/yt-dlp", "YOUTUBE_API_KEY": ""])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("FAILED   yt-dlp: '/nonexistent/yt-dlp' is not installed"), "\(result.stdout)")
        #expect(result.stdout.contains("→ `make ytdlp`"))
        #expect(result.stdout.contains("`mediahost doctor --online` does"))
        // (The harness reads stdout line by line, its leading spaces dropped.)
        #expect(result.stdout.contains("tmdb\nskipped  settings: not configured"), "unconfigured is no failure")
    }

    /// After `make run`: yt-dlp from the venv, its JavaScript runtime beside it, everything
    /// configured working: exit status 0. An old yt-dlp is a warning that says how to update.
    @Test func withTheVenvEverythingConfiguredWorks() async throws {
        guard let ytdlp = YTDLPEndToEndTests.requireYTDLP() else { return }
        let dataDir = try makeTemporaryDirectory()
        let result = try await runMediahost(
            ["doctor", "--json"], dataDir: dataDir, environment: ["MEDIAHOST_YOUTUBE_YTDLP": ytdlp, "YOUTUBE_API_KEY": ""])
        let report = try JSONValue(parsing: result.stdout)
        let checks = report["checks"]?.arrayValue ?? []
        let runtime = checks.first { $0["name"] == "JavaScript runtime" }
        #expect(runtime?["status"] == "ok", "\(result.stdout)")
        #expect(runtime?["detail"]?.stringValue?.contains("deno") == true)
        #expect(checks.first { $0["name"] == "yt-dlp" }?["status"] == "ok")
        #expect(report["ok"] == true && result.status == 0, "\(result.stdout)")
        let folder = try makeTemporaryDirectory()
        let old = folder + "/yt-dlp"
        try "#!/bin/sh\necho 2024.01.01\n".write(toFile: old, atomically: true, encoding: .utf8)
        chmod(old, 0o755)
        let stale = try await runMediahost(
            ["doctor"], dataDir: dataDir, environment: ["MEDIAHOST_YOUTUBE_YTDLP": old, "YOUTUBE_API_KEY": ""])
        #expect(stale.stdout.contains("warning  yt-dlp:"), "\(stale.stdout)")
        #expect(stale.stdout.contains("YouTube changes often; update it: `make ytdlp-update`"))
    }

    /// Editors and assistants ask the same through `host.doctor`; online, each configured
    /// service is reached (here the sandbox's replicas).
    @Test func theMethodReachesTheServicesOnline() async throws {
        let dataDir = try makeTemporaryDirectory()
        let result = try await runMediahost(
            ["--sandbox", "call", "host.doctor", #"{"online":true}"#], dataDir: dataDir,
            environment: ["MEDIAHOST_YOUTUBE_YTDLP": "/nonexistent/yt-dlp"])
        let report = try JSONValue(parsing: result.stdout)
        let services = (report["checks"]?.arrayValue ?? []).filter { $0["name"] == "service" }
        #expect(services.count >= 5, "\(result.stdout)")
        #expect(services.allSatisfy { $0["status"] == "ok" }, "\(services)")
    }
}
