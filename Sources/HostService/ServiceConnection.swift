import Basics
import FoundationEssentials
import Glibc
import JSONRPC
import MediaHost
import Synchronization

/// The background service as a `HostConnection`: calls run in the service, and its
/// notifications come back as `HostEvent`s on `events`, so the downloads and playback a front end
/// starts are the service's, seen by every other client. One `RPCPeer` on the service's socket.
public final class ServiceConnection: HostConnection {
    private let peer: RPCPeer
    public let events = EventHub()
    public var isRemote: Bool { true }

    /// What a call answers when the service is gone (it stopped, or was killed): the REPL then
    /// carries on in its own process.
    public static let goneCode = -32030

    /// Who is told when the service goes away; nil once it has.
    private final class Closing: Sendable {
        let handlers = Mutex<[@Sendable () -> Void]?>([])
    }
    private let closing = Closing()

    /// Takes over `fd`, a connection to the service.
    public init(fd: Int32) {
        let (events, closing) = (events, closing)
        peer = RPCPeer(
            input: fd, output: fd, maxMessageSize: 64 << 20, maxPendingOutput: 16 << 20, name: "service",
            gone: { _ in ServiceGone() },
            onMessage: { message in
                // A search's streamed parts are answered to the request (RPCPeer), not broadcast.
                guard let method = message["method"]?.stringValue, method != SearchResults.method,
                    let event = HostEvent(method: method, params: message["params"])
                else { return }
                events.publish(event)
            },
            onEnd: { _ in
                for handler in closing.handlers.withLock({ $0.take() }) ?? [] { handler() }
            })
    }

    /// Runs `handler` once the service has gone away (at once when it has).
    public func whenClosed(_ handler: @escaping @Sendable () -> Void) {
        let pending = closing.handlers.withLock { handlers -> Bool in
            guard handlers != nil else { return false }
            handlers?.append(handler)
            return true
        }
        if !pending { handler() }
    }

    /// Connects to the service listening on `socket`; nil when none does.
    public static func connect(_ socket: ServiceSocket) -> ServiceConnection? {
        socket.connect().map { ServiceConnection(fd: $0) }
    }

    public func call(_ method: String, params: JSONValue?) async throws(RPCError) -> [UInt8] {
        JSONWriter.bytes(try await value(method, params: params))
    }

    public func value(_ method: String, params: JSONValue?) async throws(RPCError) -> JSONValue {
        try await result(method, params: params, timeout: nil)
    }

    /// A call that waits at most `timeout` (a probe of whether the service answers).
    public func value(_ method: String, params: JSONValue?, timeout: Duration?) async throws(RPCError) -> JSONValue {
        try await result(method, params: params, timeout: timeout)
    }

    private func result(_ method: String, params: JSONValue?, timeout: Duration?) async throws(RPCError) -> JSONValue {
        var call: [String: JSONValue] = ["method": .string(method)]
        if let params { call["params"] = params }
        do {
            return try await peer.request(.object(call), timeout: timeout)
        } catch let error as RPCError {
            throw error
        } catch is CancellationError {
            throw .requestCancelled
        } catch let timeout as RPCPeer.Timeout {
            throw RPCError(code: Self.goneCode, message: "the background service did not answer \(method): \(timeout)")
        } catch {
            throw RPCError(code: Self.goneCode, message: "\(error)")
        }
    }

    /// Runs a typed method in the service: its params and answer are values, not JSON text.
    public func run<M: RPCMethod>(_ request: M) async throws(RPCError) -> M.Response {
        let params: JSONValue
        do {
            params = try JSONCoding.value(request)
        } catch {
            throw RPCError.invalidParams("\(error)")
        }
        let answer = try await result(M.method, params: params, timeout: nil)
        do {
            return try JSONValueDecoder().decode(M.Response.self, from: answer)
        } catch {
            throw RPCError(
                code: RPCError.internalErrorCode, message: "the service's answer to \(M.method) cannot be read: \(error)")
        }
    }

    public func close() { peer.close() }
}

/// The background service closed the connection.
public struct ServiceGone: Error, CustomStringConvertible {
    public var description: String { "the background service has stopped" }
}

extension RPCError {
    /// Whether the call failed because the background service is gone (not because it refused).
    public var isServiceGone: Bool { code == ServiceConnection.goneCode }
}

/// The background service while it runs, then the host in this process (the interactive REPL
/// carries on when the service stops): a call the service could not answer because it went
/// away runs here instead, and `onSwitch` says so once.
public final class FallbackConnection: HostConnection {
    private let service: ServiceConnection
    private let local: LocalConnection
    private let flag = Switched()
    public let events = EventHub()

    /// Set once, when calls go here for good.
    private final class Switched: Sendable {
        private let state = Mutex(false)
        var isSet: Bool { state.withLock { $0 } }
        /// - Returns: whether this call set it.
        func set() -> Bool {
            state.withLock { state in
                defer { state = true }; return !state
            }
        }
    }

    public init(service: ServiceConnection, local: LocalConnection, onSwitch: @escaping @Sendable (String) -> Void) {
        self.service = service
        self.local = local
        let (events, flag) = (events, flag)
        let reason = "the background service has stopped; commands run in this process now"
        let switchOnce: @Sendable () -> Void = { if flag.set() { onSwitch(reason) } }
        self.onSwitch = switchOnce
        service.whenClosed(switchOnce)
        // Notifications from wherever calls run now.
        service.events.subscribe { events.publish($0) }
        local.host.events.subscribe { event in if flag.isSet { events.publish(event) } }
    }

    private let onSwitch: @Sendable () -> Void

    public var isRemote: Bool { !flag.isSet }

    public func run<M: RPCMethod>(_ request: M) async throws(RPCError) -> M.Response {
        try await either { () async throws(RPCError) in
            try await service.run(request)
        } here: { () async throws(RPCError) in
            try await local.run(request)
        }
    }

    public func call(_ method: String, params: JSONValue?) async throws(RPCError) -> [UInt8] {
        try await either { () async throws(RPCError) in
            try await service.call(method, params: params)
        } here: {
            () async throws(RPCError) in
            try await local.call(method, params: params)
        }
    }

    public func value(_ method: String, params: JSONValue?) async throws(RPCError) -> JSONValue {
        try await either { () async throws(RPCError) in
            try await service.value(method, params: params)
        } here: {
            () async throws(RPCError) in
            try await local.value(method, params: params)
        }
    }

    /// The service's answer while it runs; once it is gone, this process's (said once).
    private func either<T>(
        _ service: () async throws(RPCError) -> T, here local: () async throws(RPCError) -> T
    ) async throws(RPCError) -> T {
        if !flag.isSet {
            do throws(RPCError) {
                return try await service()
            } catch  where error.isServiceGone {
                onSwitch()
            }
        }
        return try await local()
    }
}
