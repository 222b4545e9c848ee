import Basics
import FoundationEssentials
import Glibc

/// The HTTP client providers use; the host's is MediaHTTP on libcurl, tests may pass their own.
public protocol HTTPClient: Sendable {
    /// Sends one request and returns the whole response, whatever its status.
    /// - Throws: `HTTPClientError` when no response arrived.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse

    /// Streams a response body as it arrives (downloads of any size).
    /// - Parameters:
    ///   - offset: ask for the bytes from here on (a Range request); check the status for 206.
    ///   - onHead: sees the status and headers first; return false to stop.
    ///   - onData: each chunk; return false to stop (a disk error, say).
    ///   - progress: bytes received so far and the total when known.
    /// - Returns: the status and headers (names lower-cased).
    func stream(
        _ request: HTTPRequest, offset: Int64,
        onHead: @escaping (Int, [String: String]) -> Bool,
        onData: @escaping (UnsafeRawBufferPointer) -> Bool,
        progress: ((Int64, Int64) -> Void)?
    ) async throws -> (status: Int, headers: [String: String])
}

extension HTTPClient {
    /// Buffers the whole body through `send`: enough for test doubles; real clients stream.
    public func stream(
        _ request: HTTPRequest, offset: Int64,
        onHead: @escaping (Int, [String: String]) -> Bool,
        onData: @escaping (UnsafeRawBufferPointer) -> Bool,
        progress: ((Int64, Int64) -> Void)?
    ) async throws -> (status: Int, headers: [String: String]) {
        var request = request
        if offset > 0 { request.headers["Range"] = "bytes=\(offset)-" }
        let response = try await send(request)
        guard onHead(response.status, response.headers) else { return (response.status, response.headers) }
        _ = response.body.withUnsafeBytes { onData($0) }
        progress?(Int64(response.body.count), Int64(response.body.count))
        return (response.status, response.headers)
    }
}

public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?
    /// The whole request's time limit in seconds; the client's default when nil.
    public var timeout: Double?
    /// The largest body accepted, in bytes; the client's default (32 MiB) when nil.
    public var maxBodySize: Int?
    /// Ask for and decode gzip/brotli. Off for media: a file is stored as sent, and a small
    /// compressed answer cannot expand to fill the disk.
    public var acceptsCompression: Bool

    public init(
        method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil,
        timeout: Double? = nil, maxBodySize: Int? = nil, acceptsCompression: Bool = true
    ) {
        self.acceptsCompression = acceptsCompression
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxBodySize = maxBodySize
    }

    /// Whether repeating the request is harmless, so it may be retried.
    public var isIdempotent: Bool { ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"].contains(method.uppercased()) }

    /// Adds the validators of an earlier response, for a conditional GET.
    public mutating func setValidators(etag: String?, lastModified: String?) {
        if let etag { headers["If-None-Match"] = etag }
        if let lastModified { headers["If-Modified-Since"] = lastModified }
    }
}

extension URL {
    /// An API endpoint: `path` under this base URL with `query` sorted by name (stable URLs for
    /// caches and recorded answers), then `extra` (credentials) in its own order; nil when the
    /// pieces do not form a URL.
    ///
    /// Every name and value is percent-encoded as RFC 3986 asks of data in a query: all but
    /// its unreserved characters. (`URLComponents.queryItems` leaves `+`, which servers read as
    /// a space, so a search for "c++" went out as "c  " and a Bluesky cursor "…+at://…" could
    /// not be followed; and it leaves `&`-free reserved characters such as `:/?@` as they are.)
    public func endpoint(_ path: String, query: [String: String] = [:], extra: [URLQueryItem] = []) -> URL? {
        var components = URLComponents(url: appendingPathComponent(path), resolvingAgainstBaseURL: false)
        let items = query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) } + extra
        components?.percentEncodedQuery =
            items.isEmpty
            ? nil
            : items.map { item in
                QueryEncoding.encode(item.name) + (item.value.map { "=" + QueryEncoding.encode($0) } ?? "")
            }.joined(separator: "&")
        return components?.url
    }
}

/// Percent-encoding for query names and values (RFC 3986, section 2): everything but the
/// unreserved characters, as UTF-8 bytes with upper-case hex.
public enum QueryEncoding {
    public static func encode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0x0F, radix: 16, uppercase: true)
            }
        }
        return out
    }
}

public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Header names lower-cased.
    public var headers: [String: String]
    public var body: Data
    /// The final URL after redirects.
    public var url: URL

    public init(status: Int, headers: [String: String], body: Data, url: URL) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Why an HTTP exchange failed before a response arrived.
public struct HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        case unsupportedScheme, invalidURL, tooManyRedirects, bodyTooLarge, timedOut, connection, cancelled
    }
    public var kind: Kind
    /// The URL with secrets redacted.
    public var url: String
    public var detail: String

    public init(_ kind: Kind, url: URL, detail: String) {
        self.kind = kind
        self.url = URLRedaction.redact(url.absoluteString)
        self.detail = detail
    }

    public var description: String { "\(detail) (\(url))" }

    /// Worth another try: the network may do better next time.
    public var isTransient: Bool { kind == .connection || kind == .timedOut }
}

/// Removes secrets from URLs before they reach a message or a log.
public enum URLRedaction {
    /// Query parameters whose values are never shown.
    public static let secretParameters: Set<String> = ["key", "api_key", "apikey", "access_token", "token", "client_secret"]

    public static func redact(_ url: String) -> String {
        guard var components = URLComponents(string: url), let items = components.queryItems, !items.isEmpty else { return url }
        components.queryItems = items.map { item in
            secretParameters.contains(item.name.lowercased()) && item.value != nil
                ? URLQueryItem(name: item.name, value: "REDACTED") : item
        }
        return components.string ?? url
    }
}

/// How long the call being served may still wait on the network, across all its requests and
/// their retries. The host sets it per call (the `http.timeout` setting); work that is not an
/// interactive call (downloads) runs without one.
public struct CallDeadline: Sendable {
    public let end: ContinuousClock.Instant
    /// The whole budget, for messages ("timed out after 20 s").
    public let seconds: Double

    public init(seconds: Double) {
        self.seconds = seconds
        end = ContinuousClock.now + .milliseconds(Int(finite: seconds * 1000) ?? 0)
    }

    /// Seconds left; zero or less when it has passed.
    public var remaining: Double {
        let left = end - ContinuousClock.now
        return Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
    }

    @TaskLocal public static var current: CallDeadline?

    /// For work that waits on a person between its requests (a device login polls for minutes
    /// while they approve it): each request, retries included, gets this many seconds of its
    /// own when no call deadline is set.
    @TaskLocal public static var perRequest: Double?

    /// The deadline a request starts under: the call's, or one of its own (`perRequest`).
    public static var forRequest: CallDeadline? { current ?? perRequest.map { CallDeadline(seconds: $0) } }
}
