import Basics
import Dispatch
import FoundationEssentials
import JSONRPC
import Logging
import MediaHost

#if canImport(Glibc)
    import Glibc
#endif

/// The background service (`mediahost serve`): one host for many front ends on the data dir's
/// socket, every notification to every client; started in the background by a front end when
/// host.background is always; ended cleanly by SIGTERM or SIGINT.
public enum ServiceServer {
    /// The most bytes waiting for one client before it misses notifications.
    public static let maxPendingOutput = 16 << 20

    nonisolated(unsafe) static var signalSources: [any DispatchSourceSignal] = []

    /// Serves `host` on `listener` (listening on `socket`) until a signal ends the process: the
    /// socket goes, every component keeps what must outlive it, downloads stop where they are.
    public static func run(host: HostRuntime, socket: ServiceSocket, listener: Int32) async -> Never {
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber)
            source.setEventHandler {
                socket.remove()
                Task.detached {
                    await host.stop()
                    Glibc.exit(0)
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + 2) { Glibc.exit(0) }
            }
            source.resume()
            signalSources.append(source)
        }
        await host.downloads.resumeInterrupted()
        await host.serviceWillStart()
        Descriptor.standardError("mediahost service on \(socket.path) (pid \(getpid()))\n")
        detachThread {
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR || errno == ECONNABORTED { continue }
                    break
                }
                Task.detached { await serve(client, host: host) }
            }
        }
        // Until a signal ends the process.
        while true { try? await Task.sleep(for: .seconds(3600)) }
    }

    /// One client: a JSON-RPC connection over its socket, with every notification.
    static func serve(_ fd: Int32, host: HostRuntime) async {
        // Nothing written to a client waits for it to read: its replies and notifications wait
        // in its own queue. A client that lets this pile up (an editor suspended with Ctrl-Z,
        // say) has its requests read no further and misses notifications until it reads
        // again; it holds neither anyone else's thread nor memory without bound.
        let connection = RPCConnection(
            input: fd, output: fd, handler: host.dispatcher, maxConcurrentRequests: 256, maxPendingOutput: maxPendingOutput,
            // Clients of the socket hear every notification from the start, one JSON text a line,
            // until they speak in another framing.
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

    /// Starts `<executable> serve` for `paths`' data dir as a process of its own session (it
    /// outlives this one), its output in `<data dir>/service.log`, and waits until it answers.
    /// - Parameter configFile: the `--config` given to this process, if any.
    public static func startInBackground(paths: HostPaths, configFile: String?) async -> Bool {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var arguments = ["serve", "--data-dir", paths.dataDir]
        if let configFile { arguments += ["--config", configFile] }
        // A session of its own: no SIGHUP when the terminal goes. Reaped by this process if it
        // ends while this one runs (no zombie is left).
        let service: ChildProcess
        do {
            service = try ChildProcess(
                executable, arguments: arguments, standardInput: .null,
                standardOutput: .appending(toFile: paths.dataDir + "/service.log"), standardError: .output,
                grouping: .session)
        } catch {
            return false
        }
        let socket = ServiceSocket(paths: paths)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline, service.isRunning {
            if socket.isServing { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        // One that ended at once may have found another starting first.
        return socket.isServing
    }
}
