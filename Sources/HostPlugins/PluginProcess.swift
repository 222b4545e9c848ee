import Basics
import Dispatch
import FoundationEssentials
import JSONRPC
import MediaHost
import MediaKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A plugin's process and the JSON-RPC client the host speaks to it with (newline-delimited, on
/// its stdin/stdout; its stderr is its log). Started on the first call, restarted after it dies
/// (with a growing pause between attempts), stopped when idle and when the host goes.
///
/// The conversation is an `RPCPeer`: a plugin that stops reading its stdin makes its own calls
/// fail (each within its timeout, and at once when too much waits) and never holds a thread the
/// rest of the host needs.
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
    /// The most bytes of requests that may wait for a plugin to read them.
    static let maxPendingInput = 1 << 20
    /// The version of the provider protocol this host speaks (provider-spec.json).
    static let protocolVersion = 1
    /// Lines of a plugin's stderr kept for error messages.
    static let stderrLines = 8

    struct State {
        var process: ChildProcess?
        var peer: RPCPeer?
        var stderr: [String] = []
        /// Consecutive starts that ended in a crash, and when the last one ended.
        var failures = 0
        var lastExit: ContinuousClock.Instant?
        var lastUse = ContinuousClock.now
        var calls = 0
        var descriptor: PluginHello?
        /// The last process started, running or not.
        var lastProcess: ChildProcess?
        /// Whether the stderr reader of the last process has read to the end.
        var logEnded = true
        /// Why the last conversation ended, when the host ended it (a broken plugin).
        var brokenBecause: String?
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
        let (process, peer) = state.withLock { ($0.process, $0.peer) }
        peer?.close()
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
                        "protocolVersion": JSONValue(Self.protocolVersion), "provider": .string(manifest.id),
                        "settings": .object(settings.mapValues(JSONValue.string)),
                    ],
                    timeout: manifest.startTimeout)
            } catch let error as PluginCallError {
                throw error.providerError
            }
            let descriptor = try PluginReply.decode(PluginHello.self, answer, plugin: manifest.id, method: "initialize")
            if let version = descriptor.protocolVersion, version != Self.protocolVersion {
                stop()
                throw ProviderError.notConfigured(
                    "plugin \(manifest.id) speaks protocol version \(version); this mediahost speaks \(Self.protocolVersion) (provider-spec.json)"
                )
            }
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
        let (process, peer) = state.withLock { state -> (ChildProcess?, RPCPeer?) in
            defer {
                state.process = nil
                state.peer = nil
                state.descriptor = nil
            }
            return (state.process, state.peer)
        }
        if let peer {
            peer.send(["jsonrpc": "2.0", "method": "shutdown"])
            peer.finishSending()
        }
        if let process, process.isRunning {
            DispatchQueue.global().asyncAfter(deadline: .now() + 2) { if process.isRunning { process.terminate() } }
        }
    }

    /// Stops the plugin when it has not been called for `idle` seconds.
    func stopIfIdle(_ idle: Double) {
        let idle = state.withLock { $0.process != nil && $0.calls == 0 && ContinuousClock.now - $0.lastUse > .seconds(idle) }
        if idle {
            logger.debug("plugin \(manifest.id) stopped after \(Int(self.idle)) s without calls")
            stop()
        }
    }

    // MARK: The process

    /// Runs `start` again, twice at most, a tenth of a second apart, while the program is busy
    /// (ETXTBSY): a program just written (a plugin being edited, `plugin new`) cannot be run while
    /// any process holds it open for writing, which another process's fork can do for an instant.
    private static func retryingBusyText<T>(_ start: () throws -> T) throws -> T {
        for attempt in 1... {
            do { return try start() } catch  where attempt < 3 && posixCode(error) == ETXTBSY {
                sleepThread(seconds: 0.1)
            }
        }
        preconditionFailure("unreachable: the third attempt returns or throws")
    }

    /// The errno of a failed start.
    private static func posixCode(_ error: any Error) -> Int32? { (error as? ChildProcess.SpawnError)?.code }

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
        let generation = state.withLock { state -> Int in
            state.generation += 1
            state.logEnded = false
            state.brokenBecause = nil
            return state.generation
        }
        let process: ChildProcess
        do {
            // A leader of a process group of its own: whatever it forks is ended with it (and when
            // the host exits), not left holding its pipes. Reaped the moment it exits, whoever
            // holds its pipes; requests left waiting then fail.
            process = try Self.retryingBusyText {
                try ChildProcess(
                    manifest.executable, arguments: manifest.arguments,
                    environment: PluginManifest.environment(from: ProcessInfo.processInfo.environment, plugin: manifest),
                    directory: manifest.directory, standardInput: .pipe, standardOutput: .pipe, standardError: .pipe,
                    grouping: .processGroup
                ) { [weak self] process in self?.exited(process, generation: generation) }
            }
        } catch {
            let code = access(manifest.executable, X_OK) != 0 ? errno : Self.posixCode(error)
            let why =
                code.map { String(cString: strerror($0)) + ($0 == EACCES ? " (chmod +x it)" : "") }
                ?? describe(error)
            throw ProviderError.notConfigured("plugin \(manifest.id) cannot be started (\(manifest.executable)): \(why)")
        }
        PluginGroups.add(process.pid)
        // One that exited before it was added (its end came first) has its group ended here.
        if !process.isRunning { PluginGroups.end(process.pid) }
        guard let toPlugin = process.standardInput, let fromPlugin = process.standardOutput,
            let errorReader = process.standardError
        else { preconditionFailure("a plugin's pipes were asked for") }
        // Writing to a plugin never blocks: its requests wait in the peer's queue.
        _ = fcntl(toPlugin, F_SETFL, fcntl(toPlugin, F_GETFL) | O_NONBLOCK)
        let id = manifest.id
        let peer = RPCPeer(
            input: fromPlugin, output: toPlugin, maxMessageSize: Self.maxMessageSize, maxPendingOutput: Self.maxPendingInput,
            strict: true, name: "plugin-\(id)",
            gone: { ending in PluginGone(ending: ending) },
            onEnd: { [weak self] ending in self?.ended(ending, generation: generation) })
        state.withLock { state in
            state.lastProcess = process
            state.process = process
            state.peer = peer
            state.stderr = []
        }
        // Stopped when idle: checked a few times per idle period while this process lives.
        let idle = self.idle
        Task.detached { [weak self] in
            while true {
                try? await Task.sleep(for: .seconds(max(0.25, idle / 4)))
                guard let self, self.state.withLock({ $0.generation == generation && $0.process != nil }) else { return }
                self.stopIfIdle(idle)
            }
        }
        detachThread(name: "plugin-\(id)-stderr") { [weak self] in
            self?.readLog(errorReader)
            self?.state.withLock { if $0.generation == generation { $0.logEnded = true } }
        }
        logger.debug("plugin \(manifest.id) started: \(manifest.executable)")
    }

    private func exited(_ process: ChildProcess, generation: Int) {
        PluginGroups.end(process.pid)
        let peer = state.withLock { state -> RPCPeer? in
            // Every crash counts towards the pause before the next start, even one reported
            // after a newer process was started.
            if process.ending?.succeeded != true {
                state.failures += 1
                state.lastExit = .now
            }
            guard state.generation == generation, state.process === process else { return nil }
            defer {
                state.process = nil
                state.peer = nil
                state.descriptor = nil
            }
            return state.peer
        }
        // Answers it wrote before exiting are still read; requests left waiting then fail, even
        // when a child of the plugin holds its stdout open.
        if let peer { DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { peer.close() } }
    }

    /// How a plugin broke the conversation, or nil when it only ended.
    static func breach(_ ending: RPCPeer.Ending) -> String? {
        switch ending {
        case .endOfInput, .closed, .output(.cancelled), .output(.writeFailed): nil
        case .tooLarge: "sent a message over \(maxMessageSize >> 20) MiB"
        case .notJSON: "wrote a line that is not JSON on its stdout"
        case .output(.overflow): "stopped reading its stdin (\(maxPendingInput >> 10) KiB of requests were waiting)"
        }
    }

    /// The conversation ended: a plugin that broke the protocol is stopped.
    private func ended(_ ending: RPCPeer.Ending, generation: Int) {
        guard let reason = Self.breach(ending) else { return }
        let process = state.withLock { state -> ChildProcess? in
            guard state.generation == generation else { return nil }
            state.failures += 1
            state.lastExit = .now
            state.brokenBecause = reason
            return state.process
        }
        logger.warning("plugin \(manifest.id) \(reason); it is stopped")
        process?.terminate()
    }

    /// ": its last words on stderr" for error messages, or "".
    private func lastWords() -> String {
        let lines = state.withLock { $0.stderr }
        return lines.isEmpty ? "" : "; its stderr ended with: " + lines.suffix(3).joined(separator: " | ")
    }

    /// Reads the plugin's stderr to its end: each line goes to the log, the last few are kept
    /// for error messages. A plugin that writes without end costs a read and a scan per chunk.
    private func readLog(_ fd: Int32) {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            var start = 0
            var lines: [String] = []
            for index in 0..<n where chunk[index] == 0x0A {
                pending += chunk[start..<index]
                start = index + 1
                if pending.count <= 4096 { lines.append(String(decoding: pending, as: UTF8.self)) }
                pending.removeAll(keepingCapacity: true)
            }
            // A line without end is cut: only its start is kept.
            if pending.count < 4096 { pending += chunk[start..<min(n, start + 4096 - pending.count)] }
            // Only the last lines of a burst matter (the log keeps the same few).
            let kept = lines.suffix(Self.stderrLines).map { DisplayText.cut(DisplayText.clean($0), to: 300) }.filter {
                !$0.isEmpty
            }
            guard !kept.isEmpty else { continue }
            for line in kept { logger.info("plugin \(manifest.id): \(line)") }
            state.withLock { state in
                state.stderr.append(contentsOf: kept)
                if state.stderr.count > Self.stderrLines { state.stderr.removeFirst(state.stderr.count - Self.stderrLines) }
            }
        }
        close(fd)
    }

    private func send(_ method: String, _ params: JSONValue, timeout: Double) async throws -> JSONValue {
        // The call's own deadline (http.timeout) bounds a plugin as it bounds a request. The
        // error names the setting that ran out, with its value, not what was left of it.
        let deadline = CallDeadline.current
        let limitedByCall = deadline.map { $0.remaining < timeout } ?? false
        let setting =
            limitedByCall
            ? "\(RPCPeer.Timeout.format(deadline?.seconds ?? timeout)) s (the call's http.timeout)"
            : "\(RPCPeer.Timeout.format(timeout)) s (\(method == "initialize" ? "start_timeout" : "http.timeout"))"
        let timeout = min(timeout, max(0.01, deadline?.remaining ?? timeout))
        let peer = state.withLock { state -> RPCPeer? in
            state.lastUse = .now
            state.calls += 1
            return state.peer
        }
        defer {
            state.withLock { state in
                state.calls -= 1
                state.lastUse = .now
            }
        }
        guard let peer else {
            // It has gone already (it exited at once): say how, as for one that exits later.
            if state.withLock({ $0.lastProcess }) != nil { throw await goneError(.endOfInput, method: method) }
            throw ProviderError.network("plugin \(manifest.id) is not running\(lastWords())")
        }
        do {
            return try await peer.request(["method": .string(method), "params": params], timeout: .seconds(timeout))
        } catch let error as RPCError {
            throw PluginCallError(error: error.jsonValue, plugin: manifest.id)
        } catch is RPCPeer.Timeout {
            throw ProviderError.network(
                "plugin \(manifest.id) did not answer \(method) within \(setting)")
        } catch let gone as PluginGone {
            throw await goneError(gone.ending, method: method)
        } catch let unsent as RPCPeer.NotSent {
            // It went before the request was even written (its output closed as the call came):
            // said as any other end of it, never as an internal error.
            throw await goneError((unsent.reason as? PluginGone)?.ending ?? .closed, method: method)
        }
    }

    /// What to tell the caller of a request the plugin will never answer.
    private func goneError(_ ending: RPCPeer.Ending, method: String) async -> ProviderError {
        if let reason = Self.breach(ending) ?? state.withLock({ $0.brokenBecause }) {
            return .invalidResponse("plugin \(manifest.id) \(reason)")
        }
        // Its exit status and last words arrive soon after its output ends; the caller hears of
        // the crash once it counts towards the pause before the next start (`exited` has run),
        // so a call right after it is refused rather than starting the plugin again.
        let deadline = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < deadline,
            state.withLock({
                $0.lastProcess?.isRunning == true || !$0.logEnded
                    || ($0.process != nil && $0.process === $0.lastProcess)
            })
        {
            try? await Task.sleep(for: .milliseconds(10))
        }
        guard let process = state.withLock({ $0.lastProcess }), !process.isRunning else {
            return .network("plugin \(manifest.id) closed its output before answering \(method)\(lastWords())")
        }
        return .network("plugin \(manifest.id) exited (status \(process.terminationStatus)) before answering\(lastWords())")
    }
}

