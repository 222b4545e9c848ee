import FoundationEssentials
import Glibc
import Synchronization

/// A program started with posix_spawn, its standard streams piped, closed or inherited, and
/// reaped by a thread of its own the moment it exits (Foundation's `Process` without full
/// Foundation; it reaps only once the child's pipes are closed, which a grandchild can delay).
public final class ChildProcess: Sendable {
    /// What a child's standard stream is.
    public enum Stream: Sendable {
        /// The same as this process's.
        case inherit
        /// /dev/null.
        case null
        /// A pipe: this process's end is in `standardInput`, `standardOutput` or `standardError`.
        case pipe
    }

    /// How a child ended.
    public enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)

        /// Exited with status 0.
        public var succeeded: Bool { self == .exited(0) }
    }

    /// Why a program could not be started: the system's errno.
    public struct SpawnError: Error, CustomStringConvertible {
        public let code: Int32
        public var description: String { String(cString: strerror(code)) }
    }

    public let pid: pid_t
    /// This process's ends of the pipes asked for (the caller closes them).
    public let standardInput: Int32?
    public let standardOutput: Int32?
    public let standardError: Int32?
    private let outcome = Mutex<Ending?>(nil)
    private let ended = Condition()

    /// Starts `program` (a path) with `arguments`.
    /// - Parameters:
    ///   - environment: the child's environment; this process's when nil.
    ///   - directory: the child's working directory; this process's when nil.
    ///   - newProcessGroup: the child leads a process group of its own, as Foundation's `Process`
    ///     started every child: a Ctrl-C at the terminal reaches this process alone (the REPL
    ///     handles it; a sandbox or a helper would die of it), and what it forks can be ended
    ///     with it.
    ///   - onExit: called on the reaping thread once the child has exited.
    public init(
        _ program: String, arguments: [String] = [], environment: [String: String]? = nil, directory: String? = nil,
        standardInput stdin: Stream = .inherit, standardOutput stdout: Stream = .inherit,
        standardError stderr: Stream = .inherit, newProcessGroup: Bool = true,
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
        if newProcessGroup { posix_spawnattr_setpgroup(&attributes, 0) }
        // POSIX_SPAWN_SETPGROUP 0x02 (glibc).
        attributes.startWithDefaultSignals(flags: newProcessGroup ? 0x02 : 0)

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
        detachThread(name: "reap-\(started)") { [self] in
            // Seen exited but not reaped: until `onExit` has run, the pid (and its process group)
            // is still this child's, so nothing signals a stranger that reused it.
            var info = siginfo_t()
            var result = Ending.exited(127)  // reaped elsewhere
            while true {
                if waitid(P_PID, id_t(started), &info, WEXITED | WNOWAIT) == 0 {
                    let status = info._sifields._sigchld.si_status
                    result = info.si_code == Int32(CLD_EXITED) ? .exited(status) : .signalled(status)
                    break
                }
                guard errno == EINTR else { break }
            }
            ended.withLock {
                outcome.withLock { $0 = result }
                ended.broadcast()
            }
            onExit?(self)
            var status: Int32 = 0
            while waitpid(started, &status, 0) < 0, errno == EINTR {}
        }
    }

    /// How it ended, or nil while it runs.
    public var ending: Ending? { outcome.withLock { $0 } }
    public var isRunning: Bool { ending == nil }

    /// Its exit status, or the number of the signal that ended it (Foundation's meaning); 0
    /// while it runs.
    public var terminationStatus: Int32 {
        switch ending {
        case .exited(let status), .signalled(let status): status
        case nil: 0
        }
    }

    /// Sends SIGTERM (or `signal`) while it runs.
    public func terminate(signal: Int32 = SIGTERM) {
        ended.withLock { if outcome.withLock({ $0 }) == nil { kill(pid, signal) } }
    }

    /// Waits for it to exit.
    @discardableResult
    public func waitUntilExit() -> Ending {
        ended.withLock {
            while true {
                if let ending = outcome.withLock({ $0 }) { return ending }
                ended.wait()
            }
        }
    }

    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// glibc 2.29's `posix_spawn_file_actions_addchdir_np`, not in Swift's Glibc module.
    private static let addChdir: AddChdir? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addchdir_np") else { return nil }
        return unsafeBitCast(symbol, to: AddChdir.self)
    }()
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
