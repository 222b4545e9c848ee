import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A response body on its way through the disk instead of memory: written as it streams in,
/// and read back in chunks, either afterwards or while it is still arriving (`read(from:)`), so
/// a reader works alongside the network without either holding the body in memory or making
/// the other wait. The file is unlinked as soon as it is created, so it disappears with the
/// descriptor, whatever happens to the process.
public final class SpoolFile: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSLock()
    public private(set) var size = 0
    /// More than the limit was offered: the rest was refused.
    public private(set) var overflowed = false
    /// A write failed (disk full): the body is incomplete.
    public private(set) var failed = false
    /// No more bytes will be written.
    private var finished = false
    /// A reader waiting for bytes past `offset` (at least `minimum` of them) or the end.
    private var waiter: (offset: Int, minimum: Int, continuation: CheckedContinuation<Void, Never>)?

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
        if let waiter, size - waiter.offset >= waiter.minimum {
            self.waiter = nil
            waiter.continuation.resume()
        }
        return true
    }

    /// Nothing more will be written (the transfer ended, however it ended): a waiting reader
    /// gets what is left, then the end.
    public func finish() {
        lock.lock()
        finished = true
        let waiter = self.waiter
        self.waiter = nil
        lock.unlock()
        waiter?.continuation.resume()
    }

    /// At most `count` bytes from `offset` on, read while the body may still be arriving: waits
    /// until `minimum` bytes past `offset` are written or the writing finished. Nil at the end.
    /// One reader at a time.
    public func read(from offset: Int, count: Int, minimum: Int = 1) async throws -> [UInt8]? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if finished || size - offset >= minimum {
                lock.unlock()
                continuation.resume()
            } else {
                waiter = (offset, minimum, continuation)
                lock.unlock()
            }
        }
        var buffer = [UInt8](repeating: 0, count: count)
        var n = 0
        repeat {
            n = buffer.withUnsafeMutableBytes { Glibc.pread(fd, $0.baseAddress, count, off_t(offset)) }
        } while n < 0 && errno == EINTR
        guard n >= 0 else {
            throw ProviderError.invalidResponse("cannot read a temporary file back: \(String(cString: strerror(errno)))")
        }
        guard n > 0 else { return nil }
        buffer.removeLast(count - n)
        return buffer
    }

}
