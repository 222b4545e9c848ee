import Basics
import FoundationEssentials
import JSONRPC
import MediaKit
import MediaStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One attempt at one download: `.part` file, request, bytes to disk, rename at the end.
struct DownloadAttempt {
    let record: DownloadRecord
    let http: any HTTPClient
    let events: EventHub
    /// Called with the response's validators and size as soon as its head arrives.
    let onHead: @Sendable (_ etag: String?, _ lastModified: String?, _ total: Int64?) -> Void

    enum Result: Equatable {
        /// The file is in place; the note says if its size differs from what the feed claimed.
        case completed(note: String?)
        /// Another process is downloading it.
        case busy
        /// Worth another try (resuming from the `.part`).
        case transient(String)
        case permanent(String)
        /// The disk (or the quota) is full: every download waits until there is room.
        case diskFull(String)
    }

    struct Outcome {
        var result: Result
        var bytes: Int64
        var total: Int64?
        var etag: String?
        var lastModified: String?

        /// The `.part` file was emptied: the next attempt starts from zero, with no validators.
        static func restart(_ reason: String) -> Outcome {
            Outcome(result: .transient(reason), bytes: 0, total: nil, etag: nil, lastModified: nil)
        }
    }

    /// What the callbacks learn while curl runs them (on its thread).
    final class Progress: @unchecked Sendable {
        let lock = Lock()
        var fd: Int32
        var offset: Int64 = 0
        var written: Int64 = 0
        var total: Int64?
        var status = 0
        var etag: String?
        var lastModified: String?
        var writeError: Int32?
        var badRange = false
        /// The server sent more than the length it announced.
        var overrun = false
        var lastReport: Double = 0
        var rateStart: (time: Double, bytes: Int64) = (0, 0)
        /// Where the file's bytes were last handed to the disk (`wrote`).
        var handedToDisk: Int64 = 0
        init(fd: Int32) { self.fd = fd }
        var bytes: Int64 { offset + written }
    }

