import Basics
import FoundationEssentials
import Glibc
import Synchronization

/// A JSON-RPC 2.0 server connection over a pair of file descriptors (stdin/stdout by default).
///
/// Requests run concurrently, each answered exactly once; notifications get no answer;
/// `$/cancelRequest {id}` cancels a request, which then answers -32800. On EOF the connection
/// finishes the requests in flight, then `run()` returns. Only protocol messages are written.
public final class RPCConnection: Sendable {
    public static let cancelMethod = "$/cancelRequest"
    /// The Model Context Protocol's way to cancel a request.
    public static let mcpCancelMethod = "notifications/cancelled"

    private let input: Int32
    private let output: Int32
    private let handler: any RPCHandler
    private let maxMessageSize: Int
    /// Bounds requests running at once: a client that pipelines faster than we answer is slowed
    /// by the pipe instead of growing our memory.
    private let admission: Admission

    private struct State {
        /// The framing of the client's last message; nil until it has sent one.
        var framing: Framing?
        /// Notifications made before the client's first message: its framing is not known yet
        /// (jsonrpc.el, expecting Content-Length, never recovers from a newline-framed one), so
        /// they wait for it, the oldest dropped past `heldLimit`.
        var held: [[UInt8]] = []
        var inFlight: [JSONValue: Task<Void, Never>] = [:]
        /// Requests cancelled by `notifications/cancelled`, whose answer is not sent.
        var silenced: Set<JSONValue> = []
        var activeTasks = 0
        var inputEnded = false
        var drained: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Mutex<State>
    /// Replies and notifications waiting to be written, by a thread of their own: a task that
    /// answers (or the event hub) never waits for this client to read. Concurrent replies are
    /// coalesced into one write.
    private let outbox: OutputQueue
    /// While more than this waits to be written, no more requests are read: a client that sends
    /// without reading is slowed by its own socket or pipe, not by our memory.
    private let readPause: Int
    private let onMissed: @Sendable (Int) -> Void
    /// Notifications not sent since the backlog passed the limit (0 while there is room).
    private let missed = Mutex(0)

    /// - Parameters:
    ///   - maxPendingOutput: the most bytes waiting for this client. A client that does not read
    ///     is waited for, never dropped: while a quarter of this waits, no more requests are
    ///     read (its own pipe or socket then slows it), every reply to a request read is still
    ///     sent, and notifications that would pass it are not sent to it (`onMissed` says so).
    ///   - onDrop: told once when writing to the client failed (it is gone).
    ///   - onMissed: told when notifications start being missed for want of room, with how
    ///     many were missed in the last such stretch when room came back (once per stretch).
    ///   - framing: the client's framing when it is known before it speaks (it said so, or it is
    ///     one of ours): notifications reach it from the start. Nil: they wait for its first
    ///     message, whose framing replies and notifications then use.
    public init(
        input: Int32 = 0, output: Int32 = 1, handler: any RPCHandler, maxMessageSize: Int = 16 << 20,
        maxConcurrentRequests: Int = 1024, maxPendingOutput: Int = 64 << 20, framing: Framing? = nil,
        onDrop: @escaping @Sendable (OutputQueue.Failure) -> Void = { _ in },
        onMissed: @escaping @Sendable (_ notifications: Int) -> Void = { _ in }
    ) {
        self.input = input
        self.output = output
        self.handler = handler
        self.maxMessageSize = maxMessageSize
        self.admission = Admission(limit: maxConcurrentRequests)
        self.readPause = max(1, min(1 << 20, maxPendingOutput / 4))
        self.onMissed = onMissed
        self.state = Mutex(State(framing: framing))
        self.outbox = OutputQueue(fd: output, limit: maxPendingOutput) { failure in
            onDrop(failure)
            // Stop reading a client that is gone or stuck (a socket; a pipe ends at its EOF).
            shutdown(input, Int32(SHUT_RDWR))
        }
    }