/// The conversation with a plugin ended before an answer.
struct PluginGone: Error {
    var ending: RPCPeer.Ending
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
    /// The protocol version the plugin speaks, when it says (this host speaks 1).
    var protocolVersion: Int?
}

/// A plugin's answers read into the host's types.
enum PluginReply {
    static func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue, plugin: String, method: String) throws -> T {
        do {
            return try JSONValueDecoder().decode(T.self, from: value)
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
        let message = DisplayText.cut(DisplayText.clean(error["message"]?.stringValue ?? "no message"), to: 500)
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

/// The process groups of running plugins (each plugin leads its own). A plugin's group is ended
/// when the plugin exits, and every group when the host exits: a child a plugin forked would
/// otherwise outlive both, holding the plugin's pipes.
enum PluginGroups {
    private static let running = Mutex<Set<pid_t>>([])
    private static let installed: Void = {
        atexit {
            for group in PluginGroups.running.withLock({ $0 }) { kill(-group, SIGTERM) }
        }
    }()

    static func add(_ leader: pid_t) {
        _ = installed
        running.withLock { _ = $0.insert(leader) }
    }

    /// Ends what is left of the group whose leader has exited.
    static func end(_ leader: pid_t) {
        guard running.withLock({ $0.remove(leader) }) != nil else { return }
        kill(-leader, SIGTERM)
    }
}