    func run() async -> Outcome {
        let fail = { (result: Result) in
            Outcome(
                result: result, bytes: record.bytes, total: record.total, etag: record.etag, lastModified: record.lastModified)
        }
        let fd: Int32
        switch Self.lockedPart(record) {
        case .success(let opened): fd = opened
        case .failure(let ending): return fail(ending.result)
        }
        defer { close(fd) }

        let progress = Progress(fd: fd)
        var info = stat()
        fstat(fd, &info)
        let existing = Int64(info.st_size)
        // Media is stored as sent: never asked for compressed, never inflated on the way to disk.
        var request = HTTPRequest(url: URL(string: record.url) ?? URL(fileURLWithPath: "/"), acceptsCompression: false)
        var offset: Int64 = 0
        if existing > 0, let validator = record.etag ?? record.lastModified {
            offset = existing
            // If the file changed, the server sends all of it (200) and we start over.
            request.headers["If-Range"] = validator
        } else {
            ftruncate(fd, 0)
        }
        progress.offset = offset
        progress.rateStart = (Self.now(), offset)
        lseek(fd, off_t(offset), SEEK_SET)

        let id = record.id.description
        let events = self.events
        let announceHead = self.onHead
        let head: (status: Int, headers: [String: String])
        do {
            head = try await http.stream(
                request, offset: offset,
                onHead: { status, headers in
                    progress.lock.withLock {
                        progress.status = status
                        progress.etag = headers["etag"]
                        progress.lastModified = headers["last-modified"]
                        switch status {
                        case 206:
                            // Content-Range must start where our file ends.
                            let start = headers["content-range"].flatMap { Self.rangeStart($0) }
                            if start != offset { progress.badRange = true; return false }
                            progress.total = headers["content-range"].flatMap(Self.rangeTotal)
                        case 200:
                            // The server ignored Range or the file changed: start from zero.
                            progress.offset = 0
                            ftruncate(progress.fd, 0)
                            lseek(progress.fd, 0, SEEK_SET)
                            progress.total = headers["content-length"].flatMap { ByteCount.parse($0) }
                        default:
                            return false
                        }
                        announceHead(progress.etag, progress.lastModified, progress.total)
                        return true
                    }
                },
                onData: { chunk in
                    // A download is bounded by the length its server announced: a body that keeps
                    // coming is a broken or hostile server, not a bigger file.
                    let overrun = progress.lock.withLock { () -> Bool in
                        guard let total = progress.total, progress.bytes + Int64(chunk.count) > total else { return false }
                        progress.overrun = true
                        return true
                    }
                    if overrun { return false }
                    var remaining = chunk.count
                    var pointer = chunk.baseAddress
                    while remaining > 0, let base = pointer {
                        let n = write(progress.fd, base, remaining)
                        if n < 0 {
                            if errno == EINTR { continue }
                            progress.lock.withLock { progress.writeError = errno }
                            return false
                        }
                        remaining -= n
                        pointer = base + n
                    }
                    Self.wrote(chunk.count, progress)
                    Self.report(progress, id: id, events: events)
                    return true
                },
                progress: nil)
        } catch let error as HTTPClientError {
            if error.kind == .cancelled { return ended(.transient("cancelled"), progress) }
            return ended(
                error.isTransient || error.kind == .connection ? .transient(error.description) : .permanent(error.description),
                progress)
        } catch {
            return ended(.transient("\(error)"), progress)
        }
        if let code = progress.lock.withLock({ progress.writeError }) {
            if code == ENOSPC || code == EDQUOT {
                return ended(.diskFull("the disk is full (writing \(record.partPath))"), progress)
            }
            return ended(.permanent("cannot write \(record.partPath): \(String(cString: strerror(code)))"), progress)
        }
        let (bytes, total) = progress.lock.withLock { (progress.bytes, progress.total) }
        if progress.lock.withLock({ progress.overrun }) {
            return ended(.permanent("the server sent more than the \(total ?? 0) bytes it announced"), progress)
        }
        if progress.lock.withLock({ progress.badRange }) {
            // The server answered another range: throw the .part away and start again.
            ftruncate(fd, 0)
            return .restart("the server answered a different range")
        }
        switch head.status {
        case 200, 206: break
        case 404, 410:
            return ended(.permanent("the media file is gone (HTTP \(head.status)): \(URLRedaction.redact(record.url))"), progress)
        case 416:
            ftruncate(fd, 0)
            return .restart("HTTP 416: starting over")
        case 408, 429, 500...599: return ended(.transient("HTTP \(head.status)"), progress)
        default: return ended(.permanent("HTTP \(head.status) for \(URLRedaction.redact(record.url))"), progress)
        }
        if let total, bytes != total {
            return ended(.transient("the body ended at \(bytes) of \(total) bytes"), progress)
        }
        guard fsync(fd) == 0 else {
            return ended(.permanent("cannot flush \(record.partPath): \(String(cString: strerror(errno)))"), progress)
        }
        guard rename(record.partPath, record.path) == 0 else {
            return ended(.permanent("cannot move the download into place: \(String(cString: strerror(errno)))"), progress)
        }
        let directory = open(Path.directory(of: record.path), O_RDONLY | O_DIRECTORY)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
        var note: String?
        if let expected = record.expectedLength, expected > 0, expected != bytes {
            note = "the feed says \(expected) bytes; the server sent \(bytes)"
        }
        Self.report(progress, id: id, events: events, force: true)
        return ended(.completed(note: note), progress)
    }

    struct Ending: Error { var result: Result }

