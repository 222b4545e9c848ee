import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A raw TCP server for attacking the host: each request is answered by a script that writes
/// whatever bytes it likes (no HTTP library in the way), dribbles them, never answers, or echoes
/// the request back. A thread per connection; test-only.
public final class HostileServer: @unchecked Sendable {
    public struct Request: Sendable {
        /// "GET /path?query HTTP/1.1"
        public var line: String
        public var path: String
        /// Everything received up to the blank line, as text.
        public var head: String
        public var headers: [String: String]
    }

    /// What a script can do with its connection.
    public final class Connection: @unchecked Sendable {
        let fd: Int32
        init(fd: Int32) { self.fd = fd }

        /// False once the peer is gone.
        @discardableResult
        public func write(_ bytes: [UInt8]) -> Bool {
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }

        @discardableResult
        public func write(_ text: String) -> Bool { write(Array(text.utf8)) }

        /// A whole response with a Content-Length.
        @discardableResult
        public func respond(status: Int = 200, reason: String = "OK", headers: [String: String] = [:], body: [UInt8]) -> Bool {
            var head = "HTTP/1.1 \(status) \(reason)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            return write(Array((head + "\r\n").utf8) + body)
        }

        /// Waits until the peer hangs up (or `limit` passes): for servers that never answer.
        public func hold(limit: Double = 120) {
            let deadline = Date().addingTimeInterval(limit)
            var byte: UInt8 = 0
            while Date() < deadline {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, 100) > 0 {
                    if recv(fd, &byte, 1, 0) <= 0 { return }
                }
            }
        }
    }

    public let port: Int
    private let listener: Int32
    private let handler: @Sendable (Request, Connection) -> Void
    private let stopped = Mutex(false)
    /// Requests seen, in order.
    public let requests = Mutex<[Request]>([])

    public init(handler: @escaping @Sendable (Request, Connection) -> Void) throws {
        self.handler = handler
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            _ = $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.listener = listener
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "hostile-server"
        thread.start()
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Closes the listener once: a second close could hit a descriptor number that another
    /// test's file (a database, say) has reused since.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { stop() }

    private func acceptLoop() {
        while !stopped.withLock({ $0 }) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            // One request per connection (each answer says Connection: close).
            if let end = Self.headEnd(received) {
                let head = String(decoding: received[..<end], as: UTF8.self)
                let lines = head.components(separatedBy: "\r\n")
                let requestLine = lines.first ?? ""
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let parts = requestLine.split(separator: " ")
                let request = Request(
                    line: requestLine, path: parts.count > 1 ? String(parts[1]) : "/", head: head, headers: headers)
                requests.withLock { $0.append(request) }
                handler(request, Connection(fd: fd))
                return
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { return }
            received += buffer[0..<n]
            if received.count > 1 << 20 { return }
        }
    }

    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }
}
