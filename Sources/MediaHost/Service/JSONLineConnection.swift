import Foundation
import JSONRPC
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Requests and answers as newline-delimited JSON on a socket, matched by id, with everything
/// else the other end writes handed to `onEvent` on the reading thread, in order; `onClose`
/// runs once when the other end goes. The two protocols spoken this way (mpv's IPC and the
/// background service's JSON-RPC) differ only in how a request and an answer are written.
final class JSONLineConnection: Sendable {
    struct Wire: Sendable {
        /// The message to send for request `id`.
        let request: @Sendable (_ id: Int, _ payload: JSONValue) -> JSONValue
        /// The id a message answers, or nil when it is an event.
        let answers: @Sendable (JSONValue) -> Int?
        /// An answer's result, or its error.
        let outcome: @Sendable (JSONValue) -> Result<JSONValue, any Error>
        /// The error of a request the other end will never answer.
        let gone: @Sendable () -> any Error
    }

    private let fd: Int32
    private let wire: Wire
    private let pending = Mutex<(next: Int, waiting: [Int: CheckedContinuation<JSONValue, any Error>], closed: Bool)>(
        (1, [:], false))
    private let writeLock = Mutex(())
    /// The longest line accepted; a longer one closes the connection.
    private let maxLine: Int

    init(
        fd: Int32, wire: Wire, maxLine: Int = 64 << 20, onEvent: @escaping @Sendable (JSONValue) -> Void,
        onClose: @escaping @Sendable () -> Void
    ) {
        self.fd = fd
        self.wire = wire
        self.maxLine = maxLine
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        Thread.detachNewThread { [self] in
            readLoop(onEvent)
            onClose()
        }
    }

    /// Sends a request and waits for its answer.
    func request(_ payload: JSONValue) async throws -> JSONValue {
        try await withCheckedThrowingContinuation { continuation in
            let id: Int? = pending.withLock { state in
                guard !state.closed else { return nil }
                let id = state.next
                state.next += 1
                state.waiting[id] = continuation
                return id
            }
            guard let id else {
                continuation.resume(throwing: wire.gone())
                return
            }
            if !send(wire.request(id, payload)), let waiting = pending.withLock({ $0.waiting.removeValue(forKey: id) }) {
                waiting.resume(throwing: wire.gone())
            }
        }
    }

    /// Sends a message that has no answer.
    @discardableResult
    func send(_ message: JSONValue) -> Bool {
        var line = JSONWriter.bytes(message)
        line.append(0x0A)
        return writeLock.withLock { _ in ServiceClient.writeAll(fd, line) }
    }

    /// Ends the connection (the other end keeps running).
    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    private func readLoop(_ onEvent: @Sendable (JSONValue) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var line: [UInt8] = []
        reading: while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            var start = 0
            for index in 0..<n where buffer[index] == 0x0A {
                line += buffer[start..<index]
                start = index + 1
                handle(line, onEvent)
                line.removeAll(keepingCapacity: true)
            }
            line += buffer[start..<n]
            if line.count > maxLine { break reading }
        }
        Glibc.close(fd)
        let waiting = pending.withLock { state in
            state.closed = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(throwing: wire.gone()) }
    }

    private func handle(_ line: [UInt8], _ onEvent: @Sendable (JSONValue) -> Void) {
        guard !line.isEmpty, let message = try? JSONParser.parse(line) else { return }
        guard let id = wire.answers(message) else {
            onEvent(message)
            return
        }
        guard let continuation = pending.withLock({ $0.waiting.removeValue(forKey: id) }) else { return }
        continuation.resume(with: wire.outcome(message))
    }
}
