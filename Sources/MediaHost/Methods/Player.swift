import Foundation
import MediaKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Opens an item in the configured player: the downloaded file when there is one, else the
/// stream (the media URL, or the page URL for players that resolve it, like mpv with YouTube).
/// An item that is not media itself plays what a person means by it: a movie its first trailer,
/// a show its newest episode, a channel its newest video, a playlist its first. The player is
/// watched for a moment, so one that fails at once (a bad URL, no audio device) is an error.
public struct PlayerOpen: RPCMethod {
    public static let method = "player.open"
    public var id: ItemID

    public init(id: ItemID) {
        self.id = id
    }

    public struct Response: Codable, Sendable, Equatable {
        public var id: ItemID
        /// The program and its arguments, as run.
        public var command: [String]
        /// The file or URL handed over.
        public var target: String
        /// Whether `target` is a downloaded file.
        public var local: Bool
        public var pid: Int
        /// The item played, when `id` stands for another (a movie's trailer, a show's episode).
        public var played: ItemID?
        /// What was chosen, in words ("the first trailer", "the newest episode").
        public var note: String?
    }

    /// How long a player that exits is taken to have failed to start.
    static let earlyExitWindow: Duration = .seconds(2)

    public func run(on host: HostRuntime) async throws -> Response {
        let (played, note) = try await host.whatToPlay(id)
        let (target, local) = try await host.playTarget(played)
        let words = host.config.command(HostSettings.playerCommand)
        guard let program = words.first, let executable = Self.find(program) else {
            throw HostError.player(
                "the player '\(words.first ?? "")' was not found; install it or set player.command (e.g. `config player.command vlc`)"
            )
        }
        let command = words + [target]
        let player = try PlayerProcess.spawn(executable, arguments: Array(command.dropFirst()))
        if let failure = await player.earlyFailure(within: Self.earlyExitWindow) {
            throw HostError.player("\(program) \(failure) (\(URLRedaction.redact(target)))")
        }
        return Response(
            id: id, command: command, target: target, local: local, pid: Int(player.pid), played: played == id ? nil : played,
            note: note)
    }

    /// The program's path: as given when it has a '/', else the first match on PATH.
    static func find(_ program: String) -> String? {
        if program.contains("/") { return FileManager.default.isExecutableFile(atPath: program) ? program : nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

}

/// A player started in its own session with no terminal, so it outlives us and never writes
/// into the REPL or the RPC stream. Its stderr is read (the last line kept) until it exits,
/// and a thread reaps it.
final class PlayerProcess: Sendable {
    let pid: pid_t
    /// Exit status (or signal) once it exited, and the last line it wrote to stderr.
    private let state = Mutex<(exit: Int32?, lastLine: String)>((nil, ""))

    private init(pid: pid_t) { self.pid = pid }

    static func spawn(_ executable: String, arguments: [String]) throws -> PlayerProcess {
        var pipe: [Int32] = [0, 0]
        guard Glibc.pipe(&pipe) == 0 else { throw HostError.player("cannot start \(executable): no pipe") }
        // Neither end leaks into other children; the player gets the write end as its stderr.
        _ = fcntl(pipe[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipe[1], F_SETFD, FD_CLOEXEC)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (0x80 in glibc, a GNU extension Swift does not import).
        posix_spawnattr_setflags(&attributes, 0x80)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        close(pipe[1])
        guard status == 0 else {
            close(pipe[0])
            throw HostError.player("cannot start \(executable): \(String(cString: strerror(status)))")
        }
        let child = pid
        let process = PlayerProcess(pid: child)
        let readEnd = pipe[0]
        Thread.detachNewThread { process.drain(readEnd) }
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0, errno == EINTR {}
            process.state.withLock { $0.exit = status }
        }
        return process
    }

    /// Reads stderr to its end (so the player never blocks on a full pipe), keeping the last
    /// non-empty line.
    private func drain(_ fd: Int32) {
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var tail: [UInt8] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            tail += buffer[0..<n]
            if tail.count > 8192 { tail.removeFirst(tail.count - 8192) }
            let text = String(decoding: tail, as: UTF8.self)
            if let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).last(where: { !$0.allSatisfy(\.isWhitespace) })
            {
                state.withLock { $0.lastLine = DisplayText.clean(String(line.suffix(300))) }
            }
        }
    }

    /// Why the player stopped within `window`, or nil when it is still running (or exited
    /// cleanly, as players that hand over to another process do).
    func earlyFailure(within window: Duration) async -> String? {
        let deadline = ContinuousClock.now + window
        while ContinuousClock.now < deadline {
            if let status = state.withLock({ $0.exit }) {
                // Give the stderr reader a moment to see the last line.
                try? await Task.sleep(for: .milliseconds(50))
                let line = state.withLock { $0.lastLine }
                let said = line.isEmpty ? "" : ": " + line
                let signal = status & 0x7f
                if signal != 0 { return "was killed by signal \(signal) at once\(said)" }
                let code = (status >> 8) & 0xff
                return code == 0 ? nil : "exited at once with status \(code)\(said)"
            }
            try? await Task.sleep(for: .milliseconds(25))
        }
        return nil
    }
}

extension HostRuntime {
    /// What playing `id` means: itself when it is media (or downloaded), else a movie's first
    /// trailer, a show's newest episode, a channel's newest video, a playlist's first.
    func whatToPlay(_ id: ItemID) async throws -> (ItemID, String?) {
        if let download = try await store.download(id), download.state == .completed { return (id, nil) }
        let item = try await itemOrSnapshot(id)
        if item.enclosure != nil || [.video, .episode, .post].contains(id.kind) { return (id, nil) }
        if let trailer = item.extra?["trailer"].flatMap({ try? ItemID(parsing: $0) }) { return (trailer, "the first trailer") }
        guard [.podcast, .channel, .playlist].contains(id.kind) else {
            throw ProviderFailure(
                provider: id.provider,
                error: .notFound("\(id) has nothing to play\(id.kind == .movie ? " (no trailer is listed for it)" : "")"))
        }
        let page = try await withProvider(id.provider) { try await $0.children(of: id, cursor: nil) }
        guard let first = page.items.first(where: { $0.enclosure != nil || $0.kind == .video }) else {
            throw ProviderFailure(provider: id.provider, error: .notFound("\(item.title) has nothing to play yet"))
        }
        let note =
            switch id.kind {
            case .podcast: "the newest episode"
            case .channel: "the newest video"
            default: "the first video"
            }
        return (first.id, note)
    }

    /// The file or URL to hand the player for a media item: the download when complete, else
    /// the media URL, a post's first audio or video, or the page (which mpv resolves for YouTube).
    func playTarget(_ id: ItemID) async throws -> (String, Bool) {
        if let download = try await store.download(id), download.state == .completed,
            FileManager.default.fileExists(atPath: download.path)
        {
            return (download.path, true)
        }
        let item: MediaItem
        do {
            item = try await itemOrSnapshot(id)
        } catch  where id.provider == "youtube" && id.kind == .video {
            // A trailer TMDB links to, with no YouTube key configured: its watch page still plays.
            return ("https://www.youtube.com/watch?v=" + id.nativeID, false)
        }
        if let url = item.enclosure?.url { return (url, false) }
        if id.kind == .post {
            guard let media = item.entities?.first(where: { $0.type == .media })?.value else {
                throw ProviderFailure(
                    provider: id.provider, error: .notFound("this post has no audio or video; `show` lists its links"))
            }
            return (media, false)
        }
        guard let url = item.url else {
            throw ProviderFailure(provider: id.provider, error: .notFound("\(id) has nothing to play"))
        }
        return (url, false)
    }
}
