import Basics
import Foundation
import HostService
import JSONRPC
import MediaHost
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The desktop: the service as an MPRIS2 player on a private session bus, driven with
/// `playerctl` and plain `dbus-send` while the real mpv plays the sandbox's tones, and desktop
/// notifications seen by `dbus-monitor` on that bus.
@Suite(.serialized) struct MediaKeysTests {
    static let tools = ["/usr/bin/dbus-daemon", "/usr/bin/dbus-send", "/usr/bin/dbus-monitor", "/usr/bin/playerctl"]
    static let missing = (tools + [PlayerTests.mpv ?? "/usr/bin/mpv"]).filter {
        !FileManager.default.isExecutableFile(atPath: $0)
    }
    static let player = "org.mpris.MediaPlayer2.mediahost"

    /// A session bus of the test's own (`dbus-daemon --session`), and a monitor writing every
    /// message on it to a file.
    final class PrivateBus {
        let address: String
        let pid: pid_t
        let monitor: ChildProcess
        let log: String

        init(in directory: String) async throws {
            let addressFile = directory + "/bus.address", pidFile = directory + "/bus.pid"
            let started = AvahiHarness.run(
                "/bin/sh",
                [
                    "-c", #"exec dbus-daemon --session --fork --print-address=3 --print-pid=4 3>"$1" 4>"$2""#, "sh",
                    addressFile, pidFile,
                ])
            try #require(started == 0, "dbus-daemon --session did not start")
            address = try String(contentsOfFile: addressFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            pid = pid_t(try String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            try #require(!address.isEmpty && pid > 0)
            log = directory + "/monitor.log"
            try #require(FileManager.default.createFile(atPath: log, contents: nil))
            monitor = try ChildProcess(
                "/usr/bin/dbus-monitor", arguments: ["--address", address], standardInput: .null,
                standardOutput: .appending(toFile: log), standardError: .null)
            // The monitor is in place once it has said so on the bus (NameAcquired to itself).
            let deadline = ContinuousClock.now + .seconds(20)
            while !seen().contains("NameAcquired"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        /// What the monitor has written so far.
        func seen() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

        /// For playerctl, which asks the system bus too and gives up when there is none.
        var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address, "DBUS_SYSTEM_BUS_ADDRESS": address] }

        func stop() {
            monitor.terminate()
            kill(pid, SIGTERM)
        }
    }

    /// Runs a D-Bus tool against the private bus; its output, trimmed.
    static func tool(_ bus: PrivateBus, _ arguments: [String]) async -> (status: Int32, output: String) {
        let result = await runProgram("/usr/bin/env", bus.environment.map { "\($0)=\($1)" }.sorted() + arguments)
        return (result.status, String(decoding: result.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func playerctl(_ bus: PrivateBus, _ arguments: String...) async -> String {
        await tool(bus, ["playerctl", "--player=mediahost"] + arguments).output
    }

    static func dbusSend(_ bus: PrivateBus, _ member: String, _ arguments: String...) async -> (status: Int32, output: String) {
        await tool(
            bus,
            ["dbus-send", "--session", "--print-reply", "--dest=\(player)", "/org/mpris/MediaPlayer2", member] + arguments)
    }

    /// Polls `check` until it holds or a minute has gone (a busy machine is slow, not wrong).
    static func eventually(_ check: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if try await check() { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    @Test(.enabled(if: missing.isEmpty, "needs \(missing.joined(separator: ", ")) (`make test` installs them)"))
    func mediaKeysAndWidgetsControlWhatTheServicePlays() async throws {
        let setup = try await PlayerTests.setUp()
        defer { setup.sandbox.process.terminate() }
        let bus = try await PrivateBus(in: setup.dataDir)
        defer { bus.stop() }
        let environment = setup.environment.merging(bus.environment) { $1 }
        let service = try MediahostProcess(["serve"], dataDir: setup.dataDir, environment: environment)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(setup.dataDir)
        func status() async throws -> JSONValue {
            let result = try await runMediahost(["call", "player.status"], dataDir: setup.dataDir, environment: environment)
            return try JSONValue(parsing: result.stdout)
        }

        // Nothing plays yet: the service is not on the bus.
        #expect(!(await Self.tool(bus, ["playerctl", "--list-all"]).output.contains("mediahost")))
        for id in [setup.tones[1], setup.tones[0]] {
            let opened = try await runMediahost(
                ["call", "player.open", #"{"id":"\#(id)"}"#], dataDir: setup.dataDir, environment: environment)
            #expect(opened.status == 0, "\(opened.stderr)")
        }
        let playing = try await Self.eventually { await Self.playerctl(bus, "status") == "Playing" }
        #expect(playing, "playerctl sees it play: \(service.errors.suffix(2000))")

        // What the widget shows: the title, show, length, and the picture as a file.
        var metadata = ""
        let described = try await Self.eventually {
            metadata = await Self.playerctl(
                bus, "metadata", "--format", "{{title}}|{{album}}|{{mpris:length}}|{{mpris:artUrl}}|{{mpris:trackid}}")
            return metadata.hasPrefix("Tone 2 (120 s)|Sandbox Radio|120000000|file://")
        }
        #expect(described, "\(metadata)")
        let art = metadata.split(separator: "|").dropFirst(3).first.map { String($0.dropFirst("file://".count)) } ?? ""
        #expect(FileManager.default.fileExists(atPath: art), "the artwork cache's file: \(art)")
        let track = await Self.playerctl(bus, "metadata", "--format", "{{mpris:trackid}}")
        #expect(track.contains("/org/mediahost/track/"), "\(track)")
        let canGoNext = await Self.dbusSend(
            bus, "org.freedesktop.DBus.Properties.Get", "string:org.mpris.MediaPlayer2.Player", "string:CanGoNext")
        #expect(canGoNext.output.contains("boolean true"), "a tone is queued: \(canGoNext.output)")

        // The media key: play-pause, and back with plain dbus-send.
        _ = await Self.playerctl(bus, "play-pause")
        #expect(try await Self.eventually { try await status()["state"] == "paused" }, "play-pause paused mpv")
        #expect(try await Self.eventually { await Self.playerctl(bus, "status") == "Paused" })
        let resumed = await Self.dbusSend(bus, "org.mpris.MediaPlayer2.Player.PlayPause")
        #expect(resumed.status == 0, "\(resumed.output)")
        #expect(try await Self.eventually { try await status()["state"] == "playing" }, "PlayPause resumed it")

        // Seek by an offset (dbus-send), then to a position (playerctl uses SetPosition).
        let before = try await status()["position"]?.doubleValue ?? 0
        let sought = await Self.dbusSend(bus, "org.mpris.MediaPlayer2.Player.Seek", "int64:30000000")
        #expect(sought.status == 0, "\(sought.output)")
        #expect(
            try await Self.eventually { (try await status()["position"]?.doubleValue ?? 0) >= before + 29 },
            "Seek went 30 s on from \(before)")
        _ = await Self.playerctl(bus, "position", "90")
        #expect(try await Self.eventually { abs((try await status()["position"]?.doubleValue ?? 0) - 90) < 5 })
        // A position past the track's length is ignored, as the MPRIS spec says (2^63-1 µs
        // sought mpv to 9223372036854 s and ended playback).
        let trackNow = await Self.playerctl(bus, "metadata", "--format", "{{mpris:trackid}}").trimmingCharacters(in: ["'"])
        let absurd = await Self.dbusSend(
            bus, "org.mpris.MediaPlayer2.Player.SetPosition", "objpath:\(trackNow)", "int64:9223372036854775807")
        #expect(absurd.status == 0, "SetPosition \(trackNow): \(absurd.output)")
        try await Task.sleep(for: .milliseconds(500))
        let still = try await status()
        #expect(still["state"] == "playing" && (still["position"]?.doubleValue ?? 0) < 100, "\(still)")
        let reported = await Self.playerctl(bus, "position")
        let position = Double(reported) ?? 0
        let now = try await status()
        #expect(position >= 89 && position < 100, "Position read back: \(reported) \(now)")
        _ = await Self.playerctl(bus, "volume", "0.4")
        #expect(try await Self.eventually { try await status()["volume"]?.doubleValue == 40 }, "Volume set to 40")

        // Next plays the queued 4-second tone; Previous goes back to the tone before it (the
        // 4-second one is next again; it starts over, as it was left in its last 30 s, played),
        // and Next again plays the short one; at its end the player stops, and says so.
        let next = await Self.dbusSend(bus, "org.mpris.MediaPlayer2.Player.Next")
        #expect(next.status == 0, "\(next.output)")
        #expect(try await Self.eventually { await Self.playerctl(bus, "metadata", "title") == "Tone 1 (4 s)" })
        _ = await Self.playerctl(bus, "previous")
        #expect(try await Self.eventually { await Self.playerctl(bus, "metadata", "title") == "Tone 2 (120 s)" }, "Previous")
        // Sent as the first Next, its answer checked: playerctl's own exit went unread, and once in a
        // full run (both cores busy) neither this Next nor its effect was seen in 120 s.
        let again = await Self.dbusSend(bus, "org.mpris.MediaPlayer2.Player.Next")
        #expect(again.status == 0, "\(again.output)")
        let nextSeen = try await Self.eventually {
            if await Self.playerctl(bus, "metadata", "title") == "Tone 1 (4 s)" { return true }
            // The 4-second tone may be over by the time it is asked: then the player stopped.
            return await Self.playerctl(bus, "status") == "Stopped"
        }
        let seenTitle = await Self.playerctl(bus, "metadata", "title")
        let seenStatus = await Self.playerctl(bus, "status")
        #expect(nextSeen, "Next again: \(seenTitle), \(seenStatus)")
        #expect(try await Self.eventually { await Self.playerctl(bus, "status") == "Stopped" }, "the queue ran out")

        // Every change was signalled as it happened, the seeks too.
        let signals = bus.seen()
        for expected in [#"string "Paused""#, #"string "Playing""#, #"string "Stopped""#, "member=Seeked"] {
            #expect(signals.contains(expected), "\(expected) in the signals")
        }
        #expect(signals.contains("member=PropertiesChanged"))
    }

    @Test(.enabled(if: missing.isEmpty, "needs \(missing.joined(separator: ", ")) (`make test` installs them)"))
    func downloadsAndNewEpisodesAreNotifiedWhenAskedFor() async throws {
        let setup = try await PlayerTests.setUp()
        defer { setup.sandbox.process.terminate() }
        let bus = try await PrivateBus(in: setup.dataDir)
        defer { bus.stop() }
        let environment = setup.environment.merging(bus.environment) { $1 }
        func call(_ method: String, _ params: String) async throws -> JSONValue {
            let result = try await runMediahost(["call", method, params], dataDir: setup.dataDir, environment: environment)
            #expect(result.status == 0, "\(method): \(result.stderr)")
            return try JSONValue(parsing: result.stdout)
        }
        _ = try await call("config.set", #"{"key":"desktop.notifications","value":"on"}"#)
        _ = try await call("favorites.add", #"{"id":"\#(PlayerTests.radio)"}"#)
        // The service's refresh at its start learns the show: its newest episode arrives.
        let service = try MediahostProcess(["serve"], dataDir: setup.dataDir, environment: environment)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(setup.dataDir)
        let told = try await Self.eventually { bus.seen().contains("New in what you follow") }
        #expect(told, "new episodes notified: \(bus.seen().suffix(3000)) \(service.errors.suffix(2000))")
        #expect(bus.seen().contains("member=Notify"))
        #expect(bus.seen().contains("Sandbox Radio: Tone 3 (180 s)"))

        _ = try await call("downloads.start", #"{"id":"\#(setup.tones[0])"}"#)
        let downloaded = try await Self.eventually { bus.seen().contains(#"string "Downloaded""#) }
        #expect(downloaded, "a completed download notified: \(bus.seen().suffix(3000))")
        #expect(bus.seen().contains(#"string "Tone 1 (4 s)""#))

        // Once told, not again: the next service does not repeat what the last one said.
        service.process.terminate()
        service.process.waitUntilExit()
        let count = bus.seen().components(separatedBy: "in what you follow").count
        let again = try MediahostProcess(["serve"], dataDir: setup.dataDir, environment: environment)
        defer { again.process.terminate() }
        try await ServiceTests.waitForService(setup.dataDir)
        try await Task.sleep(for: .seconds(3))
        #expect(bus.seen().components(separatedBy: "in what you follow").count == count)
    }
}
