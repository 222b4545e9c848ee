import Foundation
import JSONRPC
import MediaHTTP
import MediaKit
import MediaStore
import Sandbox
import TestSupport
import Testing

@testable import MediaHost

@Suite struct ArtworkAndPlayerTests {
    func fixture() async throws -> (SandboxServer, HostFixture) {
        let server = SandboxServer(replicas: [])
        let port = try await server.start()
        let fixture = try HostFixture(
            environment: [
                "MEDIAHOST_CATALOG_ARTWORK_BASE": "http://127.0.0.1:\(port)/_sandbox/bytes",
                "MEDIAHOST_CATALOG_MEDIA_BASE": "http://127.0.0.1:\(port)/_sandbox/file",
            ], http: MediaHTTPClient())
        return (server, fixture)
    }

    @Test func sha256MatchesTheStandardVectors() {
        #expect(SHA256.hex(Array("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // Two blocks of padding: a 56-byte message.
        #expect(
            SHA256.hex([UInt8](repeating: 0x61, count: 56)) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
    }

    @Test func artworkIsFetchedOnceAndServedFromTheCache() async throws {
        let (server, fixture) = try await fixture()
        defer { server.stop() }
        let first = try await fixture.call("media.artwork", ["id": "catalog:video:v7"])
        try expectConforms(first, to: "media.artwork")
        #expect(first["cached"] == false)
        let path = try #require(first["path"]?.stringValue)
        #expect(path.hasPrefix(fixture.host.paths.cacheDir + "/artwork/"))
        #expect(FileManager.default.contents(atPath: path)?.count == 1007)
        let second = try await fixture.call("media.artwork", ["id": "catalog:video:v7"])
        #expect(second["cached"] == true)
        #expect(second["path"] == first["path"])
        #expect(server.traffic.count(prefix: "/_sandbox/bytes/") == 1)
        let stats = try await fixture.call("cache.stats")
        try expectConforms(stats, to: "cache.stats")
        #expect(stats["entries"] == 1 && stats["bytes"] == 1007)
        #expect(try await fixture.call("cache.clear") == ["removed": 1])
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func concurrentRequestsShareOneTransferAndNeverMixItems() async throws {
        let (server, fixture) = try await fixture()
        defer { server.stop() }
        server.faults.add(FaultRule(path: "/_sandbox/bytes/", latencyMs: 150))
        let ids = (0..<20).map { "catalog:video:v\($0 % 10)" }
        let results = try await withThrowingTaskGroup(of: (String, JSONValue).self) { group in
            for id in ids {
                group.addTask {
                    let answer = try await fixture.call("media.artwork", ["id": .string(id)])
                    return (id, answer)
                }
            }
            var results: [(String, JSONValue)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results.count == 20)
        for (id, result) in results {
            #expect(result["id"]?.stringValue == id, "the answer names the item asked for")
            let n = Int(id.split(separator: "v").last!)!
            #expect(result["url"]?.stringValue?.hasSuffix("/\(1000 + n)") == true)
            let bytes = try #require(FileManager.default.contents(atPath: result["path"]?.stringValue ?? ""))
            #expect(bytes.count == 1000 + n, "\(id) got its own image")
        }
        #expect(server.traffic.count(prefix: "/_sandbox/bytes/") == 10, "one transfer per image, however many asked")
    }

    @Test func leastRecentlyUsedImagesAreEvictedWithinTheBound() async throws {
        let (server, fixture) = try await fixture()
        defer { server.stop() }
        let cache = ArtworkCache(
            store: fixture.host.store, http: MediaHTTPClient(), root: fixture.directory + "/small", limit: { 3_100 })
        let base = "http://127.0.0.1:\(server.port!)/_sandbox/bytes"
        let a = try await cache.file(for: "\(base)/1000").entry
        let b = try await cache.file(for: "\(base)/1001").entry
        let c = try await cache.file(for: "\(base)/1002").entry
        _ = try await cache.file(for: "\(base)/1000")  // a is used again: b is now the oldest
        let d = try await cache.file(for: "\(base)/1003").entry
        #expect(FileManager.default.fileExists(atPath: a.path))
        #expect(!FileManager.default.fileExists(atPath: b.path), "the least recently used went first")
        #expect(FileManager.default.fileExists(atPath: c.path))
        #expect(FileManager.default.fileExists(atPath: d.path))
        let stats = try await cache.stats()
        #expect(stats.bytes <= 3_100)
        #expect(stats.entries == 3)
    }

    @Test func playerGetsTheDownloadElseTheStream() async throws {
        let (server, fixture) = try await fixture()
        defer { server.stop() }
        // A stand-in player that writes what it was given.
        let script = fixture.directory + "/player.sh"
        let record = fixture.directory + "/played.txt"
        try "#!/bin/sh\nprintf '%s\\n' \"$@\" > \(record)\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        _ = try await fixture.call("config.set", ["key": "player.command", "value": .string("\(script) --no-video")])

        let streamed = try await fixture.call("player.open", ["id": "catalog:video:v5"])
        try expectConforms(streamed, to: "player.open")
        #expect(streamed["local"] == false)
        try await waitForFile(record)
        #expect(try String(contentsOfFile: record, encoding: .utf8) == "--no-video\nhttps://catalog.invalid/v5\n")

        _ = try await fixture.call("downloads.start", ["id": "catalog:video:v5"])
        await fixture.host.downloads.idle()
        try FileManager.default.removeItem(atPath: record)
        let local = try await fixture.call("player.open", ["id": "catalog:video:v5"])
        #expect(local["local"] == true)
        try await waitForFile(record)
        let played = try String(contentsOfFile: record, encoding: .utf8)
        #expect(played.hasSuffix(".bin\n") && played.contains(fixture.host.paths.downloads))
    }

    @Test func aPlayerThatFailsAtOnceIsReportedWithItsStatusAndLastLine() async throws {
        let (server, fixture) = try await fixture()
        defer { server.stop() }
        let script = fixture.directory + "/broken-player.sh"
        try "#!/bin/sh\necho 'starting' >&2\necho 'Failed to open audio device' >&2\nexit 3\n".write(
            toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        _ = try await fixture.call("config.set", ["key": "player.command", "value": .string(script)])
        let error = try #require(await fixture.error("player.open", ["id": "catalog:video:v5"]))
        #expect(error.message.contains("exited at once with status 3: Failed to open audio device"), "\(error.message)")
        // A player that keeps running is left to play.
        try "#!/bin/sh\nsleep 5\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let running = try await fixture.call("player.open", ["id": "catalog:video:v5"])
        #expect(running["pid"]?.intValue.map { kill(pid_t($0), 0) == 0 } == true)
        if let pid = running["pid"]?.intValue { kill(pid_t(pid), SIGTERM) }
    }

    @Test func aChannelPlaysItsNewestVideo() async throws {
        let (server, fixture) = try await fixture()
        defer { server.stop() }
        let script = fixture.directory + "/player.sh"
        try "#!/bin/sh\nexit 0\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        _ = try await fixture.call("config.set", ["key": "player.command", "value": .string(script)])
        let played = try await fixture.call("player.open", ["id": "catalog:channel:c2"])
        try expectConforms(played, to: "player.open")
        // The newest by date, whatever order the provider lists them in: the catalog lists a
        // channel's videos oldest first, so the newest is on its last page.
        let children = try await fixture.call("media.children", ["id": "catalog:channel:c2"])
        var all = children["items"]?.arrayValue ?? []
        var next = children["next"]
        while let cursor = next, cursor != .null {
            let page = try await fixture.call("media.children", ["id": "catalog:channel:c2", "cursor": cursor])
            all += page["items"]?.arrayValue ?? []
            next = page["next"]
        }
        let newest = all.max { ($0["published"]?.stringValue ?? "") < ($1["published"]?.stringValue ?? "") }
        #expect(played["played"] == newest?["id"], "\(played)")
        #expect(played["played"] != children["items"]?.arrayValue?.first?["id"], "the catalog lists it elsewhere than first")
        #expect(played["note"] == "the newest video")
    }

    @Test func missingPlayerSaysWhichSetting() async throws {
        let (server, fixture) = try await fixture()
        defer { server.stop() }
        _ = try await fixture.call("config.set", ["key": "player.command", "value": "no-such-player-xyz"])
        let error = try #require(await fixture.error("player.open", ["id": "catalog:video:v5"]))
        #expect(error.code == -32021)
        #expect(error.message.contains("'no-such-player-xyz' was not found"))
        #expect(error.message.contains("player.command"))
    }

    func waitForFile(_ path: String) async throws {
        for _ in 0..<200 {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n") { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        Issue.record("\(path) never appeared")
    }
}
