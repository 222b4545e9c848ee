import Foundation

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
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, base + offset, raw.count - offset)
                if n >= 0 {
                    offset += n
                    continue
                }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK:
                    var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, 1000)
                default: return false
                }
            }
            return true
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
