import Basics
import FoundationEssentials
import MediaKit
import MediaStore

#if canImport(Glibc)
    import Glibc
#endif

/// One attempt at a download a program makes (yt-dlp downloading and merging a video's formats):
/// the program is run to write the record's path, resuming what an earlier run left; its
/// `progress <bytes> <total>` lines become `downloads.progress`; pausing, cancelling or the
/// process ending kills it and what it started (ffmpeg), and the next attempt resumes.
struct ProgramDownloadAttempt {
    let record: DownloadRecord
    let download: ProgramDownload
    let events: EventHub

    /// Where the running program's process id is kept, beside the `.part`.
    var pidFile: String { record.partPath + ".pid" }

    func run() async -> DownloadAttempt.Outcome {
        let fail = { (result: DownloadAttempt.Result) in
            DownloadAttempt.Outcome(result: result, bytes: record.bytes, total: record.total, etag: nil, lastModified: nil)
        }
        // The `.part` beside the path is the lock, as for every download (a program that writes
        // its own `.part` there appends to it).
        let lock: Int32
        switch DownloadAttempt.lockedPart(record) {
        case .success(let opened): lock = opened
        case .failure(let ending): return fail(ending.result)
        }
        defer { close(lock) }
        guard let executable = Path.findProgram(download.program) else {
            return fail(.permanent("\(download.program) is not installed (not found in PATH)"))
        }
        let arguments = download.arguments.map { $0 == "{output}" ? record.path : $0 }
        // A program left running by a process that was killed (it has a process group of its
        // own, so it outlives the host) would write the same files: it is stopped first.
        await Self.stopLeftover(pidFile: pidFile, path: record.path)
        let child: SpawnedProgramRunner.Child
        do {
            child = try SpawnedProgramRunner.Child.spawn(
                executable, call: ProgramCall(program: download.program, arguments: arguments))
        } catch {
            return fail(.permanent("\(error)"))
        }
        try? Data("\(child.pid)\n".utf8).write(to: URL(fileURLWithPath: pidFile))
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        let progress = DownloadAttempt.Progress(fd: -1)
        progress.offset = record.bytes
        progress.total = record.total
        progress.rateStart = (DownloadAttempt.now(), record.bytes)
        let id = record.id.description
        let events = self.events
        // Streams (video, then audio) each count from zero: what the earlier ones made is kept.
        let streams = StreamProgress()
        let ended = await withTaskCancellationHandler {
            try? await BlockingWork.run("download-\(Path.name(of: download.program))") {
                child.follow { line in
                    guard let (bytes, total) = Self.progress(line) else { return }
                    let (done, whole) = streams.update(bytes: bytes, total: total)
                    progress.lock.withLock {
                        progress.offset = 0
                        progress.written = done
                        progress.total = whole
                    }
                    DownloadAttempt.report(progress, id: id, events: events)
                }
            }
        } onCancel: {
            child.kill()
        }
        let bytes = progress.lock.withLock { progress.bytes }
        guard let ended, !Task.isCancelled else {
            return DownloadAttempt.Outcome(
                result: .transient("stopped"), bytes: bytes, total: progress.total, etag: nil, lastModified: nil)
        }
        if ended.status == 0, let size = Self.size(record.path) {
            try? FileManager.default.removeItem(atPath: record.partPath)
            progress.lock.withLock {
                progress.written = size
                progress.total = size
            }
            DownloadAttempt.report(progress, id: id, events: events, force: true)
            return DownloadAttempt.Outcome(result: .completed(note: nil), bytes: size, total: size, etag: nil, lastModified: nil)
        }
        let reason = ended.lastError ?? "\(download.program) exited with status \(ended.status)"
        let permanent = ["requested format is not available", "ffmpeg", "private video", "video unavailable"]
            .contains { reason.lowercased().contains($0) }
        let hint =
            reason.lowercased().contains("ffmpeg")
            ? " (merging formats needs ffmpeg: install it, e.g. apt-get install ffmpeg)" : ""
        return DownloadAttempt.Outcome(
            result: permanent ? .permanent(reason + hint) : .transient(reason), bytes: bytes, total: progress.total,
            etag: nil, lastModified: nil)
    }

