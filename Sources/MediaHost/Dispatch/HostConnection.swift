import Basics
import FoundationEssentials
import Glibc
import JSONRPC
import MediaKit

/// Where a front end's calls go: the host in this process, or the background service.
///
/// As sourcekit-lsp's `Connection` and swift-tools-protocols' `LocalConnection` answer the same
/// `send(request, reply)`: the REPL, MCP, `call`, `run` and `rpc` take a connection and never
/// look behind it. `HostOptions.connection()` (the executable) chooses one.
public protocol HostConnection: AnyObject, Sendable {
    /// A typed call: params and answer are values.
    func run<M: RPCMethod>(_ request: M) async throws(RPCError) -> M.Response
    /// A call by name with JSON params; its result as JSON text (what `rpc` and `call` write).
    func call(_ method: String, params: JSONValue?) async throws(RPCError) -> [UInt8]
    /// A call by name; its result as a JSON value (what MCP answers with).
    func value(_ method: String, params: JSONValue?) async throws(RPCError) -> JSONValue
    /// The host's notifications (downloads, the player, logins, library changes), as they come.
    var events: EventHub { get }
    /// Whether calls run in another process (the background service).
    var isRemote: Bool { get }
}

/// The host in this process: calls go straight to its dispatcher.
public final class LocalConnection: HostConnection {
    public let host: HostRuntime

    public init(host: HostRuntime) { self.host = host }

    public func run<M: RPCMethod>(_ request: M) async throws(RPCError) -> M.Response { try await host.dispatcher.run(request) }

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
