import Basics
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// A Unix stream socket at a path: the background service's, mpv's. Connecting, asking whether
/// something answers, listening (0600), removing.
public struct UnixSocket: Sendable, Equatable {
    public var path: String

    public init(path: String) { self.path = path }

    /// A connected descriptor when something answers on the socket; nil when nothing does.
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

    /// Whether something answers on the socket.
    public var isServing: Bool {
        guard let fd = connect() else { return false }
        close(fd)
        return true
    }

    /// Listens on the socket (mode 0600, its folder 0700), after removing a stale one; the
    /// caller has made sure nothing answers there.
    /// - Returns: the listening descriptor.
    /// - Throws: `SocketError` saying why.
    public func listen() throws -> Int32 {
        let folder = Path.directory(of: path)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        chmod(folder, 0o700)
        unlink(path)  // a dead listener's socket
        guard path.utf8.count < 108 else { throw SocketError("the socket path is too long for a Unix socket: \(path)") }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError("cannot create a socket: \(String(cString: strerror(errno)))") }
        var address = Self.address(path)
        let previous = umask(0o177)
        defer { umask(previous) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 64) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw SocketError("cannot listen on \(path): \(reason)")
        }
        chmod(path, 0o600)
        return fd
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

public struct SocketError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
