import Basics
import FoundationEssentials
import Glibc
import MediaKit
import Synchronization

/// The HTTP client providers use: libcurl underneath, async/await on top.
///
/// Retries idempotent requests on connection errors, timeouts, 5xx and 429 with exponential
/// backoff and jitter, honouring Retry-After; limits concurrent requests per host.
public final class MediaHTTPClient: HTTPClient, Sendable {
    public struct Configuration: Sendable {
        public var userAgent = "mediahost/\(MediaHTTPClient.version)"
        public var connectTimeout: Double = 10
        /// The default limit for a whole request, in seconds.
        public var timeout: Double? = 60
        /// Abort when fewer than `lowSpeedLimit` bytes/s arrive for `lowSpeedTime` seconds.
        public var lowSpeedLimit = 1
        public var lowSpeedTime = 30
        public var maxBodySize = 32 << 20
        public var maxRedirects = 5
        /// Attempts after the first.
        public var maxRetries = 3
        public var baseDelay: Double = 0.25
        public var maxDelay: Double = 8
        /// A Retry-After longer than this is not waited for: the response goes to the caller.
        public var maxRetryAfter: Double = 30
        public var perHostLimit = 6

        public init() {}
    }

    public static let version = "0.1.0"

    /// Starts loading libcurl in the background (see `CurlLibrary.preload`): for a process about
    /// to make requests.
    public static func preload() { CurlLibrary.preload() }
    /// Before the process exits: waits for a `preload()` or a first request loading libcurl,
    /// and lets no other begin.
    public static func settle() { CurlLibrary.settle() }
    public let configuration: Configuration
    /// Created on first use: start-up (and calls that never touch the network) skip
    /// curl_global_init and the engine thread.
    private let lazyEngine = Mutex<CurlEngine?>(nil)
    private var engine: CurlEngine {
        lazyEngine.withLock { engine in
            if let engine { return engine }
            let created = CurlEngine()
            engine = created
            return created
        }
    }
    private let limiter: HostLimiter
    /// Where requests, retries and their timings are logged (debug); nil until the host sets it.
    private let logger = Mutex<Logger?>(nil)

    /// Logs every request (redacted URL, status, bytes, time, whether a conditional GET hit) and
    /// every retry with its reason at debug level.
    public func setLogger(_ logger: Logger) { self.logger.withLock { $0 = logger } }

