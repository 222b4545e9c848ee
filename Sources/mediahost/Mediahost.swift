import ArgumentParser
import Basics
import BuiltinProviders
import FoundationEssentials
import HostService
import HostSync
import JSONRPC
import MediaHTTP
import MediaHost
import MediaKit
import MediaREPL
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

@main
struct Mediahost: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mediahost",
        abstract: "Browse, search, favorite and play media from many providers, from a REPL or over JSON-RPC.",
        discussion: """
            With no subcommand mediahost starts the REPL (type `help` there). Editors and scripts use \
            `mediahost rpc` (JSON-RPC 2.0 on stdin/stdout) or `mediahost call METHOD JSON`.

            Files: config $XDG_CONFIG_HOME/mediahost/config.toml, data $XDG_DATA_HOME/mediahost \
            (or MEDIAHOST_DATA_DIR). Shell completion: installed by `make install`, or \
            mediahost --generate-completion-script bash|zsh|fish. Each subcommand has its manual \
            page (man mediahost.call).
            """,
        version: HostRuntime.version,
        subcommands: [
            REPLCommand.self, RPCCommand.self, MCPCommand.self, CallCommand.self, RunCommand.self, ServeCommand.self,
            SandboxCommand.self, DoctorCommand.self, RefreshCommand.self, PictureCommand.self,
            PluginCommand.self, ShareCommand.self, PeersCommand.self, ReceiveCommand.self, PairCommand.self,
            UsersCommand.self,
            REPLManualCommand.self,
        ],
        defaultSubcommand: REPLCommand.self)

    /// Global options may come before the subcommand (`mediahost --sandbox call ...`); they
    /// belong to the subcommand, so they are moved after its name before parsing.
    static func main() async {
        Descriptor.ignoreBrokenPipes()
        let arguments = GlobalOptions.hoisted(Array(CommandLine.arguments.dropFirst()))
        // The commands scripts run in loops skip argument-parser's reflection (about a third of
        // a cold start); anything else, help and every error included, goes through it.
        switch QuickCommand(arguments)?.kind {
        case .version:
            // Answered here, on the main thread: an `await` first would start the concurrency
            // runtime's threads for nothing.
            print(HostRuntime.version)
            return
        case .call(let method, let params, let options):
            if await QuickCommand.call(method, params, options: options) { return }
        case nil:
            break
        }
        await main(arguments)
    }
}

