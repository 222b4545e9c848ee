import JSONRPC

/// Where a front end's calls go: the host in this process, or the background service.
///
/// As sourcekit-lsp's `Connection` and swift-tools-protocols' `LocalConnection` answer the same
/// `send(request, reply)`: the REPL, MCP, `call`, `run` and `rpc` take a connection and never
/// look behind it. `HostOptions.connection()` (the executable) chooses one.
public protocol HostConnection: AnyObject, Sendable {
    /// A typed call: params and answer are values.
    func run<M: APIMethod>(_ request: M) async throws(RPCError) -> M.Response
    /// A call by name with JSON params; its result as JSON text (what `rpc` and `call` write).
    func call(_ method: String, params: JSONValue?) async throws(RPCError) -> [UInt8]
    /// A call by name; its result as a JSON value (what MCP answers with).
    func value(_ method: String, params: JSONValue?) async throws(RPCError) -> JSONValue
    /// The host's notifications (downloads, the player, logins, library changes), as they come.
    var events: EventHub { get }
    /// Whether calls run in another process (the background service).
    var isRemote: Bool { get }
}