    /// The record's `.part`, made with its folder, open for writing and locked: one process per
    /// download (a REPL and an RPC server may both try to resume it).
    static func lockedPart(_ record: DownloadRecord) -> Swift.Result<Int32, Ending> {
        let folder = Path.directory(of: record.path)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            return .failure(Ending(result: .permanent("cannot create \(folder): \(describe(error))")))
        }
        let fd = open(record.partPath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            return .failure(
                Ending(result: .permanent("cannot write \(record.partPath): \(String(cString: strerror(errno)))")))
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return .failure(Ending(result: .busy))
        }
        return .success(fd)
    }

    /// How the attempt ended, with what the `.part` file holds and the validators to resume it.
    private func ended(_ result: Result, _ progress: Progress) -> Outcome {
        progress.lock.withLock {
            Outcome(
                result: result, bytes: progress.bytes, total: progress.total, etag: progress.etag ?? record.etag,
                lastModified: progress.lastModified ?? record.lastModified)
        }
    }

    /// `downloads.progress` at most four times a second.
    /// Counts `count` bytes written; every 16 MB, hands those written since to the disk
    /// (sync_file_range starts the write-back and does not wait), so the fsync at the end finds
    /// little left to write. Without it a 1 GB download waited about a second at the end for its
    /// whole file to reach the disk.
    static func wrote(_ count: Int, _ progress: Progress) {
        let range = progress.lock.withLock { () -> (start: Int64, end: Int64)? in
            progress.written += Int64(count)
            let end = progress.bytes
            guard end - progress.handedToDisk >= 16 << 20 else { return nil }
            defer { progress.handedToDisk = end }
            return (max(progress.handedToDisk, progress.offset), end)
        }
        guard let range, range.end > range.start, let syncFileRange = Self.syncFileRange else { return }
        _ = syncFileRange(progress.fd, range.start, range.end - range.start, 2)  // SYNC_FILE_RANGE_WRITE
    }

    /// glibc's sync_file_range (Linux; Swift's Glibc module leaves it out), nil where there is none.
    static let syncFileRange: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32)? = {
        guard let symbol = dlsym(nil, "sync_file_range") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int64, Int64, UInt32) -> Int32).self)
    }()

    static func report(_ progress: Progress, id: String, events: EventHub, force: Bool = false) {
        let now = now()
        let report: DownloadProgress? = progress.lock.withLock {
            guard force || now - progress.lastReport >= 0.25 else { return nil }
            progress.lastReport = now
            let elapsed = max(0.001, now - progress.rateStart.time)
            let rate = Double(progress.bytes - progress.rateStart.bytes) / elapsed
            var report = DownloadProgress(id: id, bytes: progress.bytes, total: progress.total, rate: rate.rounded())
            if let total = progress.total, rate > 0 { report.eta = (Double(total - progress.bytes) / rate).rounded() }
            return report
        }
        if let report { events.publish(HostEvent(report)) }
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// "bytes 100-199/1000" -> 100.
    static func rangeStart(_ header: String) -> Int64? {
        guard let range = header.split(separator: " ").last, let dash = range.firstIndex(of: "-") else { return nil }
        return ByteCount.checked(Int64(range[..<dash]))
    }

    /// "bytes 100-199/1000" -> 1000 (a server's number: a `ByteCount` or nothing).
    static func rangeTotal(_ header: String) -> Int64? {
        header.split(separator: "/").last.flatMap { ByteCount.checked(Int64($0)) }
    }
}

/// Which process runs a download: the one holding an exclusive `flock` on its `.part` file, as
/// `DownloadAttempt` does while it transfers. Other processes of the data dir read such a download
/// and leave it alone.
enum DownloadLock {
    /// Whether another process holds the lock now (false when there is no `.part` file).
    static func isHeldElsewhere(_ partPath: String) -> Bool {
        let fd = open(partPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        // Shared: probes never stand in each other's way, and an exclusive holder is seen.
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    /// The bytes in the `.part` file, or nil when there is none.
    static func partSize(_ partPath: String) -> Int64? {
        var info = stat()
        guard stat(partPath, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }
}