    /// Serves until EOF on the input and every request in flight has been answered and written.
    public func run() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            detachThread(name: "jsonrpc-reader") { [self] in
                readLoop()
                state.withLock { s in
                    s.inputEnded = true
                    if s.activeTasks == 0 { done.resume() } else { s.drained.append(done) }
                }
            }
        }
        await outbox.finish()
    }

    /// Why nothing more is written to this client, once that is so.
    public var dropped: OutputQueue.Failure? { outbox.failed }

    /// Notifications held before the client's first message, at most.
    static let heldLimit = 256

    /// Sends a server notification (e.g. `downloads.progress`) in the framing the client used
    /// last; before the client's first message, it waits for it.
    public func notify(method: String, params: JSONValue?) {
        var members: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(method)]
        if let params { members["params"] = params }
        let body = JSONWriter.bytes(.object(members))
        let framing = state.withLock { s -> Framing? in
            guard let framing = s.framing else {
                s.held.append(body)
                if s.held.count > Self.heldLimit { s.held.removeFirst() }
                return nil
            }
            return framing
        }
        guard let framing else { return }
        // Past the limit a notification is missed rather than the client dropped: a progress
        // report or a state it will hear again; its replies still all go.
        if outbox.enqueue(framing.frame(body), whenFull: .discard) {
            let count = missed.withLock { count in
                defer { count = 0 }
                return count
            }
            if count > 0 { onMissed(count) }
        } else if outbox.failed == nil {
            let first = missed.withLock { count in
                count += 1
                return count == 1
            }
            if first { onMissed(0) }
        }
    }

    /// The client's framing is known: what waited for it goes out first (queued under the
    /// lock, so nothing sent meanwhile overtakes it).
    private func learn(_ framing: Framing) {
        state.withLock { s in
            if s.framing == nil {
                for body in s.held { outbox.enqueue(framing.frame(body), whenFull: .discard) }
                s.held = []
            }
            s.framing = framing
        }
    }

    private func readLoop() {
        var splitter = MessageSplitter(maxMessageSize: maxMessageSize)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { chunk.deallocate() }
        reading: while outbox.waitUntilBacklog(atMost: readPause) {
            let n = read(input, chunk.baseAddress, chunk.count)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            splitter.append(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            // Checked before each message, not each read: one read can hold a thousand requests.
            while let event = splitter.next() {
                receive(event)
                guard outbox.waitUntilBacklog(atMost: readPause) else { break reading }
            }
        }
        // A last request without a newline, or one cut short, is still answered.
        for event in splitter.finish() { receive(event) }
    }

    private func receive(_ event: MessageSplitter.Event) {
        switch event {
        case .message(let bytes, let framing):
            learn(framing)
            receive(message: bytes, framing: framing)
        case .tooLarge(let framing):
            learn(framing)
            send(
                Self.errorResponse(id: .null, .invalidRequest("message larger than \(maxMessageSize >> 20) MiB")),
                framing: framing)
        case .badHeader(let why):
            send(Self.errorResponse(id: .null, .parseError(why)), framing: .contentLength)
        }
    }

    /// Each reply goes out in the framing of the request it answers.
    private func receive(message bytes: [UInt8], framing: Framing) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            send(Self.errorResponse(id: .null, .parseError(error.description)), framing: framing)
            return
        }
        switch value {
        case .array(let elements):
            guard !elements.isEmpty else {
                send(Self.errorResponse(id: .null, .invalidRequest("empty batch")), framing: framing)
                return
            }
            startTask(key: nil) { [self] in
                let replies = await withTaskGroup(of: [UInt8]?.self) { group in
                    for element in elements { group.addTask { await self.reply(to: element) } }
                    var replies: [[UInt8]] = []
                    for await reply in group { if let reply { replies.append(reply) } }
                    return replies
                }
                guard !replies.isEmpty else { return }
                var out: [UInt8] = [UInt8(ascii: "[")]
                for (i, reply) in replies.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(contentsOf: reply)
                }
                out.append(UInt8(ascii: "]"))
                send(out, framing: framing)
            }
        default:
            if case .object(let members) = value, members["method"]?.stringValue == Self.cancelMethod, members["id"] == nil {
                if let id = members["params"]?["id"] { cancel(id) }
                return
            }
            // MCP's cancellation: the request is cancelled and, as MCP asks, not answered.
            if case .object(let members) = value, members["method"]?.stringValue == Self.mcpCancelMethod,
                members["id"] == nil
            {
                if let id = members["params"]?["requestId"] { cancel(id, silently: true) }
                return
            }
            let key: JSONValue? =
                if case .object(let members) = value, let id = members["id"], Self.isValidID(id) { id } else { nil }
            startTask(key: key) { [self] in
                guard let reply = await reply(to: value) else { return }
                let silenced = key.map { key in state.withLock { $0.silenced.remove(key) != nil } } ?? false
                if !silenced { send(reply, framing: framing) }
            }
        }
    }

    /// Runs `body` as a tracked task; `key` makes it cancellable by request id.
    private func startTask(key: JSONValue?, _ body: @escaping @Sendable () async -> Void) {
        admission.enter()
        state.withLock { s in
            s.activeTasks += 1
            let task = Task.detached { [self] in
                await body()
                finishTask(key: key)
            }
            if let key { s.inFlight[key] = task }
        }
    }

    private func finishTask(key: JSONValue?) {
        admission.leave()
        let waiters: [CheckedContinuation<Void, Never>] = state.withLock { s in
            if let key { s.inFlight[key] = nil }
            s.activeTasks -= 1
            guard s.activeTasks == 0, s.inputEnded else { return [] }
            defer { s.drained = [] }
            return s.drained
        }
        for waiter in waiters { waiter.resume() }
    }

    private func cancel(_ id: JSONValue, silently: Bool = false) {
        let task = state.withLock { s in
            if silently, s.inFlight[id] != nil { s.silenced.insert(id) }
            return s.inFlight[id]
        }
        task?.cancel()
    }

    private static func isValidID(_ id: JSONValue) -> Bool {
        switch id {
        case .string, .number, .null: true
        default: false
        }
    }

    /// The response to one message, or nil for a notification.
    private func reply(to message: JSONValue) async -> [UInt8]? {
        guard case .object(let members) = message else {
            return Self.errorResponse(id: .null, .invalidRequest("a request must be a JSON object"))
        }
        let id = members["id"]
        let isNotification = id == nil
        let replyID: JSONValue = if let id, Self.isValidID(id) { id } else { .null }
        if let id, !Self.isValidID(id) {
            return Self.errorResponse(id: .null, .invalidRequest("id must be a string, a number or null"))
        }
        guard members["jsonrpc"] == .string("2.0") else {
            return Self.errorResponse(id: replyID, .invalidRequest("\"jsonrpc\" must be \"2.0\""))
        }
        guard case .string(let method) = members["method"] else {
            return Self.errorResponse(id: replyID, .invalidRequest("\"method\" must be a string"))
        }
        // `"params": null` means no params, as LSP servers take it (Emacs's jsonrpc.el sends it).
        let params = members["params"] == .null ? nil : members["params"]
        switch params {
        case nil, .object?, .array?: break
        default:
            return isNotification
                ? nil : Self.errorResponse(id: replyID, .invalidRequest("\"params\" must be an object or an array"))
        }
        if isNotification {
            // LSP-style "$/" notifications the host does not know are ignored, as are all results.
            if !method.hasPrefix("$/") { _ = await handler.handle(method: method, params: params) }
            return nil
        }
        if method == Self.cancelMethod {
            if let target = params?["id"] { cancel(target) }
            return Self.resultResponse(id: replyID, Array("null".utf8))
        }
        let context = RPCRequestContext(id: replyID) { [weak self] method, params in self?.notify(method: method, params: params)
        }
        let outcome = await RPCRequestContext.$current.withValue(context) { await handler.handle(method: method, params: params) }
        if Task.isCancelled { return Self.errorResponse(id: replyID, .requestCancelled) }
        switch outcome {
        case .success(let result): return Self.resultResponse(id: replyID, result)
        case .failure(let error): return Self.errorResponse(id: replyID, error)
        }
    }

    static func resultResponse(id: JSONValue, _ result: [UInt8]) -> [UInt8] {
        var out = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
        JSONWriter.write(id, into: &out)
        out.append(contentsOf: #","result":"#.utf8)
        out.append(contentsOf: result)
        out.append(UInt8(ascii: "}"))
        return out
    }

    static func errorResponse(id: JSONValue, _ error: RPCError) -> [UInt8] {
        var out = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
        JSONWriter.write(id, into: &out)
        out.append(contentsOf: #","error":"#.utf8)
        JSONWriter.write(error.jsonValue, into: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// A reply (or an error about a message): always queued, so every request read is answered;
    /// what waits is bounded by the reader, which stops reading while the backlog is large.
    private func send(_ body: [UInt8], framing: Framing) {
        outbox.enqueue(framing.frame(body), whenFull: .accept)
    }
}

/// Admission control for the reader: at the limit it sleeps until half the running requests
/// have finished, so it is woken once per batch rather than once per completion.
final class Admission: @unchecked Sendable {
    private let condition = Condition()
    private let limit: Int
    private var running = 0
    private var readerWaiting = false

    init(limit: Int) { self.limit = max(1, limit) }

    func enter() {
        condition.lock()
        if running >= limit {
            readerWaiting = true
            while running > limit / 2 { condition.wait() }
            readerWaiting = false
        }
        running += 1
        condition.unlock()
    }

    func leave() {
        condition.lock()
        running -= 1
        if readerWaiting, running <= limit / 2 { condition.signal() }
        condition.unlock()
    }
}
