import Foundation
import JSONRPC
import MediaKit
import Synchronization

/// A notification the host sends: a Codable payload that names its method, as `RPCMethod` does
/// for calls. rpc-spec.json lists each under `x-notifications` (a test checks).
public protocol HostNotification: Codable, Sendable {
    static var method: String { get }
}

/// `downloads.progress`: a running download's progress, at most four times a second.
public struct DownloadProgress: HostNotification, Equatable {
    public static let method = "downloads.progress"
    public var id: String
    public var bytes: Int64
    public var total: Int64?
    /// Bytes per second.
    public var rate: Double
    /// Seconds left, when the total is known and bytes are arriving.
    public var eta: Double?

    public init(id: String, bytes: Int64, total: Int64? = nil, rate: Double, eta: Double? = nil) {
        self.id = id
        self.bytes = bytes
        self.total = total
        self.rate = rate
        self.eta = eta
    }
}

/// `library.changed`: favorites, lists or the search history changed (by any client), so views
/// of them (an editor's buffer, an MCP resource) can be read again.
public struct LibraryChange: HostNotification, Equatable {
    public static let method = "library.changed"
    /// `favorites`, `lists` or `history`.
    public var what: String
    /// The list, when one list changed.
    public var list: String?

    public init(what: String, list: String? = nil) {
        self.what = what
        self.list = list
    }
}

/// `downloads.state`: every state change of a download (`removed` when it is forgotten).
public struct DownloadStateChange: HostNotification, Equatable {
    public static let method = "downloads.state"
    public var id: String
    /// A `DownloadRecord.State`, or `removed`.
    public var state: String
    /// The file, once completed.
    public var path: String?
    public var error: String?

    public init(id: String, state: String, path: String? = nil, error: String? = nil) {
        self.id = id
        self.state = state
        self.path = path
        self.error = error
    }
}

/// `auth.prompt`: what to do to finish a device login.
extension AuthPrompt: HostNotification {
    public static let method = "auth.prompt"
}

/// `media.searchResults`: one provider's part of a search across providers made with
/// `stream: true`, sent only to the client that asked, as soon as that provider answers and
/// before the search's result (which has every provider's items).
public struct SearchResults: HostNotification, Equatable {
    public static let method = "media.searchResults"
    /// The id of the `media.search` request.
    public var request: JSONValue
    public var query: String
    public var provider: String
    /// This provider's first page (empty when it failed).
    public var items: [MediaItem]
    /// Why this provider failed.
    public var error: MediaSearch.Failure?

    public init(request: JSONValue, query: String, provider: String, items: [MediaItem], error: MediaSearch.Failure? = nil) {
        self.request = request
        self.query = query
        self.provider = provider
        self.items = items
        self.error = error
    }
}

/// One notification, typed: what in-process subscribers (the REPL) switch over; RPC connections
/// send `method` with `params`.
public enum HostEvent: Sendable, Equatable {
    case downloadProgress(DownloadProgress)
    case downloadState(DownloadStateChange)
    case authPrompt(AuthPrompt)
    case playerState(PlayerStatus)
    case libraryChanged(LibraryChange)

    /// Every notification the host sends (`SearchResults` goes to one client, not through the hub).
    public static let notifications: [any HostNotification.Type] = [
        DownloadProgress.self, DownloadStateChange.self, AuthPrompt.self, PlayerStatus.self, LibraryChange.self,
        SearchResults.self,
    ]

    public var payload: any HostNotification {
        switch self {
        case .downloadProgress(let progress): progress
        case .downloadState(let change): change
        case .authPrompt(let prompt): prompt
        case .playerState(let status): status
        case .libraryChanged(let change): change
        }
    }

    public var method: String { type(of: payload).method }

    /// The event a notification carries (a front end attached to the service); nil for one
    /// that is not the host's, or `media.searchResults` (answered to one request, not broadcast).
    public init?(method: String, params: JSONValue?) {
        func decode<T: Decodable>(_ type: T.Type) -> T? {
            guard let params else { return nil }
            return try? JSONValueDecoder().decode(T.self, from: params)
        }
        switch method {
        case DownloadProgress.method:
            guard let value = decode(DownloadProgress.self) else { return nil }; self = .downloadProgress(value)
        case DownloadStateChange.method:
            guard let value = decode(DownloadStateChange.self) else { return nil }; self = .downloadState(value)
        case AuthPrompt.method: guard let value = decode(AuthPrompt.self) else { return nil }; self = .authPrompt(value)
        case PlayerStatus.method: guard let value = decode(PlayerStatus.self) else { return nil }; self = .playerState(value)
        case LibraryChange.method:
            guard let value = decode(LibraryChange.self) else { return nil }; self = .libraryChanged(value)
        default: return nil
        }
    }

    /// The payload as JSON-RPC params.
    public var params: JSONValue { (try? JSONCoding.value(payload)) ?? [:] }

    /// The same event with secrets removed from every text it carries.
    func redacted(by redactor: Redactor) -> HostEvent {
        switch self {
        case .downloadProgress, .libraryChanged:
            return self
        case .downloadState(var change):
            change.path = change.path.map(redactor.redact)
            change.error = change.error.map(redactor.redact)
            return .downloadState(change)
        case .authPrompt(var prompt):
            prompt.url = redactor.redact(prompt.url)
            prompt.code = redactor.redact(prompt.code)
            prompt.message = redactor.redact(prompt.message)
            return .authPrompt(prompt)
        case .playerState(var status):
            if var item = status.item {
                item.target = redactor.redact(item.target)
                status.item = item
            }
            for index in status.queue.indices { status.queue[index].target = redactor.redact(status.queue[index].target) }
            return .playerState(status)
        }
    }
}

/// Server notifications fanned out to every subscriber: each RPC connection, and the REPL's
/// progress display.
public final class EventHub: Sendable {
    public typealias Handler = @Sendable (HostEvent) -> Void
    private let handlers = Mutex<[Int: Handler]>([:])
    private let nextToken = Mutex(0)
    /// Removes secrets from every notification before anyone sees it.
    private let redactor: Redactor?

    public init(redactor: Redactor? = nil) { self.redactor = redactor }

    /// - Returns: a token for `unsubscribe`.
    @discardableResult
    public func subscribe(_ handler: @escaping Handler) -> Int {
        let token = nextToken.withLock { token in
            token += 1
            return token
        }
        handlers.withLock { $0[token] = handler }
        return token
    }

    public func unsubscribe(_ token: Int) { handlers.withLock { $0[token] = nil } }

    public func publish(_ event: HostEvent) {
        let event = redactor.map { event.redacted(by: $0) } ?? event
        for handler in handlers.withLock({ Array($0.values) }) { handler(event) }
    }
}
