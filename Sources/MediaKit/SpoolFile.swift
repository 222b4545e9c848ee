import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A response body on its way to a reader that may lag behind the network: held in memory
/// while the reader keeps up, through the disk once it falls behind by more than
/// `memoryLimit` (then memory stays flat whatever the body's size). Written as it streams in
/// and read back in chunks, either afterwards or while it is still arriving (`read(from:)`),
/// so a reader works alongside the network without either making the other wait. The file is
/// created only when needed and unlinked at once, so it disappears with the descriptor,
/// whatever happens to the process.
public final class SpoolFile: @unchecked Sendable {
    /// How far a reader may fall behind before the body goes through the disk.
    public static let defaultMemoryLimit = 16 << 20

    private let memoryLimit: Int
    private let lock = NSLock()
    /// The file, once the reader fell behind: it holds the bytes from `spilledAt` on.
    private var fd: Int32 = -1
    private var spilledAt = 0
    /// Until then: the bytes from `heldFrom` on, in memory.
    private var held: [UInt8] = []
    private var heldFrom = 0
    public private(set) var size = 0
    /// More than the limit was offered: the rest was refused.
    public private(set) var overflowed = false
    /// A write failed (disk full): the body is incomplete.
    public private(set) var failed = false
    /// No more bytes will be written.
    private var finished = false
    /// A reader waiting for bytes past `offset` (at least `minimum` of them) or the end.
    private var waiter: (offset: Int, minimum: Int, continuation: CheckedContinuation<Void, Never>)?

    public init(memoryLimit: Int = SpoolFile.defaultMemoryLimit) {
        self.memoryLimit = memoryLimit
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Whether the body went through the disk (the reader fell behind).
    public var spilled: Bool {
        lock.lock()
        defer { lock.unlock() }
        return fd >= 0
    }

    /// Appends a chunk; false (stop the transfer) past `limit` bytes or when the disk refuses.
    public func write(_ chunk: UnsafeRawBufferPointer, limit: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard size + chunk.count <= limit else {
            overflowed = true
            return false
        }
        if fd < 0, held.count + chunk.count <= memoryLimit {
            held.append(contentsOf: chunk)
        } else {
            if fd < 0 {
                // The reader is behind: what is held, then the rest, go to a file.
                guard openFile(), held.withUnsafeBytes({ append($0) }) else { return false }
                spilledAt = heldFrom
                held = []
            }
            guard append(chunk) else { return false }
        }
        size += chunk.count
        if let waiter, size - waiter.offset >= waiter.minimum {
            self.waiter = nil
            waiter.continuation.resume()
        }
        return true
    }

    private func openFile() -> Bool {
        var template = Array((NSTemporaryDirectory() + "/mediahost-spool-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            failed = true
            return false
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.fd = fd
        return true
    }

    private func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                failed = true
                return false
            }
            offset += n
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
    /// One reader at a time, going forward: what lies before `offset` is let go.
    public func read(from offset: Int, count: Int, minimum: Int = 1) async throws -> [UInt8]? {
        var buffer: [UInt8] = []
        return try await read(from: offset, count: count, minimum: minimum, into: &buffer) ? buffer : nil
    }

    /// `read(from:count:minimum:)` into a buffer the caller reuses (no new pages per chunk);
    /// false at the end.
    public func read(from offset: Int, count: Int, minimum: Int = 1, into buffer: inout [UInt8]) async throws -> Bool {
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
        buffer.removeAll(keepingCapacity: true)
        let (file, base) = try lock.withLock { () throws -> (Int32, Int) in
            guard self.fd < 0 else { return (self.fd, spilledAt) }
            guard offset >= heldFrom else {
                throw ProviderError.invalidResponse("the body before byte \(heldFrom) was let go; it cannot be read again")
            }
            let start = offset - heldFrom
            let end = min(held.count, start + count)
            guard start < end else { return (-1, 0) }
            buffer.append(contentsOf: held[start..<end])
            // Let go of what was read before this call, once it is worth moving the rest.
            if start >= held.count / 2 || start >= 1 << 20 {
                held.removeSubrange(0..<start)
                heldFrom += start
            }
            return (-1, 0)
        }
        guard file >= 0 else { return !buffer.isEmpty }
        guard offset >= base else {
            throw ProviderError.invalidResponse("the body before byte \(base) was let go; it cannot be read again")
        }
        var n = 0
        buffer.reserveCapacity(count)
        buffer.append(contentsOf: repeatElement(0, count: count))
        buffer.withUnsafeMutableBytes { storage in
            repeat {
                n = Glibc.pread(file, storage.baseAddress, count, off_t(offset - base))
            } while n < 0 && errno == EINTR
        }
        guard n >= 0 else {
            throw ProviderError.invalidResponse("cannot read a temporary file back: \(String(cString: strerror(errno)))")
        }
        buffer.removeLast(count - n)
        return n > 0
    }
}
