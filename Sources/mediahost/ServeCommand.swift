import ArgumentParser
import Basics
import FoundationEssentials
import HostService
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

    @Flag(
        help:
            "Say whether a service runs for this data dir (exit status 1 when none does, 2 when one holds its socket but does not answer)."
    )
    var status = false

    @Option(
        help: ArgumentHelp(
            "Also serve the web remote on host:port (0.0.0.0:8733 for the home network, 127.0.0.1:8733 for this machine only; port 0: any free one), for this run; web.listen sets it for good.",
            valueName: "host:port"))
    var listen: String?

    /// Seconds `--status` waits for the service's answer.
    static let statusTimeout = 5

    func run() async throws {
        let options = global.host
        let socket = ServiceSocket(paths: options.paths)
        if status {
            guard let service = ServiceConnection.connect(socket) else {
                print("no mediahost service runs for this data dir (\(socket.path))")
                throw ExitCode(1)
            }
            defer { service.close() }
            let info: JSONValue
            do {
                info = try await service.value("host.info", params: nil, timeout: .seconds(Self.statusTimeout))
            } catch {
                // Something holds the socket: a service that is stuck, or still starting.
                let pid = (try? String(contentsOfFile: socket.pidFile, encoding: .utf8))?.trimming(.whitespacesAndNewlines)
                let closed = error.isServiceGone || error.message.contains("stopped during")
                let what = closed ? "closed the connection" : "did not answer within \(Self.statusTimeout) s"
                print(
                    "a mediahost service holds \(socket.path)\(pid.map { " (pid \($0))" } ?? "") but \(what); "
                        + "`mediahost serve --stop` stops it")
                throw ExitCode(2)
            }
            print(
                "mediahost service running: pid \(info["pid"]?.intValue ?? 0), data dir \(info["dataDir"]?.stringValue ?? ""), socket \(socket.path)"
            )
            return
        }
        if stop {
            guard socket.isServing, let text = try? String(contentsOfFile: socket.pidFile, encoding: .utf8),
                let pid = Int32(text.trimming(.whitespacesAndNewlines))
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
        // The setting's environment variable, read as the host is made (it wins over the file
        // and the store, as any environment variable does).
        if let listen { setenv("MEDIAHOST_WEB_LISTEN", listen, 1) }
        let listener: Int32
        do {
            listener = try socket.listen()
        } catch {
            throw StartupFailure(message: "\(error)")
        }
        let host = try await options.makeHost()
        await ServiceServer.run(host: host, socket: socket, listener: listener)
    }

    /// Starts `mediahost serve` for `paths`' data dir in the background (HostService's launcher).
    static func startInBackground(options: HostOptions, paths: HostPaths) async -> Bool {
        await ServiceServer.startInBackground(paths: paths, configFile: options.config)
    }
}
