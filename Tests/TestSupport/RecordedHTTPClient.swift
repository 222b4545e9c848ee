import Foundation
import MediaKit
import Synchronization

/// Answers from responses recorded in the real services' formats, by URL path; remembers the
/// requests it was sent.
public final class RecordedHTTPClient: HTTPClient {
    let responses: [String: (Int, String)]
    public let asked = Mutex<[HTTPRequest]>([])

    public init(_ responses: [String: (Int, String)]) { self.responses = responses }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        asked.withLock { $0.append(request) }
        let (status, body) = responses[request.url.path] ?? (404, "")
        return HTTPResponse(status: status, headers: ["content-type": "application/json; charset=utf-8"], body: Data(body.utf8), url: request.url)
    }

    public var urls: [URL] { asked.withLock { $0.map(\.url) } }
}
