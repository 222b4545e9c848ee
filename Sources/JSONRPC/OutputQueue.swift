import Basics
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a connection sends, written to its descriptor by a thread of the queue's own.
///
/// Whoever sends (a request's task on the cooperative pool, the event hub fanning a download's
/// progress out to every client) only appends bytes and goes on: it never waits for the other end
/// to read. What waits here is bounded by `limit`; a peer that lets more than that pile up (a
/// suspended editor, a plugin that stopped reading its stdin) is cut off with `Failure.overflow`,
/// so it costs neither a thread that others need nor memory without end. Sockets are written
/// with `MSG_DONTWAIT | MSG_NOSIGNAL` and descriptors opened non-blocking are waited on with
/// `poll`, so a queue can be cancelled while the other end reads nothing.
public final class OutputQueue: @unchecked Sendable {
    /// Why a queue stopped writing.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// More than the limit was waiting: the other end has not been reading.
        case overflow(limit: Int)
        /// A write failed (the other end is gone: EPIPE, ECONNRESET...).
        case writeFailed(errno: Int32)
        /// `cancel()` was called.
        case cancelled

        public var description: String {
            switch self {
            case .overflow(let limit): "more than \(Self.size(limit)) of output was waiting: the other end is not reading"
            case .writeFailed(let code): "writing failed: \(String(cString: strerror(code)))"
            case .cancelled: "the connection was closed"
            }
        }

