import Basics
import FoundationEssentials
import HostAPI
import HostService
import HostWebLink
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import JSONRPC
import Logging
import MediaHost
import MediaKit
import NIOCore
import NIOSSL
import NIOWebSocket
import SyncHub
import Synchronization

/// The web remote's server (`mediahost-web`, run by the service): its HTTP port, the paired
/// browsers, the ones waiting, and the pages open now. Each page's JSON-RPC goes to the
/// service's socket as any front end's does.
public final class WebRemote: Sendable {
    public let dataDir: String
    let service: UnixSocket
    let devices: WebDeviceStore
    let pairing = WebPairing()
    let sockets = OpenSockets()
    /// The server's own calls to the service (artwork, a download's file).
    let calls: ServiceCalls
    /// What each method does (x-effect), for read-only devices.
    let effects: [String: MethodEffect] = Dictionary(
        API.methods.map { ($0.method, $0.effect) }, uniquingKeysWith: { first, _ in first })
    /// WebSockets open at once; more are refused until one closes.
    static let maxSockets = 512
    /// Connections at once; more wait to be accepted.
    static let maxConnections = 1024

    private struct State {
        var listen = ""
        var port: Int?
        var hostName: String?
        var problem: String?
        var secure = false
    }
    private let state = Mutex(State())

    /// The household's sync server (`mediahost users`), nil when its file cannot be opened.
    let hub: SyncHub?
    let hubProblem: String?

    public init(dataDir: String, serviceSocket: String) {
        self.dataDir = dataDir
        do {
            hub = try SyncHub(dataDir: dataDir)
            hubProblem = nil
        } catch {
            hub = nil
            hubProblem = "\(dataDir)/hub.sqlite: \(error)"
            Descriptor.standardError("web remote: the sync server cannot open \(dataDir)/hub.sqlite: \(error)\n")
        }
        service = UnixSocket(path: serviceSocket)
        devices = WebDeviceStore(dataDir: dataDir)
        calls = ServiceCalls(socket: service)
    }

    /// A line in the service's log (this process's standard error is the service's).
    func log(_ line: String) { Descriptor.standardError("web remote: \(line)\n") }

    /// Serving TLS itself: cookies are then marked Secure, and its addresses are https.
    var secure: Bool { state.withLock { $0.secure } }

    func tokenCookie(_ token: String) -> Cookie {
        Cookie(
            name: WebRoutes.tokenCookie, value: token, maxAge: token.isEmpty ? 0 : WebRoutes.tokenAge, path: "/",
            secure: secure, httpOnly: true, sameSite: .strict)
    }

    /// The paired device a request comes from; a wrong token counts against its address.
    /// - Parameter counting: false where the same request is asked again (the WebSocket's
    ///   router, then the page's), so one wrong token counts once.
    /// A paired token is always let in: an address locked out for guessing (behind a reverse
    /// proxy, every browser's) keeps its paired browsers.
    func device(of request: Request, context: WebContext, counting: Bool = true) -> WebDevice? {
        guard let token = request.cookies[WebRoutes.tokenCookie]?.value, !token.isEmpty else { return nil }
        if let device = devices.device(token: token) { return device }
        if counting, !pairing.isLockedOut(context.address) { pairing.fail(context.address) }
        return nil
    }

    /// Unpairs `id` (or all) and closes its open pages.
    public func revoke(_ id: String) async throws -> [WebDevice] {
        let gone = try devices.revoke(id)
        for device in gone { await sockets.close(device: device.id) }
        return gone
    }

