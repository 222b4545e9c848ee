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

/// Files of a provider's recorded corpus (`Providers/<Name>/Tests/Recorded/`), found beside the
/// test file that asks: `Recorded(#filePath).data("feeds/x.xml")`.
public struct Recorded: Sendable {
    public let root: URL

    public init(_ testFile: String = #filePath) {
        root = URL(fileURLWithPath: testFile).deletingLastPathComponent().appendingPathComponent("Recorded")
    }

    public func url(_ path: String) -> URL { root.appendingPathComponent(path) }

    public func data(_ path: String) throws -> Data { try Data(contentsOf: url(path)) }

    public func text(_ path: String) throws -> String { String(decoding: try data(path), as: UTF8.self) }

    /// The files in a folder of the corpus, sorted, with `suffix`.
    public func files(in folder: String, suffix: String = "") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url(folder).path)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { folder + "/" + $0 }
    }
}
