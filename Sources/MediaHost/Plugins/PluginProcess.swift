import Foundation
import JSONRPC
import MediaKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A plugin's process and the JSON-RPC client the host speaks to it with (newline-delimited, on
/// its stdin/stdout; its stderr is its log). Started on the first call, restarted after it dies
/// (with a growing pause between attempts), stopped when idle and when the host goes.
final class PluginProcess: Sendable {
    let manifest: PluginManifest
    /// The settings sent in `initialize`.
    private let settings: [String: String]
    private let logger: Logger
    private let state = Mutex(State())
    /// Serializes starting: one `initialize` at a time.
    private let starting = AsyncLock()

    /// The longest message a plugin may send; a bigger one costs that plugin its process.
    static let maxMessageSize = 16 << 20
    /// Lines of a plugin's stderr kept for error messages.
    static let stderrLines = 8

    struct State {
        var process: Process?
        var input: PluginInput?
        var nextID = 0
        var pending: [Int: CheckedContinuation<JSONValue, any Error>] = [:]
        var stderr: [String] = []
        /// Consecutive starts that ended in a crash, and when the last one ended.
        var failures = 0
        var lastExit: ContinuousClock.Instant?
        var lastUse = ContinuousClock.now
        var descriptor: PluginHello?
        /// The last process started, running or not.
        var lastProcess: Process?
        /// Signalled when the stderr reader of the current process has read to the end.
        var logDone: DispatchSemaphore?
        var generation = 0
    }

    /// Seconds without a call after which the process is stopped (started again at the next).
    private let idle: Double

    init(manifest: PluginManifest, settings: [String: String], logger: Logger, idle: Double = 300) {
        self.manifest = manifest
        self.settings = settings
        self.logger = logger
        self.idle = idle
    }

    deinit {
        let process = state.withLock { state in
            for continuation in state.pending.values { continuation.resume(throwing: CancellationError()) }
            state.pending = [:]
            state.input?.close()
            return state.process
        }
        if let process, process.isRunning { process.terminate() }
    }

    /// Calls `method` on the plugin, starting it first when it is not running.
    /// - Throws: `ProviderError` (the plugin's own errors, or what went wrong with it).
    func call(_ method: String, _ params: JSONValue, timeout: Double) async throws -> JSONValue {
        do {
            return try await callRaw(method, params, timeout: timeout)
        } catch let error as PluginCallError {
            throw error.providerError
        }
    }

    /// The same, with the plugin's JSON-RPC errors as they came (`PluginCallError`), for checks.
    func callRaw(_ method: String, _ params: JSONValue, timeout: Double) async throws -> JSONValue {
        _ = try await running()
        return try await send(method, params, timeout: timeout)
    }