    /// The desk confirms `code`: answered once the browser collected its token.
    public func pair(_ request: WebPair) async throws(RPCError) -> WebDevice {
        guard let waiting = pairing.confirm(code: request.code, name: request.name, access: request.access ?? .full) else {
            let codes = pairing.waiting.map(\.code)
            throw RPCError(
                code: AppErrorCode.notFound,
                message: codes.isEmpty
                    ? "no browser waits with code \(request.code): open the page on the device to get one"
                    : "no browser waits with code \(request.code) (waiting: \(codes.joined(separator: ", ")))")
        }
        var deadline = ContinuousClock.now + .seconds(30)
        while true {
            if let device = pairing.device(confirmedAs: waiting.code) { return device }
            if ContinuousClock.now >= deadline || Task.isCancelled {
                // Not collected: the confirmation is taken back, so what is said is what is so;
                // unless its browser is collecting it this moment.
                switch pairing.withdraw(code: waiting.code) {
                case .paired(let device): return device
                case .collecting: deadline = ContinuousClock.now + .seconds(5)
                case .withdrawn:
                    if Task.isCancelled { throw RPCError.requestCancelled }
                    throw RPCError(
                        code: RPCError.invalidParamsCode,
                        message:
                            "confirmed \(waiting.code), but the browser did not come back for it within 30 s: is its page still open?"
                    )
                }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }

    /// A one-time link.
    public func link(_ request: WebLink) -> WebLink.Response {
        let access = request.access ?? .full
        let link = pairing.makeLink(access: access, minutes: request.minutes ?? 10)
        return WebLink.Response(
            urls: urls.map { $0 + "pair/link/" + link.secret }, access: access, expires: ISODate.string(from: link.expires))
    }

    var isListening: Bool { state.withLock { $0.port != nil } }

    /// The page's addresses: the one listened on, or every interface's for 0.0.0.0.
    public var urls: [String] {
        state.withLock { s in
            guard let port = s.port, let name = s.hostName else { return [] }
            let hosts = name == "0.0.0.0" || name == "::" ? NetworkInterfaces.ipv4() : [name]
            return hosts.map { "\(s.secure ? "https" : "http")://\($0):\(port)/" }
        }
    }

    public var status: WebStatus.Response {
        let (listen, listening, problem) = state.withLock { ($0.listen, $0.port != nil, $0.problem) }
        return WebStatus.Response(
            listening: listening, listen: listen, urls: urls, waiting: pairing.waiting, devices: devices.all().count,
            problem: problem)
    }

    /// Starts serving on `listen` ("host:port"; port 0 takes a free one), with TLS when `tls`
    /// names a certificate chain and its key (PEM files); returns once it listens or could not.
    /// A certificate that cannot be read is said, never served without: no HTTP instead.
    public func start(listen: String, tls: (cert: String, key: String)? = nil) async {
        guard let (name, port) = Self.parse(listen) else {
            state.withLock {
                $0.listen = listen
                $0.problem = "web.listen is host:port (0.0.0.0:8733 for every interface, 127.0.0.1:8733 for this machine only)"
            }
            log("\(listen) is not host:port")
            return
        }
        state.withLock {
            $0.listen = listen
            $0.problem = nil
        }
        let started = AsyncStream<Int?>.makeStream()
        var logger = Logger(label: "mediahost.web")
        logger.logLevel = .critical
        let webSocketResponder = WebRoutes.webSocketRouter(self).buildResponder()
        var server = HTTPServerBuilder { responder in
            ReadDeadline(
                base: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder,
                    configuration: .init(
                        http1: .init(idleTimeout: .seconds(120)),
                        ws: .init(maxFrameSize: WebBridge.maxMessage, autoPing: .enabled(timePeriod: .seconds(30))))))
        }
        if let tls {
            do {
                let chain = try NIOSSLCertificate.fromPEMFile(tls.cert).map { NIOSSLCertificateSource.certificate($0) }
                let key = try NIOSSLPrivateKey(file: tls.key, format: .pem)
                server = try .tls(
                    server,
                    tlsConfiguration: .makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key)))
            } catch {
                let problem = "cannot use web.tls_cert \(tls.cert) and web.tls_key \(tls.key): \(error)"
                state.withLock { $0.problem = problem }
                log(problem)
                return
            }
            state.withLock { $0.secure = true }
        }
        let app = Application(
            router: WebRoutes.router(self),
            server: server,
            configuration: .init(
                address: .hostname(name, port: port), serverName: "mediahost",
                // Connections at once, whatever they are doing: a flood of them is refused, not
                // the machine's file descriptors used up.
                availableConnectionsDelegate: .maximum(Self.maxConnections, logger: logger)),
            onServerRunning: { channel in started.continuation.yield(channel.localAddress?.port) },
            logger: logger)
        Task {
            do {
                try await app.run()
            } catch {
                started.continuation.yield(nil)
                self.state.withLock { $0.problem = "cannot listen on \(listen): \(error)" }
                self.log("cannot listen on \(listen): \(error)")
            }
        }
        var bound: Int?
        for await port in started.stream {
            bound = port
            break
        }
        state.withLock {
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

    /// The service stops: its pages are told so.
    public func stop() async {
        await sockets.closeAll()
    }
}

/// The server's own calls to the service, on one connection to its socket (made again when
/// the service went away and came back): the service's own client, `ServiceConnection`.
final class ServiceCalls: Sendable {
    let socket: UnixSocket
    private let connection = Mutex<ServiceConnection?>(nil)