/// Options every subcommand takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The config file.", valueName: "path"), completion: .file(extensions: ["toml"]))
    var config: String?

    @Option(
        name: .customLong("data-dir"),
        help: ArgumentHelp("Where the database and downloads live (also MEDIAHOST_DATA_DIR).", valueName: "path"),
        completion: .directory)
    var dataDir: String?

    @Option(
        name: .customLong("log-level"),
        help: ArgumentHelp("Log level on stderr.", valueName: "level"))
    var logLevel: Logger.Level?

    @Flag(
        help: "Start the local replica APIs (a child process) and point every provider at them (no network or API keys needed).")
    var sandbox = false

    @Flag(help: "Run in this process even when a background service (`mediahost serve`) runs for the data dir.")
    var noService = false

    /// The same options, by name, for what reads a line before argument-parser does (`hoisted`,
    /// `QuickCommand`): each says whether it takes a value and how it sets `HostOptions`, so the
    /// two readings cannot drift apart (`CLITests.callReadsItsOptionsWhereverTheyAre` checks the names).
    struct Definition: Sendable {
        let name: String
        let takesValue: Bool
        /// Sets the option; false when the value is not one it takes.
        let apply: @Sendable (inout HostOptions, String) -> Bool

        static func value(_ name: String, _ field: any WritableKeyPath<HostOptions, String?> & Sendable) -> Definition {
            Definition(name: name, takesValue: true) { options, value in
                options[keyPath: field] = value
                return true
            }
        }

        /// An option whose value argument-parser reads as a `T` (an enum); other values are not taken.
        static func value<T: ExpressibleByArgument & Sendable>(
            _ name: String, _ field: any WritableKeyPath<HostOptions, T?> & Sendable
        ) -> Definition {
            Definition(name: name, takesValue: true) { options, text in
                guard let value = T(argument: text) else { return false }
                options[keyPath: field] = value
                return true
            }
        }

        static func flag(_ name: String, _ field: any WritableKeyPath<HostOptions, Bool> & Sendable) -> Definition {
            Definition(name: name, takesValue: false) { options, _ in
                options[keyPath: field] = true
                return true
            }
        }
    }

    static let definitions: [Definition] = [
        .value("--config", \.config),
        .value("--data-dir", \.dataDir),
        .value("--log-level", \.logLevel),
        .flag("--sandbox", \.sandbox),
        .flag("--no-service", \.noService),
    ]

    static func definition(_ name: String) -> Definition? { definitions.first { $0.name == name } }

    static var flags: Set<String> { Set(definitions.filter { !$0.takesValue }.map(\.name)) }
    static var valued: Set<String> { Set(definitions.filter(\.takesValue).map(\.name)) }

    /// `[globals…] subcommand rest…` -> `subcommand rest… globals…`.
    static func hoisted(_ arguments: [String]) -> [String] {
        let subcommands = Set(Mediahost.configuration.subcommands.compactMap { $0.configuration.commandName })
        var globals: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            let name = String(argument.prefix { $0 != "=" })
            if flags.contains(argument) || (valued.contains(name) && argument.contains("=")) {
                globals.append(argument)
                index += 1
            } else if valued.contains(argument), index + 1 < arguments.count {
                globals += arguments[index...(index + 1)]
                index += 2
            } else {
                break
            }
        }
        guard !globals.isEmpty, index < arguments.count, subcommands.contains(arguments[index]) else { return arguments }
        return [arguments[index]] + arguments[(index + 1)...] + globals
    }

    var host: HostOptions {
        HostOptions(config: config, dataDir: dataDir, logLevel: logLevel, sandbox: sandbox, noService: noService)
    }

    func makeHost() async throws -> HostRuntime { try await host.makeHost() }
}

/// What every command needs to make its host, however its arguments were read.
struct HostOptions {
    var config: String?
    var dataDir: String?
    var logLevel: Logger.Level?
    var sandbox = false
    var noService = false

    /// Where this command's files are: with --sandbox, the sandbox's own (HostPaths.resolve).
    var paths: HostPaths { HostPaths.resolve(configFlag: config, dataDirFlag: dataDir, sandbox: sandbox) }

    /// Where this command's calls go: the socket of the background service for this data dir,
    /// when one runs and may be used (not with --sandbox, whose providers point elsewhere, nor
    /// --no-service, nor host.background never in the environment or the service's settings,
    /// which it is asked), else nil: this process. The one place this is decided, on the calling
    /// thread; `service()` (sessions: the REPL, `rpc`, `mcp`) and `callThroughService` (one-shot
    /// calls) both ask it. A script (`run`, a piped REPL) keeps to its own process by design: it
    /// waits for its own downloads and ends with what became of them.
    func serviceRoute() -> Int32? {
        let fromEnvironment = getenv("MEDIAHOST_HOST_BACKGROUND").map { String(cString: $0) }
        guard !sandbox, !noService, fromEnvironment.flatMap(HostSettings.BackgroundUse.init(rawValue:)) != .never,
            let fd = ServiceSocket(paths: paths).connect()
        else { return nil }
        // The service reads the same settings: it says whether host.background is never.
        let probe: JSONValue = ["method": "config.get", "params": ["key": "host.background"]]
        switch RPCPeer.exchange(fd: fd, probe, id: Self.probeID, timeout: .seconds(5)) {
        case .success(let answer):
            if answer.arrayValue?.first?["value"]?.stringValue.flatMap(HostSettings.BackgroundUse.init(rawValue:)) == .never {
                close(fd)
                return nil
            }
            return fd
        case .failure(let error):
            // A service that does not answer is not waited for: this command runs here.
            Descriptor.standardError(
                "mediahost: warning: the background service does not answer (\(error)); running in this process\n")
            close(fd)
            return nil
        }
    }

    /// The probe's request id (a session's own requests count from 1 on the same socket; the
    /// service answers each by its id, and this one is answered before they start).
    static let probeID = 1_000_000_000