    /// Whether the process has ended within `seconds` (after `stop`).
    func hasExited(within seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if state.withLock({ $0.lastProcess?.isRunning != true }) { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    /// What the plugin answered `initialize` with, starting it when needed.
    func running() async throws -> PluginHello {
        if let descriptor = state.withLock({ $0.process?.isRunning == true ? $0.descriptor : nil }) { return descriptor }
        return try await starting.run {
            if let descriptor = state.withLock({ $0.process?.isRunning == true ? $0.descriptor : nil }) { return descriptor }
            try start()
            let answer: JSONValue
            do {
                answer = try await send(
                    "initialize",
                    [
                        "protocolVersion": 1, "provider": .string(manifest.id),
                        "settings": .object(settings.mapValues(JSONValue.string)),
                    ],
                    timeout: manifest.startTimeout)
            } catch let error as PluginCallError {
                throw error.providerError
            }
            let descriptor = try PluginReply.decode(PluginHello.self, answer, plugin: manifest.id, method: "initialize")
            guard descriptor.id == manifest.id else {
                stop()
                throw ProviderError.invalidResponse(
                    "plugin \(manifest.id) calls itself '\(descriptor.id)' in its initialize answer; its folder or [plugins] entry names it \(manifest.id)"
                )
            }
            state.withLock {
                $0.descriptor = descriptor
                $0.failures = 0
            }
            return descriptor
        }
    }

    /// Stops the plugin: `shutdown`, then its stdin closed (a plugin exits at the end of its input).
    func stop() {
        let (process, input) = state.withLock { state -> (Process?, PluginInput?) in
            defer {
                state.process = nil
                state.input = nil
                state.descriptor = nil
            }
            return (state.process, state.input)
        }
        if let input {
            _ = input.write(Array(#"{"jsonrpc":"2.0","method":"shutdown"}"#.utf8) + [0x0A])
            input.close()
        }
        if let process, process.isRunning {
            DispatchQueue.global().asyncAfter(deadline: .now() + 2) { if process.isRunning { process.terminate() } }
        }
    }

    /// Stops the plugin when it has not been called for `idle` seconds.
    func stopIfIdle(_ idle: Double) {
        let idle = state.withLock { $0.process != nil && $0.pending.isEmpty && ContinuousClock.now - $0.lastUse > .seconds(idle) }
        if idle {
            logger.debug("plugin \(manifest.id) stopped after \(Int(self.idle)) s without calls")
            stop()
        }
    }

    // MARK: The process

    private func start() throws {
        let pause = state.withLock { state -> Double in
            guard state.failures > 0, let last = state.lastExit else { return 0 }
            let wait = min(30, 0.5 * pow(2, Double(state.failures - 1)))
            let waited = ContinuousClock.now - last
            return waited < .seconds(wait) ? wait - Double(waited.components.seconds) : 0
        }
        if pause > 0 {
            throw ProviderError.network(
                "plugin \(manifest.id) crashed \(state.withLock { $0.failures }) time(s) in a row; it is started again in \(Int(pause.rounded(.up))) s\(lastWords())"
            )
        }
        // A plugin that exits with requests unsent makes writing to it fail with EPIPE, which
        // must be an error for that plugin, not SIGPIPE ending the host.
        Self.ignoreBrokenPipes
        let process = Process()
        process.executableURL = URL(fileURLWithPath: manifest.executable)
        process.arguments = manifest.arguments
        process.currentDirectoryURL = URL(fileURLWithPath: manifest.directory)
        process.environment = PluginManifest.environment(from: ProcessInfo.processInfo.environment, plugin: manifest)
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        let generation = state.withLock { state -> Int in
            state.generation += 1
            return state.generation
        }
        let logDone = DispatchSemaphore(value: 0)
        process.terminationHandler = { [weak self] process in self?.exited(process, generation: generation, logDone: logDone) }
        do {
            try process.run()
        } catch {
            throw ProviderError.notConfigured(
                "plugin \(manifest.id) cannot be started (\(manifest.executable)): \(error.localizedDescription)")
        }
        // The host's end of the plugin's stdin, owned by one object whose writes and close take a
        // lock: a write racing a close can never reach a closed (or reused) descriptor.
        let writer = PluginInput(fd: dup(input.fileHandleForWriting.fileDescriptor))
        try? input.fileHandleForWriting.close()
        state.withLock { state in
            state.logDone = logDone
            state.lastProcess = process
            state.process = process
            state.input = writer
            state.stderr = []
        }
        let reader = output.fileHandleForReading
        Thread.detachNewThread { [weak self] in self?.readReplies(reader) }
        // Stopped when idle: checked a few times per idle period while this process lives.
        let idle = self.idle
        Task.detached { [weak self] in
            while true {
                try? await Task.sleep(for: .seconds(max(0.25, idle / 4)))
                guard let self, self.state.withLock({ $0.generation == generation && $0.process != nil }) else { return }
                self.stopIfIdle(idle)
            }
        }
        let errorReader = errors.fileHandleForReading
        Thread.detachNewThread { [weak self] in
            self?.readLog(errorReader)
            logDone.signal()
        }
        logger.debug("plugin \(manifest.id) started: \(manifest.executable)")
    }

    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    private func exited(_ process: Process, generation: Int, logDone: DispatchSemaphore) {
        // Its last words first: its stderr reader reaches the end of the pipe soon after the exit.
        _ = logDone.wait(timeout: .now() + 0.5)
        let pending = state.withLock { state -> [CheckedContinuation<JSONValue, any Error>] in
            // Every crash counts towards the pause before the next start, even one reported
            // after a newer process was started.
            if process.terminationStatus != 0 || process.terminationReason == .uncaughtSignal {
                state.failures += 1
                state.lastExit = .now
            }
            guard state.generation == generation else { return [] }
            let pending = Array(state.pending.values)
            state.pending = [:]
            if state.process === process {
                state.process = nil
                state.input = nil
                state.descriptor = nil
            }
            return pending
        }
        guard !pending.isEmpty else { return }
        let error = ProviderError.network(
            "plugin \(manifest.id) exited (status \(process.terminationStatus)) before answering\(lastWords())")
        for continuation in pending { continuation.resume(throwing: error) }
    }

    /// ": its last words on stderr" for error messages, or "".
    private func lastWords() -> String {
        let lines = state.withLock { $0.stderr }
        return lines.isEmpty ? "" : "; its stderr ended with: " + lines.suffix(3).joined(separator: " | ")
    }

    private func readReplies(_ handle: FileHandle) {
        var splitter = MessageSplitter(maxMessageSize: Self.maxMessageSize)
        let fd = handle.fileDescriptor
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let n = read(fd, chunk.baseAddress, chunk.count)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            splitter.append(UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            while let event = splitter.next() {
                switch event {
                case .message(let bytes, _): receive(bytes)
                case .tooLarge:
                    fail("plugin \(manifest.id) sent a message over \(Self.maxMessageSize >> 20) MiB")
                    return
                default:
                    fail("plugin \(manifest.id) wrote something that is not a JSON-RPC message on its stdout")
                    return
                }
            }
        }
    }

    private func readLog(_ handle: FileHandle) {
        var pending = Data()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            pending += chunk[0..<n]
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = DisplayText.clean(String(decoding: pending[..<newline], as: UTF8.self)).prefix(300)
                pending.removeSubrange(...newline)
                guard !line.isEmpty else { continue }
                logger.info("plugin \(manifest.id): \(line)")
                state.withLock { state in
                    state.stderr.append(String(line))
                    if state.stderr.count > Self.stderrLines { state.stderr.removeFirst() }
                }
            }
            if pending.count > 64 << 10 { pending.removeAll() }  // a line without end: dropped
        }
    }

    /// A broken plugin: every request waiting fails with `message`, and the process goes.
    private func fail(_ message: String) {
        let (pending, process) = state.withLock { state in
            defer { state.pending = [:] }
            state.failures += 1
            state.lastExit = .now
            return (Array(state.pending.values), state.process)
        }
        for continuation in pending { continuation.resume(throwing: ProviderError.invalidResponse(message)) }
        process?.terminate()
    }

    private func receive(_ bytes: [UInt8]) {
        guard let message = try? JSONParser.parse(bytes) else {
            fail("plugin \(manifest.id) wrote a line that is not JSON on its stdout")
            return
        }
        // Requests or notifications from the plugin: ignored (the protocol has none yet).
        guard message["method"] == nil, let id = message["id"]?.intValue else { return }
        guard let continuation = state.withLock({ $0.pending.removeValue(forKey: id) }) else { return }
        if let error = message["error"] {
            continuation.resume(throwing: PluginCallError(error: error, plugin: manifest.id))
        } else {
            continuation.resume(returning: message["result"] ?? .null)
        }
    }

    private func send(_ method: String, _ params: JSONValue, timeout: Double) async throws -> JSONValue {
        // The call's own deadline (http.timeout) bounds a plugin as it bounds a request.
        let timeout = min(timeout, max(0.01, CallDeadline.current?.remaining ?? timeout))
        let id = state.withLock { state -> Int in
            state.nextID += 1
            state.lastUse = .now
            return state.nextID
        }
        let line =
            JSONWriter.bytes(["jsonrpc": "2.0", "id": JSONValue(id), "method": .string(method), "params": params]) + [0x0A]
        let timer = Task { [weak self] in
            try await Task.sleep(for: .seconds(timeout))
            self?.abandon(
                id,
                error: ProviderError.network(
                    "plugin \(self?.manifest.id ?? "") did not answer \(method) within \(Int(timeout)) s"))
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
                let input = state.withLock { state -> PluginInput? in
                    guard let input = state.input else { return nil }
                    state.pending[id] = continuation
                    return input
                }
                guard let input else {
                    continuation.resume(throwing: ProviderError.network("plugin \(manifest.id) is not running\(lastWords())"))
                    return
                }
                guard !input.write(line) else { return }
                // The plugin is gone (or closed its input): the request fails with its last words.
                _ = state.withLock { $0.logDone }?.wait(timeout: .now() + 0.5)
                abandon(id, error: ProviderError.network("plugin \(manifest.id) exited before answering\(lastWords())"))
            }
        } onCancel: {
            abandon(id, error: CancellationError())
            let input = state.withLock { $0.input }
            let cancel = JSONWriter.bytes(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": JSONValue(id)]])
            _ = input?.write(cancel + [0x0A])
        }
    }

    /// Gives up on request `id`: its caller gets `error`; a late answer is dropped.
    private func abandon(_ id: Int, error: any Error) {
        state.withLock { $0.pending.removeValue(forKey: id) }?.resume(throwing: error)
    }
}

/// A JSON-RPC error a plugin answered with.
struct PluginCallError: Error {
    var error: JSONValue
    var plugin: String
    var code: Int? { error["code"]?.intValue }
    var providerError: ProviderError { PluginReply.error(error, plugin: plugin) }
}

/// `initialize`'s answer: who the plugin says it is.
struct PluginHello: Decodable, Sendable {
    var id: String
    var name: String?
}

/// A plugin's answers read into the host's types.
enum PluginReply {
    static func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue, plugin: String, method: String) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: Data(JSONWriter.bytes(value)))
        } catch let DecodingError.keyNotFound(key, context) {
            throw ProviderError.invalidResponse(
                "plugin \(plugin) answered \(method) without \(path(context.codingPath + [key])) (see provider-spec.json)")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context),
            let DecodingError.dataCorrupted(context)
        {
            throw ProviderError.invalidResponse(
                "plugin \(plugin) answered \(method) with a wrong \(path(context.codingPath)): \(context.debugDescription)")
        } catch {
            throw ProviderError.invalidResponse("plugin \(plugin) answered \(method) with something unreadable: \(error)")
        }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.isEmpty ? "answer" : keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    /// A JSON-RPC error from a plugin, as the provider error its code names.
    static func error(_ error: JSONValue, plugin: String) -> ProviderError {
        let message = DisplayText.clean(error["message"]?.stringValue ?? "no message").prefix(500)
        let text = String(message)
        switch error["code"]?.intValue {
        case AppErrorCode.unsupported: return .unsupported(text)
        case AppErrorCode.notFound: return .notFound(text)
        case AppErrorCode.unauthorized: return .unauthorized(text)
        case AppErrorCode.notConfigured: return .notConfigured(text)
        case AppErrorCode.rateLimited:
            return .rateLimited(retryAfter: error["data"]?["retryAfter"]?.doubleValue.flatMap { RetryAfter.seconds(String($0)) })
        case AppErrorCode.quotaExceeded: return .quotaExceeded(text)
        case AppErrorCode.upstream: return .upstream(status: error["data"]?["status"]?.intValue ?? 502, message: text)
        case AppErrorCode.invalidResponse: return .invalidResponse(text)
        case AppErrorCode.network: return .network(text)
        case RPCError.invalidParamsCode: return .invalidArgument(text)
        default: return .upstream(status: 502, message: "plugin \(plugin): \(text)")
        }
    }
}

/// One async task at a time in `run` (a plugin's start-up).
final class AsyncLock: Sendable {
    private let state = Mutex<(held: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func run<T>(_ body: () async throws -> T) async throws -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state -> Bool in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if acquired { continuation.resume() }
        }
        defer {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if state.waiters.isEmpty {
                    state.held = false
                    return nil
                }
                return state.waiters.removeFirst()
            }
            next?.resume()
        }
        return try await body()
    }
}

/// The host's end of a plugin's stdin: writes and close under one lock, on a descriptor this
/// object alone owns; a write to a plugin that is gone fails (EPIPE, SIGPIPE ignored) instead of
/// ending the host.
final class PluginInput: @unchecked Sendable {
    private let lock = NSLock()
    private var fd: Int32

    init(fd: Int32) { self.fd = fd }

    deinit { close() }

    func write(_ bytes: [UInt8]) -> Bool {
        lock.withLock { fd >= 0 && ServiceClient.writeAll(fd, bytes) }
    }

    func close() {
        lock.withLock {
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
    }
}
