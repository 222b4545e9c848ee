import Basics
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Writes to a descriptor that never end the process: EINTR is retried, a descriptor opened
/// non-blocking is waited on, and a reader that is gone (EPIPE, with SIGPIPE ignored) is a
/// `false`, not a crash. Foundation's `FileHandle.write(_:)` traps on any of these
/// (`mediahost share L | head -4`), so the product writes through here.
public enum Descriptor {
    /// Writes all of `bytes` to `fd`.
    /// - Returns: false when the other end is gone or the write failed.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var isSocket = false
        return write(fd, bytes, isSocket: &isSocket, waitMillis: 1000) == nil
    }

    /// Writes all of `bytes` to `fd`, the one loop every writer uses: EINTR retried, a full
    /// non-blocking descriptor waited on `waitMillis` at a time, a socket written with
    /// MSG_NOSIGNAL (and `isSocket` turned off when `fd` is not one).
    /// - Parameter stopped: asked before each write; true ends it with ECANCELED.
    /// - Returns: the errno that stopped it, or nil when all was written.
    static func write(
        _ fd: Int32, _ bytes: [UInt8], isSocket: inout Bool, waitMillis: Int32, stopped: () -> Bool = { false }
    ) -> Int32? {
        bytes.withUnsafeBytes { raw -> Int32? in
            guard let base = raw.baseAddress else { return nil }
            var offset = 0
            while offset < raw.count {
                if stopped() { return ECANCELED }
                let n: Int
                if isSocket {
                    n = send(fd, base + offset, raw.count - offset, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL))
                    if n < 0, errno == ENOTSOCK {
                        isSocket = false
                        continue
                    }
                } else {
                    n = Glibc.write(fd, base + offset, raw.count - offset)
                }
                if n >= 0 {
                    offset += n
                    continue
                }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK:
                    var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, waitMillis)
                default: return errno
                }
            }
            return nil
        }
    }

    /// Reads `fd` until its end (or an error other than EINTR), handing each chunk to `body`;
    /// a descriptor opened non-blocking is waited on. Blocks: run it on a thread of its own.
    public static func readToEnd(_ fd: Int32, _ body: (UnsafeRawBufferPointer) -> Void) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&poller, 1, -1)
                continue
            }
            guard count > 0 else { return }
            buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }

    /// Writes `text` to standard error.
    @discardableResult
    public static func standardError(_ text: String) -> Bool { writeAll(2, Array(text.utf8)) }

    /// Writes `text` to standard output.
    @discardableResult
    public static func standardOutput(_ text: String) -> Bool { writeAll(1, Array(text.utf8)) }

    /// A write to a reader that has gone fails with EPIPE instead of killing the process. Every
    /// front end calls this first: a pipe closed by `head`, an editor that quit, a plugin that
    /// exited must each be an error where it happens.
    public static func ignoreBrokenPipes() { signal(SIGPIPE, SIG_IGN) }
}
