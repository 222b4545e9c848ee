import Basics
import Foundation
import HostService
import JSONRPC
import MediaHTTP
import MediaHost
import MediaKit
import Synchronization
import TestSupport
import Testing

/// `mediahost serve`: one host for many front ends, through the built binary.
@Suite struct ServiceTests {
    /// The newest episode of a sandbox show: its id and its media URL (asked through the service).
    static func episode(_ dataDir: String, _ environment: [String: String]) async throws -> (id: String, media: String) {
        let result = try await runMediahost(
            ["call", "media.children", #"{"id":"podcasts:podcast:1000007919"}"#], dataDir: dataDir, environment: environment)
        let first = try #require(
            (try? JSONValue(parsing: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))?["items"]?.arrayValue?.first,
            "status \(result.status): \(result.stderr)")
        return (try #require(first["id"]?.stringValue), try #require(first["enclosure"]?["url"]?.stringValue))
    }

    /// Waits until `mediahost serve` for `dataDir` answers.
    static func waitForService(_ dataDir: String) async throws {
        let socket = ServiceSocket(paths: HostPaths(configFile: dataDir + "/none.toml", dataDir: dataDir, cacheDir: dataDir))
        let deadline = ContinuousClock.now + .seconds(20)
        while !socket.isServing, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(socket.isServing, "the service answers on \(socket.path)")
    }

    @Test func twoClientsShareOneServiceAndItsDownloads() async throws {
        let (sandbox, base) = try await startSandboxProcess(rate: 2_000_000)
        defer { sandbox.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base]
        let service = try MediahostProcess(["serve"], dataDir: dataDir, environment: environment)
        defer { service.process.terminate() }
        try await Self.waitForService(dataDir)

        // A second service for the same data dir is refused, saying which one runs.
        let second = try await runMediahost(["serve"], dataDir: dataDir, environment: environment)
        #expect(second.status == 1 && second.stderr.contains("already runs"), "\(second.stderr)")

        // Two editors (`mediahost rpc` bridges) on one service: one starts a download, both see it.
        let a = try MediahostProcess(["rpc"], dataDir: dataDir, environment: environment)
        let b = try MediahostProcess(["rpc"], dataDir: dataDir, environment: environment)
        b.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"host.info"}"#)
        let infoB = try #require(await b.messages(1).first)
        #expect(infoB["result"]?["pid"]?.intValue == Int(service.process.processIdentifier), "b talks to the service")
        let episode = try await Self.episode(dataDir, environment)
        a.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"downloads.start","params":{"id":"\#(episode.id)"}}"#)
        func progress(_ process: MediahostProcess) async -> Bool {
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline, let message = await process.next(timeout: .seconds(20))?.value {
                if message["method"] == "downloads.progress" || message["method"] == "downloads.state" { return true }
            }
            return false
        }
        #expect(await progress(a))
        #expect(await progress(b), "the other client sees the same download")

        // `mediahost call` goes to the service too: the download is its.
        let listed = try await runMediahost(["call", "downloads.list"], dataDir: dataDir, environment: environment)
        #expect(listed.stdout.contains(episode.id), "\(listed.stdout)\(listed.stderr)")
        a.closeInput()
        b.closeInput()
        #expect(await a.waitForExit() == 0)

        // The download goes on after every front end is gone, and completes.
        let deadline = ContinuousClock.now + .seconds(60)
        var completed = false
        while !completed, ContinuousClock.now < deadline {
            let list = try await runMediahost(["call", "downloads.list"], dataDir: dataDir, environment: environment)
            completed = list.stdout.contains(#""state":"completed""#)
            if !completed { try await Task.sleep(for: .milliseconds(300)) }
        }
        #expect(completed, "finished by the service")

        let stopped = try await runMediahost(["serve", "--stop"], dataDir: dataDir)
        #expect(stopped.stdout.contains("stopped the service"), "\(stopped.stdout)")
        let status = try await runMediahost(["serve", "--status"], dataDir: dataDir)
        #expect(status.status == 1)
    }

    /// `mediahost rpc` attached to a running service streams a search as it does on its own:
    /// each provider's `media.searchResults` under the client's id, then the result.
    @Test func aStreamedSearchStreamsThroughTheService() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base]
        let service = try MediahostProcess(["serve"], dataDir: dataDir, environment: environment)
        defer { service.process.terminate() }
        try await Self.waitForService(dataDir)
        let client = try MediahostProcess(["rpc"], dataDir: dataDir, environment: environment)
        client.sendLine(#"{"jsonrpc":"2.0","id":"s-1","method":"media.search","params":{"query":"garden","stream":true}}"#)
        var parts: [JSONValue] = []
        var result: JSONValue?
        let deadline = ContinuousClock.now + .seconds(60)
        while result == nil, ContinuousClock.now < deadline, let message = await client.next(timeout: .seconds(60))?.value {
            if message["method"] == "media.searchResults" { parts.append(message["params"] ?? .null) }
            if message["id"] == "s-1" { result = message }
        }
        #expect(result?["result"]?["items"]?.arrayValue?.isEmpty == false, "\(String(describing: result))")
        #expect(parts.count >= 2, "a part per provider before the result: \(parts.count)")
        #expect(parts.allSatisfy { $0["request"] == "s-1" }, "\(parts.map { $0["request"] ?? .null })")
        #expect(parts.contains { $0["provider"] == "podcasts" && $0["items"]?.arrayValue?.isEmpty == false })
        client.closeInput()
        _ = await client.waitForExit()
    }

