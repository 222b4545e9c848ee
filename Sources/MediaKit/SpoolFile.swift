import Basics
import FoundationEssentials

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
    /// What holding a chunk costs beyond its bytes (the array's header and allocation).
    static let chunkOverhead = 64

    private let memoryLimit: Int
    private let lock = Lock()
    /// The file, once the reader fell behind: it holds the bytes from `spilledAt` on.
    private var fd: Int32 = -1
    private var spilledAt = 0
    /// Until then: the chunks as they came, not yet read (`held[0]` from `headOffset` on),
    /// handed to the reader as they are, without a copy.
    private var held: [[UInt8]] = []
    private var head = 0
    private var headOffset = 0
    private var heldBytes = 0
    /// Where the first byte not yet read is.
    private var readFrom = 0
    /// The reader's buffer for bytes read back from the file (reused).
    private var fileBuffer: [UInt8] = []
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
        // A chunk held costs its bytes and its array (a server trickling bytes one by one must
        // not make a few MB of body cost a GB of memory).
        let cost = chunk.count + Self.chunkOverhead
        if fd < 0, heldBytes + cost <= memoryLimit {
            held.append(Array(chunk))
            heldBytes += cost
        } else {
            if fd < 0 {
                // The reader is behind: what is held, then the rest, go to a file.
                guard openFile() else { return false }
                for index in head..<held.count {
                    let from = index == head ? headOffset : 0
                    guard held[index].withUnsafeBytes({ append(UnsafeRawBufferPointer(rebasing: $0[from...])) }) else {
                        return false
                    }
                }
                spilledAt = readFrom
                held = []
                head = 0
                headOffset = 0
                heldBytes = 0
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
        var template = Array((Path.temporaryDirectory() + "/mediahost-spool-XXXXXX").utf8CString)
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

    /// Waits until `minimum` bytes past `offset` are written or the writing finished.
    private func wait(from offset: Int, minimum: Int) async {
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
    }

    /// Whether anything was written: waits for a first byte or the end of the writing.
    public func hasBytes() async -> Bool {
        await wait(from: 0, minimum: 1)
        return lock.withLock { size > 0 }
    }

    /// Reads on from `offset` (where the last read ended): waits until `minimum` bytes past it
    /// are written or the writing finished, then hands `body` at most `count` bytes, in one
    /// piece or a few, valid during the call. Returns how many; 0 at the end. One reader, going
    /// forward: what it has read is let go.
    public func read(
        from offset: Int, count: Int, minimum: Int = 1, _ body: (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> Int {
        await wait(from: offset, minimum: minimum)
        let (file, base, pieces) = try lock.withLock { () throws -> (Int32, Int, [ArraySlice<UInt8>]) in
            guard offset == readFrom || (self.fd >= 0 && offset >= spilledAt) else {
                throw ProviderError.invalidResponse(
                    "the body is read in order: byte \(offset) was asked for where byte \(readFrom) is next")
            }
            readFrom = offset
            guard self.fd < 0 else { return (self.fd, spilledAt, []) }
            var pieces: [ArraySlice<UInt8>] = []
            var taken = 0
            while taken < count, head < held.count {
                let block = held[head]
                let end = min(block.count, headOffset + (count - taken))
                pieces.append(block[headOffset..<end])
                taken += end - headOffset
                if end == block.count {
                    held[head] = []
                    head += 1
                    headOffset = 0
                    heldBytes -= Self.chunkOverhead
                } else {
                    headOffset = end
                }
            }
            if head >= 64, head * 2 >= held.count {
                held.removeFirst(head)
                head = 0
            }
            heldBytes -= taken
            readFrom += taken
            return (-1, 0, pieces)
        }
        guard file >= 0 else {
            var delivered = 0
            for piece in pieces {
                try piece.withUnsafeBytes(body)
                delivered += piece.count
            }
            return delivered
        }
        if fileBuffer.count < count { fileBuffer = [UInt8](repeating: 0, count: count) }
        var n = 0
        fileBuffer.withUnsafeMutableBytes { storage in
            repeat {
                n = Glibc.pread(file, storage.baseAddress, count, off_t(offset - base))
            } while n < 0 && errno == EINTR
        }
        guard n >= 0 else {
            throw ProviderError.invalidResponse("cannot read a temporary file back: \(String(cString: strerror(errno)))")
        }
        lock.withLock { readFrom = offset + n }
        try fileBuffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        return n
    }
}