    init(socket: UnixSocket) { self.socket = socket }

    struct Unreachable: Error, CustomStringConvertible {
        var description: String { "the service does not answer" }
    }

    func call<M: APIMethod>(_ request: M) async throws -> M.Response {
        for attempt in 0..<2 {
            let service = try connection.withLock { current -> ServiceConnection in
                if let current { return current }
                guard let fd = socket.connect() else { throw Unreachable() }
                let made = ServiceConnection(fd: fd)
                current = made
                return made
            }
            // (A `catch where` on the typed error crashed Swift 6.3.1's ownership checker.)
            let answer: Result<M.Response, RPCError>
            do throws(RPCError) {
                answer = .success(try await service.run(request))
            } catch {
                answer = .failure(error)
            }
            switch answer {
            case .success(let value): return value
            case .failure(let error) where error.isServiceGone && attempt == 0:
                // The service went away since: once more on a new connection (it did nothing).
                connection.withLock { if $0 === service { $0 = nil } }
            case .failure(let error): throw error
            }
        }
        throw Unreachable()
    }
}

/// The WebSockets open now, by device: a device unpaired has its pages closed at once.
final class OpenSockets: Sendable {
    private let open = Mutex<(next: Int, byID: [Int: (device: String, outbound: WebSocketOutboundWriter, channel: any Channel)])>(
        (0, [:]))

    var count: Int { open.withLock { $0.byID.count } }

    func add(device: String, outbound: WebSocketOutboundWriter, channel: any Channel) -> Int {
        open.withLock {
            $0.next += 1
            $0.byID[$0.next] = (device, outbound, channel)
            return $0.next
        }
    }

    func remove(_ id: Int) { open.withLock { _ = $0.byID.removeValue(forKey: id) } }

    /// Tells each page why (a Close, given a second), then cuts its connection: a client that
    /// ignores the Close, or does not read, is off all the same, and no page holds the others.
    func close(device: String) async {
        await close(
            open.withLock { $0.byID.values.filter { $0.device == device } }, .policyViolation, "this browser was unpaired")
    }

    func closeAll() async {
        await close(open.withLock { Array($0.byID.values) }, .goingAway, "the service stops")
    }

    private func close(
        _ pages: [(device: String, outbound: WebSocketOutboundWriter, channel: any Channel)], _ code: WebSocketErrorCode,
        _ reason: String
    ) async {
        await withTaskGroup(of: Void.self) { group in
            for page in pages {
                group.addTask {
                    let told = Task { try? await page.outbound.close(code, reason: reason) }
                    try? await Task.sleep(for: .seconds(1))
                    told.cancel()
                    page.channel.close(promise: nil)
                }
            }
        }
    }
}

/// Closes a connection on which nothing moved either way for 75 s: a request head sent half (or
/// not at all) would otherwise hold its connection for good, as Hummingbird's idle timeout starts
/// only once a whole head has come. A long download being sent keeps writing; a page's WebSocket
/// is pinged every 30 s.
struct ReadDeadline<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    static var timeout: TimeAmount { .seconds(75) }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers([
                IdleStateHandler(allTimeout: Self.timeout), CloseWhenIdle(),
            ])
        }.flatMap { base.setup(channel: channel, logger: logger) }
    }

    func handle(value: Value, logger: Logger) async { await base.handle(value: value, logger: logger) }
}

final class CloseWhenIdle: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .all {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
