import Basics
import FoundationEssentials
import JSONRPC
import MediaHost

#if canImport(Glibc)
    import Glibc
#endif

/// `--sandbox`: the replicas run in a child process (`mediahost-sandbox --child`), so the product
/// binary links no HTTP server. The child reports the providers' settings as one JSON line and
/// exits when our end of its stdin closes, however this process ends (kill -9 included).
enum SandboxChild {
    /// The running child and the pipe that keeps it alive, for the life of the command.
    nonisolated(unsafe) private static var running: ChildProcess?

    static let missing =
        "cannot find mediahost-sandbox next to mediahost or on PATH (set MEDIAHOST_SANDBOX_BIN); `make build` builds it"

    /// Starts the child and returns the settings that point every provider at it.
    /// - Parameter portFile: where the sandbox's port is kept for the data dir: the next sandbox
    ///   listens there again when it can, so what this one kept (a login's server, the addresses
    ///   of pictures and media in favorites) still reaches a replica.
    static func start(portFile: String) throws -> [String: String] {
        guard let binary = binary() else { throw StartupFailure(message: missing) }
        let process: ChildProcess
        var arguments = ["--child"]
        if let text = try? String(contentsOfFile: portFile, encoding: .utf8),
            let port = Int(text.trimming(.whitespacesAndNewlines)), (1024...65535).contains(port)
        {
            arguments += ["--port", String(port)]
        }
        do {
            process = try ChildProcess(binary, arguments: arguments, standardInput: .pipe, standardOutput: .pipe)
        } catch {
            throw StartupFailure(message: "cannot start the sandbox (\(binary)): \(error)")
        }
        // Our end of its stdin stays open (never closed) while this process lives.
        running = process
        guard let output = process.standardOutput else { preconditionFailure("the sandbox's stdout was asked for") }
        defer { close(output) }
        // The first line is the settings; the child writes nothing else on stdout.
        var line: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !line.contains(0x0A) {
            let count = read(output, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw StartupFailure(message: "the sandbox stopped before it was ready") }
            line += chunk[0..<count]
        }
        guard let object = try? JSONValue(parsing: line[..<(line.firstIndex(of: 0x0A) ?? line.endIndex)]).objectValue,
            case let settings = object.compactMapValues(\.stringValue), settings.count == object.count
        else {
            throw StartupFailure(message: "the sandbox answered something unexpected at start")
        }
        return settings
    }

    /// Keeps the port the sandbox took in `portFile` (in the data dir, once the host made it).
    static func remember(_ settings: [String: String], in portFile: String) {
        guard let port = settings.values.lazy.compactMap(Self.port(of:)).first else { return }
        // Only a convenience for the next sandbox: without it that one takes another port.
        _ = FileManager.default.createFile(atPath: portFile, contents: Data("\(port)\n".utf8))
    }

    /// The port of `http://127.0.0.1:<port>/…`.
    static func port(of url: String) -> Int? {
        guard url.hasPrefix("http://127.0.0.1:") else { return nil }
        return Int(url.dropFirst("http://127.0.0.1:".count).prefix { $0.isNumber })
    }

    /// mediahost-sandbox: MEDIAHOST_SANDBOX_BIN, else next to this executable, else on PATH.
    static func binary() -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["MEDIAHOST_SANDBOX_BIN"], !path.isEmpty { return path }
        if let me = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let sibling = Path.directory(of: me) + "/mediahost-sandbox"
            if FileManager.default.isExecutableFile(atPath: sibling) { return sibling }
        }
        return Path.findProgram("mediahost-sandbox", path: environment["PATH"] ?? "")
    }
}