    /// "progress 1200 5000" -> (1200, 5000); the total may be "NA".
    /// A program's line is not trusted: "inf", "-5", "1e30" or "8e18" is no count (so no sum of
    /// counts can overflow and trap).
    static func progress(_ line: String) -> (Int64, Int64?)? {
        let words = line.split(separator: " ")
        guard words.count >= 2, words[0] == "progress", let bytes = ByteCount.parse(words[1]) else { return nil }
        return (bytes, words.dropFirst(2).lazy.compactMap { ByteCount.parse($0) }.first)
    }

    /// Kills the program group a killed process left writing `path`, when there is one: its pid
    /// file names it, and its command line names the path (a pid reused by another program is
    /// left alone).
    static func stopLeftover(pidFile: String, path: String) async {
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
            let pid = Int32(text.trimming(.whitespacesAndNewlines)), pid > 1,
            let commandLine = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
            String(decoding: commandLine, as: UTF8.self).contains(path)
        else { return }
        kill(-pid, SIGKILL)
        // Reaped by init (its parent is gone): wait until it is.
        for _ in 0..<100 where FileManager.default.fileExists(atPath: "/proc/\(pid)/cmdline") {
            let state = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.split(separator: " ")
            if state.map({ $0.count > 2 && $0[2] == "Z" }) ?? true { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    static func size(_ path: String) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Int64(info.st_size)
    }

    /// Whether a file's name holds ".f<digits>." (yt-dlp's name for one format before merging).
    static func namesAFormat(_ file: String) -> Bool {
        let bytes = Array(file.utf8)
        var index = 0
        while index + 3 < bytes.count {
            if bytes[index] == UInt8(ascii: "."), bytes[index + 1] == UInt8(ascii: "f") {
                var end = index + 2
                while end < bytes.count, (48...57).contains(bytes[end]) { end += 1 }
                if end > index + 2, end < bytes.count, bytes[end] == UInt8(ascii: ".") { return true }
            }
            index += 1
        }
        return false
    }

    /// Removes what a cancelled download's program left beside its path (yt-dlp's `.part` and
    /// `.ytdl` files, the formats not yet merged).
    static func removeLeftovers(of path: String) {
        let folder = Path.directory(of: path)
        let name = Path.name(of: path)
        let stem = Path.deletingExtension(name)
        for file in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        where file != name && (file.hasPrefix(name + ".") || file.hasPrefix(stem + ".f"))
            && (file.hasSuffix(".part") || file.hasSuffix(".ytdl")
                || Self.namesAFormat(file))
        {
            try? FileManager.default.removeItem(atPath: folder + "/" + file)
        }
    }

    /// Bytes across the streams a program downloads one after another.
    ///
    /// Counts are `ByteCount`s; their sums saturate at `ByteCount.maximum` (a program that
    /// reports ever-restarting huge streams gets a huge count, never a trap).
    final class StreamProgress: @unchecked Sendable {
        private var finished: Int64 = 0
        private var current: (bytes: Int64, total: Int64?) = (0, nil)

        func update(bytes: Int64, total: Int64?) -> (Int64, Int64?) {
            let bytes = min(max(0, bytes), ByteCount.maximum)
            let total = total.map { min(max(0, $0), ByteCount.maximum) }
            if bytes < current.bytes {
                // A new stream: the last one is done.
                finished = Self.sum(finished, current.total ?? current.bytes)
            }
            current = (bytes, total)
            return (Self.sum(finished, bytes), total.map { Self.sum(finished, $0) })
        }

        static func sum(_ a: Int64, _ b: Int64) -> Int64 { min(ByteCount.maximum, a + b) }
    }
}
