import HostMCP
import JSONRPC
import MediaHost
import Testing

/// MCP's tools come from rpc-spec.json: each method's words, schemas and effect.
@Suite struct ToolCatalogTests {
    static func catalog(readOnly: Bool = false) throws -> (MCPToolCatalog, JSONValue) {
        let spec = try RPCDiscover.spec.get()
        let served = Set((spec["methods"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
        return (MCPToolCatalog(spec: spec, served: served, readOnlyOnly: readOnly), spec)
    }

    /// Every hint is what the method's x-effect says, so a model is told what a call does as the
    /// method itself declares it.
    @Test func hintsAreTheMethodsEffects() throws {
        let (catalog, spec) = try Self.catalog()
        let effects = Dictionary(
            (spec["methods"]?.arrayValue ?? []).compactMap { m in m["name"]?.stringValue.map { ($0, m["x-effect"]) } },
            uniquingKeysWith: { a, _ in a })
        #expect(catalog.tools.count > 30)
        for tool in catalog.tools {
            let effect = try #require(effects[tool.method] ?? nil, "\(tool.method)")
            let hints = try #require(tool.definition["annotations"])
            let access = effect["access"]?.stringValue
            #expect(hints["readOnlyHint"] == .bool(access == "reads"), "\(tool.name)")
            #expect(hints["openWorldHint"] == effect["reachesOut"], "\(tool.name)")
            #expect(tool.readOnly == (access == "reads") && tool.destructive == (access == "removes"), "\(tool.name)")
            if access != "reads" {
                #expect(hints["idempotentHint"] == effect["idempotent"], "\(tool.name)")
                #expect(hints["destructiveHint"] == .bool(access == "removes"), "\(tool.name)")
            } else {
                #expect(hints["idempotentHint"] == nil && hints["destructiveHint"] == nil, "\(tool.name)")
            }
        }
        #expect(catalog.tool(named: "favorites_remove")?.destructive == true)
        #expect(catalog.tool(named: "downloads_start")?.definition["annotations"]?["openWorldHint"] == true)
    }

    @Test func readOnlyServesOnlyWhatChangesNothing() throws {
        let (all, _) = try Self.catalog()
        let (reading, _) = try Self.catalog(readOnly: true)
        #expect(reading.tools.map(\.name) == all.tools.filter(\.readOnly).map(\.name))
        #expect(reading.tool(named: "favorites_add") == nil && reading.tool(named: "media_search") != nil)
    }

    /// People's methods (logins, settings, sharing) are no tools, and a tool's schemas stand alone.
    @Test func toolsStandAloneAndLeavePeoplesMethodsOut() throws {
        let (catalog, _) = try Self.catalog()
        for hidden in ["auth_login", "config_set", "share_start", "cache_clear", "rpc_discover"] {
            #expect(catalog.tool(named: hidden) == nil, "\(hidden)")
        }
        for tool in catalog.tools {
            #expect(!tool.definition.jsonString.contains("$ref"), "\(tool.name)")
            #expect(tool.definition["inputSchema"]?["type"] == "object", "\(tool.name)")
        }
        // A result that is no object is wrapped, and its schema says so.
        let history = try #require(catalog.tool(named: "history_list"))
        #expect(history.wrapsResult && history.definition["outputSchema"]?["required"] == ["result"])
    }
}
