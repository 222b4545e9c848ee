import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

extension posix_spawn_file_actions_t {
    /// Closes in the child every descriptor above stderr: a child that outlives us (the service,
    /// mpv) must not hold a pipe that a parent watches for our end (a test harness, a shell's
    /// `$(...)`, the sandbox's parent-alive pipe). Add it after the `dup2` actions that set up
    /// the child's stdin, stdout and stderr.
    ///
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+) closes them in the child, so a
    /// descriptor another thread opens meanwhile is closed too; without it, those open now are.
    public mutating func closeInheritedDescriptors() {
        if let closeFrom = Self.addCloseFrom, closeFrom(&self, 3) == 0 { return }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? [] {
            if let fd = Int32(name), fd > 2 { posix_spawn_file_actions_addclose(&self, fd) }
        }
    }

    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// Not in Swift's Glibc module (a GNU extension): looked up once.
    private static let addCloseFrom: AddCloseFrom? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()
}

/// The signal mask children are started with.
public enum SignalMask {
    /// Runs `body` (a spawn) with no signal blocked on this thread, then puts the mask back: a
    /// child inherits the spawning thread's mask, and the threads of Swift's pool block nearly
    /// every signal, which would leave the child deaf to SIGTERM and SIGINT.
    public static func unblocked<T>(_ body: () throws -> T) rethrows -> T {
        var none = sigset_t()
        var saved = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        return try body()
    }
}

extension posix_spawnattr_t {
    /// The child starts with no signal blocked and SIGPIPE, SIGINT, SIGQUIT, SIGTERM and SIGHUP
    /// at their defaults, whatever the spawning thread blocks or this process ignores.
    public mutating func startWithDefaultSignals(flags: Int32 = 0) {
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&self, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&self, &defaults)
        // POSIX_SPAWN_SETSIGDEF 0x04, POSIX_SPAWN_SETSIGMASK 0x08 (glibc).
        posix_spawnattr_setflags(&self, Int16(flags | 0x04 | 0x08))
    }
}