    /// The background service, connected, when `serviceRoute` says calls go there; asked on a
    /// thread of its own (the probe waits on a socket).
    func service() async -> ServiceConnection? {
        let options = self
        let fd = await withCheckedContinuation { (done: CheckedContinuation<Int32?, Never>) in
            detachThread(name: "service-probe") { done.resume(returning: options.serviceRoute()) }
        }
        return fd.map { ServiceConnection(fd: $0) }
    }

    /// `request` in the service when one runs (where what it changes is told to every client),
    /// else in this process on the library's own file.
    func run<M: APIMethod>(_ request: M) async throws(RPCError) -> M.Response {
        if let service = await service() {
            defer { service.close() }
            return try await service.run(request)
        }
        let host: HostRuntime
        do {
            host = try await makeHost(oneShot: true)
        } catch {
            throw RPCError(code: RPCError.internalErrorCode, message: "\(error)")
        }
        return try await host.dispatcher.run(request)
    }

    /// A one-shot call through the background service, on this thread (`mediahost call`: a
    /// connection's reading thread and tasks cost a third of the call), with the peer's own
    /// wire; nil when calls do not go there.
    func callThroughService(_ method: String, _ params: JSONValue?) -> Result<JSONValue, RPCError>? {
        guard let fd = serviceRoute() else { return nil }
        defer { close(fd) }
        var call: [String: JSONValue] = ["method": .string(method)]
        if let params { call["params"] = params }
        // A call may wait for a person (a device login): no deadline of its own.
        switch RPCPeer.exchange(fd: fd, .object(call), id: 2, timeout: .seconds(10 * 365 * 86_400)) {
        case .success(let value): return .success(value)
        case .failure(let error as RPCError): return .failure(error)
        case .failure:
            // Sent, and the service went before it answered: it may have been done, and is
            // not done again here.
            return .failure(
                RPCError(
                    code: ServiceConnection.interruptedCode,
                    message: "the background service stopped during \(method); it may have been done"))
        }
    }

    /// With host.background = always (from any layer, so known once the host is made): a
    /// service started for the data dir, connected; nil otherwise.
    func startedService(_ host: HostRuntime) async -> ServiceConnection? {
        guard !sandbox, !noService, HostSettings.BackgroundUse(rawValue: host.config.string(HostSettings.background)) == .always
        else { return nil }
        guard await ServeCommand.startInBackground(options: self, paths: host.paths) else {
            host.logger.warning(
                "host.background is always, but the background service could not be started (see <data dir>/service.log)")
            return nil
        }
        return ServiceConnection.connect(ServiceSocket(paths: host.paths))
    }

    /// Where a session's calls go (`rpc`, `mcp`, the REPL): the background service when one runs
    /// (or host.background always starts one), falling back to the host made here if the
    /// service stops (`onSwitch` says so); else that host. The one place this is chosen. The
    /// caller starts the session (`host.sessionWillStart()`) once it listens to the connection's
    /// events, so that what the start changes (a sync round, in the service when attached)
    /// reaches it too.
    func sessionConnection(host made: HostRuntime? = nil, onSwitch: @escaping @Sendable (String) -> Void) async throws -> (
        connection: any HostConnection, host: HostRuntime
    ) {
        var service = await service()
        let host: HostRuntime
        if let made { host = made } else { host = try await makeHost() }
        if service == nil { service = await startedService(host) }
        let local = LocalConnection(host: host)
        guard let service else { return (local, host) }
        let connection = FallbackConnection(service: service, local: local, onSwitch: onSwitch)
        host.attachedService = connection
        return (connection, host)
    }

