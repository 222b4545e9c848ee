import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit
import MediaStore
import Synchronization

/// A method of the API (`APIMethod`, in HostAPI) as the runtime answers it.
public protocol RPCMethod: APIMethod {
    /// Runs the method on the host.
    func run(on host: HostRuntime) async throws -> Response
    /// The response as JSON text; JSONEncoder unless the method has its text already.
    static func encode(_ response: Response) throws -> [UInt8]
}

extension RPCMethod {
    public static func encode(_ response: Response) throws -> [UInt8] { try JSONCoding.bytes(response) }
}

/// Routes method calls to their handlers. The RPC endpoint calls `call` with JSON; in-process
/// front ends (the REPL) call `run` with typed values, as sourcekit-lsp's LocalConnection does.
/// Both go through `perform`: one deadline, one log line, one error mapping.
public struct Dispatcher: RPCHandler {
    /// The runtime's own methods; modules (the player, sharing) add theirs (`HostModule`).
    /// rpc-spec.json describes exactly a build's methods (a test checks).
    public static let runtimeMethods: [any RPCMethod.Type] = [
        RPCDiscover.self, HostInfo.self, HostDoctor.self,
        ProvidersList.self, ProvidersCategories.self,
        MediaBrowse.self, MediaSearch.self, MediaGet.self, MediaChildren.self, MediaChapters.self, MediaTranscript.self,
        TranscriptsSearch.self, MediaSegments.self,
        FavoritesAdd.self, FavoritesRemove.self, FavoritesList.self, FavoritesSync.self, FavoritesLatest.self,
        HistoryList.self, HistoryClear.self,
        DownloadsStart.self, DownloadsList.self, DownloadsPause.self, DownloadsResume.self, DownloadsCancel.self,
        DownloadsRemove.self,
        MediaArtwork.self, CacheStats.self, CacheClear.self,
        ListsList.self, ListsCreate.self, ListsRename.self, ListsDelete.self, ListsAdd.self, ListsRemove.self,
        ListsMove.self, ListsItems.self, ListsDownload.self, ListsExport.self, ListsImport.self,
        AuthStatus.self, AuthLogin.self, AuthLogout.self,
        ConfigGet.self, ConfigSet.self,
        QueueList.self, QueueAdd.self, QueueMove.self, QueueRemove.self, QueueClear.self,
        RefreshRun.self, NewList.self, NewSeen.self, RulesList.self, RulesSet.self, RulesUnset.self,
    ]

    /// A method's answer, as JSON text or as a value (`asValue`).
    fileprivate enum Answer: Sendable {
        case text([UInt8])
        case value(JSONValue)
    }
    fileprivate typealias Invoke = @Sendable (Dispatcher, JSONValue?, _ asValue: Bool) async throws(RPCError) -> Answer

    /// Routes by method name.
    struct Table: Sendable {
        let methods: [any RPCMethod.Type]
        fileprivate let invokers: [String: Invoke]

        init(_ methods: [any RPCMethod.Type]) {
            var invokers: [String: Invoke] = [:]
            for method in methods {
                precondition(invokers[method.method] == nil, "\(method.method) registered twice")
                invokers[method.method] = Dispatcher.invoker(for: method)
            }
            self.methods = methods
            self.invokers = invokers
        }
    }

    fileprivate static func invoker<M: RPCMethod>(for type: M.Type) -> Invoke {
        { dispatcher, params, asValue throws(RPCError) in
            try refuseUnknownParams(M.self, params)
            let request = try decodeParams(M.self, params)
            let outcome = await Redactor.$inFlight.withValue(request.secretsInFlight) { () async -> Result<Answer, RPCError> in
                let response: M.Response
                do throws(RPCError) {
                    response = try await dispatcher.perform(request)
                } catch {
                    return .failure(error)
                }
                let redactor = dispatcher.host.redactor
                do {
                    // A value is made from the response itself (MCP), never by parsing text back.
                    return .success(
                        asValue
                            ? .value(redactor.redact(try JSONCoding.value(response)))
                            : .text(redactor.redact(bytes: try M.encode(response))))
                } catch {
                    return .failure(
                        dispatcher.host.outgoing(rpcError(for: error, method: M.method, logger: dispatcher.host.logger)))
                }
            }
            return try outcome.get()
        }
    }

