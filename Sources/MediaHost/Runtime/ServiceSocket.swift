import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where the background service (`mediahost serve`) listens for one data dir, and the socket
/// calls around it: `$XDG_RUNTIME_DIR/mediahost/rpc-<hash of the data dir>.sock` (folder 0700,
/// socket 0600), or `<data dir>/run/rpc.sock` without XDG_RUNTIME_DIR. One service per data
/// dir: a front end with another `--data-dir` never attaches to it.
public struct ServiceSocket: Sendable, Equatable {
    public var path: String

    public init(paths: HostPaths, environment: [String: String] = ProcessInfo.processInfo.environment) {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty, runtime.hasPrefix("/") {
            let tag = SHA256.hex(Array(paths.dataDir.utf8)).prefix(12)
            path = "\(runtime)/mediahost/rpc-\(tag).sock"
        } else {
            path = paths.dataDir + "/run/rpc.sock"
        }
    }

    public init(path: String) { self.path = path }

    /// mpv's control socket (`player.*`), beside the service's.
    public var playerPath: String {
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        return folder + "/" + (name.hasPrefix("rpc") ? "mpv" + name.dropFirst(3) : "mpv.sock")
    }

    /// The pid file beside the socket.
    public var pidFile: String { path + ".pid" }

    /// A connected descriptor when a service answers on the socket; nil when none runs.
    public func connect() -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = Self.address(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Whether a service answers on the socket.
    public var isServing: Bool {
        guard let fd = connect() else { return false }
        close(fd)
        return true
    }

    /// Listens on the socket: refuses when a service already answers there, removes a stale
    /// socket left by one that died.
    /// - Returns: the listening descriptor.
    public func listen() throws -> Int32 {
        let folder = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        chmod(folder, 0o700)
        if isServing {
            let pid = (try? String(contentsOfFile: pidFile, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            throw ServiceError(
                "a mediahost service already runs on \(path)\(pid.map { " (pid \($0))" } ?? ""); `mediahost serve --stop` stops it"
            )
        }
        unlink(path)  // a dead service's socket
        guard path.utf8.count < 108 else { throw ServiceError("the socket path is too long for a Unix socket: \(path)") }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServiceError("cannot create a socket: \(String(cString: strerror(errno)))") }
        var address = Self.address(path)
        let previous = umask(0o177)
        defer { umask(previous) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw ServiceError("cannot listen on \(path): \(reason)")
        }
        chmod(path, 0o600)
        try? "\(getpid())\n".write(toFile: pidFile, atomically: true, encoding: .utf8)
        return fd
    }

    /// Removes the socket and its pid file (the service's exit).
    public func remove() {
        unlink(path)
        unlink(pidFile)
    }

    private static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            let bytes = Array(path.utf8.prefix(buffer.count - 1))
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        return address
    }
}

public struct ServiceError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