    /// `serve --status` tells a service that holds its socket but does not answer (stuck, or
    /// still starting) from none: exit status 2, its pid, what to do; not "no service runs".
    @Test func aServiceThatDoesNotAnswerIsNotCalledNone() async throws {
        let dataDir = try makeTemporaryDirectory()
        let socket = ServiceSocket(paths: HostPaths(configFile: dataDir + "/none.toml", dataDir: dataDir, cacheDir: dataDir))
        let script = """
            import os, socket, sys, time
            s = socket.socket(socket.AF_UNIX)
            s.bind(sys.argv[1])
            s.listen(8)
            open(sys.argv[2], "w").write(str(os.getpid()) + "\\n")
            print("ready", flush=True)
            conns = []
            while True:
                c, _ = s.accept()
                conns.append(c)
            """
        try FileManager.default.createDirectory(
            atPath: (socket.path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        // It holds none of the run's pipes.
        let stuck = try ChildProcess(
            "/usr/bin/python3", arguments: ["-c", script, socket.path, socket.pidFile], standardInput: .null,
            standardOutput: .pipe, standardError: .null)
        defer { stuck.terminate(signal: SIGKILL) }
        let output = try #require(stuck.standardOutput)
        defer { close(output) }
        var ready = [UInt8](repeating: 0, count: 64)
        while read(output, &ready, ready.count) < 0, errno == EINTR {}
        let status = try await runMediahost(["serve", "--status"], dataDir: dataDir)
        #expect(status.status == 2, "\(status.stdout)")
        #expect(
            status.stdout.contains("holds \(socket.path) (pid \(stuck.processIdentifier)) but did not answer"), "\(status.stdout)"
        )
        #expect(status.stdout.contains("serve --stop"))
    }

    /// host.background: always starts a service for the first call; never keeps calls in their
    /// own process even when one runs; --no-service does for one command.
    @Test func hostBackgroundDecidesWhereCallsRun() async throws {
        let dataDir = try makeTemporaryDirectory()
        func pid(_ environment: [String: String] = [:], _ extra: [String] = []) async throws -> Int? {
            let result = try await runMediahost(["call", "host.info"] + extra, dataDir: dataDir, environment: environment)
            return try JSONValue(parsing: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["pid"]?.intValue
        }
        let first = try await pid(["MEDIAHOST_HOST_BACKGROUND": "always"])
        let status = try await runMediahost(["serve", "--status"], dataDir: dataDir)
        #expect(status.status == 0 && status.stdout.contains("pid \(first ?? -1)"), "the call ran in the service it started")
        #expect(try await pid() == first, "later calls go to it")
        #expect(try await pid([:], ["--no-service"]) != first)
        _ = try await runMediahost(["call", "config.set", #"{"key":"host.background","value":"auto"}"#], dataDir: dataDir)
        let stopped = try await runMediahost(["serve", "--stop"], dataDir: dataDir)
        #expect(stopped.stdout.contains("stopped"))
        let service = try MediahostProcess(["serve"], dataDir: dataDir)
        defer { service.process.terminate() }
        try await Self.waitForService(dataDir)
        #expect(try await pid() == Int(service.process.processIdentifier))
        _ = try await runMediahost(["call", "config.set", #"{"key":"host.background","value":"never"}"#], dataDir: dataDir)
        #expect(try await pid() != Int(service.process.processIdentifier), "never: in its own process")
    }

    /// Clients that send and never read (an editor suspended with Ctrl-Z), as many as there are
    /// cores, and one that keeps sending: another client is answered; the one that sends without
    /// end is read no further once its answers pile up (its own socket then stops it), and is
    /// not dropped: when it reads, its answers are there. The others keep their connections.
    @Test func clientsThatStopReadingCostOnlyThemselves() async throws {
        let dataDir = try makeTemporaryDirectory()
        let service = try MediahostProcess(["serve"], dataDir: dataDir)
        defer { service.process.terminate() }
        try await Self.waitForService(dataDir)
        let socket = ServiceSocket(paths: HostPaths(configFile: dataDir + "/none.toml", dataDir: dataDir, cacheDir: dataDir))
        var stuck: [Int32] = []
        for _ in 0..<2 {
            let fd = try #require(socket.connect())
            stuck.append(fd)
            let discover = Array(String(repeating: #"{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}"# + "\n", count: 40).utf8)
            #expect(Descriptor.writeAll(fd, discover))
        }
        let flooder = try #require(socket.connect())
        // Sends until the service has stopped reading it for a second (its socket stays full).
        let stopped = Mutex(false)
        let thread = Thread {
            let batch = Array(String(repeating: #"{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}"# + "\n", count: 200).utf8)
            var refusedSince: ContinuousClock.Instant?
            while true {
                let sent = batch.withUnsafeBytes { send(flooder, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                if sent > 0 {
                    refusedSince = nil
                } else if sent < 0, errno == EAGAIN {
                    let since = refusedSince ?? ContinuousClock.now
                    refusedSince = since
                    if ContinuousClock.now - since > .seconds(1) { break }
                    usleep(20_000)
                } else {
                    break
                }
            }
            stopped.withLock { $0 = true }
        }
        thread.start()
        let answer = try await runMediahost(["call", "host.info"], dataDir: dataDir)
        #expect(answer.status == 0, "answered despite the stuck clients: \(answer.stderr)")
        let deadline = ContinuousClock.now + .seconds(120)
        while !stopped.withLock({ $0 }), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(stopped.withLock { $0 }, "the service stops reading the client that never reads")
        #expect(!service.errors.contains("a client was dropped"), "\(service.errors)")
        // Reading now, it gets answers: it was waited for, not dropped.
        var probe = pollfd(fd: flooder, events: Int16(POLLIN), revents: 0)
        var ready: Int32 = -1
        repeat { ready = poll(&probe, 1, 60_000) } while ready < 0 && errno == EINTR
        var first = [UInt8](repeating: 0, count: 64)
        let got = first.withUnsafeMutableBytes { recv(flooder, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        #expect(ready == 1 && got > 0 && String(decoding: first, as: UTF8.self).hasPrefix(#"{"jsonrpc":"2.0","id":1,"result""#))
        for fd in stuck {
            // Their answers may still be on their way on a busy machine: waited for, generously.
            var probe = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            var ready: Int32 = -1
            repeat { ready = poll(&probe, 1, 60_000) } while ready < 0 && errno == EINTR
            #expect(ready == 1 && probe.revents & Int16(POLLHUP) == 0, "kept: its answers wait for it")
        }
        #expect(try await runMediahost(["call", "host.info"], dataDir: dataDir).status == 0)
        for fd in stuck + [flooder] {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    /// Settings changed by any process of the data dir reach the running service: a front end
    /// that set host.background to never and back to auto (in its own process, then) attaches
    /// again; downloads.concurrency set with --no-service is the service's too.
    @Test func settingsChangedAnywhereReachTheService() async throws {
        let dataDir = try makeTemporaryDirectory()
        let service = try MediahostProcess(["serve"], dataDir: dataDir)
        defer { service.process.terminate() }
        try await Self.waitForService(dataDir)
        let servicePID = Int(service.process.processIdentifier)
        func answeredBy() async throws -> Int? {
            let info = try await runMediahost(["call", "host.info"], dataDir: dataDir)
            return try JSONValue(parsing: info.stdout)["pid"]?.intValue
        }
        func until(_ condition: () async throws -> Bool) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                if try await condition() { return true }
                try await Task.sleep(for: .milliseconds(100))
            }
            return false
        }
        #expect(try await answeredBy() == servicePID)
        _ = try await runMediahost(["call", "config.set", #"{"key":"host.background","value":"never"}"#], dataDir: dataDir)
        #expect(try await answeredBy() != servicePID, "never: calls run in their own process")
        _ = try await runMediahost(["call", "config.set", #"{"key":"host.background","value":"auto"}"#], dataDir: dataDir)
        #expect(try await until { try await answeredBy() == servicePID }, "auto again: the service is used again")
        _ = try await runMediahost(
            ["--no-service", "call", "config.set", #"{"key":"downloads.concurrency","value":2}"#], dataDir: dataDir)
        let seen = try await until {
            let entry = try await runMediahost(["call", "config.get", #"{"key":"downloads.concurrency"}"#], dataDir: dataDir)
            return try JSONValue(parsing: entry.stdout).arrayValue?.first?["value"] == "2"
        }
        #expect(seen, "the service reads the setting made elsewhere")
    }

    /// A download the service runs belongs to it: a front end started in its own process
    /// meanwhile leaves it alone (no state changes, no notifications) and lists it as running;
    /// after the service stops, the listing shows the bytes on disk and the download as queued.
    @Test func aDownloadBelongsToTheProcessThatRunsIt() async throws {
        let (sandbox, base) = try await startSandboxProcess(rate: 100_000)
        defer { sandbox.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base]
        let service = try MediahostProcess(["serve"], dataDir: dataDir, environment: environment)
        defer { service.process.terminate() }
        try await Self.waitForService(dataDir)
        let episode = try await Self.episode(dataDir, environment)
        let started = try await runMediahost(
            ["call", "downloads.start", #"{"id":"\#(episode.id)"}"#], dataDir: dataDir, environment: environment)
        let path = try #require(
            try JSONValue(parsing: started.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["path"]?.stringValue)
        func partSize() -> Int { (try? FileManager.default.attributesOfItem(atPath: path + ".part")[.size] as? Int) ?? 0 }
        let deadline = ContinuousClock.now + .seconds(20)
        while partSize() < 100_000, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }

        let frontEnd = try MediahostProcess(["--no-service", "rpc"], dataDir: dataDir, environment: environment)
        defer { frontEnd.process.terminate() }
        frontEnd.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"downloads.list"}"#)
        var messages: [JSONValue] = []
        // The answer, however long a busy machine takes to start the front end; then a moment
        // more for notifications it should not send.
        while !messages.contains(where: { $0["id"] == 1 }), let message = await frontEnd.next(timeout: .seconds(30))?.value {
            messages.append(message)
        }
        while let message = await frontEnd.next(timeout: .milliseconds(500))?.value { messages.append(message) }
        let listed = try #require(messages.first { $0["id"] == 1 }?["result"]?.arrayValue?.first, "\(messages)")
        #expect(listed["state"] == "running", "\(listed)")
        #expect(messages.filter { $0["method"] == "downloads.state" }.isEmpty, "it says nothing of another's download")
        let fromService = try await runMediahost(["call", "downloads.list"], dataDir: dataDir, environment: environment)
        #expect(try JSONValue(parsing: fromService.stdout).arrayValue?.first?["state"] == "running", "\(fromService.stdout)")
        frontEnd.closeInput()
        _ = await frontEnd.waitForExit()

        let stopped = try await runMediahost(["serve", "--stop"], dataDir: dataDir)
        #expect(stopped.stdout.contains("stopped the service"))
        let after = try await runMediahost(
            ["--no-service", "call", "downloads.list"], dataDir: dataDir, environment: environment)
        let row = try #require(try JSONValue(parsing: after.stdout).arrayValue?.first, "\(after.stdout)\(after.stderr)")
        #expect(row["state"] == "queued", "\(row)")
        #expect(row["bytes"]?.intValue == partSize(), "the bytes on disk: \(row)")
    }

    @Test func aServiceKilledMidDownloadIsReplacedAndResumes() async throws {
        let (sandbox, base) = try await startSandboxProcess(rate: 2_000_000)
        defer { sandbox.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base]
        let service = try MediahostProcess(["serve"], dataDir: dataDir, environment: environment)
        try await Self.waitForService(dataDir)
        let episode = try await Self.episode(dataDir, environment)
        let started = try await runMediahost(
            ["call", "downloads.start", #"{"id":"\#(episode.id)"}"#], dataDir: dataDir, environment: environment)
        let path = try #require(
            try JSONValue(parsing: started.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["path"]?.stringValue)
        let deadline = ContinuousClock.now + .seconds(20)
        while ((try? FileManager.default.attributesOfItem(atPath: path + ".part")[.size] as? Int) ?? 0) < 300_000,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        kill(service.process.processIdentifier, SIGKILL)
        _ = await service.waitForExit()
        // A machine busy enough may let the download finish before the kill lands: then the
        // final file must be whole (checked below against the source), never partial.
        let sizeAtKill = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil

        // Its socket is left behind; a new service cleans it up and finishes the download.
        let again = try MediahostProcess(["serve"], dataDir: dataDir, environment: environment)
        defer { again.process.terminate() }
        try await Self.waitForService(dataDir)
        let done = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: path), ContinuousClock.now < done {
            try await Task.sleep(for: .milliseconds(200))
        }
        var request = HTTPRequest(url: URL(string: episode.media)!)
        request.maxBodySize = 1 << 30
        let source = try await MediaHTTPClient().send(request).body
        #expect(FileManager.default.contents(atPath: path) == source, "byte-identical to the source")
        if let sizeAtKill { #expect(sizeAtKill == source.count, "never a partial final file") }
    }
}