    /// Every method this host serves: the runtime's and its modules'.
    public var methods: [any RPCMethod.Type] { host.methodTable.methods }

    public var methodNames: [String] { methods.map { $0.method } }

    public let host: HostRuntime

    /// Calls a method by name with JSON params (the RPC endpoint, `mediahost call`, the REPL's `call`).
    /// - Returns: the result as JSON text.
    /// - Throws: the `RPCError` to answer with.
    public func call(_ method: String, params: JSONValue? = nil) async throws(RPCError) -> [UInt8] {
        guard case .text(let text) = try await invoke(method, params, asValue: false) else { return [] }
        return text
    }

    /// Calls a method by name with JSON params; its result as a JSON value (MCP's tools).
    public func value(_ method: String, params: JSONValue? = nil) async throws(RPCError) -> JSONValue {
        guard case .value(let value) = try await invoke(method, params, asValue: true) else { return .null }
        return value
    }

    private func invoke(_ method: String, _ params: JSONValue?, asValue: Bool) async throws(RPCError) -> Answer {
        guard let invoke = host.methodTable.invokers[method] else {
            throw .methodNotFound(host.redactor.scrub(DisplayText.cut(method, to: 100)))
        }
        return try await invoke(self, params, asValue)
    }

    /// Runs a method with typed params and returns its typed response: the in-process entry
    /// point, with the same deadline, logging and error mapping as `call`.
    /// - Throws: the `RPCError` an RPC client would get.
    public func run<M: APIMethod>(_ request: M) async throws(RPCError) -> M.Response {
        guard let implemented = request as? any RPCMethod else {
            throw .methodNotFound(M.method)
        }
        return try await answer(implemented, as: M.self)
    }

    /// The answer of the implementation `request` is, as the API type `M` it was asked as.
    private func answer<R: RPCMethod, M: APIMethod>(_ request: R, as: M.Type) async throws(RPCError) -> M.Response {
        let response = try await perform(request)
        guard let typed = response as? M.Response else { throw .internalError("\(M.method) answered another type") }
        return typed
    }

    /// Runs an implemented method (`run` finds the implementation of an API type).
    func perform<M: RPCMethod>(_ request: M) async throws(RPCError) -> M.Response {
        guard Redactor.inFlight == request.secretsInFlight else {
            let outcome = await Redactor.$inFlight.withValue(request.secretsInFlight) {
                () async -> Result<M.Response, RPCError> in
                do throws(RPCError) {
                    return .success(try await perform(request))
                } catch {
                    return .failure(error)
                }
            }
            return try outcome.get()
        }
        let started = ContinuousClock.now
        do {
            let response = try await host.withDeadline(M.hasDeadline) { try await request.run(on: host) }
            if let part = M.effect.library {
                for module in host.modules { await module.libraryDidChange(host, part) }
            }
            host.logger.debug("\(M.method) answered in \(HostRuntime.milliseconds(since: started)) ms")
            return response
        } catch {
            host.logger.debug("\(M.method) failed after \(HostRuntime.milliseconds(since: started)) ms: \(error)")
            throw host.outgoing(Self.rpcError(for: error, method: M.method, logger: host.logger))
        }
    }

    public func handle(method: String, params: JSONValue?) async -> Result<[UInt8], RPCError> {
        do {
            return .success(try await call(method, params: params))
        } catch {
            return .failure(error)
        }
    }

    static func rpcError(for error: any Error, method: String, logger: Logger) -> RPCError {
        switch error {
        case let error as RPCError: return error
        case let error as HostError: return error.rpcError
        case let error as ProviderFailure: return error.rpcError
        case let error as StoreError: return HostError.storage(error.description).rpcError
        case let error as ListError: return HostError.invalidArgument(error.description).rpcError
        case let error as QueueError: return HostError.invalidArgument(error.description).rpcError
        case is CancellationError: return .requestCancelled
        default:
            if Task.isCancelled { return .requestCancelled }
            logger.error("\(method) failed: \(error)")
            return .internalError("\(method) failed: \(error)")
        }
    }

    /// The params each method takes (its type's keys and their aliases), read from the type
    /// the first time the method is called.
    private static let knownParams = Mutex<[String: Set<String>?]>([:])

