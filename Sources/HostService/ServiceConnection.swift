import Foundation
import JSONRPC
import MediaHost

/// A front end attached to the background service for a whole session (the interactive REPL):
/// its calls run in the service, and the service's notifications come back as `HostEvent`s, so
/// the downloads and playback it starts are the service's, seen by every other client.
public final class ServiceConnection: Sendable {
    private let peer: RPCPeer

    /// Takes over `fd`, a connection to the service.
    /// - Parameters:
    ///   - onEvent: each notification the host sends (downloads, logins, the player).
    ///   - onClose: the service went away.
    public init(fd: Int32, onEvent: @escaping @Sendable (HostEvent) -> Void, onClose: @escaping @Sendable () -> Void) {
        peer = RPCPeer(
            input: fd, output: fd, maxMessageSize: 64 << 20, maxPendingOutput: 16 << 20, name: "service",
            gone: { _ in ServiceGone() },
            onMessage: { message in
                guard let method = message["method"]?.stringValue,
                    let event = HostEvent(method: method, params: message["params"])
                else { return }
                onEvent(event)
            },
            onEnd: { _ in onClose() })
    }

    /// Calls a method by name; its result as JSON text. A cancelled call is cancelled in the
    /// service too.
    /// - Throws: the service's `RPCError`, or `ServiceGone`.
    public func call(_ method: String, params: JSONValue?) async throws -> [UInt8] {
        JSONWriter.bytes(try await result(method, params: params))
    }

    private func result(_ method: String, params: JSONValue?) async throws -> JSONValue {
        var call: [String: JSONValue] = ["method": .string(method)]
        if let params { call["params"] = params }
        return try await peer.request(.object(call), timeout: nil)
    }

    /// Runs a typed method in the service: its params and answer are values, not JSON text.
    /// - Throws: the service's `RPCError`, or `ServiceGone`.
    public func run<M: RPCMethod>(_ request: M) async throws -> M.Response {
        let answer = try await result(M.method, params: try JSONCoding.value(request))
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
