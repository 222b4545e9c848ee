import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC

extension RPCDiscover: RPCMethod {
    public func run(on host: HostRuntime) async throws -> JSONValue {
        try RPCDiscover.spec.get()
    }

    public static func encode(_ result: JSONValue) throws -> [UInt8] { JSONWriter.bytes(result) }
}

extension HostInfo: RPCMethod {
    /// Written with JSONWriter: the most called method (clients ping with it) skips JSONEncoder,
    /// which was most of its cost (the same text: sorted keys, slashes as they are).
    public static func encode(_ info: Response) throws -> [UInt8] {
        var object: [String: JSONValue] = [
            "name": .string(info.name), "version": .string(info.version), "jsonrpc": .string(info.jsonrpc),
            "pid": JSONValue(info.pid), "providers": .array(info.providers.map(JSONValue.string)),
            "methods": .array(info.methods.map(JSONValue.string)), "configFile": .string(info.configFile),
            "dataDir": .string(info.dataDir), "cacheDir": .string(info.cacheDir), "database": .string(info.database),
        ]
        if let problems = info.pluginProblems { object["pluginProblems"] = .array(problems.map(JSONValue.string)) }
        return JSONWriter.bytes(.object(object))
    }

    public func run(on host: HostRuntime) async throws -> Response {
        Response(
            name: HostRuntime.name, version: HostRuntime.version, jsonrpc: "2.0",
            pid: Int(ProcessInfo.processInfo.processIdentifier),
            providers: host.providerIDs, methods: host.dispatcher.methodNames, configFile: host.paths.configFile,
            dataDir: host.paths.dataDir, cacheDir: host.paths.cacheDir, database: host.paths.database,
            pluginProblems: host.pluginProblems.isEmpty ? nil : host.pluginProblems)
    }
}
