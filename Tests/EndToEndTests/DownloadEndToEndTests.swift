import Basics
import Foundation
import JSONRPC
import MediaHTTP
import MediaKit
import Sandbox
import TestSupport
import Testing

/// Downloads through the real binary: a separate sandbox process serves the media slowly, and
/// the mediahost process is killed with SIGKILL in the middle.
@Suite struct DownloadEndToEndTests {
    func sandbox(rate: Int) async throws -> (MediahostProcess, String) { try await startSandboxProcess(rate: rate) }

    func post(_ url: String, _ json: String) async throws {
        _ = try await MediaHTTPClient().send(HTTPRequest(method: "POST", url: URL(string: url)!, body: Data(json.utf8)))
    }

    func fetch(_ url: String) async throws -> Data {
        var request = HTTPRequest(url: URL(string: url)!)
        request.maxBodySize = 1 << 30
        return try await MediaHTTPClient().send(request).body
    }

    /// Runs `mediahost rpc`, starts downloading an episode, and returns the process and the download's path.
    func startDownload(dataDir: String, base: String) async throws -> (MediahostProcess, String, String) {
        let rpc = try MediahostProcess(["rpc"], dataDir: dataDir, environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
        rpc.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"media.children","params":{"id":"podcasts:podcast:1000007919"}}"#)
        let episodes = try #require(await rpc.messages(1).first)
        let episode = try #require(episodes["result"]?["items"]?.arrayValue?.first)
        let media = try #require(episode["enclosure"]?["url"]?.stringValue)
        rpc.sendLine(#"{"jsonrpc":"2.0","id":2,"method":"downloads.start","params":{"id":\#(episode["id"]!.jsonString)}}"#)
        var path: String?
        while let message = await rpc.next(timeout: .seconds(10)) {
            if message.value?["id"] == 2 { path = message.value?["result"]?["path"]?.stringValue; break }
        }
        return (rpc, try #require(path), media)
    }

    /// Waits for the `.part` to grow past `bytes`.
    func waitForPart(_ path: String, over bytes: Int) async throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: path + ".part")[.size] as? Int) ?? 0
            if size > bytes { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TimeoutError(what: "the .part never grew past \(bytes)")
    }

    /// Restarts `mediahost rpc` and waits for the download's "completed" notification.
    func resumeToCompletion(dataDir: String, base: String) async throws {
        let again = try MediahostProcess(["rpc"], dataDir: dataDir, environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
        defer { again.closeInput() }
        // A client hears notifications once it has said something (its framing is then known),
        // as an editor does with its first request.
        again.sendLine(#"{"jsonrpc":"2.0","id":0,"method":"host.info"}"#)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, let message = await again.next(timeout: .seconds(30)) {
            if message.value?["method"] == "downloads.state", message.value?["params"]?["state"] == "completed" { return }
            if message.value?["params"]?["state"] == "failed" {
                throw TimeoutError(what: "the download failed: \(message.value?["params"]?["error"]?.stringValue ?? "")")
            }
        }
        throw TimeoutError(what: "no completed notification")
    }

    @Test func killedMidDownloadResumesByteIdentical() async throws {
        let (server, base) = try await sandbox(rate: 2_000_000)
        defer { server.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        let (rpc, path, media) = try await startDownload(dataDir: dataDir, base: base)
        try await waitForPart(path, over: 500_000)
        kill(rpc.process.processIdentifier, SIGKILL)
        _ = await rpc.waitForExit()
        let partBefore = (try FileManager.default.attributesOfItem(atPath: path + ".part")[.size] as? Int) ?? 0
        #expect(!FileManager.default.fileExists(atPath: path), "never a partial final file")

        try await resumeToCompletion(dataDir: dataDir, base: base)
        let downloaded = try #require(FileManager.default.contents(atPath: path))
        let source = try await fetch(media)
        #expect(downloaded == source, "byte-identical to the source")
        #expect(!FileManager.default.fileExists(atPath: path + ".part"))
        #expect(partBefore > 500_000, "it resumed from a real .part")
    }

    @Test func fileChangedBetweenRunsRestartsWithIfRange() async throws {
        let (server, base) = try await sandbox(rate: 2_000_000)
        defer { server.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        let (rpc, path, media) = try await startDownload(dataDir: dataDir, base: base)
        try await waitForPart(path, over: 300_000)
        kill(rpc.process.processIdentifier, SIGKILL)
        _ = await rpc.waitForExit()
        // The host publishes a new file at the same URL.
        let mediaPath = URL(string: media)!.path
        try await post(
            base.replacingOccurrences(of: "/podcasts", with: "/_sandbox/media"), #"{"path":"\#(mediaPath)","version":7}"#)
        try await resumeToCompletion(dataDir: dataDir, base: base)
        let downloaded = try #require(FileManager.default.contents(atPath: path))
        let source = try await fetch(media)
        #expect(downloaded == source, "the new version, whole")
    }

    @Test func scriptDownloadsAndWaitsForThem() async throws {
        let (server, base) = try await sandbox(rate: 0)
        defer { server.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        let result = try await runMediahost(
            [], input: "open podcasts:podcast:1000007919\ndownload 1\ndownload 2\ndownloads\n", dataDir: dataDir,
            environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("✓ Episode 26: Tiny Houses: done\n  → "))
        #expect(result.stderr.contains("✓ Episode 25: Jazz Standards: done\n  → "))
        let listed = try await runMediahost(["call", "downloads.list"], dataDir: dataDir)
        let downloads = try JSONValue(parsing: listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).arrayValue ?? []
        #expect(downloads.count == 2)
        #expect(downloads.allSatisfy { $0["state"] == "completed" })
        for download in downloads {
            #expect(FileManager.default.fileExists(atPath: download["path"]?.stringValue ?? ""))
        }
    }
}

struct TimeoutError: Error, CustomStringConvertible { var what: String; var description: String { what } }
