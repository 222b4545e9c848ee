import Basics
import FoundationEssentials
import HostAPI
import JSONRPC
import Logging
import MediaHost
import MediaKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The web remote, the service's side: with `web.listen` set, the service starts `mediahost-web`
/// (the HTTP and WebSocket server, Hummingbird on SwiftNIO, a program of its own so that no
/// other command loads it: `--version`, a cold `call` and the REPL start as before) and tells it
/// the desk's `web.*` calls. The server's pages are clients of the service's socket like any
/// other front end.
public enum WebModule: HostModule {
    public static let methods: [any RPCMethod.Type] = [
        WebStatus.self, WebPair.self, WebLink.self, WebDevices.self, WebRevoke.self,
    ]

    public static func serviceWillStart(_ host: HostRuntime) async {
        let listen = host.config.string(HostSettings.webListen).trimming(.whitespaces)
        guard !listen.isEmpty else { return }
        let server: WebServerProcess = host.component()
        await server.start(listen: listen)
    }

    public static func healthChecks(_ host: HostRuntime, online: Bool) async -> [HealthCheck] {
        // What the service's web remote said last (`run/web.json`), from any process of the
        // data dir; this process's own when it is the service.
        let report = WebServerProcess.Report.read(dataDir: host.paths.dataDir)
        let listen = report?.listen ?? host.config.string(HostSettings.webListen).trimming(.whitespaces)
        guard !listen.isEmpty else { return [] }
        let devices = WebDeviceStore(dataDir: host.paths.dataDir).all().count
        if let problem = host.existingComponent(WebServerProcess.self)?.problem ?? report?.problem {
            return [HealthCheck(area: "web", name: "remote", status: .failed, detail: problem)]
        }
        if let report, !report.urls.isEmpty {
            return [
                HealthCheck(
                    area: "web", name: "remote", status: .ok,
                    detail:
                        "answers on \(report.urls.joined(separator: " ")); \(devices) browser\(devices == 1 ? "" : "s") paired")
            ]
        }
        if WebServerProcess.executable(environment: host.environment) == nil {
            return [
                HealthCheck(
                    area: "web", name: "remote", status: .failed, detail: WebServerProcess.missing,
                    fix: "`make install`, or set MEDIAHOST_WEB_BIN")
            ]
        }
        return [
            HealthCheck(
                area: "web", name: "remote", status: .ok,
                detail: "web.listen \(listen): the service serves the page; \(devices) browser\(devices == 1 ? "" : "s") paired")
        ]
    }
}

/// `mediahost-web`, run by the service: started with it, told the desk's calls over its
/// standard input and output (JSON-RPC), started again when it ends on its own, ended with the
/// service (its input closes).
final class WebServerProcess: HostComponent {
    let host: HostRuntime

    private struct State {
        var child: ChildProcess?
        var peer: RPCPeer?
        var listen = ""
        var problem: String?
        var stopping = false
        var restarts: [Date] = []
        var urls: [String] = []
    }
    private let state = Mutex(State())

    init(host: HostRuntime) { self.host = host }

    static let missing =
        "mediahost-web is not beside mediahost: `make install` puts it in lib/mediahost, `make release` builds it in .build/release (or set MEDIAHOST_WEB_BIN)"

    /// Where `mediahost-web` is: MEDIAHOST_WEB_BIN, beside this executable (a build folder),
    /// in `../lib/mediahost/` from it (an installation), or on PATH.
    static func executable(environment: [String: String]) -> String? {
        if let path = environment["MEDIAHOST_WEB_BIN"], !path.isEmpty { return path }
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let folder = Path.directory(of: me)
        for candidate in [folder + "/mediahost-web", Path.directory(of: folder) + "/lib/mediahost/mediahost-web"]
        where access(candidate, X_OK) == 0 {
            return candidate
        }
        for folder in (environment["PATH"] ?? "").split(separator: ":") where access("\(folder)/mediahost-web", X_OK) == 0 {
            return "\(folder)/mediahost-web"
        }
        return nil
    }

    var problem: String? { state.withLock { $0.problem } }

    /// What the web remote is doing, kept in `run/web.json` by the service for the data dir's
    /// other processes (`doctor`): gone when the service stops, ignored when its process is.
    struct Report: Codable {
        var pid: Int32
        var listen: String
        var urls: [String]
        var problem: String?

        static func path(dataDir: String) -> String { dataDir + "/run/web.json" }