        static func size(_ bytes: Int) -> String {
            bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : bytes >= 1 << 10 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
        }
    }

    private let fd: Int32
    private let closesDescriptor: Bool
    /// The most bytes that may wait (queued plus being written).
    public let limit: Int
    private let condition = Condition()
    private var queued: [UInt8] = []
    /// Bytes taken by the writer and not yet written.
    private var inFlight = 0
    private var finishing = false
    private var failure: Failure?
    private var writerDone = false
    private var doneWaiters: [CheckedContinuation<Void, Never>] = []
    /// Read by the writer between partial writes, without the lock.
    private let stop = Atomic<Bool>(false)
    private let onFailure: @Sendable (Failure) -> Void

    /// - Parameters:
    ///   - fd: the descriptor written to.
    ///   - closesDescriptor: whether the writer closes `fd` when it stops (a pipe to a process,
    ///     which then sees the end of its input); otherwise its owner closes it after
    ///     `waitUntilStopped()`.
    ///   - limit: the most bytes that may wait before the other end counts as not reading.
    ///   - name: the writer thread's name.
    ///   - onFailure: called once, on the thread that found it, when writing stops for good
    ///     (not after `finish` or `cancel`).
    public init(
        fd: Int32, limit: Int, closesDescriptor: Bool = false, name: String = "jsonrpc-writer",
        onFailure: @escaping @Sendable (Failure) -> Void = { _ in }
    ) {
        self.fd = fd
        self.closesDescriptor = closesDescriptor
        self.limit = max(1, limit)
        self.onFailure = onFailure
        detachThread(name: name, stackSize: 256 << 10) { [self] in writeLoop() }
    }

    /// What `enqueue` does with bytes that would pass the limit.
    public enum WhenFull: Sendable {
        /// The other end counts as not reading: the queue fails with `.overflow`.
        case fail
        /// These bytes are not sent (a notification a slow reader misses); the queue goes on.
        case discard
        /// They are queued anyway: the caller bounds what it sends (a reply to a request the
        /// reader admitted while the backlog was below the limit).
        case accept
    }

    /// Queues `bytes` to be written after everything queued before.
    /// - Returns: false when they are not written (a failure, `cancel`, `finish`, or they would
    ///   pass the limit and `whenFull` is not `.accept`).
    @discardableResult
    public func enqueue(_ bytes: [UInt8], whenFull: WhenFull = .fail) -> Bool {
        guard !bytes.isEmpty else { return true }
        condition.lock()
        guard failure == nil, !finishing else {
            condition.unlock()
            return false
        }
        if queued.count + inFlight + bytes.count > limit {
            switch whenFull {
            case .fail:
                fail(.overflow(limit: limit), locked: true)
                return false
            case .discard:
                condition.unlock()
                return false
            case .accept:
                break
            }
        }
        queued.append(contentsOf: bytes)
        condition.broadcast()
        condition.unlock()
        return true
    }

    /// Bytes waiting to be written.
    public var backlog: Int {
        condition.lock()
        defer { condition.unlock() }
        return queued.count + inFlight
    }

    /// Why writing stopped, once it has.
    public var failed: Failure? {
        condition.lock()
        defer { condition.unlock() }
        return failure
    }

    /// Blocks the calling thread (a connection's reader, never a task) until at most `bytes` wait.
    /// - Returns: false when writing has stopped instead.
    public func waitUntilBacklog(atMost bytes: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while failure == nil, !writerDone, queued.count + inFlight > bytes { condition.wait() }
        return failure == nil && !writerDone
    }

    /// Blocks the calling thread (never a task) until the writer has stopped for good (after
    /// `cancel`, `finish` or a failure): then `fd` is no longer used.
    public func waitUntilStopped() {
        condition.lock()
        defer { condition.unlock() }
        while !writerDone { condition.wait() }
    }

    /// Writes what is queued and stops, without waiting (`finish` waits).
    public func finishSoon() { _ = startFinishing() }

    /// Writes what is queued, then stops; returns when it is written, or after `timeout` (then
    /// the rest is dropped).
    public func finish(within timeout: Duration = .seconds(30)) async {
        guard !startFinishing() else { return }
        let watchdog = Task.detached { [self] in
            try await Task.sleep(for: timeout)
            cancel()
        }
        await withCheckedContinuation { whenDone($0) }
        watchdog.cancel()
    }

    private func whenDone(_ continuation: CheckedContinuation<Void, Never>) {
        condition.lock()
        if writerDone {
            condition.unlock()
            continuation.resume()
        } else {
            doneWaiters.append(continuation)
            condition.unlock()
        }
    }

    /// - Returns: whether the writer is done already.
    private func startFinishing() -> Bool {
        condition.lock()
        defer { condition.unlock() }
        finishing = true
        condition.broadcast()
        return writerDone
    }

    /// Stops writing now; what is queued is dropped.
    public func cancel() {
        condition.lock()
        if failure == nil { failure = .cancelled }
        queued = []
        stop.store(true, ordering: .relaxed)
        condition.broadcast()
        condition.unlock()
    }

    private func fail(_ reason: Failure, locked: Bool) {
        if !locked { condition.lock() }
        let first = failure == nil
        if first { failure = reason }
        queued = []
        stop.store(true, ordering: .relaxed)
        condition.broadcast()
        condition.unlock()
        if first { onFailure(reason) }
    }

    private func writeLoop() {
        var isSocket = true
        while true {
            condition.lock()
            while queued.isEmpty, failure == nil, !finishing { condition.wait() }
            if failure != nil || queued.isEmpty {
                if closesDescriptor { Glibc.close(fd) }
                writerDone = true
                let waiters = doneWaiters
                doneWaiters = []
                condition.broadcast()
                condition.unlock()
                for waiter in waiters { waiter.resume() }
                return
            }
            var chunk: [UInt8] = []
            swap(&chunk, &queued)
            inFlight = chunk.count
            condition.unlock()

            let error = write(chunk, isSocket: &isSocket)

            condition.lock()
            inFlight = 0
            condition.broadcast()
            condition.unlock()
            if let error {
                if error != ECANCELED { fail(.writeFailed(errno: error), locked: false) }
            }
        }
    }

    /// Writes all of `bytes`; the errno that stopped it, or nil. A full pipe or socket is
    /// waited on a little at a time, so a cancel is seen.
    private func write(_ bytes: [UInt8], isSocket: inout Bool) -> Int32? {
        Descriptor.write(fd, bytes, isSocket: &isSocket, waitMillis: 200) { stop.load(ordering: .relaxed) }
    }
}
