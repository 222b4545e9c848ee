import FoundationEssentials
import Glibc
import Synchronization

/// A program started with posix_spawn, its standard streams piped, closed, sent to a file or
/// inherited, and reaped the moment it exits (Foundation's `Process` without full Foundation;
/// it reaps only once the child's pipes are closed, which a grandchild can delay). Every
/// program the host starts (plugins, yt-dlp and the like, mpv, the service, a pager) is one.
///
/// On Linux each child is held by a pidfd and watched by one thread for all of them
/// (`ChildWaiter`), as swift-subprocess does: a signal goes to the process the pidfd names,
/// never to a stranger that took its pid after it was reaped. Without pidfds (a kernel before
/// 5.3) a thread per child waits, and signals are sent only while the child is not reaped.
public final class ChildProcess: Sendable {
    /// What a child's standard stream is.
    public enum Stream: Sendable {
        /// The same as this process's.
        case inherit
        /// /dev/null.
        case null
        /// A pipe: this process's end is in `standardInput`, `standardOutput` or `standardError`.
        case pipe
        /// Output appended to a file (made 0600 if missing).
        case appending(toFile: String)
        /// Standard error only: where standard output goes.
        case output
    }

    /// What the child belongs to.
    public enum Grouping: Sendable {
        /// This process's group and session.
        case inherit
        /// A process group of its own, as Foundation's `Process` started every child: a Ctrl-C
        /// at the terminal reaches this process alone (the REPL handles it; a sandbox or a
        /// helper would die of it), and what it forks can be ended with it (`terminateGroup`).
        case processGroup
        /// A session of its own, with no terminal: it outlives this process and no hang-up
        /// of the terminal reaches it (the service, a player).
        case session
    }

