import Foundation
import MediaHost

#if canImport(Glibc)
    import Glibc
#endif

/// `--sandbox`: the replicas run in a child process (`mediahost-sandbox --child`), so the product
/// binary links no HTTP server. The child reports the providers' settings as one JSON line and
/// exits when our end of its stdin closes, however this process ends (kill -9 included).
enum SandboxChild {
    /// The running child and the pipe that keeps it alive, for the life of the command.
    nonisolated(unsafe) private static var running: (Process, Pipe)?

    static let missing =
        "cannot find mediahost-sandbox next to mediahost or on PATH (set MEDIAHOST_SANDBOX_BIN); `make build` builds it"

    /// Starts the child and returns the settings that point every provider at it.
    static func start() throws -> [String: String] {
        guard let binary = binary() else { throw StartupFailure(message: missing) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["--child"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        do {
            try SignalMask.unblocked { try process.run() }
        } catch {
            throw StartupFailure(message: "cannot start the sandbox (\(binary)): \(error.localizedDescription)")
        }
        running = (process, input)
        // The first line is the settings; the child writes nothing else on stdout.
        var line = Data()
        let reader = output.fileHandleForReading
        while !line.contains(0x0A) {
            let chunk = reader.availableData
            guard !chunk.isEmpty else { throw StartupFailure(message: "the sandbox stopped before it was ready") }
            line += chunk
        }
        guard let settings = try? JSONSerialization.jsonObject(with: line) as? [String: String] else {
            throw StartupFailure(message: "the sandbox answered something unexpected at start")
        }
        return settings
    }

    /// mediahost-sandbox: MEDIAHOST_SANDBOX_BIN, else next to this executable, else on PATH.
    static func binary() -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["MEDIAHOST_SANDBOX_BIN"], !path.isEmpty { return path }
        if let me = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let sibling = (me as NSString).deletingLastPathComponent + "/mediahost-sandbox"
            if FileManager.default.isExecutableFile(atPath: sibling) { return sibling }
        }
        for directory in (environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/mediahost-sandbox"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
