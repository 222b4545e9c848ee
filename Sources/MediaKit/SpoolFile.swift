import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A response body on its way through the disk instead of memory: written as it streams in,
/// then read back in chunks. The file is unlinked as soon as it is created, so it disappears
/// with the descriptor, whatever happens to the process.
public final class SpoolFile: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    public private(set) var size = 0
    /// More than the limit was offered: the rest was refused.
    public private(set) var overflowed = false
    /// A write failed (disk full): the body is incomplete.
    public private(set) var failed = false

    public init() throws {
        var template = Array((NSTemporaryDirectory() + "/mediahost-spool-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw ProviderError.invalidResponse("cannot create a temporary file: \(String(cString: strerror(errno)))")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Appends a chunk; false (stop the transfer) past `limit` bytes or when the disk refuses.
    public func write(_ chunk: UnsafeRawBufferPointer, limit: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard size + chunk.count <= limit else {
            overflowed = true
            return false
        }
        var offset = 0
        while offset < chunk.count {
            let n = Glibc.write(fd, chunk.baseAddress! + offset, chunk.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                failed = true
                return false
            }
            offset += n
        }
        size += chunk.count
        return true
    }

    public func rewind() throws {
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw ProviderError.invalidResponse("cannot read a temporary file back") }
    }

    /// The next chunk of at most `count` bytes, or nil at the end.
    public func read(_ count: Int) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, count) }
        guard n >= 0 else {
            throw ProviderError.invalidResponse("cannot read a temporary file back: \(String(cString: strerror(errno)))")
        }
        guard n > 0 else { return nil }
        buffer.removeLast(count - n)
        return buffer
    }
}
