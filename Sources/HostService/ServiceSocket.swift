import Basics
import FoundationEssentials
import JSONRPC
import MediaHost

#if canImport(Glibc)
    import Glibc
#endif

/// Where the background service listens for one data dir (`HostPaths.serviceSocket`), with the
/// pid file beside it.
public struct ServiceSocket: Sendable, Equatable {
    public var socket: UnixSocket
    public var path: String { socket.path }

    public init(paths: HostPaths, environment: [String: String] = ProcessInfo.processInfo.environment) {
        socket = UnixSocket(path: paths.serviceSocket(environment: environment))
    }

    public init(path: String) { socket = UnixSocket(path: path) }

    /// The pid file beside the socket.
    public var pidFile: String { path + ".pid" }

    /// A connected descriptor when a service answers on the socket; nil when none runs.
    public func connect() -> Int32? { socket.connect() }

    /// Whether a service answers on the socket.
    public var isServing: Bool { socket.isServing }

    /// Listens on the socket: refuses when a service already answers there, removes a stale
    /// socket left by one that died, writes the pid file.
    /// - Returns: the listening descriptor.
    public func listen() throws -> Int32 {
        if isServing {
            let pid = (try? String(contentsOfFile: pidFile, encoding: .utf8))?.trimming(.whitespacesAndNewlines)
            throw SocketError(
                "a mediahost service already runs on \(path)\(pid.map { " (pid \($0))" } ?? ""); `mediahost serve --stop` stops it"
            )
        }
        let fd = try socket.listen()
        try? "\(getpid())\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
        return fd
    }

    /// Removes the socket and its pid file (the service's exit).
    public func remove() {
        unlink(path)
        unlink(pidFile)
    }
}
