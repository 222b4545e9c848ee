import Foundation
import MediaKit

#if canImport(Glibc)
    import Glibc
#endif

/// Opens an item in the configured player: the downloaded file when there is one, else the
/// stream (the media URL, or the page URL for players that resolve it, like mpv with YouTube).
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
    }

    public func run(on host: HostRuntime) async throws -> Response {
        var target: String?
        var local = false
        if let download = try await host.store.download(id), download.state == .completed,
            FileManager.default.fileExists(atPath: download.path)
        {
            target = download.path
            local = true
        } else {
            let item = try await host.itemOrSnapshot(id)
            target = item.enclosure?.url ?? item.url
        }
        guard let target else { throw ProviderFailure(provider: id.provider, error: .notFound("\(id) has nothing to play")) }
        let words = host.config.command(HostSettings.playerCommand)
        guard let program = words.first, let executable = Self.find(program) else {
            throw HostError.player(
                "the player '\(words.first ?? "")' was not found; install it or set player.command (e.g. `config player.command vlc`)"
            )
        }
        let command = words + [target]
        let pid = try Self.spawnDetached(executable, arguments: Array(command.dropFirst()))
        return Response(id: id, command: command, target: target, local: local, pid: Int(pid))
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

    /// Starts the player in its own session with no terminal I/O, so it outlives us and never
    /// writes into the REPL or the RPC stream; a thread reaps it when it exits.
    static func spawnDetached(_ executable: String, arguments: [String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (0x80 in glibc, a GNU extension Swift does not import).
        posix_spawnattr_setflags(&attributes, 0x80)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in Int32(0)...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard status == 0 else { throw HostError.player("cannot start \(executable): \(String(cString: strerror(status)))") }
        let child = pid
        Thread.detachNewThread {
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        return pid
    }
}
