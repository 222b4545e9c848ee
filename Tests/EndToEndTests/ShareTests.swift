import Basics
import Foundation
import JSONRPC
import MediaHost
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Sharing a list between two mediahost processes on loopback: `mediahost share`, `peers`,
/// `receive`, through the built binary.
@Suite(.serialized) struct ShareTests {
    static let overcast = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../MediaHostTests/Recorded/opml/overcast.opml").standardized.path

    /// A sender with a list of 7 podcasts offering it; its code and a loopback address.
    static func offer(minutes: Double, list: String = "Pods", environment: [String: String] = [:]) async throws -> (
        process: MediahostProcess, code: String, address: String, output: String
    ) {
        let dataDir = try makeTemporaryDirectory()
        let imported = try await runMediahost(
            ["call", "lists.import", #"{"path":"\#(overcast)","name":"\#(list)"}"#], dataDir: dataDir)
        try #require(imported.status == 0, "\(imported.stderr)")
        let sender = try MediahostProcess(
            ["share", list, "--minutes", String(minutes)], dataDir: dataDir, environment: environment)
        var output = ""
        while let line = await sender.next(timeout: .seconds(20)) {
            output += String(decoding: line.raw, as: UTF8.self) + "\n"
            if output.contains("mediahost receive ") { break }
        }
        let match = try #require(
            output.firstMatch(of: /mediahost receive [0-9.]+:([0-9]+) ([A-Z0-9]{4}-[A-Z0-9]{4})/), "\(output)")
        return (sender, String(match.2), "127.0.0.1:\(match.1)", output)
    }

    static func items(_ dataDir: String, _ list: String) async throws -> [JSONValue] {
        let result = try await runMediahost(["call", "lists.items", #"{"name":"\#(list)","limit":100}"#], dataDir: dataDir)
        return try JSONValue(parsing: result.stdout)["items"]?.arrayValue ?? []
    }

    @Test func theAddressAndCodeRightWrongRateLimitedAndExpired() async throws {
        // Long enough for every step below on a loaded machine; the end is waited for.
        let (sender, code, address, output) = try await Self.offer(minutes: 0.75)
        defer { sender.process.terminate() }
        #expect(output.contains("offering 'Pods'"), "\(output)")
        let receiver = try makeTemporaryDirectory()

        let wrong = try await runMediahost(["receive", address, "AAAA-BBBB"], dataDir: receiver)
        #expect(wrong.status == 1 && wrong.stderr.contains("refused the code"), "\(wrong.stderr)")
        // The code as a person types it: lower case, no dash.
        let typed = code.lowercased().replacingOccurrences(of: "-", with: "")
        let right = try await runMediahost(["receive", address, typed, "--into", "From a friend"], dataDir: receiver)
        #expect(right.status == 0 && right.stdout.contains("received 7 into From a friend"), "\(right.stdout)\(right.stderr)")
        let items = try await Self.items(receiver, "From a friend")
        #expect(items.count == 7)
        #expect(items.first?["title"] == "Dining in the Void")
        #expect(items.allSatisfy { $0["id"]?.stringValue?.hasPrefix("podcasts:podcast:feed-") == true })
        // Again: nothing new.
        let again = try await runMediahost(["receive", address, code, "--into", "From a friend"], dataDir: receiver)
        #expect(again.stdout.contains("received 0") && again.stdout.contains("7 were there already"), "\(again.stdout)")
        // Only the list is served: nothing else of the sender's store or files.
        for path in ["/list", "/../mediahost.sqlite", "/downloads", "/list?code=" + code + "x"] {
            let probe = try await runMediahost(["receive", "http://\(address)\(path)", code], dataDir: receiver)
            #expect(probe.status == 1, "\(path): \(probe.stdout)")
        }

        // Guessing: after 5 wrong codes from one address even the right one is refused for a minute.
        for _ in 0..<5 { _ = try await runMediahost(["receive", address, "WXYZ-2345"], dataDir: receiver) }
        let locked = try await runMediahost(["receive", address, code], dataDir: receiver)
        #expect(locked.status == 1 && locked.stderr.contains("too many wrong ones"), "\(locked.stderr)")

        // The offer ends on time, and the sender says so.
        #expect(await sender.waitForExit(timeout: .seconds(90)) == 0)
        var rest = ""
        while let line = await sender.next(timeout: .milliseconds(200)) { rest += String(decoding: line.raw, as: UTF8.self) }
        #expect(rest.contains("sent to 2 receivers") && rest.contains("the offer has ended"), "\(rest)")
        let late = try await runMediahost(["receive", address, code], dataDir: receiver)
        #expect(late.status == 1 && late.stderr.contains("may have ended"), "\(late.stderr)")
    }

    /// What a hostile "sender" serves is checked like any import and never written outside the store.
    @Test func aHostileOfferIsRefusedOrCheckedItemByItem() async throws {
        let receiver = try makeTemporaryDirectory()
        let bodies: [(String, String)] = [
            ("not json at all", "not a mediahost list"),
            (#"{"format":"something-else","version":1,"name":"x","items":[]}"#, "not a mediahost list"),
            (
                #"{"format":"mediahost-list","version":1,"name":"x","items":[{"id":"../../etc:video:x","provider":"y","kind":"video","title":"t"}]}"#,
                "not a mediahost list"
            ),
            (#"{"format":"mediahost-list","version":1,"name":"../../escape","items":[]}"#, "received 0 into ../../escape"),
        ]
        for (body, expected) in bodies {
            let server = try HostileServer { _, connection in _ = connection.respond(body: Array(body.utf8)) }
            defer { server.stop() }
            let result = try await runMediahost(["receive", "127.0.0.1:\(server.port)", "ABCD-EFGH"], dataDir: receiver)
            #expect((result.stdout + result.stderr).contains(expected), "\(body): \(result.stdout)\(result.stderr)")
        }
        // A list that names itself like a path is only a list name: nothing appeared beside the store.
        let files = try FileManager.default.contentsOfDirectory(atPath: (receiver as NSString).deletingLastPathComponent)
        #expect(!files.contains("escape"))
        // A mismatched item (its provider not its id's) is left out, the rest kept.
        let mixed = #"""
            {"format":"mediahost-list","version":1,"name":"Mixed","items":[
              {"id":"catalog:video:v1","provider":"catalog","kind":"video","title":"Good"},
              {"id":"catalog:video:v2","provider":"other","kind":"video","title":"Liar"}]}
            """#
        let server = try HostileServer { _, connection in _ = connection.respond(body: Array(mixed.utf8)) }
        defer { server.stop() }
        let result = try await runMediahost(["receive", "127.0.0.1:\(server.port)", "ABCD-EFGH"], dataDir: receiver)
        #expect(result.stdout.contains("received 1 into Mixed") && result.stdout.contains("left out 1"), "\(result.stdout)")
        // An endless body is cut off, not stored.
        let endless = try HostileServer { _, connection in
            _ = connection.write(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"format\":\"mediahost-list\",\"items\":[")
            let chunk = Array(String(repeating: "{\"id\":\"catalog:video:v1\"},", count: 2000).utf8)
            for _ in 0..<400 where connection.write(chunk) {}
        }
        defer { endless.stop() }
        let cut = try await runMediahost(["receive", "127.0.0.1:\(endless.port)", "ABCD-EFGH"], dataDir: receiver)
        #expect(cut.status == 1, "\(cut.stdout)")
    }

    /// A TCP connection to the offer's port from a loopback address of one's choosing.
    static func connect(from source: String, to port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Slowloris: 64 connections from 16 addresses, each sending a byte of its request every
    /// 2 s. A receiver that cannot get in is told the sender is busy (at once when its budget is
    /// shorter than the sender's Retry-After, else after waiting that long); the dribblers are
    /// cut off at the request's one deadline, and then a receiver is served.
    @Test func connectionsThatDribbleAreCutOffAndReceiversToldTheSenderIsBusy() async throws {
        let (sender, code, address, _) = try await Self.offer(minutes: 2)
        defer { sender.process.terminate() }
        let port = try #require(Int(address.split(separator: ":").last ?? ""))
        var dribblers: [Int32] = []
        for host in 2...17 {
            for _ in 0..<4 {
                if let fd = Self.connect(from: "127.0.0.\(host)", to: port) { dribblers.append(fd) }
            }
        }
        defer { dribblers.forEach { close($0) } }
        try #require(dribblers.count == 64)
        for fd in dribblers { _ = send(fd, "G", 1, Int32(MSG_NOSIGNAL)) }
        let receiver = try makeTemporaryDirectory()
        let busy = try await runMediahost(
            ["receive", address, code], dataDir: receiver, environment: ["MEDIAHOST_HTTP_TIMEOUT": "3"])
        #expect(busy.status == 1 && busy.stderr.contains("busy"), "\(busy.stdout)\(busy.stderr)")

        // Dribbling on: every connection is closed by the sender by its deadline (5 s).
        var open = Set(dribblers)
        let deadline = ContinuousClock.now + .seconds(30)
        while !open.isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .seconds(2))
            for fd in open where send(fd, "E", 1, Int32(MSG_NOSIGNAL)) < 0 { open.remove(fd) }
            for fd in open {
                var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                var byte: UInt8 = 0
                if poll(&probe, 1, 0) == 1, recv(fd, &byte, 1, Int32(MSG_DONTWAIT)) == 0 { open.remove(fd) }
            }
        }
        #expect(open.isEmpty, "\(open.count) dribbling connections are still open")
        let served = try await runMediahost(["receive", address, code, "--into", "Later"], dataDir: receiver)
        #expect(served.status == 0 && served.stdout.contains("received 7"), "\(served.stdout)\(served.stderr)")
    }

    /// `mediahost share L | head -4`, as a shell runs it: `head` goes after four lines; the
    /// share's next line (a receiver served) fails with EPIPE, which it survives, and the offer
    /// ends on time with status 0.
    @Test func aShareWhoseOutputReaderWentAwayLivesOn() async throws {
        let dataDir = try makeTemporaryDirectory()
        let imported = try await runMediahost(
            ["call", "lists.import", #"{"path":"\#(Self.overcast)","name":"Pods"}"#], dataDir: dataDir)
        try #require(imported.status == 0, "\(imported.stderr)")
        let pipeline = try MediahostProcess(
            [
                "-c", #"set -o pipefail; "$0" share Pods --minutes 0.25 | head -4; echo "share exited ${PIPESTATUS[0]}""#,
                mediahostBinary(),
            ],
            dataDir: dataDir, executable: "/bin/bash")
        defer { pipeline.process.terminate() }
        var output = ""
        while let line = await pipeline.next(timeout: .seconds(30)) {
            output += String(decoding: line.raw, as: UTF8.self) + "\n"
            if output.contains("mediahost receive ") { break }
        }
        let match = try #require(
            output.firstMatch(of: /mediahost receive [0-9.]+:([0-9]+) ([A-Z0-9]{4}-[A-Z0-9]{4})/), "\(output)")
        let receiver = try makeTemporaryDirectory()
        let received = try await runMediahost(["receive", "127.0.0.1:\(match.1)", String(match.2)], dataDir: receiver)
        #expect(received.status == 0, "\(received.stderr)")
        while let line = await pipeline.next(timeout: .seconds(60)) { output += String(decoding: line.raw, as: UTF8.self) + "\n" }
        #expect(output.contains("share exited 0"), "ended by its time, not by a signal: \(output) \(pipeline.errors)")
    }

    /// 20 wrong codes (from 4 addresses: 5 each is one address's limit) end the offer, and the
    /// sender is told why.
    @Test func twentyWrongCodesEndTheOfferAndTheSenderSaysWhy() async throws {
        let (sender, _, address, _) = try await Self.offer(minutes: 2)
        defer { sender.process.terminate() }
        let port = try #require(Int(address.split(separator: ":").last ?? ""))
        for host in 2...5 {
            for _ in 0..<5 {
                let fd = try #require(Self.connect(from: "127.0.0.\(host)", to: port))
                let request = Array("GET /list?code=WXYZ-2345 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
                _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                var answer = [UInt8](repeating: 0, count: 512)
                _ = answer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                close(fd)
            }
        }
        #expect(await sender.waitForExit(timeout: .seconds(30)) == 0)
        var rest = ""
        while let line = await sender.next(timeout: .milliseconds(200)) { rest += String(decoding: line.raw, as: UTF8.self) }
        #expect(rest.contains("the offer has ended: 20 wrong codes were tried"), "\(rest)")
    }

    /// DNS-SD through a real Avahi daemon: started here (with its own system bus) when the tests
    /// run as root and it is installed and not running; otherwise the test says it skipped.
    /// Someone's favorites, received as the sender's `share` says: into a list of their own,
    /// or, asked by name, into the favorites here (those there already stay as they were).
    @Test func sharedFavoritesAreReceivedAsTheSenderSays() async throws {
        let (sender, code, address, _) = try await Self.offer(minutes: 1, list: "favorites")
        defer { sender.process.terminate() }
        let receiver = try makeTemporaryDirectory()
        let received = try await runMediahost(["receive", address, code], dataDir: receiver)
        #expect(
            received.status == 0
                && received.stdout.contains(
                    "received 7 into received favorites; `--into favorites` makes them your favorites"),
            "\(received.stdout)\(received.stderr)")
        #expect(try await Self.items(receiver, "received favorites").count == 7)
        let merged = try await runMediahost(["receive", address, code, "--into", "favorites"], dataDir: receiver)
        #expect(merged.stdout.contains("received 7 into favorites"), "\(merged.stdout)\(merged.stderr)")
        let again = try await runMediahost(["receive", address, code, "--into", "Favorites"], dataDir: receiver)
        #expect(again.stdout.contains("received 0 into favorites (7 were there already)"), "\(again.stdout)\(again.stderr)")
        let favorites = try await runMediahost(["call", "favorites.list", #"{"limit":100}"#], dataDir: receiver)
        #expect((try JSONValue(parsing: favorites.stdout)["items"]?.arrayValue?.count) == 7, "\(favorites.stdout)")
    }

    @Test func announcedOffersAreFoundAndReceivedByName() async throws {
        if let reason = await AvahiHarness.ensureRunning() {
            print("ShareTests: SKIPPED DNS-SD discovery: \(reason) (the address-and-code path is tested above)")
            return
        }
        let (sender, code, _, output) = try await Self.offer(minutes: 1)
        defer { sender.process.terminate() }
        #expect(output.contains("announced on the local network"), "\(output)")
        let receiver = try makeTemporaryDirectory()
        let peers = try await runMediahost(["peers", "--seconds", "3"], dataDir: receiver)
        #expect(peers.status == 0 && peers.stdout.contains("Pods  "), "\(peers.stdout)\(peers.stderr)")
        let received = try await runMediahost(["receive", "Pods", code], dataDir: receiver)
        #expect(received.stdout.contains("received 7 into Pods"), "\(received.stdout)\(received.stderr)")
        sender.process.interrupt()
        #expect(await sender.waitForExit() == 0)
        // Gone at once when the offer ends, though the daemon's cache may hold it for a while:
        // each offer found is asked whether it still offers.
        let after = try await runMediahost(["peers", "--seconds", "1"], dataDir: receiver)
        #expect(!after.stdout.contains("Pods  ") && after.status == 0, "\(after.stdout)\(after.stderr)")
    }
}

/// Starts a system D-Bus and avahi-daemon for the tests when none runs and that is possible.
enum AvahiHarness {
    /// nil when Avahi answers; else why discovery cannot be tested here.
    static func ensureRunning() async -> String? {
        if check() { return nil }
        guard getuid() == 0 else { return "not root, and no Avahi daemon runs" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/sbin/avahi-daemon") else {
            return "avahi-daemon is not installed (`make test` installs it)"
        }
        if !FileManager.default.fileExists(atPath: "/run/dbus/system_bus_socket") {
            try? FileManager.default.createDirectory(atPath: "/run/dbus", withIntermediateDirectories: true)
            guard run("/usr/bin/dbus-daemon", ["--system", "--fork"]) == 0 else { return "dbus-daemon did not start" }
        }
        _ = run("/usr/sbin/avahi-daemon", ["--daemonize", "--no-drop-root", "--no-chroot"])
        for _ in 0..<50 where !check() { try? await Task.sleep(for: .milliseconds(100)) }
        return check() ? nil : "avahi-daemon did not start (no multicast network here?)"
    }

    static func check() -> Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/avahi-daemon") && run("/usr/sbin/avahi-daemon", ["--check"]) == 0
    }

    /// Runs a program to its end (its output discarded) and returns its exit status. posix_spawn
    /// and waitpid: daemons that fork (`dbus-daemon --fork`) leave nothing for Foundation's
    /// Process to wait on.
    static func run(_ executable: String, _ arguments: [String]) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Daemons live on: they must hold none of the pipes the tests wait on.
        actions.closeInheritedDescriptors()
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return (status >> 8) & 0xff
    }
}
