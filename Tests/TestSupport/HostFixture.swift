import Foundation
import JSONRPC
import MediaHost
import MediaKit
import Synchronization

/// A host on a fresh temporary data dir with the test providers registered, and the modules a
/// test target is about (none: the runtime alone). `setUp` fills the data dir before the host
/// starts (plugins to discover).
public struct HostFixture: Sendable {
    public let host: HostRuntime
    public let control: CatalogControl
    public let directory: String

    public init(
        environment: [String: String] = [:], configText: String? = nil, http: any HTTPClient = NoNetwork(),
        modules: [any HostModule.Type] = [], discovery: [any ProviderDiscovery] = [],
        more providers: [ProviderRegistration] = [], setUp: (_ dataDir: String) throws -> Void = { _ in }
    ) throws {
        directory = try makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/data", withIntermediateDirectories: true)
        try setUp(directory + "/data")
        if let configText {
            try configText.write(toFile: directory + "/config.toml", atomically: true, encoding: .utf8)
        }
        control = CatalogControl()
        host = try HostRuntime(
            paths: HostPaths(
                configFile: directory + "/config.toml", dataDir: directory + "/data", cacheDir: directory + "/cache"),
            providers: [
                CatalogProvider.registration(control), .of(BrokenProvider.self), .of(LockedProvider.self),
                .of(FeedsProvider.self),
            ] + providers,
            http: http, discovery: discovery, modules: modules, environment: environment)
    }

    /// Calls a method and parses the result.
    public func call(_ method: String, _ params: JSONValue? = nil) async throws(RPCError) -> JSONValue {
        let bytes = try await host.dispatcher.call(method, params: params)
        do { return try JSONParser.parse(bytes) } catch { throw .internalError("result is not JSON: \(error)") }
    }

    /// Calls a method and decodes the result.
    public func call<T: Decodable>(_ method: String, _ params: JSONValue? = nil, as type: T.Type) async throws -> T {
        let bytes = try await host.dispatcher.call(method, params: params)
        return try JSONDecoder().decode(T.self, from: Data(bytes))
    }
}

/// A new folder under the run's root (see `TestRun`): removed, and every process that names it
/// ended, when the test process ends.
public func makeTemporaryDirectory() throws -> String {
    let path = TestRun.root + "/" + UUID().uuidString.prefix(13)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Lines written by code under test, collected from any thread.
public final class LineLog: Sendable {
    private let lines = Mutex<[String]>([])
    public init() {}
    public func append(_ line: String) { lines.withLock { $0.append(line) } }
    public func clear() { lines.withLock { $0.removeAll() } }
    public var text: String { lines.withLock { $0.joined(separator: "\n") } }
}
