import JSONRPC
import Synchronization

/// Server notifications (`downloads.progress`, `downloads.state`, `auth.prompt`) fanned out to
/// every subscriber: each RPC connection, and the REPL's progress display.
public final class EventHub: Sendable {
    public typealias Handler = @Sendable (_ method: String, _ params: JSONValue) -> Void
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

    public func publish(_ method: String, _ params: JSONValue) {
        let params = redactor?.redact(params) ?? params
        for handler in handlers.withLock({ Array($0.values) }) { handler(method, params) }
    }
}