    /// Opens the store, reads the config and registers the built-in providers; with --sandbox,
    /// starts the replica server first and points the providers' base URLs at it.
    func makeHost(oneShot: Bool = false) async throws -> HostRuntime {
        var environment = ProcessInfo.processInfo.environment
        let paths = paths
        let portFile = paths.dataDir + "/sandbox.port"
        var sandboxSettings: [String: String] = [:]
        if sandbox {
            sandboxSettings = try SandboxChild.start(portFile: portFile)
            // Endpoints always point at the sandbox; credentials only fill in what is not set.
            for (name, value) in sandboxSettings
            where name.hasSuffix("_URL") || name.hasSuffix("_SERVER") || environment[name]?.isEmpty ?? true {
                environment[name] = value
            }
        }
        do {
            let http = MediaHTTPClient()
            let host = try HostRuntime(
                paths: paths,
                providers: BuiltinProviders.all, http: http, discovery: BuiltinModules.discovery(),
                modules: BuiltinModules.all, environment: environment,
                logLevel: logLevel, oneShot: oneShot)
            if sandbox { SandboxChild.remember(sandboxSettings, in: portFile) }
            http.setLogger(
                Logger(label: "\(HostRuntime.name).http") { [host] in
                    StderrLogHandler(label: $0, level: host.logger.logLevel, redactor: host.redactor)
                })
            return host
        } catch {
            throw StartupFailure(message: "\(error)")
        }
    }
}

struct SandboxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox",
        abstract: "Serve the local replicas of the providers' APIs (for tests, demos and offline work).",
        discussion:
            "Runs mediahost-sandbox (installed next to mediahost) with these arguments; `mediahost sandbox --help` is its help.")

    /// Everything after `sandbox`, --help included: mediahost-sandbox reads (and explains) it.
    @Argument(parsing: .captureForPassthrough, help: "mediahost-sandbox's options: --port, --host, --media-rate.")
    var arguments: [String] = []

    func run() throws {
        guard let binary = SandboxChild.binary() else { throw StartupFailure(message: SandboxChild.missing) }
        let argv = ([binary] + arguments).map { strdup($0) } + [nil]
        execv(binary, argv)
        throw StartupFailure(message: "cannot run \(binary): \(String(cString: strerror(errno)))")
    }
}

struct REPLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "The interactive REPL (the default). Reads commands line by line when stdin is not a terminal.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print each result as one JSON line (the method's JSON-RPC result).")
    var json = false

    @Flag(name: .customLong("keep-going"), help: "When stdin is not a terminal, go on after a failing command.")
    var keepGoing = false

    @Flag(
        name: .customLong("no-images"),
        help: "Draw no pictures, whatever the terminal draws (also the setting repl.images off).")
    var noImages = false

    func run() async throws {
        // Keys typed while it starts wait for the prompt, unechoed, and run there.
        let interactive = isatty(0) == 1
        if interactive { TypeAhead.hold() }
        defer { TypeAhead.release() }
        let host = try await global.makeHost()
        let repl = REPL(
            host: host,
            options: REPL.Options(
                json: json, keepGoing: keepGoing, color: useColor(), images: !noImages,
                sandbox: global.sandbox ? (global.dataDir == nil ? .apart : .named) : nil))
        if !global.sandbox {
            let options = global.host
            repl.startService = { await ServeCommand.startInBackground(options: options, paths: host.paths) }
        }
        // A person at the REPL works in the background service when one runs (its downloads and
        // playback are then the service's), else picks up interrupted downloads here; a piped
        // script keeps to its own process and waits for its own downloads.
        if interactive {
            // A sync at start or quit that fails is said above the prompt (or on leaving).
            host.component(SyncEngine.self).failureNote.withLock { $0 = { [repl] text in repl.note(text) } }
            let (connection, _) = try await global.host.sessionConnection(host: host) { [repl] reason in
                repl.note(reason)
            }
            await repl.use(connection)
            await host.sessionWillStart()
            if !connection.isRemote { await host.downloads.resumeInterrupted() }
        }
        if interactive {
            await repl.runInteractive()
            host.component(SyncEngine.self).failureNote.withLock {
                $0 = { text in Descriptor.writeAll(2, Array(("mediahost: " + text + "\n").utf8)) }
            }
            await host.sessionWillEnd()
        } else {
            let status = await repl.run(lines: StandardInputLines())
            if status != 0 { throw ExitCode(status) }
        }
    }
}

