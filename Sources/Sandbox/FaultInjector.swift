import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// A fault a test switches on for requests whose path starts with `path`.
public struct FaultRule: Codable, Sendable, Equatable {
    /// Path prefix, e.g. "/podcasts/search".
    public var path: String
    /// Delay before answering, in milliseconds.
    public var latencyMs: Int?
    /// Answer with this status instead (429, 500, 503...).
    public var status: Int?
    /// Retry-After (seconds) sent with `status`.
    public var retryAfter: Int?
    /// Send the body at this many bytes per second.
    public var throttleBytesPerSecond: Int?
    /// Send only this many bytes of the body, then drop the connection.
    public var truncateAfterBytes: Int?
    /// Replace the body with malformed bytes of the same kind (broken JSON or XML).
    public var malformed: Bool?
    /// Answer as if Range and If-Range were not sent (servers that do not support them).
    public var ignoreRange: Bool?
    /// Apply to this many requests, then stop; nil: until cleared.
    public var times: Int?

    public init(
        path: String, latencyMs: Int? = nil, status: Int? = nil, retryAfter: Int? = nil, throttleBytesPerSecond: Int? = nil,
        truncateAfterBytes: Int? = nil, malformed: Bool? = nil, ignoreRange: Bool? = nil, times: Int? = nil
    ) {
        self.ignoreRange = ignoreRange
        self.path = path
        self.latencyMs = latencyMs
        self.status = status
        self.retryAfter = retryAfter
        self.throttleBytesPerSecond = throttleBytesPerSecond
        self.truncateAfterBytes = truncateAfterBytes
        self.malformed = malformed
        self.times = times
    }
}

/// The faults in force, switched per route by tests (in process, or over `/_sandbox/faults`).
public final class FaultInjector: Sendable {
    private let rules = Mutex<[FaultRule]>([])
    public init() {}

    public func add(_ rule: FaultRule) { rules.withLock { $0.append(rule) } }
    public func clear() { rules.withLock { $0.removeAll() } }
    public var all: [FaultRule] { rules.withLock { $0 } }

    /// The rule for a request path, counting down `times`.
    func take(for path: String) -> FaultRule? {
        rules.withLock { rules in
            guard let index = rules.lastIndex(where: { path.hasPrefix($0.path) }) else { return nil }
            let rule = rules[index]
            if let times = rule.times {
                if times <= 1 { rules.remove(at: index) } else { rules[index].times = times - 1 }
            }
            return rule
        }
    }
}

/// Requests and connections seen, so tests can count calls (batching, conditional GETs, keep-alive).
public final class TrafficLog: Sendable {
    private let state = Mutex<(requests: [String: Int], ports: Set<Int>, log: [RequestRecord])>(([:], [], []))
    public init() {}

    public struct RequestRecord: Codable, Sendable, Equatable {
        public var method: String
        public var path: String
        public var query: String?
        /// Selected request headers by lower-case name (conditional and range headers, user agent).
        public var headers: [String: String]
    }

    func record(_ record: RequestRecord, port: Int?) {
        state.withLock { state in
            state.requests[record.path, default: 0] += 1
            if let port { state.ports.insert(port) }
            state.log.append(record)
            if state.log.count > 10_000 { state.log.removeFirst(5_000) }
        }
    }

    /// Requests per path.
    public var counts: [String: Int] { state.withLock { $0.requests } }
    /// Requests whose path starts with `prefix`.
    public func count(prefix: String) -> Int { counts.filter { $0.key.hasPrefix(prefix) }.values.reduce(0, +) }
    /// Distinct client connections seen.
    public var connections: Int { state.withLock { $0.ports.count } }
    public var requests: [RequestRecord] { state.withLock { $0.log } }
    public func reset() { state.withLock { $0 = ([:], [], []) } }
}

/// Applies faults and records traffic for every replica route.
struct SandboxMiddleware: RouterMiddleware {
    typealias Context = SandboxContext
    let faults: FaultInjector
    let traffic: TrafficLog
    let media: MediaSettings

    static let recordedHeaders: [HTTPField.Name] = [
        .userAgent, .ifNoneMatch, .ifModifiedSince, .range, .ifRange, .acceptEncoding,
    ]

    func handle(_ request: Request, context: SandboxContext, next: (Request, SandboxContext) async throws -> Response)
        async throws -> Response
    {
        let path = request.uri.path
        var context = context
        context.mediaVersion = media.version(for: path)
        context.mediaBytesPerSecond = media.bytesPerSecond
        guard !path.hasPrefix("/_sandbox/faults"), !path.hasPrefix("/_sandbox/traffic") else {
            return try await next(request, context)
        }
        var headers: [String: String] = [:]
        for name in Self.recordedHeaders { if let value = request.headers[name] { headers[name.canonicalName] = value } }
        traffic.record(
            TrafficLog.RequestRecord(method: request.method.rawValue, path: path, query: request.uri.query, headers: headers),
            port: context.clientPort)
        guard let rule = faults.take(for: path) else { return try await next(request, context) }
        if let latency = rule.latencyMs { try await Task.sleep(for: .milliseconds(latency)) }
        if let status = rule.status {
            var response = Response(
                status: .init(code: status), headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: #"{"error":"injected fault \#(status)"}"#)))
            if let retryAfter = rule.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
            return response
        }
        var request = request
        if rule.ignoreRange == true {
            var head = request.head
            head.headerFields[.range] = nil
            head.headerFields[.ifRange] = nil
            request = Request(head: head, body: request.body)
        }
        var response = try await next(request, context)
        if rule.malformed == true {
            let isXML = response.headers[.contentType]?.contains("xml") == true
            // Not a feed at all (a truncated feed is still read, as feed readers do).
            let garbage = isXML ? "<?xml version=\"1.0\"?>\n\u{0}\u{1}{not: xml}" : #"{"resultCount": 3, "results": [{"#
            response.body = .init(byteBuffer: ByteBuffer(string: garbage))
            response.headers[.contentLength] = String(garbage.utf8.count)
        }
        if rule.throttleBytesPerSecond != nil || rule.truncateAfterBytes != nil {
            let body = response.body
            let throttle = rule.throttleBytesPerSecond
            let truncate = rule.truncateAfterBytes
            response.body = ResponseBody(contentLength: body.contentLength) { writer in
                let original = body
                try await original.write(ShapedWriter(inner: writer, bytesPerSecond: throttle, truncateAfter: truncate))
            }
        }
        return response
    }
}

enum SandboxFault: Error { case truncated }

/// Passes a body through slowly, or cuts it short.
struct ShapedWriter: ResponseBodyWriter {
    var inner: any ResponseBodyWriter
    let bytesPerSecond: Int?
    let truncateAfter: Int?
    var written = 0
    var truncated = false

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        if let truncateAfter {
            let allowed = max(0, truncateAfter - written)
            if buffer.readableBytes > allowed {
                buffer = buffer.getSlice(at: buffer.readerIndex, length: allowed) ?? ByteBuffer()
                truncated = true
            }
        }
        if let rate = bytesPerSecond, rate > 0 {
            let chunk = max(1, rate / 10)
            while buffer.readableBytes > 0 {
                let slice = buffer.readSlice(length: min(chunk, buffer.readableBytes))!
                try await inner.write(slice)
                written += slice.readableBytes
                try await Task.sleep(for: .milliseconds(100))
            }
        } else if buffer.readableBytes > 0 {
            written += buffer.readableBytes
            try await inner.write(buffer)
        }
        if truncated { throw SandboxFault.truncated }
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        let inner = self.inner
        try await inner.finish(trailingHeaders)
    }
}