    /// How a child ended.
    public enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)

        /// Exited with status 0.
        public var succeeded: Bool { self == .exited(0) }
        /// A shell's number for it: the exit status, or 128 + the signal.
        public var status: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        }
    }

    /// Why a program could not be started: the system's errno.
    public struct SpawnError: Error, CustomStringConvertible {
        public let code: Int32
        public var description: String { String(cString: strerror(code)) }
        public init(code: Int32) { self.code = code }
    }

    public let pid: pid_t
    /// This process's ends of the pipes asked for (the caller closes them).
    public let standardInput: Int32?
    public let standardOutput: Int32?
    public let standardError: Int32?
    /// The pidfd naming the child, or -1 where the kernel has none.
    let pidfd: Int32
    private let onExit: (@Sendable (ChildProcess) -> Void)?
    /// How it ended (set once it exited), and whether it was reaped (its pid then may be
    /// another process's), both changed under `ended`'s lock.
    private let outcome = Mutex<(ending: Ending?, reaped: Bool)>((nil, false))
    private let ended = Condition()

    /// Starts `program` (a path) with `arguments`.
    /// - Parameters:
    ///   - environment: the child's environment; this process's when nil.
    ///   - directory: the child's working directory; this process's when nil.
    ///   - grouping: the child's process group or session (`Grouping`).
    ///   - onExit: called once the child has exited, before it is reaped (its pid and group are
    ///     still its own); on the thread that waits for every child, so it must be quick.
    public init(
        _ program: String, arguments: [String] = [], environment: [String: String]? = nil, directory: String? = nil,
        standardInput stdin: Stream = .inherit, standardOutput stdout: Stream = .inherit,
        standardError stderr: Stream = .inherit, grouping: Grouping = .processGroup,
        onExit: (@Sendable (ChildProcess) -> Void)? = nil
    ) throws(SpawnError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var parentEnds: [Int32?] = [nil, nil, nil]
        var childEnds: [Int32] = []
        defer { for fd in childEnds { close(fd) } }
        func fail(_ code: Int32) -> SpawnError {
            for case let fd? in parentEnds { close(fd) }
            return SpawnError(code: code)
        }
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .inherit: break
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .appending(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            case .output:
                posix_spawn_file_actions_adddup2(&actions, 1, target)
            case .pipe:
                var fds: [Int32] = [0, 0]
                guard pipe(&fds) == 0 else { throw fail(errno) }
                for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                let (childEnd, parentEnd) = target == 0 ? (fds[0], fds[1]) : (fds[1], fds[0])
                childEnds.append(childEnd)
                parentEnds[Int(target)] = parentEnd
                posix_spawn_file_actions_adddup2(&actions, childEnd, target)
            }
        }
        if let directory {
            guard let addChdir = Self.addChdir else { throw fail(ENOSYS) }
            let code = directory.withCString { addChdir(&actions, $0) }
            guard code == 0 else { throw fail(code) }
        }
        actions.closeInheritedDescriptors()
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // glibc's POSIX_SPAWN_SETPGROUP 0x02 and POSIX_SPAWN_SETSID 0x80 (a GNU extension Swift
        // does not import).
        switch grouping {
        case .inherit: attributes.startWithDefaultSignals()
        case .processGroup:
            posix_spawnattr_setpgroup(&attributes, 0)
            attributes.startWithDefaultSignals(flags: 0x02)
        case .session: attributes.startWithDefaultSignals(flags: 0x80)
        }

        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let environ = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for entry in environ { free(entry) } }
        var child = pid_t()
        let code = posix_spawn(&child, program, &actions, &attributes, argv, environ)
        guard code == 0 else { throw fail(code) }
        let started = child
        pid = started
        standardInput = parentEnds[0]
        standardOutput = parentEnds[1]
        standardError = parentEnds[2]
        self.onExit = onExit
        // Not reaped yet, so the pid is still the child's when its pidfd is opened.
        pidfd = Self.pidfdOpen.map { open in open(started, 0) } ?? -1
        if pidfd >= 0 {
            _ = fcntl(pidfd, F_SETFD, FD_CLOEXEC)
            ChildWaiter.shared.watch(self)
        } else {
            detachThread(name: "reap-\(started)") { [self] in
                var info = siginfo_t()
                var result = Ending.exited(127)  // reaped elsewhere
                while true {
                    if waitid(P_PID, id_t(started), &info, WEXITED | WNOWAIT) == 0 {
                        result = Self.ending(info)
                        break
                    }
                    guard errno == EINTR else { break }
                }
                finish(result) {
                    var status: Int32 = 0
                    while waitpid(started, &status, 0) < 0, errno == EINTR {}
                }
            }
        }
    }

    deinit {
        if pidfd >= 0 { close(pidfd) }
    }

    /// Seen exited but not reaped: until `onExit` has run the pid (and its process group) is
    /// still this child's, so nothing signals a stranger that reused it; then `reap` frees it.
    fileprivate func finish(_ result: Ending, reap: () -> Void) {
        ended.withLock {
            outcome.withLock { $0.ending = result }
            ended.broadcast()
        }
        onExit?(self)
        ended.withLock {
            reap()
            outcome.withLock { $0.reaped = true }
        }
    }

    fileprivate static func ending(_ info: siginfo_t) -> Ending {
        let status = info._sifields._sigchld.si_status
        return info.si_code == Int32(CLD_EXITED) ? .exited(status) : .signalled(status)
    }

    /// How it ended, or nil while it runs.
    public var ending: Ending? { outcome.withLock { $0.ending } }
    public var isRunning: Bool { ending == nil }
    /// Reaped: its pid may be another process's now.
    public var isReaped: Bool { outcome.withLock { $0.reaped } }
    /// Held by a pidfd (Linux 5.3 and later), and waited for by the one waiting thread.
    public var isHeldByPidfd: Bool { pidfd >= 0 }

    /// Its exit status, or the number of the signal that ended it (Foundation's meaning); 0
    /// while it runs.
    public var terminationStatus: Int32 {
        switch ending {
        case .exited(let status), .signalled(let status): status
        case nil: 0
        }
    }

    /// Sends SIGTERM (or `signal`) while it runs.
    /// - Returns: whether it was sent (not after the child exited).
    @discardableResult
    public func terminate(signal: Int32 = SIGTERM) -> Bool {
        ended.withLock {
            guard outcome.withLock({ $0.ending }) == nil else { return false }
            if pidfd >= 0, let send = Self.pidfdSendSignal { return send(pidfd, signal, nil, 0) == 0 }
            return kill(pid, signal) == 0
        }
    }

    /// Sends `signal` to the process group it leads (`Grouping.processGroup`): what it forked
    /// goes with it, even after it exited, until it is reaped (then its group id may be
    /// another's, and nothing is sent).
    /// - Returns: whether it was sent.
    @discardableResult
    public func terminateGroup(signal: Int32 = SIGTERM) -> Bool {
        ended.withLock {
            guard !outcome.withLock({ $0.reaped }) else { return false }
            return kill(-pid, signal) == 0
        }
    }

    /// Waits for it to exit.
    @discardableResult
    public func waitUntilExit() -> Ending {
        ended.withLock {
            while true {
                if let ending = outcome.withLock({ $0.ending }) { return ending }
                ended.wait()
            }
        }
    }

    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private typealias PidfdOpen = @convention(c) (pid_t, UInt32) -> Int32
    private typealias PidfdSendSignal = @convention(c) (Int32, Int32, UnsafeMutablePointer<siginfo_t>?, UInt32) -> Int32

    /// glibc 2.29's `posix_spawn_file_actions_addchdir_np`, not in Swift's Glibc module.
    private static let addChdir: AddChdir? = symbol("posix_spawn_file_actions_addchdir_np")
    /// glibc 2.36's pidfd calls (Linux 5.3), not in Swift's Glibc module; nil before them, or
    /// when the kernel refuses them (`MEDIAHOST_NO_PIDFD` asks for that, to test the other way).
    private static let pidfdOpen: PidfdOpen? = {
        guard getenv("MEDIAHOST_NO_PIDFD") == nil, let open: PidfdOpen = symbol("pidfd_open") else { return nil }
        let probe = open(getpid(), 0)
        guard probe >= 0 else { return nil }
        close(probe)
        return open
    }()
    private static let pidfdSendSignal: PidfdSendSignal? = symbol("pidfd_send_signal")

    private static func symbol<T>(_ name: String) -> T? {
        guard let symbol = dlsym(nil, name) else { return nil }
        return unsafeBitCast(symbol, to: T.self)
    }
}

