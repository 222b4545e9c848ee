/// A JSON-RPC 2.0 error object.
public struct RPCError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public var description: String { "\(message) (\(code))" }

    // The codes of the JSON-RPC 2.0 specification, and LSP's RequestCancelled.
    public static let parseErrorCode = -32700
    public static let invalidRequestCode = -32600
    public static let methodNotFoundCode = -32601
    public static let invalidParamsCode = -32602
    public static let internalErrorCode = -32603
    public static let requestCancelledCode = -32800

    public static func parseError(_ detail: String) -> RPCError {
        RPCError(code: parseErrorCode, message: "Parse error: \(detail)")
    }
    public static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(code: invalidRequestCode, message: "Invalid Request: \(detail)")
    }
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: methodNotFoundCode, message: "Method not found: \(method.prefix(200))")
    }
    public static func invalidParams(_ detail: String) -> RPCError {
        RPCError(code: invalidParamsCode, message: "Invalid params: \(detail)")
    }
    public static func internalError(_ detail: String) -> RPCError {
        RPCError(code: internalErrorCode, message: "Internal error: \(detail)")
    }
    public static let requestCancelled = RPCError(code: requestCancelledCode, message: "Request cancelled")

    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["code": JSONValue(code), "message": .string(message)]
        if let data { members["data"] = data }
        return .object(members)
    }
}

/// Serves requests for a connection: the host's dispatcher, or a test's handler.
public protocol RPCHandler: Sendable {
    /// Runs one method and returns its result as JSON text.
    /// - Returns: the result's JSON bytes, or the error to answer with.
    func handle(method: String, params: JSONValue?) async -> Result<[UInt8], RPCError>
}

/// The request a handler is answering, for handlers that report on it before their answer
/// (partial results, as LSP's `partialResultToken`): its id, and a way to send a notification to
/// the client that asked (and only to it).
public struct RPCRequestContext: Sendable {
    public let id: JSONValue
    public let notify: @Sendable (_ method: String, _ params: JSONValue?) -> Void

    public init(id: JSONValue, notify: @escaping @Sendable (_ method: String, _ params: JSONValue?) -> Void) {
        self.id = id
        self.notify = notify
    }

    /// Set by `RPCConnection` while a request is handled; nil for in-process calls.
    @TaskLocal public static var current: RPCRequestContext?
}
