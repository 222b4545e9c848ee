import JSONRPC

/// The OpenRPC document describing every method (rpc-spec.json).
public struct RPCDiscover: APIMethod {
    public static let method = "rpc.discover"
    public static let effect = MethodEffect(.reads)

    public init() {}
    public typealias Response = JSONValue

    /// rpc-spec.json as embedded at build time, parsed once.
    public static var spec: Swift.Result<JSONValue, JSONParseError> { APISpec.document }
}

/// What is running and where its files are.
public struct HostInfo: APIMethod {
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

        public init(
            name: String, version: String, jsonrpc: String, pid: Int, providers: [String], methods: [String], configFile: String,
            dataDir: String, cacheDir: String, database: String, pluginProblems: [String]? = nil
        ) {
            self.name = name
            self.version = version
            self.jsonrpc = jsonrpc
            self.pid = pid
            self.providers = providers
            self.methods = methods
            self.configFile = configFile
            self.dataDir = dataDir
            self.cacheDir = cacheDir
            self.database = database
            self.pluginProblems = pluginProblems
        }
    }
}
