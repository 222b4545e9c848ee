import Basics
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The asking side of a conversation of requests and answers: the host talking to a plugin, to
/// mpv, or to the background service.
///
/// Every request has a deadline and can be cancelled; its caller always hears back (the answer,
/// the other end's error, `RPCPeer.Timeout`, or the peer's `gone` error when the other end goes).
/// Nothing here blocks a task: writes go through an `OutputQueue` (a peer that stops reading
/// its input makes requests fail once too much waits, instead of freezing whoever sends), and a
/// thread of the peer's own reads. Answers are matched by id; every other message goes to
/// `onMessage` on the reading thread, in order.
public final class RPCPeer: Sendable {
    /// How requests and answers are written: JSON-RPC 2.0, or a protocol of the same shape
    /// (mpv's IPC: `{command, request_id}` answered by `{request_id, error, data}`).
    public struct Wire: Sendable {
        /// The message to send for request `id`.
        public var request: @Sendable (_ id: Int, _ payload: JSONValue) -> JSONValue
        /// The id a message answers, or nil when it is something else (an event, a request).
        public var answers: @Sendable (JSONValue) -> Int?
        /// An answer's result, or its error.
        public var outcome: @Sendable (JSONValue) -> Result<JSONValue, any Error>
        /// The message that tells the other end a request was given up, when the protocol has one.
        public var cancel: (@Sendable (_ id: Int) -> JSONValue)?
        /// The request a notification belongs to, when it names one (a streamed search's part
        /// names its search): it goes to that request's caller, not to `onMessage`.
        public var belongsTo: @Sendable (JSONValue) -> Int?

        public init(
            request: @escaping @Sendable (_ id: Int, _ payload: JSONValue) -> JSONValue,
            answers: @escaping @Sendable (JSONValue) -> Int?,
            outcome: @escaping @Sendable (JSONValue) -> Result<JSONValue, any Error>,
            cancel: (@Sendable (_ id: Int) -> JSONValue)? = nil,
            belongsTo: @escaping @Sendable (JSONValue) -> Int? = { _ in nil }
        ) {
            self.request = request
            self.answers = answers
            self.outcome = outcome
            self.cancel = cancel
            self.belongsTo = belongsTo
        }

        /// JSON-RPC 2.0: a request's payload is `{"method", "params"?}`; errors come back as
        /// `RPCError`; a request given up is cancelled with `$/cancelRequest`.
        public static let jsonRPC = Wire(
            request: { id, call in
                var request: [String: JSONValue] = ["jsonrpc": "2.0", "id": JSONValue(id), "method": call["method"] ?? .null]
                if let params = call["params"] { request["params"] = params }
                return .object(request)
            },
            answers: { message in message["method"] == nil ? message["id"]?.intValue : nil },
            outcome: { message in
                if let error = message["error"] {
                    return .failure(
                        RPCError(
                            code: error["code"]?.intValue ?? RPCError.internalErrorCode,
                            message: error["message"]?.stringValue ?? "", data: error["data"]))
                }
                return .success(message["result"] ?? .null)
            },
            cancel: { id in ["jsonrpc": "2.0", "method": .string(RPCConnection.cancelMethod), "params": ["id": JSONValue(id)]] },
            belongsTo: { message in message["method"] != nil ? message["params"]?["request"]?.intValue : nil })
    }

    /// Why the conversation ended.
    public enum Ending: Sendable, Equatable, CustomStringConvertible {
        /// The other end closed its output (it exited, or closed the connection).
        case endOfInput
        /// It sent a message longer than the limit.
        case tooLarge(limit: Int)
        /// It sent something that is not a message (only when `strict`).
        case notJSON
        /// Writing to it stopped (it is not reading, or is gone).
        case output(OutputQueue.Failure)
        /// `close()`.
        case closed

        public var description: String {
            switch self {
            case .endOfInput: "it closed the connection"
            case .tooLarge(let limit): "it sent a message over \(OutputQueue.Failure.size(limit))"
            case .notJSON: "it wrote something that is not a JSON message"
            case .output(let failure): "\(failure)"
            case .closed: "the connection was closed"
            }
        }
    }

