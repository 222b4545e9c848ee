import Foundation
import JSONRPC

/// A front end attached to the background service for a whole session (the interactive REPL):
/// its calls run in the service, and the service's notifications come back as `HostEvent`s, so
/// the downloads and playback it starts are the service's, seen by every other client.
public final class ServiceConnection: Sendable {
    private let connection: JSONLineConnection

    static let wire = JSONLineConnection.Wire(
        request: { id, call in
            var request: [String: JSONValue] = ["jsonrpc": "2.0", "id": JSONValue(id), "method": call["method"] ?? .null]
            if let params = call["params"] { request["params"] = params }
            return .object(request)
        },
        answers: { message in message["method"] == nil ? message["id"]?.intValue : nil },
        outcome: { message in
            if let error = message["error"] {
                return .failure(
                    RPCError(
                        code: error["code"]?.intValue ?? RPCError.internalErrorCode,
                        message: error["message"]?.stringValue ?? "", data: error["data"]))
            }
            return .success(message["result"] ?? .null)
        },
        gone: { ServiceGone() })

    /// Takes over `fd`, a connection to the service.
    /// - Parameters:
    ///   - onEvent: each notification the host sends (downloads, logins, the player).
    ///   - onClose: the service went away.
    public init(fd: Int32, onEvent: @escaping @Sendable (HostEvent) -> Void, onClose: @escaping @Sendable () -> Void) {
        connection = JSONLineConnection(
            fd: fd, wire: Self.wire,
            onEvent: { message in
                guard let method = message["method"]?.stringValue,
                    let event = HostEvent(method: method, params: message["params"])
                else { return }
                onEvent(event)
            }, onClose: onClose)
    }

    /// Calls a method by name; its result as JSON text.
    /// - Throws: the service's `RPCError`, or `ServiceGone`.
    public func call(_ method: String, params: JSONValue?) async throws -> [UInt8] {
        var call: [String: JSONValue] = ["method": .string(method)]
        if let params { call["params"] = params }
        return JSONWriter.bytes(try await connection.request(.object(call)))
    }

    /// Runs a typed method in the service.
    /// - Throws: the service's `RPCError`, or `ServiceGone`.
    public func run<M: RPCMethod>(_ request: M) async throws -> M.Response {
        let bytes = try await call(M.method, params: try JSONCoding.value(request))
        do {
            return try JSONDecoder().decode(M.Response.self, from: Data(bytes))
        } catch {
            throw RPCError(
                code: RPCError.internalErrorCode, message: "the service's answer to \(M.method) cannot be read: \(error)")
        }
    }

    public func close() { connection.close() }
}

/// The background service closed the connection.
public struct ServiceGone: Error, CustomStringConvertible {
    public var description: String { "the background service has stopped" }
}
