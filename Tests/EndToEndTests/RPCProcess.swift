import Basics
import Foundation
import JSONRPC
import Sandbox
import Synchronization
import TestSupport

/// The built `mediahost` binary, next to the test bundle (or MEDIAHOST_BIN).
func mediahostBinary() -> String {
    if let path = ProcessInfo.processInfo.environment["MEDIAHOST_BIN"] { return path }
    let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    var directory = runner.deletingLastPathComponent()
    // Bundles on some platforms nest the executable: walk up to the build folder.
    for _ in 0..<4 {
        let candidate = directory.appendingPathComponent("mediahost").path
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        directory = directory.deletingLastPathComponent()
    }
    return ".build/debug/mediahost"
}

/// `arguments` with `--data-dir dataDir` when they start a sandbox without naming one: a
/// sandbox keeps its things apart from MEDIAHOST_DATA_DIR's (`<data dir>-sandbox`), and a test
/// reads what it did in the folder it made. (`SandboxIsolationTests` runs without it.)
func sandboxInDataDir(_ arguments: [String], _ dataDir: String) -> [String] {
    guard arguments.contains("--sandbox"), !arguments.contains(where: { $0.hasPrefix("--data-dir") }) else {
        return arguments
    }
    return arguments + ["--data-dir", dataDir]
}

/// A running `mediahost` process with pipes on stdin, stdout and stderr.
///
/// Started as a `ChildProcess`, not Foundation's `Process`: on Linux that one learns of a
/// child's end when a socket pair it shares with the child closes, and makes that pair without
/// close-on-exec; a process another test started in the same instant (between its list of
/// descriptors to close and its spawn) inherited the pair, so a `call` that had exited long
/// before was seen running until that other process ended (one call in several thousand, in
/// full runs only: CLITests' 120 calls timed out at 60 s).
final class MediahostProcess: @unchecked Sendable {
    let process: ChildProcess
    private let input: Mutex<Int32>
    let dataDir: String
    private let state = OutputState()

    /// - Parameter executable: another program to run with the same environment (a shell
    ///   pipeline around mediahost); the built mediahost by default.
    /// - Parameter ownSandbox: `--sandbox` keeps its own data dir beside MEDIAHOST_DATA_DIR's
    ///   (else `dataDir` is named to it with `--data-dir`).
    init(
        _ arguments: [String], dataDir: String? = nil, environment: [String: String] = [:], executable: String? = nil,
        ownSandbox: Bool = false
    ) throws {
        self.dataDir = try dataDir ?? makeTemporaryDirectory()
        var env = ProcessInfo.processInfo.environment
        env["MEDIAHOST_DATA_DIR"] = self.dataDir
        env["XDG_CONFIG_HOME"] = self.dataDir + "/config"
        env["XDG_CACHE_HOME"] = self.dataDir + "/cache"
        env["NO_COLOR"] = "1"
        // SponsorBlock is on by default: a test that plays a YouTube video never reaches the
        // real server (a closed port answers at once); tests of it name the sandbox's.
        env["MEDIAHOST_SPONSORBLOCK_SERVER"] = "http://127.0.0.1:9"
        for (key, value) in environment { env[key] = value }
        process = try ChildProcess(
            executable ?? mediahostBinary(),
            arguments: executable != nil || ownSandbox ? arguments : sandboxInDataDir(arguments, self.dataDir),
            environment: env, standardInput: .pipe, standardOutput: .pipe, standardError: .pipe)
        guard let stdin = process.standardInput, let stdout = process.standardOutput,
            let stderr = process.standardError
        else { throw ChildProcess.SpawnError(code: EBADF) }
        input = Mutex(stdin)
        let state = self.state
        // Each pipe is read by a thread of its own with read(2) until its end, then closed (so
        // its descriptor is not reused while it is read). Not a dispatch source: one outlived a
        // handle closed at deinit, and libdispatch then crashed the whole test process on the
        // reused descriptor (SIGSEGV in _dispatch_event_loop_drain, once on a fresh clone).
        readToEnd(stdout, name: "mediahost-stdout") { bytes in
            let chunk = Array(bytes)
            state.outputBytes.withLock { $0 += chunk.count }
            state.output.withLock { $0.append(chunk) }
        } end: {
            state.eof.withLock { $0 = true }
        }
        readToEnd(stderr, name: "mediahost-stderr") { bytes in
            state.errorText.withLock { $0 += String(decoding: bytes, as: UTF8.self) }
        } end: {
            state.errorEOF.withLock { $0 = true }
        }
    }

    func send(_ text: String) { send(Array(text.utf8)) }
    func send(_ bytes: [UInt8]) {
        input.withLock { fd in
            guard fd >= 0 else { return }
            Descriptor.writeAll(fd, bytes)
        }
    }
    func sendLine(_ text: String) { send(text + "\n") }

