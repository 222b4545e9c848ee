import MediaKit

/// The last 100 searches, newest first.
public struct HistoryList: APIMethod {
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
}

/// Forgets searches: all of them, or one provider's.
public struct HistoryClear: APIMethod {
    public static let method = "history.clear"
    public static let effect = MethodEffect(.removes, library: .history)
    public var provider: String?

    public init(provider: String? = nil) {
        self.provider = provider
    }

    public struct Response: Codable, Sendable, Equatable {
        /// How many searches were forgotten.
        public var cleared: Int

        public init(cleared: Int) {
            self.cleared = cleared
        }
    }
}

/// One remembered search.
public struct SearchRecord: Codable, Sendable, Equatable {
    public var query: String
    /// Nil for a search across every provider.
    public var provider: String?
    public var kind: MediaKind?
    /// ISO 8601.
    public var at: String

    public init(query: String, provider: String?, kind: MediaKind?, at: String) {
        self.query = query
        self.provider = provider
        self.kind = kind
        self.at = at
    }
}
