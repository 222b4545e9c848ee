import Foundation
import MediaKit
import Synchronization

/// Answers from responses recorded in the real services' formats, by URL path; remembers the
/// requests it was sent.
public final class RecordedHTTPClient: HTTPClient {
    /// An answer: status, headers (lower-case names) and body.
    public typealias Answer = (status: Int, headers: [String: String], body: Data)
    let route: @Sendable (HTTPRequest) -> Answer?
    public let asked = Mutex<[HTTPRequest]>([])

    public init(_ responses: [String: (Int, String)]) {
        route = { request in
            responses[request.url.path].map { ($0.0, ["content-type": "application/json; charset=utf-8"], Data($0.1.utf8)) }
        }
    }

    /// Answers from `route`, 404 when it has none.
    public init(route: @escaping @Sendable (HTTPRequest) -> Answer?) { self.route = route }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        asked.withLock { $0.append(request) }
        let answer = route(request) ?? (404, [:], Data())
        return HTTPResponse(status: answer.status, headers: answer.headers, body: answer.body, url: request.url)
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

    /// A recorded answer: the body, with the status and headers of its `.meta.json`.
    public func answer(_ path: String) -> RecordedHTTPClient.Answer {
        let body = (try? data(path)) ?? Data()
        let metaPath = String(path[..<(path.lastIndex(of: ".") ?? path.endIndex)]) + ".meta.json"
        guard let meta = try? JSONSerialization.jsonObject(with: data(metaPath)) as? [String: Any] else {
            return (200, ["content-type": "application/json; charset=utf-8"], body)
        }
        var headers = meta["headers"] as? [String: String] ?? [:]
        if headers["content-type"] == nil { headers["content-type"] = "application/json; charset=utf-8" }
        return (meta["status"] as? Int ?? 200, headers, body)
    }

    /// The files in a folder of the corpus, sorted, with `suffix`.
    public func files(in folder: String, suffix: String = "") -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url(folder).path)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { folder + "/" + $0 }
    }
}

extension CompiledProvider {
    /// The provider with `settings`, answered `body` (JSON, status 200) for every request: what
    /// tolerance tests give it, mutated.
    public static func answering(_ body: Data, settings: [String: String] = [:]) throws -> Self {
        let client = RecordedHTTPClient { _ in (200, ["content-type": "application/json"], body) }
        return try Self(
            context: ProviderContext(config: ProviderConfig(settings), http: client, logger: Logger(label: "test")))
    }
}
