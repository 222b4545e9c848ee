import FoundationEssentials
import Glibc

// Locks, conditions and threads on POSIX threads: what Foundation's NSLock, NSCondition and
// Thread gave (full Foundation, which FoundationEssentials does not have).

/// A mutual exclusion lock (a pthread mutex) for code that locks and unlocks in separate places,
/// or holds it across a condition's wait; `Mutex` is for the rest.
public final class Lock: @unchecked Sendable {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A lock and a condition waited on under it (NSCondition's shape).
public final class Condition: @unchecked Sendable {
    private let lockHandle = Lock()
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    public init() {
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Deadlines on the monotonic clock: a clock set back does not lengthen a wait.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    public func lock() { lockHandle.lock() }
    public func unlock() { lockHandle.unlock() }

    public func withLock<T>(_ body: () throws -> T) rethrows -> T { try lockHandle.withLock(body) }

    /// Waits for a signal (the lock held); may wake without one, as every condition may.
    public func wait() { pthread_cond_wait(condition, lockHandle.mutex) }

    /// Waits for a signal at most `seconds`: false when the time ran out.
    @discardableResult
    public func wait(seconds: Double) -> Bool {
        // A day at most: a deadline past time_t's range (or infinity) would trap.
        let seconds = seconds.isNaN ? 0 : min(max(seconds, 0), 86_400)
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let whole = seconds.rounded(.down)
        var deadline = timespec(
            tv_sec: now.tv_sec + Int(whole), tv_nsec: now.tv_nsec + Int((seconds - whole) * 1_000_000_000))
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        return pthread_cond_timedwait(condition, lockHandle.mutex, &deadline) == 0
    }

    public func signal() { pthread_cond_signal(condition) }
    public func broadcast() { pthread_cond_broadcast(condition) }
}

/// Runs `body` on a thread of its own (detached: nothing joins it), named `name` for `top` and
/// debuggers (Linux keeps 15 bytes of it), with a stack of `stackSize` bytes (the system's
/// default, 8 MiB, when nil).
public func detachThread(name: String? = nil, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
    final class Start {
        let body: @Sendable () -> Void
        let name: String?
        init(_ body: @escaping @Sendable () -> Void, name: String?) {
            self.body = body
            self.name = name
        }
    }
    let start = Unmanaged.passRetained(Start(body, name: name)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    if let stackSize { pthread_attr_setstacksize(&attributes, max(stackSize, 64 << 10)) }
    defer { pthread_attr_destroy(&attributes) }
    var thread = pthread_t()
    let code = pthread_create(
        &thread, &attributes,
        { argument in
            let start = Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue()
            if let name = start.name, let setName = threadSetName {
                _ = String(decoding: name.utf8.prefix(15), as: UTF8.self).withCString { setName(pthread_self(), $0) }
            }
            start.body()
            return nil
        }, start)
    // Only when the process has no room for one more thread: nothing can go on without it.
    precondition(code == 0, "cannot start a thread: \(String(cString: strerror(code)))")
}

private typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32

/// glibc's `pthread_setname_np`, not in Swift's Glibc module (a GNU extension).
private let threadSetName: SetName? = dlsym(nil, "pthread_setname_np").map {
    unsafeBitCast($0, to: SetName.self)
}

/// Blocks this thread for `seconds`.
public func sleepThread(seconds: Double) {
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1_000_000_000))
    var left = timespec()
    while nanosleep(&request, &left) != 0, errno == EINTR { request = left }
}

/// Up to `maximum` threads of their own running work in the order it came, each piece on
/// whichever thread is free (one thread: one piece at a time, in order). For work that may
/// block (a lock another process holds, a long query): on Linux Swift's tasks run on
/// libdispatch's shared threads, and work that blocks there holds them up, or starves them.
/// The threads start when work waits and none is free, and end when the pool goes.
public final class WorkerThreads: Sendable {
    private final class State: @unchecked Sendable {
        let condition = Condition()
        var jobs: [@Sendable () -> Void] = []
        var next = 0
        var threads = 0
        var idle = 0
        var stopped = false
    }
    private let state = State()
    private let name: String
    private let maximum: Int

    public init(name: String, maximum: Int) {
        self.name = name
        self.maximum = max(1, maximum)
    }

    deinit {
        state.condition.withLock {
            state.stopped = true
            state.condition.broadcast()
        }
    }

    /// Runs `job` on one of the threads.
    public func run(_ job: @escaping @Sendable () -> Void) {
        let start = state.condition.withLock {
            state.jobs.append(job)
            if state.idle > 0 {
                state.condition.signal()
                return false
            }
            guard state.threads < maximum else { return false }
            state.threads += 1
            return true
        }
        if start { detachThread(name: name) { [state] in Self.work(state) } }
    }

    private static func work(_ state: State) {
        state.condition.lock()
        while true {
            if state.next < state.jobs.count {
                let job = state.jobs[state.next]
                state.next += 1
                if state.next == state.jobs.count {
                    state.jobs.removeAll(keepingCapacity: true)
                    state.next = 0
                }
                state.condition.unlock()
                job()
                state.condition.lock()
                continue
            }
            if state.stopped { break }
            state.idle += 1
            state.condition.wait()
            state.idle -= 1
        }
        state.threads -= 1
        state.condition.unlock()
    }
}