        static func read(dataDir: String) -> Report? {
            guard let data = FileManager.default.contents(atPath: path(dataDir: dataDir)),
                let report = try? JSONDecoder().decode(Report.self, from: data), kill(report.pid, 0) == 0 || errno == EPERM
            else { return nil }
            return report
        }
    }

    /// Keeps `run/web.json` as the web remote is now.
    private func report(urls: [String]) {
        let (listen, problem) = state.withLock { ($0.listen, $0.problem) }
        let path = Report.path(dataDir: host.paths.dataDir)
        try? FileManager.default.createDirectory(atPath: Path.directory(of: path), withIntermediateDirectories: true)
        if let data = try? JSONEncoder().encode(Report(pid: getpid(), listen: listen, urls: urls, problem: problem)) {
            _ = FileManager.default.createFile(atPath: path, contents: data)
        }
    }

    /// Starts the server on `listen` and waits (10 s at most) until it listens or says why not.
    func start(listen: String) async {
        state.withLock { $0.listen = listen }
        defer { report(urls: lastURLs) }
        guard let program = Self.executable(environment: host.environment) else {
            state.withLock { $0.problem = Self.missing }
            Descriptor.standardError("web remote: \(Self.missing)\n")
            return
        }
        let socket = host.paths.serviceSocket(environment: host.environment)
        var arguments = ["--data-dir", host.paths.dataDir, "--listen", listen, "--socket", socket]
        let (cert, key) = (
            host.config.string(HostSettings.webTLSCert).trimming(.whitespaces),
            host.config.string(HostSettings.webTLSKey).trimming(.whitespaces)
        )
        guard cert.isEmpty == key.isEmpty else {
            let problem = "web.tls_cert and web.tls_key go together: set both (PEM files) or neither"
            state.withLock { $0.problem = problem }
            Descriptor.standardError("web remote: \(problem)\n")
            return
        }
        if !cert.isEmpty { arguments += ["--tls-cert", cert, "--tls-key", key] }
        let child: ChildProcess
        do {
            child = try ChildProcess(
                program, arguments: arguments,
                standardInput: .pipe, standardOutput: .pipe, standardError: .inherit
            ) { [weak self] ended in
                self?.ended(ended)
            }
        } catch {
            state.withLock { $0.problem = "cannot start \(program): \(error)" }
            Descriptor.standardError("web remote: cannot start \(program): \(error)\n")
            return
        }
        guard let input = child.standardOutput, let output = child.standardInput else { return }
        let peer = RPCPeer(input: input, output: output, name: "web", gone: { _ in WebServerGone() })
        state.withLock {
            $0.child = child
            $0.peer = peer
            $0.problem = nil
        }
        // One that ended before it was kept (a wrong MEDIAHOST_WEB_BIN) was not seen by `ended`.
        if let ending = child.ending {
            state.withLock {
                $0.child = nil
                $0.peer = nil
                $0.problem = "\(program) ended at once (\(ending)); see the service's log"
            }
            peer.close()
            Descriptor.standardError("web remote: \(program) ended at once (\(ending))\n")
            return
        }
        // Until it listens (or says why it cannot).
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, child.isRunning {
            if let status = try? await call(WebStatus(), timeout: .seconds(2)) {
                if status.listening || status.problem != nil {
                    state.withLock {
                        $0.problem = status.problem
                        $0.urls = status.urls
                    }
                    return
                }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        if !child.isRunning, state.withLock({ $0.problem == nil }) {
            state.withLock { $0.problem = "\(program) ended (\(child.ending.map { "\($0)" } ?? "?")); see the service's log" }
        }
    }

    /// The server ended: started again unless the service stops or it ended 5 times in a minute.
    private func ended(_ child: ChildProcess) {
        let again = state.withLock { s -> Bool in
            guard s.child?.pid == child.pid else { return false }
            s.child = nil
            s.peer?.close()
            s.peer = nil
            guard !s.stopping else { return false }
            let now = Date()
            s.restarts = s.restarts.filter { now.timeIntervalSince($0) < 60 } + [now]
            guard s.restarts.count <= 5 else {
                s.problem = "mediahost-web ended 5 times in a minute; see the service's log"
                s.urls = []
                return false
            }
            return true
        }
        guard again else {
            if state.withLock({ !$0.stopping }) {
                host.logger.error("the web remote's server ended (\(child.ending.map { "\($0)" } ?? "?")); not started again")
                report(urls: [])
            }
            return
        }
        host.logger.warning("the web remote's server ended (\(child.ending.map { "\($0)" } ?? "?")); starting it again")
        let listen = state.withLock { $0.listen }
        Task {
            try? await Task.sleep(for: .seconds(1))
            await self.start(listen: listen)
        }
    }

    func call<M: APIMethod>(_ request: M, timeout: Duration? = .seconds(40)) async throws(RPCError) -> M.Response {
        guard let peer = state.withLock({ $0.peer }) else {
            throw RPCError(code: AppErrorCode.notFound, message: problem ?? "the web remote's server is not running")
        }
        let params: JSONValue
        do {
            params = try JSONCoding.value(request)
        } catch {
            throw RPCError.invalidParams("\(error)")
        }
        let answer: JSONValue
        do {
            answer = try await peer.request(["method": .string(M.method), "params": params], timeout: timeout)
        } catch let error as RPCError {
            throw error
        } catch {
            throw RPCError(code: RPCError.internalErrorCode, message: "the web remote's server did not answer: \(error)")
        }
        do {
            return try JSONValueDecoder().decode(M.Response.self, from: answer)
        } catch {
            throw RPCError(code: RPCError.internalErrorCode, message: "the web remote's answer cannot be read: \(error)")
        }
    }

    var isRunning: Bool { state.withLock { $0.peer != nil } }

    private var lastURLs: [String] { state.withLock { $0.urls } }

    func hostWillStop() async {
        let (child, peer) = state.withLock { s in
            s.stopping = true
            return (s.child, s.peer)
        }
        unlink(Report.path(dataDir: host.paths.dataDir))
        // Its input closes: it closes its pages and ends (or is ended, 3 s on).
        peer?.close()
        guard let child else { return }
        let deadline = ContinuousClock.now + .seconds(3)
        while child.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if child.isRunning { _ = child.terminate() }
    }
}

struct WebServerGone: Error, CustomStringConvertible {
    var description: String { "the web remote's server has ended" }
}

extension HostRuntime {
    /// The web remote's server, when this process runs one.
    var webServer: WebServerProcess? { existingComponent(WebServerProcess.self).flatMap { $0.isRunning ? $0 : nil } }

    func requireWebServer() throws -> WebServerProcess {
        guard let server = webServer else {
            let listen = config.string(HostSettings.webListen)
            throw HostError.invalidArgument(
                listen.isEmpty
                    ? "the web remote is off: `config web.listen 0.0.0.0:8733`, then start the service (`mediahost serve`)"
                    : existingComponent(WebServerProcess.self)?.problem
                        ?? "the web remote runs in the background service only: start it with `mediahost serve`")
        }
        return server
    }
}

extension WebStatus: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        if let server = host.webServer { return try await server.call(self) }
        let listen = host.config.string(HostSettings.webListen)
        let problem =
            host.existingComponent(WebServerProcess.self)?.problem
            ?? (listen.isEmpty ? nil : "the web remote runs in the background service only (`mediahost serve`)")
        return Response(
            listening: false, listen: listen, urls: [], waiting: [],
            devices: WebDeviceStore(dataDir: host.paths.dataDir).all().count,
            problem: problem)
    }
}

extension WebPair: RPCMethod {
    public func run(on host: HostRuntime) async throws -> WebDevice { try await host.requireWebServer().call(self) }
}

extension WebLink: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let minutes = minutes ?? 10
        guard minutes > 0, minutes <= 1440 else { throw HostError.invalidArgument("minutes is from 0 to 1440") }
        return try await host.requireWebServer().call(self)
    }
}

extension WebDevices: RPCMethod {
    public func run(on host: HostRuntime) async throws -> [WebDevice] {
        WebDeviceStore(dataDir: host.paths.dataDir).all().map(\.device)
    }
}

extension WebRevoke: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        // The server closes the device's open pages as it forgets it.
        let gone: [WebDevice] =
            if let server = host.webServer {
                try await server.call(self).revoked
            } else {
                try WebDeviceStore(dataDir: host.paths.dataDir).revoke(id)
            }
        guard !gone.isEmpty || id == "all" else {
            throw RPCError(
                code: AppErrorCode.notFound, message: "no paired browser has id \(id) (`mediahost pair --list` lists them)")
        }
        return Response(revoked: gone)
    }
}