    /// A request that never left: the conversation had ended before it could be written, so the
    /// other end cannot have done it (a caller may then make it elsewhere). Any other failure of
    /// a request that was written (`gone`, `Timeout`) leaves open whether it was done.
    public struct NotSent: Error, Sendable, CustomStringConvertible {
        /// The error the peer's `gone` gives for how the conversation ended.
        public var reason: any Error
        public var description: String { "\(reason)" }
    }

    /// A request the other end did not answer within its deadline.
    public struct Timeout: Error, Sendable, CustomStringConvertible {
        public var seconds: Double
        public var description: String { "no answer within \(Self.format(seconds)) s" }

        /// "3", "0.5": as a person would write the setting.
        public static func format(_ seconds: Double) -> String {
            abs(seconds - seconds.rounded()) < 0.05 ? String(Int(seconds.rounded())) : String(printf: "%.1f", seconds)
        }
    }

    private struct State {
        var next = 1
        var waiting: [Int: CheckedContinuation<Answer, any Error>] = [:]
        /// Who hears the notifications that belong to a waiting request.
        var listeners: [Int: @Sendable (JSONValue) -> Void] = [:]
        /// The requests whose answer is wanted as its result's bytes, as they came.
        var raw: Set<Int> = []
        var ending: Ending?
    }

    /// An answer: its result read, or its result's bytes as they came (a relay's).
    private enum Answer: Sendable {
        case value(JSONValue)
        case bytes([UInt8])
    }

    private let input: Int32
    private let output: Int32
    private let wire: Wire
    private let queue: OutputQueue
    private let state = Mutex(State())
    private let gone: @Sendable (Ending) -> any Error

    /// Starts reading. The peer owns both descriptors (one, for a socket) and closes them when
    /// the conversation ends.
    /// - Parameters:
    ///   - wire: how requests and answers are written.
    ///   - maxMessageSize: the longest message accepted; a longer one ends the conversation.
    ///   - maxPendingOutput: the most bytes waiting to be written before the other end counts as
    ///     not reading (the conversation then ends).
    ///   - strict: whether something that is not JSON ends the conversation (a plugin's stdout),
    ///     or is skipped (mpv's).
    ///   - gone: the error for requests that will never be answered.
    ///   - onMessage: every message that is not an answer, on the reading thread, in order.
    ///   - onEnd: once, when the conversation has ended and every waiting request has failed.
    public init(
        input: Int32, output: Int32, wire: Wire = .jsonRPC, maxMessageSize: Int = 16 << 20,
        maxPendingOutput: Int = 4 << 20, strict: Bool = false, name: String = "rpc-peer",
        gone: @escaping @Sendable (Ending) -> any Error,
        onMessage: @escaping @Sendable (JSONValue) -> Void = { _ in },
        onEnd: @escaping @Sendable (Ending) -> Void = { _ in }
    ) {
        self.input = input
        self.output = output
        self.wire = wire
        self.gone = gone
        _ = fcntl(input, F_SETFD, FD_CLOEXEC)
        _ = fcntl(output, F_SETFD, FD_CLOEXEC)
        let ended = Mutex<(@Sendable (Ending) -> Void)?>(nil)
        queue = OutputQueue(fd: output, limit: maxPendingOutput, closesDescriptor: output != input, name: name + "-writer") {
            failure in
            ended.withLock { $0 }?(.output(failure))
        }
        ended.withLock { $0 = { [weak self] ending in self?.end(ending) } }
        detachThread(name: name + "-reader", stackSize: 512 << 10) { [self] in
            let ending = readLoop(maxMessageSize: maxMessageSize, strict: strict, onMessage)
            end(ending)
            queue.cancel()
            // A socket is closed once the writer is done with it; a pipe's writer closes its own.
            if output == input { queue.waitUntilStopped() }
            Glibc.close(input)
            onEnd(state.withLock { $0.ending } ?? ending)
        }
    }

