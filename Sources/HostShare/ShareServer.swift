import Basics
import FoundationEssentials
import JSONRPC
import MediaHost
import MediaKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Serves one list, read-only, for a limited time, to whoever gives its pairing code: the
/// sending side of `mediahost share`. A deliberately small HTTP/1.1 server (one GET per
/// connection, bounded request, short timeouts): it answers
///   `GET /`                 the list's name and when the offer ends (no items),
///   `GET /list?code=CODE`   the list as mediahost JSON,
/// and refuses everything else. Wrong codes are counted per address: after 5 that address is
/// refused for a minute, and after 20 in all the offer ends.
final class ShareServer: Sendable {
    let name: String
    let code: String
    let port: Int
    let expires: Date
    private let listener: Int32
    private let document: [UInt8]
    private let state = Mutex<
        (
            failures: [String: (count: Int, until: Date?)], total: Int, stopped: Bool, served: Int,
            connections: [String: Int], ending: Ending?
        )
    >(([:], 0, false, 0, [:], nil))

    /// Why an offer ended.
    enum Ending: String, Sendable {
        case expired = "its time is up"
        case guessed = "20 wrong codes were tried: someone may be guessing it; offer it again for a new code"
        case stopped = "it was stopped"
    }
    private let onEnd: @Sendable () -> Void

    static let failuresPerAddress = 5
    static let lockout: TimeInterval = 60
    static let failuresInAll = 20
    /// A request head larger than this is refused.
    static let maxRequest = 8192
    /// The whole request head must arrive within this, however it is dribbled (a client sending
    /// a byte every second would otherwise hold its connection, and a slot, for the whole offer).
    static let headDeadline: Duration = .seconds(5)
    /// Connections served at once, in all and from one address; more are closed at once (each
    /// holds a thread for up to 5 s), so one client holding connections open cannot shut out others.
    static let maxConnections = 64
    static let maxConnectionsPerAddress = 4