    func closeInput() {
        input.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    var errors: String { state.errorText.withLock { $0 } }

    /// Waits until stderr has been read to its end (or `timeout` passes: a process it started may
    /// hold it open): on a busy machine a process's last words are read well after it exited.
    func errorsToTheEnd(timeout: Duration = .seconds(10)) async -> String {
        let deadline = ContinuousClock.now + timeout
        while !state.errorEOF.withLock({ $0 }), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(2)) }
        return errors
    }
    var bytesReceived: Int { state.outputBytes.withLock { $0 } }

    /// The next message on stdout, or nil when none arrives in time.
    func next(timeout: Duration = .seconds(30)) async -> (value: JSONValue?, framing: Framing, raw: [UInt8])? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let event = state.output.withLock({ $0.next() }) {
                guard case .message(let bytes, let framing) = event else { return (nil, .newline, []) }
                return (try? JSONParser.parse(bytes), framing, bytes)
            }
            if state.eof.withLock({ $0 }) && state.output.withLock({ $0.pendingCount == 0 }) { return nil }
            // Sleeping, not blocking: a blocked thread would starve the (2-thread) concurrency pool
            // that every other test runs on.
            try? await Task.sleep(for: .milliseconds(1))
        }
        return nil
    }

    /// Exactly `count` messages, then nothing more within `quiet`.
    func messages(_ count: Int, timeout: Duration = .seconds(20)) async -> [JSONValue] {
        var values: [JSONValue] = []
        while values.count < count, let message = await next(timeout: timeout) { values.append(message.value ?? "<not JSON>") }
        return values
    }

    /// The replies to `ids`, by id, and the notifications that came meanwhile (a broadcast such
    /// as `library.changed` may come before or after a reply).
    func replies(_ ids: Set<Int>, timeout: Duration = .seconds(20)) async -> (byID: [Int: JSONValue], notifications: [JSONValue])
    {
        var byID: [Int: JSONValue] = [:]
        var notifications: [JSONValue] = []
        while !ids.isSubset(of: Set(byID.keys)), let message = await next(timeout: timeout) {
            guard let value = message.value else { continue }
            if let id = value["id"]?.intValue { byID[id] = value } else { notifications.append(value) }
        }
        return (byID, notifications)
    }

    func waitForExit(timeout: Duration = .seconds(60)) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(2)) }
        if process.isRunning {
            print("mediahost \(process.pid) did not exit in \(timeout); its stacks:\n\(await stacks(of: process.pid))")
            process.terminate()
            return nil
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { process.terminate() }
        closeInput()
    }
}

/// Starts `mediahost sandbox --port 0` and returns it with the podcasts base URL it prints.
func startSandboxProcess(rate: Int? = nil) async throws -> (MediahostProcess, String) {
    let process = try MediahostProcess(["sandbox", "--port", "0"] + (rate.map { ["--media-rate", String($0)] } ?? []))
    for _ in 0..<5 {
        guard let line = await process.next(timeout: .seconds(20)) else { break }
        let text = String(decoding: line.raw, as: UTF8.self)
        if let range = text.range(of: "MEDIAHOST_PODCASTS_BASE_URL=") { return (process, String(text[range.upperBound...])) }
    }
    process.process.terminate()
    throw SandboxStartFailure()
}

struct SandboxStartFailure: Error, CustomStringConvertible {
    var description: String { "mediahost sandbox did not print its base URL" }
}

/// Runs `mediahost` to completion and returns its status and output.
func runMediahost(
    _ arguments: [String], input: String? = nil, dataDir: String? = nil, environment: [String: String] = [:],
    ownSandbox: Bool = false
) async throws -> (status: Int32, stdout: String, stderr: String) {
    let process = try MediahostProcess(arguments, dataDir: dataDir, environment: environment, ownSandbox: ownSandbox)
    if let input { process.send(input) }
    process.closeInput()
    var out: [UInt8] = []
    let status = await process.waitForExit() ?? -1
    // To the end of its stdout (next answers nil at once then): on a busy machine the last
    // output can be read well after the process has exited.
    while let message = await process.next(timeout: .seconds(10)) { out += message.raw + [0x0A] }
    let errors = await process.errorsToTheEnd()
    return (status, String(decoding: out, as: UTF8.self), errors)
}

/// What a process wrote, shared with the pipe handlers.
final class OutputState: Sendable {
    let output = Mutex<MessageSplitter>(MessageSplitter(maxMessageSize: 64 << 20))
    let outputBytes = Mutex<Int>(0)
    let errorText = Mutex<String>("")
    let eof = Mutex<Bool>(false)
    let errorEOF = Mutex<Bool>(false)
}

/// Reads `fd` on a thread of its own until the end (or an error other than EINTR), handing each
/// chunk to `body`, then closes it and calls `end`.
func readToEnd(
    _ fd: Int32, name: String, _ body: @escaping @Sendable (UnsafeRawBufferPointer) -> Void,
    end: @escaping @Sendable () -> Void
) {
    let thread = Thread {
        Descriptor.readToEnd(fd, body)
        close(fd)
        end()
    }
    thread.name = name
    thread.start()
}

extension ChildProcess {
    /// Foundation's names, which the tests were written with.
    var processIdentifier: pid_t { pid }
    func interrupt() { terminate(signal: SIGINT) }
}
