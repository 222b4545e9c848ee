import Basics
import FoundationEssentials
import Glibc
import JSONRPC

/// The OpenRPC document describing every method (rpc-spec.json).
public struct RPCDiscover: RPCMethod {
    public static let method = "rpc.discover"
    public static let effect = MethodEffect(.reads)

    public init() {}
    public typealias Response = JSONValue

    public func run(on host: HostRuntime) async throws -> JSONValue {
        try RPCDiscover.spec.get()
    }

    public static func encode(_ result: JSONValue) throws -> [UInt8] { JSONWriter.bytes(result) }

    /// rpc-spec.json as embedded at build time, parsed once.
    public static let spec: Swift.Result<JSONValue, JSONParseError> = Swift.Result { () throws(JSONParseError) in
        try JSONParser.parse(PackageResources.rpc_spec_json)
    }
}

/// What is running and where its files are.
public struct HostInfo: RPCMethod {
    public static let method = "host.info"
    public static let effect = MethodEffect(.reads)

    public init() {}

    public struct Response: Codable, Sendable, Equatable {
        public var name: String
        public var version: String
        /// The JSON-RPC version spoken: "2.0".
        public var jsonrpc: String
        public var pid: Int
        public var providers: [String]
        public var methods: [String]
        public var configFile: String
        public var dataDir: String
        public var cacheDir: String
        public var database: String
        /// Plugins that could not be loaded, each with why; absent when there are none.
        public var pluginProblems: [String]?
    }

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
