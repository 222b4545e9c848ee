import MediaKit
import MediaStore

/// The last 100 searches, newest first.
public struct HistoryList: RPCMethod {
    public static let method = "history.list"
    public static let effect = MethodEffect(.reads)
    public typealias Response = [SearchRecord]
    /// Only searches made on this provider.
    public var provider: String?
    /// At most this many, 1 to 100.
    public var limit: Int?

    public init(provider: String? = nil, limit: Int? = nil) {
        self.provider = provider
        self.limit = limit
    }

    public func run(on host: HostRuntime) async throws -> Response {
        let limit = limit ?? MediaStore.historyLimit
        guard (1...MediaStore.historyLimit).contains(limit) else {
            throw HostError.invalidArgument("limit must be between 1 and \(MediaStore.historyLimit)")
        }
        return try await host.store.history(provider: provider, limit: limit)
    }
}

/// Forgets searches: all of them, or one provider's.
public struct HistoryClear: RPCMethod {
    public static let method = "history.clear"
    public static let effect = MethodEffect(.removes, library: .history)
    public var provider: String?

    public init(provider: String? = nil) {
        self.provider = provider
    }

    public struct Response: Codable, Sendable, Equatable {
        /// How many searches were forgotten.
        public var cleared: Int
    }

    public func run(on host: HostRuntime) async throws -> Response {
        Response(cleared: try await host.store.clearHistory(provider: provider))
    }
}