/// The one thread that waits for every child held by a pidfd: it polls their pidfds (and a
/// pipe that wakes it when one is added), and finishes each child as it exits.
final class ChildWaiter: Sendable {
    static let shared = ChildWaiter()

    private let watched = Mutex<[Int32: ChildProcess]>([:])
    private let wakeRead: Int32
    private let wakeWrite: Int32

    private init() {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) == 0 {
            for fd in fds {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            }
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        detachThread(name: "child-waiter") { [self] in run() }
    }

    /// How many children it waits for.
    var count: Int { watched.withLock { $0.count } }

    func watch(_ child: ChildProcess) {
        watched.withLock { $0[child.pidfd] = child }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let children = watched.withLock { Array($0.keys) }
            var fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            fds += children.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno != EINTR { sleepThread(seconds: 0.05) }
                continue
            }
            if fds[0].revents != 0 { while read(wakeRead, &buffer, buffer.count) > 0 {} }
            for entry in fds.dropFirst() where entry.revents != 0 {
                guard let child = watched.withLock({ $0[entry.fd] }) else { continue }
                var info = siginfo_t()
                // P_PIDFD (3): the child the pidfd names, never a pid's new owner.
                let idtype = idtype_t(rawValue: 3)
                var result = ChildProcess.Ending.exited(127)  // reaped elsewhere
                while true {
                    if waitid(idtype, id_t(entry.fd), &info, WEXITED | WNOWAIT) == 0 {
                        result = ChildProcess.ending(info)
                        break
                    }
                    guard errno == EINTR else { break }
                }
                child.finish(result) {
                    var reaped = siginfo_t()
                    while waitid(idtype, id_t(entry.fd), &reaped, WEXITED) < 0, errno == EINTR {}
                }
                watched.withLock { _ = $0.removeValue(forKey: entry.fd) }
            }
        }
    }
}

/// Reads `fd` to its end (retrying interrupted reads).
public func readToEnd(_ fd: Int32) -> [UInt8] {
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = read(fd, &buffer, buffer.count)
        if count > 0 {
            out += buffer[0..<count]
        } else if count < 0, errno == EINTR {
            continue
        } else {
            return out
        }
    }
}
