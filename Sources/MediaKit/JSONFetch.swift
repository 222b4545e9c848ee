import Basics
import FoundationEssentials
import Glibc

/// What every provider of a JSON API does around a request, as yt-dlp's `_download_json` does for
/// an extractor: send it, make a status outside 2xx the provider's own error, read the body as
/// JSON. A provider keeps only what differs: its URLs, its credentials, its error codes.
extension HTTPClient {
    /// Sends `request`; a status outside 200-299 is thrown as what `failure` makes of it, or
    /// when it has no better word, as any service's (`ProviderError.from`).
    public func fetch(
        _ request: HTTPRequest, failure: (HTTPResponse) -> ProviderError? = { _ in nil }
    ) async throws -> HTTPResponse {
        let response = try await send(request)
        guard (200..<300).contains(response.status) else { throw failure(response) ?? .from(response) }
        return response
    }
}

extension HTTPResponse {
    /// The body read as `T`.
    /// - Throws: `ProviderError.invalidResponse` saying which service answered what.
    public func json<T: Decodable>(_ type: T.Type = T.self, service: String, what: String) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: body)
        } catch {
            throw ProviderError.invalidResponse("\(service) answered \(what) with JSON that cannot be read")
        }
    }
}
