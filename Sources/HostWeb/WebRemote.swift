import Basics
import FoundationEssentials
import HostAPI
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import JSONRPC
import Logging
import MediaHost
import MediaKit
import NIOCore
import NIOWebSocket
import Synchronization

/// The web remote of one host: its server while it listens, the paired browsers, the ones
/// waiting, and the pages open now.
final class WebRemote: HostComponent {
    let host: HostRuntime
    let devices: WebDeviceStore
    let pairing = WebPairing()
    let sockets = OpenSockets()
    /// WebSockets open at once; more are refused (503) until one closes.
    static let maxSockets = 512

    private struct State {
        var listen = ""
        var port: Int?
        var hostName: String?
        var problem: String?
        var server: Task<Void, Never>?
    }
    private let state = Mutex(State())

    init(host: HostRuntime) {
        self.host = host
        devices = WebDeviceStore(path: host.paths.authDir + "/web-devices.json")
    }

    /// Behind TLS (a reverse proxy): cookies are then marked Secure.
    var secure: Bool { false }

    func tokenCookie(_ token: String) -> Cookie {
        Cookie(
            name: WebRoutes.tokenCookie, value: token, maxAge: token.isEmpty ? 0 : WebRoutes.tokenAge, path: "/",
            secure: secure, httpOnly: true, sameSite: .strict)
    }

    /// The paired device a request comes from; a wrong token counts against its address.
    /// - Parameter counting: false where the same request is asked again (the WebSocket's
    ///   router, then the page's), so one wrong token counts once.
    func device(of request: Request, context: WebContext, counting: Bool = true) -> WebDevice? {
        guard let token = request.cookies[WebRoutes.tokenCookie]?.value, !token.isEmpty else { return nil }
        guard !pairing.isLockedOut(context.address) else { return nil }
        guard let device = devices.device(token: token) else {
            if counting { pairing.fail(context.address) }
            return nil
        }
        return device
    }

    /// Unpairs `id` (or all) and closes its open pages.
    func revoke(_ id: String) async throws -> [WebDevice] {
        let gone = try devices.revoke(id)
        for device in gone { await sockets.close(device: device.id) }
        return gone
    }

    var isListening: Bool { state.withLock { $0.port != nil } }

    /// The page's addresses: the one listened on, or every interface's for 0.0.0.0.
    var urls: [String] {
        state.withLock { s in
            guard let port = s.port, let name = s.hostName else { return [] }
            let hosts = name == "0.0.0.0" || name == "::" ? NetworkInterfaces.ipv4() : [name]
            return hosts.map { "http://\($0):\(port)/" }
        }
    }

    var status: WebStatus.Response {
        let (listen, listening, problem) = state.withLock { ($0.listen, $0.port != nil, $0.problem) }
        return WebStatus.Response(
            listening: listening, listen: listen, urls: urls, waiting: pairing.waiting, devices: devices.all().count,
            problem: problem)
    }

    /// Starts serving on `listen` ("host:port"; port 0 takes a free one); returns once it
    /// listens or could not.
    func start(listen: String) async {
        guard let (name, port) = Self.parse(listen) else {
            state.withLock {
                $0.listen = listen
                $0.problem = "web.listen is host:port (0.0.0.0:8733 for every interface, 127.0.0.1:8733 for this machine only)"
            }
            host.logger.error("web remote: \(listen) is not host:port")
            return
        }
        state.withLock {
            $0.listen = listen
            $0.problem = nil
        }
        let started = AsyncStream<Int?>.makeStream()
        var logger = Logger(label: "mediahost.web")
        logger.logLevel = .critical
        let app = Application(
            router: WebRoutes.router(self),
            server: .http1WebSocketUpgrade(
                webSocketRouter: WebRoutes.webSocketRouter(self),
                configuration: .init(
                    // A client that sends nothing for 2 minutes is closed (pages keep their
                    // WebSocket alive with pings).
                    http1: .init(idleTimeout: .seconds(120)),
                    ws: .init(maxFrameSize: WebBridge.maxMessage, autoPing: .enabled(timePeriod: .seconds(30))))),
            configuration: .init(address: .hostname(name, port: port), serverName: "mediahost"),
            onServerRunning: { channel in started.continuation.yield(channel.localAddress?.port) },
            logger: logger)
        let server = Task {
            do {
                try await app.run()
            } catch {
                started.continuation.yield(nil)
                self.state.withLock { $0.problem = "cannot listen on \(listen): \(error)" }
                self.host.logger.error("web remote: cannot listen on \(listen): \(error)")
            }
        }
        var bound: Int?
        for await port in started.stream {
            bound = port
            break
        }
        state.withLock {
            $0.server = server
            $0.port = bound
            $0.hostName = bound == nil ? nil : name
        }
    }

    /// "host:port", "[::1]:port" or ":port" (every interface).
    static func parse(_ listen: String) -> (String, Int)? {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (0...65535).contains(port)
        else { return nil }
        var name = String(listen[..<colon])
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        return (name.isEmpty ? "0.0.0.0" : name, port)
    }

    func hostWillStop() async {
        await sockets.closeAll()
    }
}

/// The WebSockets open now, by device: a device unpaired has its pages closed at once.
final class OpenSockets: Sendable {
    private let open = Mutex<(next: Int, byID: [Int: (device: String, outbound: WebSocketOutboundWriter)])>((0, [:]))

    var count: Int { open.withLock { $0.byID.count } }

    func add(device: String, outbound: WebSocketOutboundWriter) -> Int {
        open.withLock {
            $0.next += 1
            $0.byID[$0.next] = (device, outbound)
            return $0.next
        }
    }

    func remove(_ id: Int) { open.withLock { _ = $0.byID.removeValue(forKey: id) } }

    func close(device: String) async {
        let closing = open.withLock { $0.byID.values.filter { $0.device == device }.map(\.outbound) }
        for outbound in closing { try? await outbound.close(.policyViolation, reason: "this browser was unpaired") }
    }

    func closeAll() async {
        let closing = open.withLock { $0.byID.values.map(\.outbound) }
        for outbound in closing { try? await outbound.close(.goingAway, reason: "the service stops") }
    }
}