/// The REPL's commands as a manual page (`make install` puts it in man1 as mediahost-repl.1).
struct REPLManualCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl-manual", abstract: "Print the REPL's manual page (mdoc).", shouldDisplay: false)

    @Option(help: "The page's date.")
    var date = "2026-11-29"

    func run() {
        print(REPLManual.mdoc(date: date), terminator: "")
    }
}

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a file of REPL commands; stop at the first failing one with exit status 1.")

    @OptionGroup var global: GlobalOptions

    @Argument(
        help: ArgumentHelp("The script: one REPL command a line, '#' starts a comment line; '-' reads stdin.", valueName: "file"),
        completion: .file())
    var file: String

    @Flag(help: "Print each result as one JSON line.")
    var json = false

    @Flag(name: .customLong("keep-going"), help: "Run every line even after one fails (the exit status is still 1).")
    var keepGoing = false

    func run() async throws {
        let lines: [String]
        if file == "-" {
            lines = Array(StandardInputLines())
        } else {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw StartupFailure(message: "cannot read \(file)")
            }
            lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        let host = try await global.makeHost()
        let repl = REPL(host: host, options: REPL.Options(json: json, keepGoing: keepGoing, color: false))
        let status = await repl.run(lines: lines, source: file == "-" ? "stdin" : file)
        if status != 0 { throw ExitCode(status) }
    }
}

