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

/// Podcast sync through servers the project did not write, on loopback: gpodder-fastapi-router
/// (PyPI; gpodder.net's API v2) with gPodder's own client library, mygpoclient, as the phone;
/// and the replica of Nextcloud's gpoddersync app with a plain HTTP client as the phone (what
/// AntennaPod sends). Two mediahost data dirs and the phone agree after sync rounds in every
/// direction; offline queues, a server that fails mid-upload, a kill -9 and hostile answers.
@Suite(.serialized) struct PodcastSyncTests {
    static let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/sync-servers").path
    static let venv =
        ProcessInfo.processInfo.environment["MEDIAHOST_TEST_SYNC_VENV"]
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/sync-venv").path

    // MARK: Harness

    /// A sync server process on loopback.
    final class Server: @unchecked Sendable {
        var process: ChildProcess?
        var base = ""
        /// alice's password there.
        var password = "secret"
        let http = MediaHTTPClient()

        deinit {
            if let process, process.isRunning {
                process.terminate(signal: SIGKILL)
                process.waitUntilExit()
            }
        }

        /// gpodder-fastapi-router with the test shim, on a free port, its data in `data`.
        static func gpodder(data: String, port given: Int? = nil) async throws -> Server {
            try #require(
                FileManager.default.isExecutableFile(atPath: venv + "/bin/uvicorn"),
                "the sync servers' venv is missing at \(venv): run `make sync-venv`")
            let server = Server()
            let port = try given ?? freeLoopbackPort()
            var environment = ProcessInfo.processInfo.environment
            environment["VENV"] = venv
            server.process = try ChildProcess(
                tools + "/serve-gpodder.sh", arguments: [String(port), "alice", "secret", data], environment: environment,
                standardOutput: .null, standardError: .null)
            server.base = "http://127.0.0.1:\(port)"
            try await server.waitUntilUp("/clientconfig.json")
            return server
        }

        /// This machine's own sync server: `mediahost-web` on a data dir whose `mediahost users`
        /// has alice (password "household"), as the service runs it with `web.listen`.
        static func household(dataDir: String) async throws -> Server {
            let added = try await runMediahost(["users", "add", "alice"], input: "household\n", dataDir: dataDir)
            try #require(added.status == 0, "users add: \(added.stderr)")
            let server = Server()
            let port = try freeLoopbackPort()
            let web = URL(fileURLWithPath: mediahostBinary()).deletingLastPathComponent().appendingPathComponent("mediahost-web")
                .path
            // Its input open: it ends when that closes (the service's way of ending it).
            server.process = try ChildProcess(
                web,
                arguments: [
                    "--data-dir", dataDir, "--listen", "127.0.0.1:\(port)", "--socket", dataDir + "/run/no-service.sock",
                ], standardInput: .pipe, standardOutput: .null, standardError: .null)
            server.base = "http://127.0.0.1:\(port)"
            server.password = "household"
            try await server.waitUntilUp("/clientconfig.json")
            return server
        }

        /// The Nextcloud gpoddersync replica on a port it picks.
        static func nextcloud() async throws -> Server {
            let server = Server()
            let process = try ChildProcess(
                "/usr/bin/python3",
                arguments: [tools + "/nextcloud_gpoddersync.py", "--port", "0", "--user", "alice", "--password", "app-pass"],
                standardOutput: .pipe, standardError: .null)
            server.process = process
            let output = try #require(process.standardOutput)
            let line = await Task.detached {
                defer { close(output) }
                var text = ""
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !text.contains("\n") {
                    let count = read(output, &buffer, buffer.count)
                    if count < 0, errno == EINTR { continue }
                    if count <= 0 { break }
                    text += String(decoding: buffer[..<count], as: UTF8.self)
                }
                return text
            }.value
            let address = try #require(line.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
            server.base = "http://" + address
            server.password = "app-pass"
            return server
        }

        func waitUntilUp(_ path: String) async throws {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                if let response = try? await http.send(HTTPRequest(url: URL(string: base + path)!)), response.status == 200 {
                    return
                }
                try #require(process?.isRunning == true, "the sync server exited at start")
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("the sync server did not come up in 60 s")
        }

        /// A control call (faults, the request log).
        @discardableResult
        func control(_ method: String, _ path: String, _ body: String? = nil) async throws -> JSONValue? {
            let response = try await http.send(
                HTTPRequest(
                    method: method, url: URL(string: base + "/__control/" + path)!,
                    headers: body == nil ? [:] : ["Content-Type": "application/json"], body: body.map { Data($0.utf8) },
                    maxBodySize: 256 << 20))
            try #require(response.status == 200, "control \(method) \(path): \(response.status)")
            return try? JSONValue(parsing: String(decoding: response.body, as: UTF8.self))
        }

        /// The requests the server saw, as method and path.
        func requests() async throws -> [(method: String, path: String, status: Int, body: String?)] {
            let list = try #require(try await control("GET", "requests")?.arrayValue)
            return list.compactMap { entry in
                guard let method = entry["method"]?.stringValue, let path = entry["path"]?.stringValue else { return nil }
                return (method, path, entry["status"]?.intValue ?? 0, entry["body"]?.stringValue)
            }
        }