    /// Starts serving on `port` (0: any free one) of every interface.
    init(name: String, document: [UInt8], minutes: Double, port: Int = 0, onEnd: @escaping @Sendable () -> Void) throws {
        self.name = name
        self.document = document
        self.onEnd = onEnd
        code = Self.makeCode()
        expires = Date().addingTimeInterval(minutes * 60)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HostError.invalidArgument("cannot open a socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: INADDR_ANY)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw HostError.invalidArgument("cannot listen for the share: \(reason)")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: actual.sin_port))
        listener = fd
        detachThread { [self] in acceptLoop() }
        // The offer ends on time even with no one asking.
        detachThread { [self] in
            while !isStopped {
                if Date() >= expires {
                    stop(.expired)
                    break
                }
                usleep(200_000)
            }
        }
    }

    var isStopped: Bool { state.withLock { $0.stopped } }
    var served: Int { state.withLock { $0.served } }
    /// Why the offer ended, once it has.
    var ending: Ending? { state.withLock { $0.ending } }

    func stop(_ why: Ending = .stopped) {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            if !state.stopped { state.ending = why }
            return !state.stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        onEnd()
    }

    /// 8 characters from an alphabet without look-alikes (no 0/O, 1/I/L), shown as XXXX-XXXX:
    /// 40 bits, against 20 guesses before the offer ends.
    static func makeCode() -> String {
        let alphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")
        var generator = SystemRandomNumberGenerator()
        let characters = (0..<8).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] }
        return String(characters[0..<4]) + "-" + String(characters[4..<8])
    }

    /// The code as typed: case, spaces and the dash do not matter.
    static func normalized(_ code: String) -> String {
        code.uppercased().filter { $0.isLetter || $0.isNumber }
    }

    private func acceptLoop() {
        while true {
            var peer = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let client = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener, $0, &length) }
            }
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            if isStopped {
                close(client)
                return
            }
            var ip = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
            var address = peer.sin_addr
            inet_ntop(AF_INET, &address, &ip, socklen_t(INET_ADDRSTRLEN))
            let from = String(nulTerminated: ip)
            let admitted = state.withLock { state -> Bool in
                let all = state.connections.values.reduce(0, +)
                guard all < Self.maxConnections, state.connections[from, default: 0] < Self.maxConnectionsPerAddress
                else { return false }
                state.connections[from, default: 0] += 1
                return true
            }
            guard admitted else {
                // Told at once, so a receiver waits and tries again rather than hears nothing.
                var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
                setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                respond(client, 503, ["error": "busy: too many connections; try again in a moment"], retryAfter: 5)
                close(client)
                continue
            }
            detachThread { [self] in
                handle(client, from: from)
                state.withLock { state in
                    state.connections[from, default: 1] -= 1
                    if state.connections[from] == 0 { state.connections[from] = nil }
                }
            }
        }
    }

    private func handle(_ fd: Int32, from: String) {
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 2048)
        let deadline = ContinuousClock.now + Self.headDeadline
        while head.count < Self.maxRequest, !Self.hasEnd(head) {
            // One deadline for the whole head, not one per read.
            let left = (deadline - ContinuousClock.now).milliseconds
            guard left > 0 else { return }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(left))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return }
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return }
            head += buffer[0..<n]
        }
        guard Self.hasEnd(head) else { return respond(fd, 431, ["error": "request too large"]) }
        let line = String(decoding: head.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[0] == "GET", parts[2].hasPrefix("HTTP/1.") else {
            return respond(fd, 405, ["error": "only GET"])
        }
        let target = URLComponents(string: String(parts[1]))
        if isStopped || Date() >= expires {
            respond(fd, 410, ["error": "this offer has ended"])
            stop(.expired)
            return
        }
        switch target?.path {
        case "/":
            respond(
                fd, 200,
                ["app": "mediahost", "list": name, "expires": ISODate.string(from: expires), "needs": "code"])
        case "/list":
            let given = target?.queryItems?.first { $0.name == "code" }?.value ?? ""
            let (locked, right) = state.withLock { state -> (Bool, Bool) in
                if let until = state.failures[from]?.until, until > Date() { return (true, false) }
                guard Self.normalized(given) == Self.normalized(code) else {
                    var entry = state.failures[from] ?? (0, nil)
                    entry.count += 1
                    if entry.count >= Self.failuresPerAddress {
                        entry = (0, Date().addingTimeInterval(Self.lockout))
                    }
                    state.failures[from] = entry
                    state.total += 1
                    return (false, false)
                }
                state.served += 1
                return (false, true)
            }
            if locked { return respond(fd, 429, ["error": "too many wrong codes; wait a minute"], retryAfter: 60) }
            guard right else {
                respond(fd, 403, ["error": "wrong code"])
                if state.withLock({ $0.total }) >= Self.failuresInAll { stop(.guessed) }
                return
            }
            send(fd, 200, contentType: "application/json", body: document)
        default:
            respond(fd, 404, ["error": "not found"])
        }
    }

    private static func hasEnd(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 4
            && (0...(bytes.count - 4)).contains { i in
                bytes[i] == 0x0D && bytes[i + 1] == 0x0A && bytes[i + 2] == 0x0D && bytes[i + 3] == 0x0A
            }
    }

    private func respond(_ fd: Int32, _ status: Int, _ fields: [String: String], retryAfter: Int? = nil) {
        let body = JSONWriter.bytes(.object(fields.mapValues { .string($0) }))
        send(fd, status, contentType: "application/json", body: Array(body), retryAfter: retryAfter)
    }

    private func send(_ fd: Int32, _ status: Int, contentType: String, body: [UInt8], retryAfter: Int? = nil) {
        let reasons = [
            200: "OK", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 410: "Gone", 429: "Too Many Requests",
            431: "Request Header Fields Too Large",
        ]
        var head = "HTTP/1.1 \(status) \(reasons[status] ?? "Error")\r\nContent-Type: \(contentType)\r\n"
        head += "Content-Length: \(body.count)\r\nConnection: close\r\nCache-Control: no-store\r\n"
        if let retryAfter { head += "Retry-After: \(retryAfter)\r\n" }
        head += "\r\n"
        _ = Descriptor.writeAll(fd, Array(head.utf8) + body)
    }

    /// This machine's IPv4 addresses a peer could use, loopback last.
    static func addresses() -> [String] { NetworkInterfaces.ipv4() }
}
