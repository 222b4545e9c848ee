import JSONRPC
import MediaKit
import Synchronization

/// A notification the host sends: a Codable payload that names its method, as `RPCMethod` does
/// for calls. The runtime and each module register theirs (`HostRuntime.notifications`), as
/// sourcekit-lsp's `MessageRegistry` holds requests and notifications; rpc-spec.json lists each
/// under `x-notifications` (a test checks).
public protocol HostNotification: Codable, Sendable {
    static var method: String { get }
    /// The same notification with every secret it could carry masked (in a path, a URL, an
    /// error): the hub sends nothing else. Unchanged by default (numbers and ids).
    func redacted(by redactor: any Redacting) -> Self
}

extension HostNotification {
    public func redacted(by redactor: any Redacting) -> Self { self }

    fileprivate func event(redactedBy redactor: any Redacting) -> HostEvent { HostEvent(redacted(by: redactor)) }
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

/// `library.changed`: favorites, lists, the search history or the queue changed (by any client), so views
/// of them (an editor's buffer, an MCP resource) can be read again.
public struct LibraryChange: HostNotification, Equatable {
    public static let method = "library.changed"
    /// `favorites`, `lists`, `history`, `queue`, `new` (the inbox) or `rules` (a show's settings).
    public var what: String
    /// The list, when one list changed.
    public var list: String?

    public init(what: String, list: String? = nil) {
        self.what = what
        self.list = list
    }

    /// `what` when the queue changed.
    public static let queue = "queue"
}

/// `downloads.state`: every state change of a download (`removed` when it is forgotten).
public struct DownloadStateChange: HostNotification, Equatable {
    public static let method = "downloads.state"
    public var id: String
    /// A `DownloadState`, or `removed`.
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

    public func redacted(by redactor: any Redacting) -> Self {
        var change = self
        change.path = path.map(redactor.redact)
        change.error = error.map(redactor.redact)
        return change
    }
}

/// `auth.prompt`: what to do to finish a device login.
extension AuthPrompt: HostNotification {
    public static let method = "auth.prompt"

    public func redacted(by redactor: any Redacting) -> Self {
        var prompt = self
        prompt.url = redactor.redact(url)
        prompt.code = redactor.redact(code)
        prompt.message = redactor.redact(message)
        return prompt
    }
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

/// One notification: its method and its payload, typed when this process made it and as the
/// service sent it when it came over the socket. Subscribers ask for the payloads they know
/// (`payload(_:)`); RPC connections send `method` with `params`.
public struct HostEvent: Sendable, Equatable {
    public let method: String
    private enum Content: Sendable {
        case typed(any HostNotification)
        case sent(JSONValue)
    }
    private let content: Content

    public init<N: HostNotification>(_ payload: N) {
        method = N.method
        content = .typed(payload)
    }

    /// A notification the service sent (a front end attached to it); nil without params.
    public init?(method: String, params: JSONValue?) {
        guard let params, case .object = params else { return nil }
        self.method = method
        content = .sent(params)
    }

    /// The payload when this is an `N`.
    public func payload<N: HostNotification>(_ type: N.Type) -> N? {
        guard method == N.method else { return nil }
        switch content {
        case .typed(let payload): return payload as? N
        case .sent(let params): return try? JSONValueDecoder().decode(N.self, from: params)
        }
    }

    /// The payload as JSON-RPC params.
    public var params: JSONValue {
        switch content {
        case .typed(let payload): (try? JSONCoding.value(payload)) ?? [:]
        case .sent(let params): params
        }
    }

    public static func == (a: HostEvent, b: HostEvent) -> Bool { a.method == b.method && a.params == b.params }

    /// The same event with secrets removed from every text it carries.
    func redacted(by redactor: any Redacting) -> HostEvent {
        switch content {
        case .typed(let payload): payload.event(redactedBy: redactor)
        case .sent: self
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
    private let redactor: (any Redacting)?

    public init(redactor: (any Redacting)? = nil) { self.redactor = redactor }

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
