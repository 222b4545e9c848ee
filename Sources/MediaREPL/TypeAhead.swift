@preconcurrency import CReadline
import Glibc
import Synchronization

/// Keys typed while the REPL starts are kept and run once the prompt is there, as bash does:
/// they are not echoed above the banner (`hold`), and those the terminal's picture query read
/// (`keep`) are handed to readline before its first prompt (`release`).
public enum TypeAhead {
    private static let kept = Mutex<[UInt8]>([])
    /// The terminal's settings before `hold`, for `release` (and for a signal that ends the
    /// process before it: a shell left without echo is worse than a lost key).
    nonisolated(unsafe) private static var held = termios()
    nonisolated(unsafe) private static var holding: sig_atomic_t = 0
    private static let endingSignals = [SIGINT, SIGTERM, SIGHUP]

    /// Puts the terminal back and ends the process as the signal would have.
    private static let restoreAndDie: @convention(c) (Int32) -> Void = { number in
        // tcsetattr, signal and raise are async-signal-safe.
        if TypeAhead.holding != 0 { tcsetattr(0, TCSANOW, &TypeAhead.held) }
        Glibc.signal(number, SIG_DFL)
        raise(number)
    }

    /// From the start of an interactive REPL: keys wait, unechoed, for the prompt.
    public static func hold() {
        guard isatty(0) == 1, tcgetattr(0, &held) == 0 else { return }
        var quiet = held
        quiet.c_lflag &= ~tcflag_t(ECHO)
        for signal in endingSignals { Glibc.signal(signal, restoreAndDie) }
        holding = 1
        tcsetattr(0, TCSANOW, &quiet)
    }

    /// Keys read from the terminal before the prompt (between its answers to a query).
    static func keep(_ keys: [UInt8]) { kept.withLock { $0 += keys } }

    /// Before the first prompt: the terminal as it was, and the kept keys to readline first.
    public static func release() {
        if holding != 0 {
            tcsetattr(0, TCSANOW, &held)
            holding = 0
            // Only the handlers still ours go (the REPL's own Ctrl-C handler stays).
            for signal in endingSignals {
                let was = Glibc.signal(signal, SIG_DFL)
                if let was,
                    unsafeBitCast(was, to: UnsafeRawPointer.self) != unsafeBitCast(restoreAndDie, to: UnsafeRawPointer.self)
                {
                    Glibc.signal(signal, was)
                }
            }
        }
        let keys = kept.withLock { keys in
            defer { keys = [] }
            return keys
        }
        keys.withUnsafeBufferPointer { mh_rl_stuff($0.baseAddress, Int32($0.count)) }
    }
}
