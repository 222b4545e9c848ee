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

    /// What a call answers when the service was gone before it was sent (it stopped, or was
    /// killed): the service cannot have done it, so the front end may do it itself.
    public static let goneCode = -32030
    /// What a call answers when the service went away after it was sent and before it
    /// answered: it may have been done.
    public static let interruptedCode = -32031

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
                // A search's streamed parts go to the request's caller (RPCPeer), never broadcast.
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

    /// The result as the service wrote it: a relay (`rpc`, MCP) passes it on, not read and
    /// written again.
    public func call(_ method: String, params: JSONValue?) async throws(RPCError) -> [UInt8] {
        var call: [String: JSONValue] = ["method": .string(method)]
        if let params { call["params"] = params }
        return try await Self.mapping(method) { [peer] in
            try await peer.requestResultBytes(.object(call), timeout: nil, notifications: Self.toCaller())
        }
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
        return try await Self.mapping(method) { [peer] in
            try await peer.request(.object(call), timeout: timeout, notifications: Self.toCaller())
        }
    }

    /// The notifications that belong to a request (a streamed search's parts) to the client the
    /// call is being answered for, under its own request id, across this relay.
    private static func toCaller() -> (@Sendable (JSONValue) -> Void)? {
        guard let caller = RPCRequestContext.current else { return nil }
        return { message in
            guard let method = message["method"]?.stringValue else { return }
            var params = message["params"]
            if case .object(var members)? = params {
                members["request"] = caller.id
                params = .object(members)
            }
            caller.notify(method, params)
        }
    }

    /// A call's failures as the front ends read them: never sent (`goneCode`: the service can
    /// have done nothing), or sent and not answered (`interruptedCode`: it may have been done).
    private static func mapping<T>(_ method: String, _ body: () async throws -> T) async throws(RPCError) -> T {
        do {
            return try await body()
        } catch let error as RPCError {
            throw error
        } catch is CancellationError {
            throw .requestCancelled
        } catch is RPCPeer.NotSent {
            throw RPCError(code: goneCode, message: "the background service has stopped")
        } catch let timeout as RPCPeer.Timeout {
            throw RPCError(code: interruptedCode, message: "the background service did not answer \(method): \(timeout)")
        } catch {
            throw RPCError(
                code: interruptedCode, message: "the background service stopped during \(method); it may have been done")
        }
    }

    /// Runs a typed method in the service: its params and answer are values, not JSON text.
    public func run<M: APIMethod>(_ request: M) async throws(RPCError) -> M.Response {
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
    /// Whether the call failed because the background service was gone before it was sent
    /// (not because it refused, nor while it ran).
    public var isServiceGone: Bool { code == ServiceConnection.goneCode }
    /// Whether the service went away while the call ran: it may have been done.
    public var isServiceInterrupted: Bool { code == ServiceConnection.interruptedCode }
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

    public func run<M: APIMethod>(_ request: M) async throws(RPCError) -> M.Response {
        try await either(M.method) { () async throws(RPCError) in
            try await service.run(request)
        } here: { () async throws(RPCError) in
            try await local.run(request)
        }
    }

    public func call(_ method: String, params: JSONValue?) async throws(RPCError) -> [UInt8] {
        try await either(method) { () async throws(RPCError) in
            try await service.call(method, params: params)
        } here: {
            () async throws(RPCError) in
            try await local.call(method, params: params)
        }
    }

    public func value(_ method: String, params: JSONValue?) async throws(RPCError) -> JSONValue {
        try await either(method) { () async throws(RPCError) in
            try await service.value(method, params: params)
        } here: {
            () async throws(RPCError) in
            try await local.value(method, params: params)
        }
    }

    /// The service's answer while it runs; once it is gone, this process's (said once). A call
    /// the service may have done before it went (sent, not answered) is done here again only
    /// when doing it twice is harmless (its x-effect: it reads, or is idempotent): a download or
    /// a `player.open` sent and done would be done twice.
    private func either<T>(
        _ method: String, _ service: () async throws(RPCError) -> T, here local: () async throws(RPCError) -> T
    ) async throws(RPCError) -> T {
        if !flag.isSet {
            do throws(RPCError) {
                return try await service()
            } catch  where error.isServiceGone {
                onSwitch()
            } catch  where error.isServiceInterrupted {
                onSwitch()
                guard let effect = self.local.host.effect(of: method), effect.access == .reads || effect.idempotent else {
                    throw error
                }
            }
        }
        return try await local()
    }
}