    func log(_ level: Logger.Level, _ message: @autoclosure () -> String) {
        guard let logger = logger.withLock({ $0 }), logger.logLevel <= level else { return }
        logger.log(level: level, "\(message())")
    }

    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.limiter = HostLimiter(limit: configuration.perHostLimit)
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try validate(request.url)
        let deadline = CallDeadline.forRequest
        var attempt = 0
        while true {
            var limited = request
            if let deadline {
                // Each attempt gets what is left of the call's budget, no more.
                let left = deadline.remaining
                guard left > 0.05 else { throw Self.deadlineError(request.url, deadline) }
                limited.timeout = min(request.timeout ?? configuration.timeout ?? left, left)
            }
            let outcome: Result<HTTPResponse, HTTPClientError>
            do {
                outcome = .success(try await once(limited))
            } catch let error as HTTPClientError {
                if error.kind == .timedOut, let deadline, deadline.remaining <= 0.05 {
                    throw Self.deadlineError(request.url, deadline)
                }
                outcome = .failure(error)
            }
            let retryable = request.isIdempotent && attempt < configuration.maxRetries
            switch outcome {
            case .success(let response):
                guard retryable, response.status == 429 || (500...599).contains(response.status) else { return response }
                let delay = Self.retryAfter(response.header("retry-after")) ?? backoff(attempt)
                // Retry only while the call's budget leaves room for another attempt after waiting.
                guard delay <= configuration.maxRetryAfter, delay < (deadline?.remaining ?? .infinity) - 0.5 else {
                    return response
                }
                log(
                    .debug,
                    "retrying \(URLRedaction.redact(request.url.absoluteString)) in \(Self.format(delay)) s: HTTP \(response.status)"
                )
                try await Task.sleep(for: .seconds(delay))
            case .failure(let error):
                guard retryable, error.isTransient else { throw error }
                let delay = backoff(attempt)
                guard delay < (deadline?.remaining ?? .infinity) - 0.5 else { throw error }
                log(
                    .debug,
                    "retrying \(URLRedaction.redact(request.url.absoluteString)) in \(Self.format(delay)) s: \(error.detail)")
                try await Task.sleep(for: .seconds(delay))
            }
            attempt += 1
        }
    }

    /// "timed out after 20 s waiting for example.com", for a call whose budget ran out.
    static func deadlineError(_ url: URL, _ deadline: CallDeadline) -> HTTPClientError {
        HTTPClientError(
            .timedOut, url: url,
            detail:
                "timed out after \(format(deadline.seconds)) s waiting for \(url.host ?? "the server") (the http.timeout setting)"
        )
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(finite: seconds) ?? 0) : String(printf: "%.1f", seconds)
    }

    /// Streams a response body to `onData` as it arrives, for downloads of any size.
    /// - Parameters:
    ///   - offset: ask for the bytes from here on (a Range request); check the status for 206.
    ///   - onHead: sees the status and headers first; return false to stop.
    ///   - onData: each chunk; return false to stop (a disk error, say).
    ///   - progress: bytes received so far and the total when known.
    /// - Returns: the status and headers.
    public func stream(
        _ request: HTTPRequest, offset: Int64 = 0,
        onHead: @escaping (Int, [String: String]) -> Bool = { _, _ in true },
        onData: @escaping (UnsafeRawBufferPointer) -> Bool,
        progress: ((Int64, Int64) -> Void)? = nil
    ) async throws -> (status: Int, headers: [String: String]) {
        try validate(request.url)
        var unlimited = request
        // Large bodies: the low-speed limit guards instead of a total time.
        if unlimited.timeout == nil, CallDeadline.current == nil { unlimited.timeout = 0 }
        if let deadline = CallDeadline.current {
            // A stream inside a call (a feed being read) shares the call's budget.
            guard deadline.remaining > 0.05 else { throw Self.deadlineError(request.url, deadline) }
            unlimited.timeout = min(request.timeout ?? deadline.remaining, deadline.remaining)
        }
        // The header, not CURLOPT_RESUME_FROM: curl would fail a 200 answer, and a 200 is how a
        // server says "the file changed, here is all of it" (If-Range) — the caller handles it.
        if offset > 0 { unlimited.headers["Range"] = "bytes=\(offset)-" }
        let transfer = try Transfer(request: unlimited, configuration: configuration)
        transfer.onHead = onHead
        transfer.sink = onData
        transfer.progress = progress
        let host = request.url.host ?? ""
        await limiter.acquire(host)
        defer { Task { await limiter.release(host) } }
        let started = ContinuousClock.now
        do {
            try await transfer.run(on: engine)
        } catch let error as HTTPClientError {
            if error.kind == .timedOut, let deadline = CallDeadline.current, deadline.remaining <= 0.05 {
                throw Self.deadlineError(request.url, deadline)
            }
            throw error
        }
        log(
            .debug,
            "\(request.method) \(URLRedaction.redact(request.url.absoluteString)) -> \(transfer.status), streamed in \(Self.milliseconds(since: started)) ms"
        )
        return (transfer.status, transfer.headers)
    }

    private func once(_ request: HTTPRequest) async throws -> HTTPResponse {
        let transfer = try Transfer(request: request, configuration: configuration)
        let host = request.url.host ?? ""
        let started = ContinuousClock.now
        await limiter.acquire(host)
        do {
            try await transfer.run(on: engine)
        } catch {
            await limiter.release(host)
            log(
                .debug,
                "\(request.method) \(URLRedaction.redact(request.url.absoluteString)) failed after \(Self.milliseconds(since: started)) ms: \(error)"
            )
            throw error
        }
        await limiter.release(host)
        var finalURL = request.url
        var effective: UnsafeMutablePointer<CChar>?
        if mh_effective_url(transfer, &effective), let effective, let url = URL(string: String(cString: effective)) {
            finalURL = url
        }
        log(
            .debug,
            "\(request.method) \(URLRedaction.redact(request.url.absoluteString)) -> \(transfer.status)"
                + (transfer.status == 304 ? " (not modified: the kept copy is used)" : "")
                + ", \(transfer.body.count) bytes in \(Self.milliseconds(since: started)) ms")
        return HTTPResponse(status: transfer.status, headers: transfer.headers, body: Data(transfer.body), url: finalURL)
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int { (ContinuousClock.now - start).milliseconds }

    private func validate(_ url: URL) throws {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw HTTPClientError(
                .unsupportedScheme, url: url, detail: "only http and https URLs are fetched, not '\(url.scheme ?? "")'")
        }
        guard url.host?.isEmpty == false else { throw HTTPClientError(.invalidURL, url: url, detail: "the URL has no host") }
    }

    private func backoff(_ attempt: Int) -> Double {
        let ceiling = min(configuration.maxDelay, configuration.baseDelay * pow(2, Double(attempt)))
        return Double.random(in: ceiling / 2...ceiling)  // jitter keeps clients from retrying in step
    }

    /// Seconds to wait from a Retry-After header: delta-seconds or an HTTP date.
    public static func retryAfter(_ value: String?) -> Double? { RetryAfter.seconds(value) }
}

/// At most `limit` requests in flight per host, the rest wait in order.
actor HostLimiter {
    private let limit: Int
    private var running: [String: Int] = [:]
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    init(limit: Int) { self.limit = max(1, limit) }

    func acquire(_ host: String) async {
        if running[host, default: 0] < limit {
            running[host, default: 0] += 1
            return
        }
        await withCheckedContinuation { waiting[host, default: []].append($0) }
    }

    func release(_ host: String) {
        if var queue = waiting[host], !queue.isEmpty {
            let next = queue.removeFirst()
            waiting[host] = queue.isEmpty ? nil : queue
            next.resume()  // the slot passes to the next waiter
        } else {
            running[host, default: 1] -= 1
            if running[host] == 0 { running[host] = nil }
        }
    }
}