    /// A param the method does not take is refused, naming the ones it does: a misspelt
    /// `dryrun` must not run a real refresh, nor `id` for `show` set a rule for every show.
    static func refuseUnknownParams<M: APIMethod>(_ type: M.Type, _ params: JSONValue?) throws(RPCError) {
        guard case .object(let given)? = params, !given.isEmpty else { return }
        let known = knownParams.withLock { cache -> Set<String>? in
            if let found = cache[M.method] { return found }
            var keys: Set<String>?
            if case .object(let fields) = APIShape.of(M.self) { keys = Set(fields.keys).union(M.aliases.keys) }
            cache[M.method] = .some(keys)
            return keys
        }
        // A type that checks its own input (it cannot be traced) is left to its decoding.
        guard let known else { return }
        let unknown = given.keys.filter { !known.contains($0) }.sorted()
        guard let first = unknown.first else { return }
        let near = known.first { $0.lowercased() == first.lowercased() }
        let takes = known.isEmpty ? "it takes none" : "it takes " + known.sorted().joined(separator: ", ")
        throw .invalidParams(
            "\(M.method) has no param '\(first)'" + (near.map { " (did you mean '\($0)'?)" } ?? "") + "; \(takes)")
    }

    /// Decodes by-name params; absent params and `[]` mean none.
    static func decodeParams<M: Decodable>(_ type: M.Type, _ params: JSONValue?) throws(RPCError) -> M {
        let object: JSONValue
        switch params {
        case nil, .array([])?: object = .object([:])
        case .object?: object = params!
        default: throw .invalidParams("params must be an object of named parameters")
        }
        do {
            // Straight from the parsed params: no JSON text written and read again.
            return try JSONValueDecoder().decode(M.self, from: object)
        } catch let error as DecodingError {
            throw .invalidParams(describe(error))
        } catch {
            throw .invalidParams("\(error)")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty
                ? "params" : codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing \(path(context.codingPath + [key]))"
        case .typeMismatch(let type, let context): return "\(path(context.codingPath)) must be \(describe(type))"
        case .valueNotFound(let type, let context): return "\(path(context.codingPath)) must be \(describe(type)), not null"
        case .dataCorrupted(let context): return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    private static func describe(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Double.Type: "a number"
        case is Bool.Type: "true or false"
        default: "\(type)".hasPrefix("Array") ? "an array" : "an object"
        }
    }
}

extension HostRuntime {
    /// An error as it may leave the host: no secret, no control character in its text.
    func outgoing(_ error: RPCError) -> RPCError {
        RPCError(code: error.code, message: redactor.scrub(error.message), data: error.data.map(redactor.redact))
    }

    /// Runs `body` within the call's network budget (`http.timeout`) when `bounded`.
    func withDeadline<T: Sendable>(_ bounded: Bool, _ body: () async throws -> T) async throws -> T {
        guard bounded, CallDeadline.current == nil else { return try await body() }
        return try await CallDeadline.$current.withValue(CallDeadline(seconds: config.seconds(HostSettings.httpTimeout))) {
            try await body()
        }
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int { (ContinuousClock.now - start).milliseconds }

    /// Runs a provider call, tagging its errors with the provider id.
    public func withProvider<T: Sendable>(_ id: String, _ body: (any MediaProvider) async throws -> T) async throws -> T {
        // A provider that cannot be made (a broken plugin) fails as that provider, not internally.
        let provider: any MediaProvider = try await tagging(id) { () throws -> any MediaProvider in try self.provider(id) }
        let started = ContinuousClock.now
        defer { logger.debug("provider \(id) worked \(Self.milliseconds(since: started)) ms") }
        return try await tagging(id) { try await body(provider) }
    }

    /// Tags errors of work done for a provider (its calls, or host work like fetching its
    /// artwork) with the provider id, as RPC errors carry it.
    func tagging<T: Sendable>(_ id: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ProviderError {
            throw ProviderFailure(provider: id, error: error)
        } catch let error as HTTPClientError where error.kind != .cancelled {
            throw ProviderFailure(provider: id, error: .network(error.description))
        } catch let error as HTTPClientError where error.kind == .cancelled {
            throw CancellationError()
        }
    }
}
