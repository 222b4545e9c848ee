import Foundation
import JSONRPC
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to mpv's JSON IPC (`--input-ipc-server`): newline-delimited JSON on a Unix
/// socket. Commands carry a `request_id` and are answered by `{request_id, error, data}`;
/// everything else mpv writes is an event (`property-change`, `start-file`, `end-file`...),
/// handed to `onEvent` on the reading thread, in order. `onClose` runs once when mpv goes away.
final class MPVConnection: Sendable {
    private let fd: Int32
    private let pending = Mutex<(next: Int, waiting: [Int: CheckedContinuation<JSONValue, any Error>], closed: Bool)>(
        (1, [:], false))
    private let writeLock = Mutex(())

    /// Connects to the socket at `path`; nil when no mpv answers there.
    init?(path: String, onEvent: @escaping @Sendable (JSONValue) -> Void, onClose: @escaping @Sendable () -> Void) {
        guard let fd = ServiceSocket(path: path).connect() else { return nil }
        self.fd = fd
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        Thread.detachNewThread { [self] in
            readLoop(onEvent)
            onClose()
        }
    }

    /// Runs an mpv command (`["set_property", "pause", true]`) and returns its `data`.
    /// - Throws: `HostError.player` with mpv's error, or when mpv has gone.
    @discardableResult
    func command(_ arguments: [JSONValue]) async throws -> JSONValue {
        try await withCheckedThrowingContinuation { continuation in
            let id: Int? = pending.withLock { state in
                guard !state.closed else { return nil }
                let id = state.next
                state.next += 1
                state.waiting[id] = continuation
                return id
            }
            guard let id else {
                continuation.resume(throwing: HostError.player("the player has stopped"))
                return
            }
            var line = JSONWriter.bytes(["command": .array(arguments), "request_id": JSONValue(id)])
            line.append(0x0A)
            let sent = writeLock.withLock { _ in ServiceClient.writeAll(fd, line) }
            if !sent, let waiting = pending.withLock({ $0.waiting.removeValue(forKey: id) }) {
                waiting.resume(throwing: HostError.player("the player has stopped"))
            }
        }
    }

    /// Sends a command without waiting for its answer.
    func send(_ arguments: [JSONValue]) {
        var line = JSONWriter.bytes(["command": .array(arguments)])
        line.append(0x0A)
        _ = writeLock.withLock { _ in ServiceClient.writeAll(fd, line) }
    }

    /// Closes the connection (mpv keeps running).
    func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    private func readLoop(_ onEvent: @Sendable (JSONValue) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
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
            // mpv's lines are small; one that is not is not mpv.
            if line.count > 1 << 20 { break reading }
        }
        Glibc.close(fd)
        let waiting = pending.withLock { state in
            state.closed = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(throwing: HostError.player("the player has stopped")) }
    }

    private func handle(_ line: [UInt8], _ onEvent: @Sendable (JSONValue) -> Void) {
        guard !line.isEmpty, let message = try? JSONParser.parse(line) else { return }
        guard let id = message["request_id"]?.intValue, message["event"] == nil else {
            if message["event"] != nil { onEvent(message) }
            return
        }
        guard let continuation = pending.withLock({ $0.waiting.removeValue(forKey: id) }) else { return }
        let error = message["error"]?.stringValue ?? "success"
        if error == "success" {
            continuation.resume(returning: message["data"] ?? .null)
        } else {
            continuation.resume(throwing: HostError.player("mpv: \(error)"))
        }
    }
}