    /// Sends a request and waits for its answer.
    /// - Parameters:
    ///   - timeout: how long to wait; nil waits until the answer or the end.
    ///   - notifications: hears the notifications that belong to this request while it waits.
    /// - Throws: the other end's error (as `wire.outcome` reads it), `RPCPeer.Timeout`,
    ///   `CancellationError`, `NotSent` when it was never written, or `gone(ending)`.
    public func request(
        _ payload: JSONValue, timeout: Duration?, notifications: (@Sendable (JSONValue) -> Void)? = nil
    ) async throws -> JSONValue {
        guard case .value(let value) = try await exchange(payload, timeout: timeout, raw: false, notifications: notifications)
        else { throw NotSent(reason: gone(.closed)) }
        return value
    }

    /// As `request`, the answer's result as the bytes the other end wrote (a relay passes them
    /// on as they are, never read and written again).
    public func requestResultBytes(
        _ payload: JSONValue, timeout: Duration?, notifications: (@Sendable (JSONValue) -> Void)? = nil
    ) async throws -> [UInt8] {
        switch try await exchange(payload, timeout: timeout, raw: true, notifications: notifications) {
        case .bytes(let bytes): return bytes
        case .value(let value): return JSONWriter.bytes(value)
        }
    }

    private func exchange(
        _ payload: JSONValue, timeout: Duration?, raw: Bool, notifications: (@Sendable (JSONValue) -> Void)?
    ) async throws -> Answer {
        let id = state.withLock { state -> Int in
            defer { state.next += 1 }
            return state.next
        }
        let timer = timeout.map { timeout in
            Task.detached { [weak self] in
                try await Task.sleep(for: timeout)
                let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                self?.abandon(id, error: Timeout(seconds: seconds))
            }
        }
        defer {
            timer?.cancel()
            state.withLock { state in
                state.listeners[id] = nil
                state.raw.remove(id)
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Answer, any Error>) in
                let ending = state.withLock { state -> Ending? in
                    if let ending = state.ending { return ending }
                    state.waiting[id] = continuation
                    if let notifications { state.listeners[id] = notifications }
                    if raw { state.raw.insert(id) }
                    return nil
                }
                if let ending {
                    continuation.resume(throwing: NotSent(reason: gone(ending)))
                    return
                }
                if !send(wire.request(id, payload)) {
                    let ending = state.withLock { $0.ending } ?? .output(queue.failed ?? .cancelled)
                    abandon(id, error: NotSent(reason: gone(ending)))
                }
            }
        } onCancel: {
            if abandon(id, error: CancellationError()), let cancel = wire.cancel { send(cancel(id)) }
        }
    }

    /// Sends a message that has no answer (a notification, an mpv command whose answer is not
    /// wanted).
    /// - Returns: false when it cannot be sent (the conversation has ended).
    @discardableResult
    public func send(_ message: JSONValue) -> Bool {
        var line = JSONWriter.bytes(message)
        line.append(0x0A)
        return queue.enqueue(line)
    }

    /// Whether the conversation has ended.
    public var hasEnded: Bool { state.withLock { $0.ending != nil } }

    /// Ends the conversation: waiting requests fail with `gone(.closed)`, what was not written is
    /// dropped. A socket is shut down at once; a pipe to a process is closed (it sees the end of
    /// its input), and the reader stops at the end of the process's output.
    public func close() {
        end(.closed)
        queue.cancel()
        shutdown(input, Int32(SHUT_RDWR))
    }

    /// Sends what is queued, then ends the other end's input (a plugin exits at the end of its
    /// input); answers are still read until its output ends.
    public func finishSending() {
        queue.finishSoon()
    }

    /// Gives up on request `id`: its caller gets `error`; a late answer is dropped.
    /// - Returns: whether it was still waiting.
    @discardableResult
    private func abandon(_ id: Int, error: any Error) -> Bool {
        guard let continuation = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return false }
        continuation.resume(throwing: error)
        return true
    }

    private func end(_ ending: Ending) {
        let waiting = state.withLock { state -> [CheckedContinuation<Answer, any Error>] in
            if state.ending == nil { state.ending = ending }
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        guard !waiting.isEmpty else { return }
        let error = gone(state.withLock { $0.ending } ?? ending)
        for continuation in waiting { continuation.resume(throwing: error) }
    }

    private func readLoop(maxMessageSize: Int, strict: Bool, _ onMessage: @Sendable (JSONValue) -> Void) -> Ending {
        var splitter = MessageSplitter(maxMessageSize: maxMessageSize)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let n = read(input, chunk.baseAddress, chunk.count)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    var poller = pollfd(fd: input, events: Int16(POLLIN), revents: 0)
                    _ = poll(&poller, 1, 500)
                    continue
                }
                return .endOfInput
            }
            guard n > 0 else { return .endOfInput }
            if hasEnded { return .closed }
            splitter.append(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            while let event = splitter.next() {
                switch event {
                case .message(let bytes, _):
                    guard let message = try? JSONParser.parse(bytes) else {
                        if strict { return .notJSON }
                        continue
                    }
                    receive(message, bytes: bytes, onMessage)
                case .tooLarge: return .tooLarge(limit: maxMessageSize)
                case .badHeader: if strict { return .notJSON }
                }
            }
        }
    }

    private func receive(_ message: JSONValue, bytes: [UInt8], _ onMessage: @Sendable (JSONValue) -> Void) {
        guard let id = wire.answers(message) else {
            // A request's own notification goes to its caller alone.
            if let request = wire.belongsTo(message), let listener = state.withLock({ $0.listeners[request] }) {
                listener(message)
            } else {
                onMessage(message)
            }
            return
        }
        guard
            let (continuation, raw) = state.withLock({ state in
                state.waiting.removeValue(forKey: id).map { ($0, state.raw.contains(id)) }
            })
        else { return }
        switch wire.outcome(message) {
        case .failure(let error): continuation.resume(throwing: error)
        case .success(let value):
            if raw, let span = JSONSpans.member("result", of: bytes) {
                continuation.resume(returning: .bytes(Array(bytes[span])))
            } else {
                continuation.resume(returning: .value(value))
            }
        }
    }
}

