import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit

/// The host in this process: calls go straight to its dispatcher.
public final class LocalConnection: HostConnection {
    public let host: HostRuntime

    public init(host: HostRuntime) { self.host = host }

    public func run<M: APIMethod>(_ request: M) async throws(RPCError) -> M.Response { try await host.dispatcher.run(request) }

    public func call(_ method: String, params: JSONValue?) async throws(RPCError) -> [UInt8] {
        try await host.dispatcher.call(method, params: params)
    }

    public func value(_ method: String, params: JSONValue?) async throws(RPCError) -> JSONValue {
        try await host.dispatcher.value(method, params: params)
    }

    public var events: EventHub { host.events }
    public var isRemote: Bool { false }
}

/// Serves JSON-RPC (`rpc`, the MCP server's tools) from a connection: a relay when the
/// connection is the background service.
public struct ConnectionHandler: RPCHandler {
    public let connection: any HostConnection

    public init(_ connection: any HostConnection) { self.connection = connection }

    public func handle(method: String, params: JSONValue?) async -> Result<[UInt8], RPCError> {
        do throws(RPCError) {
            return .success(try await connection.call(method, params: params))
        } catch {
            return .failure(error)
        }
    }
}
