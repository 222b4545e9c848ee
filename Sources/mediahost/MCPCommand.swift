import ArgumentParser
import Basics
import FoundationEssentials
import HostMCP
import HostService
import JSONRPC
import MediaHost
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `mediahost mcp`: the host as a Model Context Protocol server on stdin/stdout.
struct MCPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Serve the Model Context Protocol on stdin/stdout, for AI assistants and editors.",
        discussion: """
            Tools are the host's methods (search, details, favorites, lists, downloads, the player), \
            resources its favorites, lists, downloads and history as mediahost:// URIs. With a \
            background service running, calls go to it, so downloads and playback are shared with \
            the REPL and editors. Put `mediahost mcp` (or `mediahost mcp --read-only`) in the \
            assistant's MCP server settings. Logs go to stderr.
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Offer only the tools that change nothing (also the setting mcp.read_only).")
    var readOnly = false

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        let spec: JSONValue
        switch RPCDiscover.spec {
        case .success(let value): spec = value
        case .failure(let error): throw StartupFailure(message: "rpc-spec.json cannot be read: \(error)")
        }
        // The background service when one runs (tools then share its downloads and playback),
        // this process's host if it stops; the one place that is chosen is `sessionConnection`.
        let (connection, host) = try await global.host.sessionConnection { reason in
            _ = Descriptor.standardError("mediahost mcp: note: \(reason)\n")
        }
        let server = try await Self.server(spec: spec, connection: connection, readOnly: readOnly)
        let subscription = connection.events.subscribe { event in server.hostEvent(method: event.method, params: event.params) }
        defer { connection.events.unsubscribe(subscription) }
        await host.sessionWillStart()
        if !connection.isRemote { await host.downloads.resumeInterrupted() }
        await Self.serve(server)
    }

    static func server(spec: JSONValue, connection: any HostConnection, readOnly: Bool) async throws -> MCPServer {
        // What this host serves, and whether it is set to read-only, asked of it as any client would.
        let methods: [String]
        do throws(RPCError) {
            methods = try await connection.run(HostInfo()).methods
        } catch {
            throw StartupFailure(message: "the host did not say which methods it serves: \(error.message)")
        }
        var onlyReading = readOnly
        if let setting = try? await connection.run(ConfigGet(key: "mcp.read_only")), setting.first?.value == "true" {
            onlyReading = true
        }
        let catalog = MCPToolCatalog(
            spec: spec, served: Set(methods), readOnlyOnly: onlyReading)
        return MCPServer(connection: connection, catalog: catalog, name: HostRuntime.name, version: HostRuntime.version)
    }

    static func serve(_ server: MCPServer) async {
        // MCP's stdio transport is one JSON text a line.
        let connection = RPCConnection.standardIO(handler: server, name: "mediahost mcp", framing: .newline)
        server.connect { method, params in connection.notify(method: method, params: params) }
        await connection.run()
    }
}

extension RPCConnection {
    /// The connection to the one client on stdin/stdout (`rpc`, `mcp`): never dropped for not
    /// reading (it is the only client); what it misses meanwhile is said on stderr.
    static func standardIO(handler: any RPCHandler, name: String, framing: Framing?) -> RPCConnection {
        RPCConnection(handler: handler, framing: framing) { failure in
            _ = Descriptor.standardError("\(name): stopped writing to the client: \(failure)\n")
        } onMissed: { count in
            _ = Descriptor.standardError(
                count == 0
                    ? "\(name): the client is not reading its answers; notifications wait until it does\n"
                    : "\(name): the client reads again; \(count) notifications were not sent meanwhile\n")
        }
    }
}
