import Foundation
import JSONRPC
import MediaHost
import Testing

/// Validates a method's result against its schema in rpc-spec.json.
public func expectConforms(_ value: JSONValue, to method: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
    let spec = try RPCDiscover.spec.get()
    let validator = SchemaValidator(document: spec)
    let schema = try #require(
        validator.resultSchema(of: method), "no result schema for \(method)", sourceLocation: sourceLocation)
    let errors = validator.validate(value, against: schema)
    #expect(errors.isEmpty, "\(method): \(errors.joined(separator: "; "))", sourceLocation: sourceLocation)
}

extension HostFixture {
    /// Calls and checks the result against the spec.
    public func checked(_ method: String, _ params: JSONValue? = nil) async throws -> JSONValue {
        let result = try await call(method, params)
        try expectConforms(result, to: method)
        return result
    }

    public func error(_ method: String, _ params: JSONValue? = nil) async -> RPCError? {
        do {
            _ = try await host.dispatcher.call(method, params: params)
            return nil
        } catch {
            return error
        }
    }
}

/// What rpc-spec.json says of `methods` that their types do not: each is described, with the
/// effect it declares (`x-effect`, which MCP's hints come from) and its params and answer member by
/// member (`APISpec`). Each module's tests check its own.
public func specDisagreements(_ methods: [any RPCMethod.Type]) throws -> [String] {
    APISpec.disagreements(methods.map { $0 as any APIMethod.Type }, in: try RPCDiscover.spec.get())
}

/// What rpc-spec.json's `x-notifications` says `payload`'s params are, and where they differ.
public func notificationDisagreements<N: HostNotification>(_ payload: N) throws -> [String] {
    let spec = try RPCDiscover.spec.get()
    let listed = spec["x-notifications"]?.arrayValue ?? []
    guard let schema = listed.first(where: { $0["name"]?.stringValue == N.method })?["params"] else {
        return ["\(N.method) is not in rpc-spec.json's x-notifications"]
    }
    return SchemaValidator(document: spec).validate(HostEvent(payload).params, against: schema)
}
