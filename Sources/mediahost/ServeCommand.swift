import ArgumentParser
import Foundation
import HostPlayer
import HostService
import HostShare
import JSONRPC
import MediaHost

#if canImport(Glibc)
    import Glibc
#endif

/// `mediahost serve`: the host as a background service on a Unix socket, for any number of
/// clients at once; `mediahost call` and `mediahost rpc` use it when it runs.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the host as a background service on a Unix socket (downloads go on when front ends close).",
        discussion: """
            The socket is $XDG_RUNTIME_DIR/mediahost/rpc-<data dir hash>.sock (or <data dir>/run/rpc.sock), \
            0600 in a 0700 folder, speaking the same JSON-RPC as `mediahost rpc` to every client; \
            every notification reaches every client. While it runs, `mediahost call` and `mediahost rpc` \
            (a stdio bridge then, so editors need no change) go to it; --no-service keeps a command in \
            its own process. One service per data dir.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Stop the service that runs for this data dir.")
    var stop = false

    @Flag(help: "Say whether a service runs for this data dir (exit status 1 when none does).")
    var status = false

    func run() async throws {
        let options = global.host
        let socket = ServiceSocket(paths: HostPaths.resolve(configFlag: options.config, dataDirFlag: options.dataDir))
        if status {
            let service = ServiceConnection.connect(socket)
            defer { service?.close() }
            guard let info = try? await service?.value("host.info", params: nil, timeout: .seconds(5)) else {
                print("no mediahost service runs for this data dir (\(socket.path))")
                throw ExitCode(1)
            }
            print(
                "mediahost service running: pid \(info["pid"]?.intValue ?? 0), data dir \(info["dataDir"]?.stringValue ?? ""), socket \(socket.path)"
            )
            return
        }
        if stop {
            guard socket.isServing, let text = try? String(contentsOfFile: socket.pidFile, encoding: .utf8),
                let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            else {
                print("no mediahost service runs for this data dir")
                return
            }
            kill(pid, SIGTERM)
            let deadline = Date().addingTimeInterval(10)
            while socket.isServing, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
            print(socket.isServing ? "the service (pid \(pid)) did not stop within 10 s" : "stopped the service (pid \(pid))")
            return
        }
        signal(SIGPIPE, SIG_IGN)
        let listener: Int32
        do {
            listener = try socket.listen()
        } catch {
            throw StartupFailure(message: "\(error)")
        }
        let host = try await options.makeHost()
        // SIGTERM and SIGINT end the service cleanly: the socket goes, downloads stop where they
        // are (their .part files resume next time).
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber)
            source.setEventHandler {
                socket.remove()
                // Where playback got to is kept (mpv plays on; the next process takes it over), and
                // downloads stop where they are, saved as queued for the next process to resume.
                Task.detached {
                    await host.existingComponent(PlayerController.self)?.saveNow()
                    await host.downloads.handOver()
                    Glibc.exit(0)
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + 2) { Glibc.exit(0) }
            }
            source.resume()
            Self.signalSources.append(source)
        }
        await host.downloads.resumeInterrupted()
        // An mpv a front end started (the REPL that handed over) is followed from here on; one
        // that does not answer is reported by player.status, and never delays serving.
        Task.detached { _ = try? await host.dispatcher.run(PlayerStatusGet()) }
        Descriptor.standardError("mediahost service on \(socket.path) (pid \(getpid()))\n")
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    break
                }
                Task.detached { await Self.serve(client, host: host) }
            }
        }
        // Until a signal ends the process.
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    /// The most bytes waiting for one client before it is dropped.
    static let maxPendingOutput = 16 << 20

    nonisolated(unsafe) static var signalSources: [any DispatchSourceSignal] = []

    /// Starts `mediahost serve` for `paths`' data dir as a process of its own session (it
    /// outlives this one), its output in `<data dir>/service.log`, and waits until it answers.
    static func startInBackground(options: HostOptions, paths: HostPaths) async -> Bool {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var arguments = [executable, "serve", "--data-dir", paths.dataDir]
        if let config = options.config { arguments += ["--config", config] }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, paths.dataDir + "/service.log", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of this process goes with it.
        actions.closeInheritedDescriptors()
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // POSIX_SPAWN_SETSID (glibc, _GNU_SOURCE): no SIGHUP when the terminal goes; signals as
        // a program expects them (this thread blocks most, and SIGPIPE is ignored here).
        attributes.startWithDefaultSignals(flags: 0x80)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, &attributes, argv, environ) == 0 else { return false }
        let socket = ServiceSocket(paths: paths)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if socket.isServing { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// One client: a JSON-RPC connection over its socket, with every notification.
    static func serve(_ fd: Int32, host: HostRuntime) async {
        // Nothing written to a client waits for it to read: its replies and notifications wait
        // in its own queue. A client that lets this pile up (an editor suspended with Ctrl-Z,
        // say) has its requests read no further and misses notifications until it reads
        // again; it holds neither anyone else's thread nor memory without bound.
        let connection = RPCConnection(
            input: fd, output: fd, handler: host.dispatcher, maxConcurrentRequests: 256, maxPendingOutput: Self.maxPendingOutput,
            // Clients of the socket hear every notification from the start, one JSON text a line,
            // until they speak in another framing (`rpc`'s bridge puts each in its client's).
            framing: .newline
        ) { failure in
            host.logger.warning("a client was dropped: \(failure)")
        } onMissed: { count in
            if count == 0 {
                host.logger.notice("a client is not reading: notifications to it are skipped until it does")
            } else {
                host.logger.notice("a client reads again; \(count) notifications to it were skipped")
            }
        }
        let subscription = host.events.subscribe { event in connection.notify(method: event.method, params: event.params) }
        await connection.run()
        host.events.unsubscribe(subscription)
        close(fd)
    }
}
