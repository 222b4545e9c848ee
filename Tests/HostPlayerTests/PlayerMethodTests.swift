import Foundation
import JSONRPC
import MediaHTTP
import MediaHost
import MediaKit
import Sandbox
import Synchronization
import TestSupport
import Testing

@testable import HostPlayer

/// The player module on a host of its own: what plays, what a missing or failing player says,
/// what its methods take, and that the spec says what they do.
@Suite struct PlayerMethodTests {
    func fixture() async throws -> (SandboxServer, HostFixture) {
        let server = SandboxServer(replicas: [])
        let port = try await server.start()
        let fixture = try HostFixture(
            environment: [
                "MEDIAHOST_CATALOG_ARTWORK_BASE": "http://127.0.0.1:\(port)/_sandbox/bytes",
                "MEDIAHOST_CATALOG_MEDIA_BASE": "http://127.0.0.1:\(port)/_sandbox/file",
            ], http: MediaHTTPClient(), modules: [PlayerModule.self])
        return (server, fixture)
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

    static let badParams: [(String, String, String)] = [
        ("player.volume", #"{"level":500}"#, "0-130"),
        ("player.seek", #"{"seconds":-5}"#, "0 or more unless relative"),
        ("player.mark", #"{"ids":[],"played":true}"#, "1 to 10000"),
        ("player.sleep", #"{"minutes":0}"#, "more than 0"),
        ("player.sleep", #"{"minutes":-30}"#, "more than 0"),
        ("player.sleep", #"{"minutes":1e300}"#, "at most 1440"),
        ("player.sleep", #"{"at":"midnight"}"#, "end or chapter"),
        ("player.sleep", #"{"minutes":30,"at":"end"}"#, "one of"),
        ("player.sleep", #"{}"#, "one of"),
        ("player.sleep", #"{"off":false}"#, "one of"),
    ]

    @Test(arguments: badParams)
    func badParamsAreInvalidParams(method: String, params: String, needle: String) async throws {
        let fixture = try HostFixture(modules: [PlayerModule.self])
        let error = try #require(await fixture.error(method, try JSONValue(parsing: params)))
        #expect(error.code == -32602)
        #expect(error.message.contains(needle), "\(error.message)")
    }

    @Test func theSpecDescribesThePlayersMethodsAndNotification() throws {
        #expect(try specDisagreements(PlayerModule.methods) == [])
        #expect(PlayerModule.notifications.map { $0.method } == ["player.state", "player.skipped"])
        #expect(
            try notificationDisagreements(
                PlayerSkip(id: try ItemID(parsing: "youtube:video:v1"), category: "sponsor", action: "skipped", start: 5, end: 12)
            )
                == [])
        #expect(try notificationDisagreements(PlayerStatus(state: .stopped, paused: false, queue: [], player: "mpv")) == [])
        let paused = PlayerStatus(
            state: .paused,
            item: PlayerStatus.Entry(id: try ItemID(parsing: "catalog:video:v1"), title: "V1", target: "/d/v1.mp4", local: true),
            position: 12.5, duration: 60, paused: true, volume: 80,
            queue: [PlayerStatus.Entry(id: nil, title: "x.mp3", target: "https://example.com/x.mp3", local: false)],
            player: "mpv")
        #expect(try notificationDisagreements(paused) == [])
    }

    /// What plays is told with the secrets in its addresses masked, as everything the host says.
    @Test func playerStateMasksSecretsInWhatPlays() async throws {
        let fixture = try HostFixture(environment: ["CATALOG_API_KEY": "s3cr3t-k3y-v4lu3"], modules: [PlayerModule.self])
        let heard = Mutex<[PlayerStatus]>([])
        let token = fixture.host.events.subscribe { event in
            if let status = event.payload(PlayerStatus.self) { heard.withLock { $0.append(status) } }
        }
        defer { fixture.host.events.unsubscribe(token) }
        let entry = PlayerStatus.Entry(
            id: nil, title: "signed", target: "https://cdn.example/v.mp4?key=s3cr3t-k3y-v4lu3", local: false)
        fixture.host.events.publish(
            HostEvent(PlayerStatus(state: .playing, item: entry, paused: false, queue: [entry], player: "mpv")))
        let told = try #require(heard.withLock { $0.first })
        #expect(told.item?.target.contains("s3cr3t") == false)
        #expect(told.queue.first?.target.contains("s3cr3t") == false)
        #expect(told.item?.title == "signed")
    }

    func waitForFile(_ path: String) async throws {
        for _ in 0..<200 {
            if let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n") { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        Issue.record("\(path) never appeared")
    }
}

/// What a person reads when mpv cannot play: its reason, what it logged, and what to do.
@Suite struct PlayerFailureMessageTests {
    @Test func aMissingSoundDeviceSaysWhichSettingPlaysWithoutOne() {
        let message = PlayerController.failureMessage(
            title: "Tone 3", why: "audio output initialization failed", logged: "[ao/jack] cannot open server")
        #expect(message.hasPrefix("mpv could not play Tone 3: no sound device answers"))
        #expect(message.contains("`config player.command \"mpv --ao=null\"`"))
        #expect(message.count < 160, "two lines at 80 columns: \(message)")
    }

    @Test func itsOwnLoggedReasonIsSaid() {
        let message = PlayerController.failureMessage(
            title: "A video", why: "loading failed",
            logged: "[ytdl_hook] ERROR: [youtube] abc: Unable to download webpage: network is unreachable")
        #expect(message.contains("loading failed ([ytdl_hook] ERROR:"))
        #expect(message.hasSuffix("`mediahost doctor` checks it"))
        #expect(
            PlayerController.failureMessage(title: nil, why: "loading failed", logged: nil)
                == "mpv could not play it: loading failed")
    }
}
