import Foundation
import Hummingbird
import Logging
import MediaKit
import NIOCore
import Synchronization

/// The request context of the sandbox: Hummingbird's, plus the client's port so the sandbox can
/// count connections (keep-alive tests).
public struct SandboxContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public let clientPort: Int?
    /// Set by the sandbox for media responses: the file's version (bump it to "change" the
    /// file) and the rate to serve it at.
    public var mediaVersion: UInt64 = 1
    public var mediaBytesPerSecond: Int?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        clientPort = source.channel.remoteAddress?.port
    }
}

/// How media files are served: their versions by path, and a rate that makes downloads take a
/// realistic time in demos (nil: as fast as loopback goes).
public final class MediaSettings: Sendable {
    private let state = Mutex<(versions: [String: UInt64], rate: Int?)>(([:], nil))
    public init() {}

    public var bytesPerSecond: Int? {
        get { state.withLock { $0.rate } }
        set { state.withLock { $0.rate = newValue.flatMap { $0 > 0 ? $0 : nil } } }
    }

    /// Changes the file at `path`: new bytes and a new ETag (If-Range then fails).
    public func setVersion(_ version: UInt64, for path: String) { state.withLock { $0.versions[path] = version } }
    public func version(for path: String) -> UInt64 { state.withLock { $0.versions[path] ?? 1 } }
}

public typealias SandboxRouter = Router<SandboxContext>
public typealias SandboxRoutes = RouterGroup<SandboxContext>

/// One provider's replica of its real API, mounted under `/<id>/` on the sandbox.
public protocol SandboxReplica: Sendable {
    /// The provider id; the replica's base URL is `http://host:port/<id>`.
    var id: String { get }
    func register(_ routes: SandboxRoutes)
    /// Settings that point the provider at this replica besides its base URL (other endpoints,
    /// credentials the replica accepts), by env var name.
    func environment(baseURL: String) -> [String: String]
}

extension SandboxReplica {
    public func environment(baseURL: String) -> [String: String] { [:] }
}

/// The local replica server: every provider's API on one loopback port, with fault injection.
///
/// A test double and a demo (like stripe-mock), never a fallback inside a provider.
public final class SandboxServer: Sendable {
    public let faults = FaultInjector()
    public let traffic = TrafficLog()
    public let media = MediaSettings()
    private let replicas: [any SandboxReplica]
    private let state = Mutex<(task: Task<Void, any Error>?, port: Int?)>((nil, nil))

    public init(replicas: [any SandboxReplica]) {
        self.replicas = replicas
    }

    /// Starts serving on `host:port` (0: a free port) and returns once it accepts connections.
    /// - Returns: the port.
    @discardableResult
    public func start(host: String = "127.0.0.1", port: Int = 0, logger: Logger? = nil) async throws -> Int {
        let router = SandboxRouter(context: SandboxContext.self)
        router.add(middleware: SandboxMiddleware(faults: faults, traffic: traffic, media: media))
        ControlRoutes(faults: faults, traffic: traffic, media: media).register(router.group("_sandbox"))
        for replica in replicas { replica.register(router.group(RouterPath(replica.id))) }
        var quiet = Logger(label: "sandbox")
        quiet.logLevel = .critical
        let (ready, readyContinuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router, configuration: .init(address: .hostname(host, port: port), serverName: "mediahost-sandbox"),
            onServerRunning: { channel in
                readyContinuation.yield(channel.localAddress?.port ?? port)
                readyContinuation.finish()
            }, logger: logger ?? quiet)
        // A port that cannot be had ends the run before it is ready: the wait below ends too.
        let task = Task {
            defer { readyContinuation.finish() }
            try await app.run()
        }
        var bound: Int?
        for await value in ready {
            bound = value
            break
        }
        guard let bound else {
            task.cancel()
            _ = try await task.value
            throw SandboxError.notStarted
        }
        state.withLock { $0 = (task, bound) }
        return bound
    }

    public var port: Int? { state.withLock { $0.port } }

    /// `http://127.0.0.1:<port>/<replica id>`: what a provider's base_url is set to.
    public func baseURL(for replica: String, host: String = "127.0.0.1") -> String? {
        port.map { "http://\(host):\($0)/\(replica)" }
    }

    public var replicaIDs: [String] { replicas.map(\.id) }

    /// Every env var that points the providers at this server: base URLs, then extra settings.
    public func providerEnvironment(host: String = "127.0.0.1") -> [String: String] {
        var environment: [String: String] = [:]
        for replica in replicas {
            guard let base = baseURL(for: replica.id, host: host) else { continue }
            environment[ProviderDescriptor.environmentName(provider: replica.id, key: "base_url")] = base
            environment.merge(replica.environment(baseURL: base)) { $1 }
        }
        return environment
    }

    public func stop() {
        state.withLock { $0.task }?.cancel()
    }
}

public enum SandboxError: Error, CustomStringConvertible {
    case notStarted
    public var description: String { "the sandbox server did not start" }
}