struct RPCCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rpc",
        abstract: "Serve JSON-RPC 2.0 on stdin/stdout (newline-delimited, or Content-Length framed like LSP).",
        discussion: """
            `rpc.discover` returns the OpenRPC description of every method. Logs go to stderr. \
            Notifications (player.state, downloads.progress, library.changed...) reach the client as \
            they happen; with --framing auto they wait for its first message, whose framing they \
            then use, so a client that only listens names its framing.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "The client's framing: newline, content-length (LSP's), or auto (its first message's).")
    var framing: FramingChoice = .auto

    enum FramingChoice: String, ExpressibleByArgument, CaseIterable {
        case auto, newline
        case contentLength = "content-length"

        var framing: Framing? {
            switch self {
            case .auto: nil
            case .newline: .newline
            case .contentLength: .contentLength
            }
        }
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        // With a service running, calls go to it (the editor's downloads and playback are the
        // service's), and here if it stops; the editor's session is unchanged either way.
        let (connection, host) = try await global.host.sessionConnection { reason in
            _ = Descriptor.standardError("mediahost: note: \(reason)\n")
        }
        let rpc = RPCConnection.standardIO(
            handler: ConnectionHandler(connection), name: "mediahost rpc", framing: framing.framing)
        let subscription = connection.events.subscribe { event in rpc.notify(method: event.method, params: event.params) }
        defer { connection.events.unsubscribe(subscription) }
        await host.sessionWillStart()
        if !connection.isRemote { await host.downloads.resumeInterrupted() }
        await rpc.run()
    }
}

struct CallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Call one method and print its JSON result; exit status 1 on error.",
        discussion: "Example: mediahost call favorites.list '{\"limit\":10}'")

    @OptionGroup var global: GlobalOptions

    @Argument(
        help: ArgumentHelp("The method, e.g. host.info (`mediahost call rpc.discover` lists them).", valueName: "method"),
        completion: .custom { _, _, prefix in Completions.methods.filter { $0.hasPrefix(prefix) } })
    var method: String

    @Argument(help: ArgumentHelp("Params as a JSON object; '-' reads them from stdin.", valueName: "json"))
    var params: String?

    func run() async throws { try await Self.call(method, params, options: global.host) }

    /// Methods that go to a provider (or the network) on their first step: libcurl is loaded while
    /// the host starts rather than at their first request.
    static func usesNetwork(_ method: String) -> Bool {
        method.hasPrefix("media.") || method.hasPrefix("auth.") || method.hasPrefix("player.")
            || ["providers.categories", "favorites.sync", "downloads.start", "downloads.resume"].contains(method)
    }

    /// One call wherever `connection` runs it, its result on stdout; an error on stderr and exit
    /// status 1.
    static func call(_ method: String, _ params: JSONValue?, on connection: any HostConnection) async throws {
        let result: [UInt8]
        do throws(RPCError) {
            result = try await connection.call(method, params: params)
        } catch {
            Descriptor.standardError("mediahost: \(error.message) (\(error.code))\n")
            if let data = error.data { Descriptor.standardError("\(data.jsonString)\n") }
            throw ExitCode(1)
        }
        // A reader that went away (`| head -c 10`) is not worth a crash, but it is a failed call:
        // a result that could not be written is not silence with status 0.
        guard Descriptor.writeAll(1, result + [0x0A]) else { throw ExitCode(1) }
    }

    static func call(_ method: String, _ params: String?, options: HostOptions) async throws {
        var parsed: JSONValue?
        if let params {
            let text = params == "-" ? Array(StandardInputLines()).joined(separator: "\n") : params
            do {
                parsed = try JSONValue(parsing: text)
            } catch {
                throw ValidationError("params are not valid JSON: \(error)")
            }
        }
        if let outcome = options.callThroughService(method, parsed) {
            switch outcome {
            case .success(let value):
                guard Descriptor.writeAll(1, JSONWriter.bytes(value) + [0x0A]) else { throw ExitCode(1) }
            case .failure(let error):
                Descriptor.standardError("mediahost: \(error.message) (\(error.code))\n")
                if let data = error.data { Descriptor.standardError("\(data.jsonString)\n") }
                throw ExitCode(1)
            }
            return
        }
        if Self.usesNetwork(method) { MediaHTTPClient.preload() }
        // However the call ends, the process exits after it: not while libcurl is being loaded.
        defer { MediaHTTPClient.settle() }
        let host = try await options.makeHost(oneShot: true)
        let connection: any HostConnection = await options.startedService(host) ?? LocalConnection(host: host)
        try await call(method, parsed, on: connection)
    }
}

/// A failure before any command runs; argument-parser prints it and exits with status 1.
struct StartupFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Lines of standard input, read as they arrive.
struct StandardInputLines: Sequence, IteratorProtocol {
    mutating func next() -> String? { Swift.readLine(strippingNewline: true) }
}

func useColor() -> Bool {
    let env = ProcessInfo.processInfo.environment
    if let noColor = env["NO_COLOR"], !noColor.isEmpty { return false }
    return isatty(1) == 1 && env["TERM"] != "dumb"
}

/// `mediahost --version` and `mediahost [options] call METHOD [JSON]` read by hand: exactly these
/// shapes, with the options `GlobalOptions` knows; nil for anything else (argument-parser then
/// reads the line, and says what is wrong with it).
struct QuickCommand {
    enum Kind {
        case version
        case call(method: String, params: String?, options: HostOptions)
    }

    let kind: Kind

    init?(_ arguments: [String]) {
        if arguments == ["--version"] {
            kind = .version
            return
        }
        guard arguments.first == "call" else { return nil }
        var options = HostOptions()
        var positional: [String] = []
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            let (name, inline) =
                argument.firstIndex(of: "=").map { (String(argument[..<$0]), String(argument[argument.index(after: $0)...])) }
                ?? (argument, nil)
            if let option = GlobalOptions.definition(name) {
                let value: String
                if !option.takesValue {
                    guard inline == nil else { return nil }
                    value = ""
                } else if let inline {
                    value = inline
                } else {
                    guard index + 1 < arguments.count else { return nil }
                    index += 1
                    value = arguments[index]
                }
                // A value it does not take: argument-parser says what is wrong.
                guard option.apply(&options, value) else { return nil }
            } else {
                // Flags argument-parser handles (--help, -h, unknown ones) go to it; "-" is stdin.
                if argument.hasPrefix("-"), argument != "-" { return nil }
                positional.append(argument)
            }
            index += 1
        }
        guard positional.count == 1 || positional.count == 2 else { return nil }
        kind = .call(method: positional[0], params: positional.count == 2 ? positional[1] : nil, options: options)
    }

    /// Runs `mediahost call`.
    /// - Returns: false when argument-parser should read the line after all (to explain a
    ///   usage error the way it does); nothing has run then.
    static func call(_ method: String, _ params: String?, options: HostOptions) async -> Bool {
        do {
            try await CallCommand.call(method, params, options: options)
        } catch is ValidationError {
            return false
        } catch {
            CallCommand.exit(withError: error)
        }
        return true
    }
}

/// `--log-level trace|debug|…`: argument-parser lists the levels in `--help` and says them when
/// the value is none of them.
extension Logger.Level: @retroactive ExpressibleByArgument {}
