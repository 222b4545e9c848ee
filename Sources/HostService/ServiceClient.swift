import Foundation
import JSONRPC
import MediaHost

#if canImport(Glibc)
    import Glibc
#endif

/// A front end's side of the background service: one call (`mediahost call`), or the bytes of a
/// whole session passed through (`mediahost rpc` as a bridge).
public enum ServiceClient {
    /// Calls `method` on the service connected on `fd` and returns its result as JSON text.
    /// - Parameter timeout: seconds to wait for the answer (a probe); nil waits as long as the
    ///   call takes (`mediahost call`, whose method may wait for a person).
    /// - Throws: the service's `RPCError`, or `ServiceError` when the connection fails or the
    ///   service does not answer in time.
    public static func call(_ fd: Int32, method: String, params: JSONValue?, timeout: Int? = nil) throws -> [UInt8] {
        defer { close(fd) }
        if let timeout {
            var limit = timeval(tv_sec: timeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        var request: [String: JSONValue] = ["jsonrpc": "2.0", "id": "call", "method": .string(method)]
        if let params { request["params"] = params }
        guard Descriptor.writeAll(fd, JSONWriter.bytes(.object(request)) + [0x0A]) else {
            throw ServiceError("the service closed the connection")
        }
        var splitter = MessageSplitter()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                throw ServiceError("the background service did not answer \(method) within \(timeout ?? 0) s")
            }
            guard n > 0 else { throw ServiceError("the service closed the connection before answering") }
            chunk.withUnsafeBytes { splitter.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            while let event = splitter.next() {
                // Notifications (other clients' downloads, say) come and go on the way.
                guard case .message(let bytes, _) = event, let message = try? JSONParser.parse(bytes),
                    message["id"] == "call"
                else { continue }
                if let error = message["error"] {
                    throw RPCError(
                        code: error["code"]?.intValue ?? RPCError.internalErrorCode, message: error["message"]?.stringValue ?? "",
                        data: error["data"])
                }
                return JSONWriter.bytes(message["result"] ?? .null)
            }
        }
    }

    /// Passes stdin to the service and its messages to stdout until both ends are done: what
    /// `mediahost rpc` does when a service runs, so an editor talks to the service unchanged.
    ///
    /// The service sends notifications from the start (newline-framed until the client has
    /// spoken); each message is written to stdout in the client's framing: `framing` when the
    /// client said which (`rpc --framing`), else its first message's, the ones before it held.
    public static func bridge(_ fd: Int32, framing: Framing? = nil) async {
        let reframer = Reframer(framing: framing)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                var splitter: MessageSplitter? = framing == nil ? MessageSplitter(maxMessageSize: 1 << 30) : nil
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                    if n < 0, errno == EINTR { continue }
                    guard n > 0 else { break }
                    // Until the client's framing is known, its bytes are read for it too.
                    if splitter != nil {
                        splitter?.append(Array(buffer[0..<n]))
                        while let event = splitter?.next() {
                            if case .message(_, let learned) = event {
                                reframer.learn(learned)
                                splitter = nil
                                break
                            }
                        }
                    }
                    guard Descriptor.writeAll(fd, Array(buffer[0..<n])) else { break }
                }
                // The client is done: the service answers what is in flight, then closes.
                shutdown(fd, Int32(SHUT_WR))
            }
            Thread.detachNewThread {
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                var splitter = MessageSplitter(maxMessageSize: 1 << 30)
                reading: while true {
                    let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    if n < 0, errno == EINTR { continue }
                    guard n > 0 else { break }
                    splitter.append(Array(buffer[0..<n]))
                    while let event = splitter.next() {
                        guard case .message(let body, _) = event else { continue }
                        guard reframer.write(body) else { break reading }
                    }
                }
                close(fd)
                done.resume()
            }
        }
    }

    /// Writes the service's messages to stdout in the client's framing, holding them (the
    /// newest 256) until that is known.
    final class Reframer: @unchecked Sendable {
        private let lock = NSLock()
        private var framing: Framing?
        private var held: [[UInt8]] = []

        init(framing: Framing?) { self.framing = framing }

        func learn(_ learned: Framing) {
            lock.lock()
            defer { lock.unlock() }
            guard framing == nil else { return }
            framing = learned
            var out: [UInt8] = []
            for body in held { out += learned.frame(body) }
            held = []
            if !out.isEmpty { _ = Descriptor.writeAll(1, out) }
        }

        /// - Returns: false when stdout is gone.
        func write(_ body: [UInt8]) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            guard let framing else {
                held.append(body)
                if held.count > 256 { held.removeFirst() }
                return true
            }
            return Descriptor.writeAll(1, framing.frame(body))
        }
    }
}