extension RPCPeer {
    /// A request and its answer on `fd`, on the calling thread, with `wire`'s messages: for a
    /// one-shot command that asks one thing and exits (`mediahost call` through the service),
    /// where a peer's reading thread and tasks would cost more than the call.
    /// - Returns: the answer's outcome (the other end's error as `wire.outcome` reads it), or
    ///   `Timeout`, or `ExchangeFailed` when the connection failed.
    public static func exchange(fd: Int32, _ payload: JSONValue, id: Int = 1, wire: Wire = .jsonRPC, timeout: Duration)
        -> Result<JSONValue, any Error>
    {
        var line = JSONWriter.bytes(wire.request(id, payload))
        line.append(0x0A)
        guard Descriptor.writeAll(fd, line) else { return .failure(ExchangeFailed(reason: "the connection was closed")) }
        let deadline = ContinuousClock.now + timeout
        var splitter = MessageSplitter(maxMessageSize: 64 << 20)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let left = deadline - ContinuousClock.now
            let millis = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
            guard millis > 0 else {
                let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                return .failure(Timeout(seconds: seconds))
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, millis)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR || errno == EAGAIN { continue }
            guard n > 0 else { return .failure(ExchangeFailed(reason: "the connection closed before the answer")) }
            chunk.withUnsafeBytes { splitter.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            while let event = splitter.next() {
                // Notifications (other clients' downloads, say) come and go on the way.
                guard case .message(let bytes, _) = event, let message = try? JSONParser.parse(bytes),
                    wire.answers(message) == id
                else { continue }
                return wire.outcome(message)
            }
        }
    }

    /// A one-shot exchange could not be made.
    public struct ExchangeFailed: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }
}