        func stop() {
            process?.terminate(signal: SIGKILL)
            process?.waitUntilExit()
        }
    }

    static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        try #require(bound, "no free port")
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// A mediahost data dir talking to the sandbox's podcast directory.
    struct Machine {
        let dataDir: String
        let sandbox: String

        init(sandbox: String) throws {
            dataDir = try makeTemporaryDirectory()
            self.sandbox = sandbox
        }

        func call(_ method: String, _ params: String = "{}") async throws -> (status: Int32, value: JSONValue?, stderr: String) {
            try await ListExitTests.call(
                method, params, dataDir: dataDir, environment: ["MEDIAHOST_PODCASTS_BASE_URL": sandbox])
        }

        /// The result of a call that must succeed.
        func value(_ method: String, _ params: String = "{}") async throws -> JSONValue {
            let result = try await call(method, params)
            try #require(result.status == 0, "\(method) failed: \(result.stderr)")
            return try #require(result.value)
        }

        /// Logs in to `server` as alice, as `device`.
        @discardableResult
        func login(_ server: Server, device: String = "laptopA") async throws -> JSONValue {
            try await value(
                "sync.login",
                #"{"server":"\#(server.base)","username":"alice","password":"\#(server.password)","device":"\#(device)"}"#)
        }

        /// An episode as this machine lists it (its position and played mark).
        func episode(_ id: String, of show: String) async throws -> JSONValue? {
            let page = try await value("media.children", #"{"id":"\#(show)"}"#)
            return page["items"]?.arrayValue?.first { $0["id"]?.stringValue == id }
        }

        func favoriteIDs() async throws -> Set<String> {
            let page = try await value("favorites.list", #"{"limit":100}"#)
            return Set((page["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
        }
    }

    /// mygpoclient as a phone on the gpodder.net server.
    static func phone(_ server: Server, _ arguments: [String]) async throws -> JSONValue {
        let result = await runProgram(
            venv + "/bin/python", [tools + "/phone.py", server.base, "alice", server.password, "phone1"] + arguments)
        try #require(result.status == 0, "phone.py \(arguments.joined(separator: " ")) failed")
        return try JSONValue(parsing: String(decoding: result.output, as: UTF8.self))
    }

    static func naiveUTC(_ date: Date) -> String {
        String(ISODate.string(from: date).dropLast())
    }

    /// A show of the sandbox's directory and its newest episode: their ids, the feed and the
    /// episode's media URL.
    static func showAndEpisode(on machine: Machine) async throws -> (show: String, feed: String, episode: String, media: String) {
        let search = try await machine.value("media.search", #"{"provider":"podcasts","query":"swift"}"#)
        let show = try #require(search["items"]?.arrayValue?.first)
        let showID = try #require(show["id"]?.stringValue)
        let feed = try #require(show["feed"]?.stringValue)
        let episodes = try await machine.value("media.children", #"{"id":"\#(showID)"}"#)
        let episode = try #require(episodes["items"]?.arrayValue?.first)
        return (
            showID, feed, try #require(episode["id"]?.stringValue), try #require(episode["enclosure"]?["url"]?.stringValue)
        )
    }

    /// Follows the sandbox's show on `machine`: its id and feed, its newest episode's id and media URL.
    static func followShow(on machine: Machine) async throws -> (show: String, feed: String, episode: String, media: String) {
        let found = try await showAndEpisode(on: machine)
        _ = try await machine.value("favorites.add", #"{"id":"\#(found.show)"}"#)
        return found
    }

    // MARK: This machine's own server

    /// The household's server: a phone (mygpoclient) on its gpodder.net API, a second mediahost
    /// on its Nextcloud routes with an app password, and the desk itself as a device of alice's
    /// account (`users link`), agree: follow, play to 12:34, finish, unfollow, a rename.
    @Test func twoPhonesAndTheDeskAgreeThroughTheHouseholdServer() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let desk = try Machine(sandbox: base)
        let server = try await Server.household(dataDir: desk.dataDir)
        defer { server.stop() }
        let (show, feed, episode, media) = try await Self.followShow(on: desk)

        let linked = try await runMediahost(["users", "link", "alice"], dataDir: desk.dataDir)
        #expect(linked.status == 0, "\(linked.stderr)")
        #expect(linked.stdout.contains("of alice"), "\(linked.stdout)")
        let first = try await desk.value("sync.now")
        #expect(first["subscriptionsSent"]?.intValue == 1, "\(first.jsonString)")

        // The phone sees the desk's show in the account's list, and plays the episode to 12:34.
        let all = try await Self.phone(server, ["subs-all"])
        #expect(all["urls"]?.arrayValue?.contains(.string(feed)) == true, "\(all.jsonString)")
        _ = try await Self.phone(server, ["device"])
        _ = try await Self.phone(
            server,
            [
                "play", "--podcast", feed, "--episode", media, "--started", "0", "--position", "754", "--total", "3600",
                "--timestamp", Self.naiveUTC(Date().addingTimeInterval(-60)),
            ])
        let back = try await desk.value("sync.now")
        #expect(back["actionsNewer"]?.intValue == 1, "\(back.jsonString)")
        #expect(try await desk.episode(episode, of: show)?["position"]?.doubleValue == 754)

        // A second mediahost on the Nextcloud routes, with an app password of its own.
        let made = try await runMediahost(["users", "app-password", "alice", "--label", "tablet"], dataDir: desk.dataDir)
        let appPassword = try #require(made.stdout.split(separator: "\n").last?.trimmingCharacters(in: .whitespaces))
        let tablet = try Machine(sandbox: base)
        let login = try await tablet.value(
            "sync.login", #"{"server":"\#(server.base)","username":"alice","password":"\#(appPassword)","dialect":"nextcloud"}"#)
        #expect(login["dialect"] == "nextcloud")
        let onTablet = try await tablet.value("sync.now")
        #expect(onTablet["followed"]?.intValue == 1, "\(onTablet.jsonString)")
        let tabletShow = try #require(try await tablet.favoriteIDs().first)
        let tabletEpisodes = try await tablet.value("media.children", #"{"id":"\#(tabletShow)"}"#)
        let resumed = try #require(tabletEpisodes["items"]?.arrayValue?.first { $0["enclosure"]?["url"]?.stringValue == media })
        #expect(resumed["position"]?.doubleValue == 754, "\(resumed.jsonString)")

        // The tablet finishes it: the phone sees a play to the end, the desk sees it played.
        _ = try await tablet.value("player.mark", #"{"ids":["\#(try #require(resumed["id"]?.stringValue))"],"played":true}"#)
        #expect(try await tablet.value("sync.now")["actionsSent"]?.intValue == 1)
        let phoneSees = try await Self.phone(server, ["eps-down", "--since", "0"])
        let ends = (phoneSees["actions"]?.arrayValue ?? []).filter {
            $0["episode"]?.stringValue == media && $0["position"]?.intValue == $0["total"]?.intValue
        }
        #expect(!ends.isEmpty, "\(phoneSees.jsonString)")
        _ = try await desk.value("sync.now")
        #expect(try await desk.episode(episode, of: show)?["played"]?.boolValue == true)

        // gPodder itself (Debian's, its own sync code, headless): it subscribes (more than the
        // three password challenges its client library answers: the session cookie carries
        // it on) and reads the phone's play to 12:34.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/gpodder") {
            let home = try makeTemporaryDirectory()
            func gpodder(_ arguments: [String]) async throws -> JSONValue {
                let result = await runProgram(
                    "/usr/bin/python3",
                    [Self.tools + "/gpodder_desktop.py", server.base, "alice", "household", "gpodder-desk", home] + arguments)
                let text = String(decoding: result.output, as: UTF8.self)
                try #require(result.status == 0, "gPodder \(arguments.first ?? ""): \(text.prefix(2000))")
                return try JSONValue(parsing: text)
            }
            _ = try await gpodder(["subscribe", "http://gpodder.example/feed.xml"])
            let pulled = try await gpodder(["pull"])
            #expect(
                pulled["actions"]?.arrayValue?.contains { $0["episode"]?.stringValue == media && $0["position"]?.intValue == 754 }
                    == true, "\(pulled.jsonString.prefix(2000))")
            let devices = try await Self.phone(server, ["device"])
            #expect(devices.jsonString.contains("gpodder-desk"), "\(devices.jsonString)")
        }

        // The phone drops the show, and adds one by a feed:// address the server rewrites.
        let renamed = try await Self.phone(
            server, ["subs-up", "--remove", feed, "--add", feed.replacingOccurrences(of: "http://", with: "feed://") + "?other"])
        #expect(
            renamed["update_urls"]?.arrayValue?.first?.arrayValue?.last?.stringValue == feed + "?other", "\(renamed.jsonString)")
        let dropped = try await desk.value("sync.now")
        #expect(dropped["unfollowed"]?.intValue == 1, "\(dropped.jsonString)")
        #expect(!(try await desk.favoriteIDs().contains(show)))
        // Nothing of alice's reaches another account or a wrong password.
        let refused = await runProgram(
            Self.venv + "/bin/python", [Self.tools + "/phone.py", server.base, "alice", "wrong-password", "phone1", "subs-all"])
        #expect(refused.status != 0)
    }

    // MARK: gpodder.net's API

    /// The issue's round: a show followed on laptop A reaches the account; the phone plays an
    /// episode to 12:34 and laptop B (which follows the show from the server) resumes there; B
    /// finishes it and the phone and A see it played; the phone unfollows and A unfollows.
    @Test func twoMachinesAndAPhoneAgreeThroughGpodderNet() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let server = try await Server.gpodder(data: try makeTemporaryDirectory())
        defer { server.stop() }
        let a = try Machine(sandbox: base)
        let b = try Machine(sandbox: base)
        let (show, feed, episode, media) = try await Self.showAndEpisode(on: a)

        // A follows the show, logs in (the wrong password first), syncs.
        _ = try await a.value("favorites.add", #"{"id":"\#(show)"}"#)
        let refused = try await a.call(
            "sync.login", #"{"server":"\#(server.base)","username":"alice","password":"wrong","device":"laptopA"}"#)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("refused alice's password"), "\(refused.stderr)")
        #expect(!refused.stderr.contains("wrong"))
        let state = try await a.login(server)
        #expect(state["dialect"]?.stringValue == "gpodder")
        #expect(state["password"] == nil && !state.jsonString.contains("secret"))
        let mode = try FileManager.default.attributesOfItem(atPath: a.dataDir + "/auth/sync.json")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let first = try await a.value("sync.now")
        #expect(first["subscriptionsSent"]?.intValue == 1)

        // The phone: the account's list has A's show; it plays the episode to 12:34.
        let all = try await Self.phone(server, ["subs-all"])
        #expect(all.jsonString.contains(feed), "\(all.jsonString)")
        _ = try await Self.phone(server, ["device"])
        _ = try await Self.phone(
            server,
            [
                "play", "--podcast", feed, "--episode", media, "--started", "0", "--position", "754", "--total", "3600",
                "--timestamp", Self.naiveUTC(Date().addingTimeInterval(-60)),
            ])

        // B: a new machine follows the show from the server and resumes at 12:34.
        try await b.login(server, device: "laptopB")
        let onB = try await b.value("sync.now")
        #expect(onB["followed"]?.intValue == 1, "\(onB.jsonString)")
        #expect(onB["actionsNewer"]?.intValue == 1)
        // What the round followed went up in it too: nothing of its own making waits.
        #expect(onB["queued"]?.intValue == 0 && onB["subscriptionsSent"]?.intValue == 1, "\(onB.jsonString)")
        let followedOnB = try await b.favoriteIDs()
        #expect(followedOnB.count == 1)
        let bShow = try #require(followedOnB.first)
        // Followed by its URL; its title comes from its feed (read in the background, or at the
        // next session's start when a one-shot call ended first).
        let session = try MediahostProcess(["rpc"], dataDir: b.dataDir, environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
        defer { session.process.terminate() }
        let titled = ContinuousClock.now + .seconds(60)
        var title: String?
        while ContinuousClock.now < titled {
            let favorites = try await b.value("favorites.list")
            title = favorites["items"]?.arrayValue?.first?["title"]?.stringValue
            if title?.contains("/") == false { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(title?.contains("Swift") == true, "\(title ?? "")")
        // The session was only for the title: it ends here, so its own rounds (at its start, at
        // its end) cannot take B's next action before the `sync.now` that counts it.
        session.process.terminate()
        session.process.waitUntilExit()
        let bEpisodes = try await b.value("media.children", #"{"id":"\#(bShow)"}"#)
        let resumed = try #require(
            bEpisodes["items"]?.arrayValue?.first { $0["enclosure"]?["url"]?.stringValue == media }, "B lists the episode")
        #expect(resumed["position"]?.doubleValue == 754, "\(resumed.jsonString)")
        let bEpisode = try #require(resumed["id"]?.stringValue)

        // B finishes it: the phone sees a play to the end from laptopB, A sees it played.
        _ = try await b.value("player.mark", #"{"ids":["\#(bEpisode)"],"played":true}"#)
        let sent = try await b.value("sync.now")
        #expect(sent["actionsSent"]?.intValue == 1, "\(sent.jsonString)")
        let phoneSees = try await Self.phone(server, ["eps-down", "--since", "0"])
        let fromB = (phoneSees["actions"]?.arrayValue ?? []).filter {
            $0["device"]?.stringValue == "laptopB" && $0["episode"]?.stringValue == media
        }
        #expect(fromB.count == 1)
        #expect(fromB.first?["action"]?.stringValue == "play")
        #expect(fromB.first?["position"]?.intValue == fromB.first?["total"]?.intValue)
        _ = try await a.value("sync.now")
        #expect(try await a.episode(episode, of: show)?["played"]?.boolValue == true)

        // The phone unfollows the show (its own list): A unfollows it too.
        _ = try await Self.phone(server, ["subs-up", "--add", feed])
        try await Task.sleep(for: .milliseconds(1100))  // the router keeps seconds: a change in the same second is lost
        _ = try await Self.phone(server, ["subs-up", "--remove", feed])
        let unfollowed = try await a.value("sync.now")
        #expect(unfollowed["unfollowed"]?.intValue == 1, "\(unfollowed.jsonString)")
        #expect(try await a.favoriteIDs().isEmpty)
    }

    /// A sync round's change reaches the clients of the process that made it, though no call
    /// made it: an editor attached through `rpc` to the background service hears
    /// `library.changed` when the service's timer round unfollows a show the phone unfollowed
    /// (told from the store's write, not from a method's effect).
    @Test func aSyncRoundsChangeIsHeardByAnAttachedClient() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let server = try await Server.gpodder(data: try makeTemporaryDirectory())
        defer { server.stop() }
        let (a, feed) = try await Self.followingAndSynced(sandbox: base, server: server)

        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base, "MEDIAHOST_SYNC_INTERVAL_MINUTES": "0.1"]
        let service = try MediahostProcess(["serve"], dataDir: a.dataDir, environment: environment)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(a.dataDir)
        let client = try MediahostProcess(["rpc"], dataDir: a.dataDir, environment: environment)
        defer { client.process.terminate() }
        client.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"host.info"}"#)
        let info = await client.replies([1]).byID[1]?["result"]
        #expect(info?["pid"]?.intValue == Int(service.process.processIdentifier), "attached to the service")

        try await Self.phoneFollowsThenDrops(feed, on: server)
        #expect(await Self.hearsFavoritesChanged(client), "the timer round's unfollow was told to the client")
        try await Self.expectNoFavorites(through: client)
    }

    /// A session attached to the service asks the service for its sync round at start, so what
    /// the round changes is heard by the session's own client (the round ran in the `rpc`
    /// process, whose changes reached no one while the service answered its calls).
    @Test func anAttachedSessionsStartRoundRunsInTheServiceAndIsHeard() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let server = try await Server.gpodder(data: try makeTemporaryDirectory())
        defer { server.stop() }
        let (a, feed) = try await Self.followingAndSynced(sandbox: base, server: server)

        // The service's rounds: one at its start, the next in an hour.
        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base, "MEDIAHOST_SYNC_INTERVAL_MINUTES": "60"]
        let service = try MediahostProcess(["serve"], dataDir: a.dataDir, environment: environment)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(a.dataDir)
        _ = try await a.value("sync.now")  // through the service: joins its start round, or follows it

        try await Self.phoneFollowsThenDrops(feed, on: server)
        let client = try MediahostProcess(["rpc"], dataDir: a.dataDir, environment: environment)
        defer { client.process.terminate() }
        // Its first message tells `rpc` the framing; notifications wait for it.
        client.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"host.info"}"#)
        let (replies, early) = await client.replies([1])
        #expect(replies[1]?["result"]?["pid"]?.intValue == Int(service.process.processIdentifier), "attached to the service")
        #expect(
            await Self.hearsFavoritesChanged(client, early: early),
            "the session's start round, run by the service, was told to its client")
        try await Self.expectNoFavorites(through: client)
    }

    /// A machine following a show, logged in to `server` (where the phone is a device too: the
    /// machine reads its list from the next round on) and synced once.
    static func followingAndSynced(sandbox base: String, server: Server) async throws -> (Machine, feed: String) {
        let machine = try Machine(sandbox: base)
        let (_, feed, _, _) = try await followShow(on: machine)
        try await machine.login(server)
        _ = try await phone(server, ["device"])
        let first = try await machine.value("sync.now")
        #expect(first["subscriptionsSent"]?.intValue == 1)
        return (machine, feed)
    }

    /// The phone follows `feed`, then drops it a second later (the router keeps seconds: a
    /// change in the same second is lost).
    static func phoneFollowsThenDrops(_ feed: String, on server: Server) async throws {
        _ = try await phone(server, ["subs-up", "--add", feed])
        try await Task.sleep(for: .milliseconds(1100))
        _ = try await phone(server, ["subs-up", "--remove", feed])
    }

    /// Whether `client` hears `library.changed {favorites}`: among `early` (notifications read
    /// while waiting for a reply) or within 90 s.
    static func hearsFavoritesChanged(_ client: MediahostProcess, early: [JSONValue] = []) async -> Bool {
        func isFavorites(_ message: JSONValue) -> Bool {
            message["method"] == "library.changed" && message["params"]?["what"] == "favorites"
        }
        if early.contains(where: isFavorites) { return true }
        let deadline = ContinuousClock.now + .seconds(90)
        while ContinuousClock.now < deadline, let message = await client.next(timeout: .seconds(90))?.value {
            if isFavorites(message) { return true }
        }
        return false
    }

    /// `favorites.list` through `client` (id 2) is empty.
    static func expectNoFavorites(through client: MediahostProcess) async throws {
        client.sendLine(#"{"jsonrpc":"2.0","id":2,"method":"favorites.list"}"#)
        let favorites = await client.replies([2]).byID[2]?["result"]
        #expect(favorites?["items"]?.arrayValue?.isEmpty == true, "\(String(describing: favorites))")
    }

    /// Two devices whose clocks are apart: the action that happened last wins, whatever the
    /// order the server got them in; an older one changes nothing.
    @Test func theNewestActionWinsByItsOwnTime() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let server = try await Server.gpodder(data: try makeTemporaryDirectory())
        defer { server.stop() }
        let a = try Machine(sandbox: base)
        let (show, feed, episode, media) = try await Self.followShow(on: a)
        try await a.login(server)
        // The phone's clock is an hour ahead: its 300 s is the newest, though sent first.
        _ = try await Self.phone(
            server,
            [
                "play", "--podcast", feed, "--episode", media, "--position", "300", "--total", "3600", "--timestamp",
                Self.naiveUTC(Date().addingTimeInterval(3000)),
            ])
        // A tablet's clock is a day behind: its 900 s came later but happened before.
        _ = try await runProgram(
            Self.venv + "/bin/python",
            [
                Self.tools + "/phone.py", server.base, "alice", "secret", "tablet", "play", "--podcast", feed, "--episode", media,
                "--position", "900", "--total", "3600", "--timestamp", Self.naiveUTC(Date().addingTimeInterval(-86_000)),
            ])
        let report = try await a.value("sync.now")
        #expect(report["actionsReceived"]?.intValue == 2)
        #expect(try await a.episode(episode, of: show)?["position"]?.doubleValue == 300)
        // Marked not played here now: older than the phone's (an hour ahead), so the phone's
        // stays the newest here, and the mark is not sent (it is news to no one).
        _ = try await a.value("player.mark", #"{"ids":["\#(episode)"],"played":false}"#)
        let marked = try await a.value("sync.now")
        #expect(marked["actionsSent"]?.intValue == 0, "\(marked.jsonString)")
        #expect(try await a.episode(episode, of: show)?["position"]?.doubleValue == 300)
    }

    /// Offline: what changed waits in the store; a server that fails (500), refuses (401),
    /// throttles (429) or drops the answer after doing the work loses nothing and gets each
    /// action once; a kill -9 in the middle of an upload too.
    @Test func offlineQueuesFailuresAndAKillSendEachActionOnce() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let data = try makeTemporaryDirectory()
        var server = try await Server.gpodder(data: data)
        let a = try Machine(sandbox: base)
        let (show, _, episode, media) = try await Self.followShow(on: a)
        try await a.login(server)
        _ = try await a.value("sync.now")

        // The server is down: the mark waits.
        server.stop()
        _ = try await a.value("player.mark", #"{"ids":["\#(episode)"],"played":true}"#)
        let offline = try await a.call("sync.now")
        #expect(offline.status != 0)
        let waiting = try await a.value("sync.status")
        #expect(waiting["queued"]?.intValue == 1)
        #expect(waiting["lastError"]?.stringValue?.contains("cannot reach the sync server") == true, "\(waiting.jsonString)")

        // Back (same data, same port), but failing: 500, then 401, then 429 on the upload.
        let port = try #require(Int(server.base.split(separator: ":").last ?? ""))
        server = try await Server.gpodder(data: data, port: port)
        defer { server.stop() }
        for (status, words) in [(500, "500"), (401, "refused"), (429, "try again in 3 s")] {
            try await server.control(
                "POST", "faults", #"{"path_contains":"/episodes/","method":"POST","status":\#(status),"retry_after":3}"#)
            let failed = try await a.call("sync.now")
            #expect(failed.status != 0, "\(status)")
            #expect(failed.stderr.contains(words), "\(status): \(failed.stderr)")
            #expect(try await a.value("sync.status")["queued"]?.intValue == 1)
        }
        // The server takes the upload but the answer is cut: the client cannot know; the next
        // round finds its action in what the server sends back and does not send it again.
        try await server.control("POST", "faults", #"{"path_contains":"/episodes/","method":"POST","truncate":true}"#)
        _ = try await a.call("sync.now")
        let after = try await a.value("sync.now")
        #expect(after["queued"]?.intValue == 0, "\(after.jsonString)")
        let seen = try await Self.phone(server, ["eps-down", "--since", "0"])
        let ours = (seen["actions"]?.arrayValue ?? []).filter {
            $0["device"]?.stringValue == "laptopA" && $0["episode"]?.stringValue == media
        }
        #expect(ours.count == 1, "\(ours)")

        // kill -9 while the upload is at the server (held there 3 s): at most once, never lost.
        _ = try await a.value("player.mark", #"{"ids":["\#(episode)"],"played":false}"#)
        try await server.control("POST", "faults", #"{"path_contains":"/episodes/","method":"POST","delay":3}"#)
        let reads = { try await server.requests().filter { $0.method == "GET" && $0.path.contains("/episodes/") }.count }
        let before = try await reads()
        let syncing = try MediahostProcess(
            ["call", "sync.now"], dataDir: a.dataDir, environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
        // The round reads the actions, then uploads (held 3 s at the server): killed in between.
        let deadline = ContinuousClock.now + .seconds(60)
        while try await reads() == before, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(500))
        kill(syncing.process.processIdentifier, SIGKILL)
        _ = await syncing.waitForExit()
        try await Task.sleep(for: .seconds(4))
        _ = try await a.value("sync.now")
        let final = try await Self.phone(server, ["eps-down", "--since", "0"])
        let news = (final["actions"]?.arrayValue ?? []).filter {
            $0["device"]?.stringValue == "laptopA" && $0["episode"]?.stringValue == media && $0["action"]?.stringValue == "new"
        }
        #expect(news.count == 1, "\(news)")
        #expect(try await a.value("sync.status")["queued"]?.intValue == 0)
    }

    /// Hostile answers: actions with URLs of other schemes, no timestamp or garbage are passed
    /// over (and said so); a body that is not JSON fails the round and changes nothing.
    @Test func hostileAnswersArePassedOverOrRefused() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let server = try await Server.gpodder(data: try makeTemporaryDirectory())
        defer { server.stop() }
        let a = try Machine(sandbox: base)
        try await a.login(server)
        let hostile = """
            {"timestamp": 1795723703, "actions": [
             {"podcast": "file:///etc/passwd", "episode": "http://x.example/e.mp3", "action": "play", "timestamp": "2026-01-02T03:04:05", "position": 5},
             {"podcast": "http://x.example/f.xml", "episode": "javascript:alert(1)", "action": "play", "timestamp": "2026-01-02T03:04:05", "position": 5},
             {"podcast": "http://x.example/f.xml", "episode": "http://x.example/e.mp3", "action": "explode", "timestamp": "2026-01-02T03:04:05"},
             {"podcast": "http://x.example/f.xml", "episode": "http://x.example/e.mp3", "action": "play", "timestamp": "yesterday"},
             {"podcast": "http://x.example/f.xml", "episode": "http://x.example/e.mp3", "action": "play", "timestamp": "2026-01-02T03:04:05", "position": 1e300},
             42, null, "play"
            ]}
            """
        let escaped = JSONValue.string(hostile).jsonString
        try await server.control(
            "POST", "faults", #"{"path_contains":"/episodes/","method":"GET","status":200,"body":\#(escaped)}"#)
        let report = try await a.value("sync.now")
        #expect(report["actionsReceived"]?.intValue == 1, "only the last, with its position passed over: \(report.jsonString)")
        #expect(report["skipped"]?.jsonString.contains("7 episode actions were malformed") == true, "\(report.jsonString)")

        // A favorite episode whose snapshot claims a length no episode has, marked played: the
        // round sends it without that length and goes on.
        let episode: JSONValue = [
            "id": "podcasts:episode:1:huge", "provider": "podcasts", "kind": "episode", "title": "Huge",
            "duration": .number("1e40"), "feed": "https://x.example/f.xml",
            "enclosure": ["url": "https://x.example/huge.mp3"],
        ]
        let list: JSONValue = ["format": "mediahost-list", "version": 1, "name": "favorites", "items": [episode]]
        _ = try await a.value(
            "lists.import", #"{"name":"favorites","text":\#(JSONValue.string(list.jsonString).jsonString),"format":"json"}"#)
        _ = try await a.value("player.mark", #"{"ids":["podcasts:episode:1:huge"],"played":true}"#)
        let sentHuge = try await a.value("sync.now")
        #expect(sentHuge["actionsSent"]?.intValue == 1, "\(sentHuge.jsonString)")

        // Larger than any answer a sync server gives (64 MB): refused, not read into memory.
        let huge = #"{"timestamp": 1, "actions": [""# + String(repeating: "0,", count: 34 << 20) + "0]}"
        try await server.control(
            "POST", "faults",
            #"{"path_contains":"/episodes/","method":"GET","status":200,"body":\#(JSONValue.string(huge).jsonString)}"#)
        let tooBig = try await a.call("sync.now")
        #expect(tooBig.status != 0)
        #expect(tooBig.stderr.contains("larger than 64 MB"), "\(tooBig.stderr)")

        try await server.control(
            "POST", "faults", #"{"path_contains":"/devices/","method":"GET","status":200,"body":"<html>oops"}"#)
        let broken = try await a.call("sync.now")
        #expect(broken.status != 0)
        #expect(broken.stderr.contains("not JSON"), "\(broken.stderr)")
    }

    /// The background service syncs every `sync.interval_minutes`: what the phone plays reaches
    /// the machine without anyone asking; `doctor --online` checks the server.
    @Test func theServiceSyncsOnItsOwnAndDoctorChecksTheServer() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let server = try await Server.gpodder(data: try makeTemporaryDirectory())
        defer { server.stop() }
        let a = try Machine(sandbox: base)
        let (show, feed, episode, media) = try await Self.followShow(on: a)
        try await a.login(server)
        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base, "MEDIAHOST_SYNC_INTERVAL_MINUTES": "0.1"]
        let service = try MediahostProcess(["serve"], dataDir: a.dataDir, environment: environment)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(a.dataDir)
        _ = try await Self.phone(
            server,
            [
                "play", "--podcast", feed, "--episode", media, "--position", "421", "--total", "3600", "--timestamp",
                Self.naiveUTC(Date().addingTimeInterval(-10)),
            ])
        // Within a few rounds of 6 s (generous on a busy machine), no `sync` asked.
        let deadline = ContinuousClock.now + .seconds(90)
        var position: Double?
        while ContinuousClock.now < deadline {
            position = try await a.episode(episode, of: show)?["position"]?.doubleValue
            if position == 421 { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(position == 421)

        let doctor = try await a.call("host.doctor", #"{"online":false}"#)
        let checks = doctor.value?["checks"]?.arrayValue ?? []
        #expect(checks.contains { $0["area"]?.stringValue == "sync" && $0["status"]?.stringValue == "ok" })
        server.stop()
        let offline = try await a.call("host.doctor", #"{"online":true}"#)
        let failed = (offline.value?["checks"]?.arrayValue ?? []).first {
            $0["area"]?.stringValue == "sync" && $0["name"]?.stringValue == "server"
        }
        #expect(failed?["status"]?.stringValue == "failed", "\(offline.stderr)")
        #expect(failed?["detail"]?.stringValue?.contains("cannot reach the sync server") == true)
    }

    // MARK: Nextcloud's gpoddersync

    /// The same round on the Nextcloud dialect: one list per account, only plays kept, actions
    /// upper-cased with -1 for missing numbers and +00:00 times, a server-time cursor.
    @Test func twoMachinesAndAPhoneAgreeThroughNextcloud() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let server = try await Server.nextcloud()
        defer { server.stop() }
        let a = try Machine(sandbox: base)
        let b = try Machine(sandbox: base)
        let (show, feed, episode, media) = try await Self.followShow(on: a)
        // Found out as Nextcloud from the address (with the app's path given, as people paste it).
        let state = try await a.value(
            "sync.login",
            #"{"server":"\#(server.base)/index.php/apps/gpoddersync","username":"alice","password":"app-pass"}"#)
        #expect(state["dialect"]?.stringValue == "nextcloud")
        _ = try await a.value("sync.now")

        // The phone (as AntennaPod does it): reads the list, uploads a play.
        let http = MediaHTTPClient()
        let auth = "Basic " + Data("alice:app-pass".utf8).base64EncodedString()
        let list = try await http.send(
            HTTPRequest(
                url: URL(string: server.base + "/index.php/apps/gpoddersync/subscriptions?since=0")!,
                headers: ["Authorization": auth]))
        #expect(
            String(decoding: list.body, as: UTF8.self).contains(feed.replacingOccurrences(of: "/", with: "\\/"))
                || String(decoding: list.body, as: UTF8.self).contains(feed))
        let play = """
            [{"podcast":"\(feed)","episode":"\(media)","action":"play","timestamp":"\(Self.naiveUTC(Date().addingTimeInterval(-30)))","started":0,"position":754,"total":3600}]
            """
        let uploaded = try await http.send(
            HTTPRequest(
                method: "POST", url: URL(string: server.base + "/index.php/apps/gpoddersync/episode_action/create")!,
                headers: ["Authorization": auth, "Content-Type": "application/json"], body: Data(play.utf8)))
        #expect(uploaded.status == 200)

        _ = try await b.value(
            "sync.login", #"{"server":"\#(server.base)","username":"alice","password":"app-pass","dialect":"nextcloud"}"#)
        let onB = try await b.value("sync.now")
        #expect(onB["followed"]?.intValue == 1, "\(onB.jsonString)")
        let bShow = try #require(try await b.favoriteIDs().first)
        let bEpisodes = try await b.value("media.children", #"{"id":"\#(bShow)"}"#)
        let resumed = try #require(bEpisodes["items"]?.arrayValue?.first { $0["enclosure"]?["url"]?.stringValue == media })
        #expect(resumed["position"]?.doubleValue == 754)

        // A finishes it; the phone reads a PLAY to the end; B sees it played.
        _ = try await a.value("player.mark", #"{"ids":["\#(episode)"],"played":true}"#)
        #expect(try await a.value("sync.now")["actionsSent"]?.intValue == 1)
        let actions = try await http.send(
            HTTPRequest(
                url: URL(string: server.base + "/index.php/apps/gpoddersync/episode_action?since=0")!,
                headers: ["Authorization": auth]))
        let parsed = try JSONValue(parsing: String(decoding: actions.body, as: UTF8.self))
        let row = try #require(parsed["actions"]?.arrayValue?.first { $0["episode"]?.stringValue == media })
        #expect(row["action"]?.stringValue == "PLAY")
        #expect(row["position"]?.intValue == row["total"]?.intValue)
        _ = try await b.value("sync.now")
        let bAfter = try await b.value("media.children", #"{"id":"\#(bShow)"}"#)
        #expect(
            bAfter["items"]?.arrayValue?.first { $0["enclosure"]?["url"]?.stringValue == media }?["played"]?.boolValue == true)

        // Unfollowed on B: A unfollows (a second later than A's last look: the app keeps seconds).
        try await Task.sleep(for: .milliseconds(1100))
        _ = try await b.value("favorites.remove", #"{"id":"\#(bShow)"}"#)
        _ = try await b.value("sync.now")
        #expect(try await a.value("sync.now")["unfollowed"]?.intValue == 1)
        #expect(try await a.favoriteIDs().isEmpty)
    }
}

extension PodcastSyncTests {
    /// The server rewrites a URL it normalises (`update_urls`): the show is known by the new one
    /// from then on, so the phone following it by that URL is no second show here.
    @Test func theServersRewrittenURLsAreTaken() async throws {
        let server = try await Server.gpodder(data: try makeTemporaryDirectory())
        defer { server.stop() }
        let a = try Machine(sandbox: "http://127.0.0.1:9")
        let opml = """
            <?xml version="1.0"?><opml version="2.0"><head><title>Mine</title></head><body>
            <outline type="rss" text="Shouting" xmlUrl="http://Feeds.Example.ORG/Show.xml"/></body></opml>
            """
        let text = JSONValue.string(opml).jsonString
        _ = try await a.value("lists.import", #"{"name":"favorites","text":\#(text),"format":"opml"}"#)
        try await a.login(server)
        let first = try await a.value("sync.now")
        #expect(first["renamed"]?.intValue == 1, "\(first.jsonString)")
        let all = try await Self.phone(server, ["subs-all"])
        #expect(all["urls"]?.arrayValue?.compactMap(\.stringValue) == ["http://feeds.example.org/Show.xml"], "\(all.jsonString)")
        _ = try await Self.phone(server, ["subs-up", "--add", "http://feeds.example.org/Show.xml"])
        let second = try await a.value("sync.now")
        #expect(second["followed"]?.intValue == 0 && second["subscriptionsSent"]?.intValue == 0, "\(second.jsonString)")
        #expect(try await a.favoriteIDs().count == 1)
    }
}

extension PlayerTests {
    /// The phone stopped at 1:40: `play` here starts there (real mpv); a pause here goes to the
    /// server as a play from where this stretch started to where it stopped.
    @Test(.enabled(if: mpv != nil, "mpv is not installed (`make test` installs it)"))
    func playStartsWhereThePhoneStoppedAndAPauseGoesBack() async throws {
        let setup = try await Self.setUp()
        defer { setup.sandbox.process.terminate() }
        let server = try await PodcastSyncTests.Server.gpodder(data: try makeTemporaryDirectory())
        defer { server.stop() }
        let tone = setup.tones[2]
        func call(_ method: String, _ params: String) async throws -> JSONValue {
            let result = try await runMediahost(["call", method, params], dataDir: setup.dataDir, environment: setup.environment)
            try #require(result.status == 0, "\(method): \(result.stderr)")
            return try JSONValue(parsing: result.stdout)
        }
        let item = try await call("media.get", #"{"id":"\#(tone)"}"#)
        let feed = try #require(item["feed"]?.stringValue)
        let media = try #require(item["enclosure"]?["url"]?.stringValue)
        _ = try await call("sync.login", #"{"server":"\#(server.base)","username":"alice","password":"secret","device":"desk"}"#)
        _ = try await PodcastSyncTests.phone(
            server,
            [
                "play", "--podcast", feed, "--episode", media, "--position", "100", "--total", "180", "--timestamp",
                PodcastSyncTests.naiveUTC(Date().addingTimeInterval(-20)),
            ])
        _ = try await call("sync.now", "{}")

        let client = try Client(dataDir: setup.dataDir, environment: setup.environment)
        let opened = try await client.call("player.open", #"{"id":"\#(tone)"}"#)
        #expect(opened["resumedAt"]?.doubleValue == 100, "\(opened)")
        let playing = await client.waitForState { ($0["position"]?.doubleValue ?? 0) >= 101 && $0["state"] == "playing" }
        #expect(playing != nil, "\(client.process.errors.suffix(2000))")
        let paused = try await client.call("player.pause")
        let at = try #require(paused["position"]?.doubleValue)
        _ = try await client.call("player.stop")

        let sent = try await call("sync.now", "{}")
        #expect((sent["actionsSent"]?.intValue ?? 0) >= 1, "\(sent.jsonString)")
        let seen = try await PodcastSyncTests.phone(server, ["eps-down", "--since", "0"])
        let ours = try #require(
            (seen["actions"]?.arrayValue ?? []).last {
                $0["device"]?.stringValue == "desk" && $0["episode"]?.stringValue == media
            })
        #expect(ours["started"]?.intValue == 100, "\(ours)")
        #expect(abs(Double(ours["position"]?.intValue ?? 0) - at) <= 2, "\(ours) vs \(at)")
        #expect(ours["total"]?.intValue == 180)

        // A queued item is taken up where the phone left it too, when mpv comes to it.
        let second = try await call("media.get", #"{"id":"\#(setup.tones[1])"}"#)
        let secondMedia = try #require(second["enclosure"]?["url"]?.stringValue)
        _ = try await PodcastSyncTests.phone(
            server,
            [
                "play", "--podcast", feed, "--episode", secondMedia, "--position", "50", "--total", "120", "--timestamp",
                PodcastSyncTests.naiveUTC(Date().addingTimeInterval(-10)),
            ])
        _ = try await call("sync.now", "{}")
        _ = try await client.call("player.open", #"{"id":"\#(setup.tones[0])"}"#)
        let queued = try await client.call("player.open", #"{"id":"\#(setup.tones[1])"}"#)
        #expect(queued["queued"] == true, "\(queued)")
        // Within 30 s, so at 50 s only by starting there (the 4 s tone plays first).
        let takenUp = await client.waitForState(timeout: .seconds(30)) {
            $0["item"]?["id"]?.stringValue == setup.tones[1] && ($0["position"]?.doubleValue ?? 0) >= 50
        }
        #expect(takenUp != nil, "\(client.process.errors.suffix(2000))")
        _ = try await client.call("player.stop")
    }
}

extension PodcastSyncTests {
    /// What this machine did is not undone by its own change coming back (Nextcloud keeps one
    /// list for the account): an unfollow stays, a mark as not played stays, though an older
    /// play of the phone's is on the server.
    @Test func ownChangesComingBackUndoNothing() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let server = try await Server.nextcloud()
        defer { server.stop() }
        let a = try Machine(sandbox: base)
        let (show, feed, episode, media) = try await Self.followShow(on: a)
        try await a.login(server)
        _ = try await a.value("sync.now")
        let play = """
            [{"podcast":"\(feed)","episode":"\(media)","action":"play","timestamp":"\(Self.naiveUTC(Date().addingTimeInterval(-100)))","started":0,"position":754,"total":3600}]
            """
        let uploaded = try await MediaHTTPClient().send(
            HTTPRequest(
                method: "POST", url: URL(string: server.base + "/index.php/apps/gpoddersync/episode_action/create")!,
                headers: [
                    "Authorization": "Basic " + Data("alice:app-pass".utf8).base64EncodedString(),
                    "Content-Type": "application/json",
                ], body: Data(play.utf8)))
        #expect(uploaded.status == 200)
        _ = try await a.value("sync.now")
        #expect(try await a.episode(episode, of: show)?["position"]?.doubleValue == 754)

        _ = try await a.value("player.mark", #"{"ids":["\#(episode)"],"played":false}"#)
        _ = try await a.value("favorites.remove", #"{"id":"\#(show)"}"#)
        for _ in 0..<3 {
            _ = try await a.value("sync.now")
            try await Task.sleep(for: .milliseconds(600))
        }
        #expect(try await a.favoriteIDs().isEmpty, "the unfollow stays")
        let listed = try await a.episode(episode, of: show)
        #expect(listed?["position"] == nil && listed?["played"]?.boolValue != true, "\(listed?.jsonString ?? "")")
    }

    /// A first sync takes the other devices' lists as they are now: a show the phone
    /// unsubscribed long ago is still followed here if it is followed here.
    @Test func aFirstSyncKeepsWhatIsFollowedHere() async throws {
        let server = try await Server.gpodder(data: try makeTemporaryDirectory())
        defer { server.stop() }
        let a = try Machine(sandbox: "http://127.0.0.1:9")
        let url = "http://feeds.example.org/kept.xml"
        _ = try await Self.phone(server, ["subs-up", "--add", url])
        try await Task.sleep(for: .milliseconds(1100))
        _ = try await Self.phone(server, ["subs-up", "--remove", url])
        let opml = """
            <?xml version="1.0"?><opml version="2.0"><body><outline type="rss" text="Kept" xmlUrl="\(url)"/></body></opml>
            """
        _ = try await a.value(
            "lists.import", #"{"name":"favorites","text":\#(JSONValue.string(opml).jsonString),"format":"opml"}"#)
        try await a.login(server)
        let first = try await a.value("sync.now")
        #expect(first["unfollowed"]?.intValue == 0, "\(first.jsonString)")
        #expect(try await a.favoriteIDs().count == 1)
    }
}

extension PodcastSyncTests {
    /// The download manager's work reaches the server: a download finished is a `download`
    /// action, its removal a `delete` (gpodder.net keeps both; AntennaPod shows them).
    @Test func downloadsAndTheirRemovalReachTheServer() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let server = try await Server.gpodder(data: try makeTemporaryDirectory())
        defer { server.stop() }
        let a = try Machine(sandbox: base)
        let (_, _, episode, media) = try await Self.followShow(on: a)
        try await a.login(server)
        let client = try PlayerTests.Client(dataDir: a.dataDir, environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
        _ = try await client.call("downloads.start", #"{"id":"\#(episode)"}"#)
        let deadline = ContinuousClock.now + .seconds(90)
        var state: String?
        while ContinuousClock.now < deadline {
            let list = try await client.call("downloads.list")
            state = (list.arrayValue ?? list["downloads"]?.arrayValue ?? []).first?["state"]?.stringValue
            if state == "completed" || state == "failed" { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        try #require(state == "completed", "the download: \(state ?? "none")")
        _ = try await client.call("sync.now")
        _ = try await client.call("downloads.remove", #"{"id":"\#(episode)"}"#)
        _ = try await client.call("sync.now")
        await client.close()
        let seen = try await Self.phone(server, ["eps-down", "--since", "0"])
        let ours = (seen["actions"]?.arrayValue ?? []).filter {
            $0["device"]?.stringValue == "laptopA" && $0["episode"]?.stringValue == media
        }
        #expect(ours.compactMap { $0["action"]?.stringValue }.sorted() == ["delete", "download"], "\(ours)")
    }
}
