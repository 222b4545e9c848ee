import JSONRPC
import MediaKit

/// Errors of the host itself (as opposed to a provider's), each saying what to do.
public enum HostError: Error, Sendable, CustomStringConvertible {
    case unknownProvider(String, known: [String])
    case notConfigured(provider: String, hint: String)
    case noProviderConfigured
    case unknownConfigKey(String)
    case invalidConfigValue(key: String, reason: String)
    case badConfigFile(path: String, reason: String)
    case invalidArgument(String)
    case storage(String)
    case player(String)
    /// Work that runs once at a time is running (a refresh): try again when it ends.
    case busy(String)

    public var description: String {
        switch self {
        case .unknownProvider(let id, let known):
            known.isEmpty
                ? "unknown provider '\(id)': no provider is registered"
                : "unknown provider '\(id)'; providers are \(known.joined(separator: ", "))"
        case .notConfigured(let provider, let hint): "\(provider) is not configured: \(hint)"
        case .noProviderConfigured: "no provider is configured; run `providers` to see what each one needs"
        case .unknownConfigKey(let key): "unknown setting '\(key)'; `config` lists every setting"
        case .invalidConfigValue(let key, let reason): "invalid value for \(key): \(reason)"
        case .badConfigFile(let path, let reason): "cannot read the config file \(path): \(reason)"
        case .invalidArgument(let why): why
        case .storage(let why): "the database failed: \(why)"
        case .player(let why): why
        case .busy(let why): why
        }
    }
}

/// Application error codes, -32000..-32099, documented in rpc-spec.json.
public enum AppErrorCode {
    public static let unsupported = -32001
    public static let notFound = -32002
    public static let unauthorized = -32003
    public static let rateLimited = -32004
    public static let quotaExceeded = -32005
    public static let upstream = -32006
    public static let invalidResponse = -32007
    public static let network = -32008
    public static let notConfigured = -32009
    public static let unknownProvider = -32010
    public static let storage = -32020
    public static let player = -32021
    public static let busy = -32022

    static func code(for error: ProviderError) -> Int {
        switch error {
        case .unsupported: unsupported
        case .notFound: notFound
        case .unauthorized: unauthorized
        case .notConfigured: notConfigured
        case .rateLimited: rateLimited
        case .quotaExceeded: quotaExceeded
        case .upstream: upstream
        case .invalidResponse: invalidResponse
        case .network: network
        case .invalidArgument: RPCError.invalidParamsCode
        }
    }
}

/// A provider's error, tagged with the provider it came from.
public struct ProviderFailure: Error, Sendable {
    public var provider: String
    public var error: ProviderError

    public init(provider: String, error: ProviderError) {
        self.provider = provider
        self.error = error
    }

    public var rpcError: RPCError {
        var data: [String: JSONValue] = ["provider": .string(provider), "kind": .string(error.kind)]
        switch error {
        case .rateLimited(let retryAfter?): data["retryAfter"] = JSONValue(retryAfter)
        case .upstream(let status, _) where status > 0: data["status"] = JSONValue(status)
        default: break
        }
        return RPCError(code: AppErrorCode.code(for: error), message: "\(provider): \(error.message)", data: .object(data))
    }
}

extension HostError {
    public var rpcError: RPCError {
        switch self {
        case .unknownProvider(let id, _):
            RPCError(
                code: AppErrorCode.unknownProvider, message: description,
                data: ["provider": .string(id), "kind": "unknownProvider"])
        case .notConfigured(let provider, _):
            RPCError(
                code: AppErrorCode.notConfigured, message: description,
                data: ["provider": .string(provider), "kind": "notConfigured"])
        case .noProviderConfigured:
            RPCError(code: AppErrorCode.notConfigured, message: description, data: ["kind": "notConfigured"])
        case .unknownConfigKey, .invalidConfigValue, .invalidArgument:
            .invalidParams(description)
        case .badConfigFile, .storage:
            RPCError(code: AppErrorCode.storage, message: description, data: ["kind": "storage"])
        case .player:
            RPCError(code: AppErrorCode.player, message: description, data: ["kind": "player"])
        case .busy:
            RPCError(code: AppErrorCode.busy, message: description, data: ["kind": "busy"])
        }
    }
}
