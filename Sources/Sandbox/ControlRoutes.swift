import Foundation
import Hummingbird
import NIOCore

/// `/_sandbox/...`: switching faults from another process, traffic counts, and generic routes
/// the HTTP client's tests use (redirects, sizes, gzip, conditional GET, status codes).
struct ControlRoutes {
    let faults: FaultInjector
    let traffic: TrafficLog
    let media: MediaSettings

    struct MediaChange: Codable {
        /// A media path whose file changes to `version`.
        var path: String?
        var version: UInt64?
        /// Serve media at this many bytes per second (0: unlimited).
        var bytesPerSecond: Int?
    }

    func register(_ routes: SandboxRoutes) {
        routes.get("faults") { _, _ in try Self.json(faults.all) }
        routes.post("faults") { request, context in
            let rule = try await request.decode(as: FaultRule.self, context: context)
            faults.add(rule)
            return Response(status: .created)
        }
        routes.delete("faults") { _, _ in
            faults.clear()
            return Response(status: .noContent)
        }
        routes.post("media") { request, context in
            let change = try await request.decode(as: MediaChange.self, context: context)
            if let path = change.path, let version = change.version { media.setVersion(version, for: path) }
            if let rate = change.bytesPerSecond { media.bytesPerSecond = rate }
            return Response(status: .noContent)
        }
        routes.get("traffic") { _, _ in
            try Self.json(TrafficSummary(counts: traffic.counts, connections: traffic.connections, requests: traffic.requests))
        }
        routes.delete("traffic") { _, _ in
            traffic.reset()
            return Response(status: .noContent)
        }

        // Echoes what the client sent.
        routes.get("echo") { request, _ in
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName.lowercased()] = field.value }
            return try Self.json(["path": request.uri.path, "query": request.uri.query ?? "", "headers": headers.description])
        }
        // /_sandbox/redirect/3 -> 2 -> 1 -> 0 (200).
        routes.get("redirect/:n") { _, context in
            let n = context.parameters.get("n", as: Int.self) ?? 0
            if n <= 0 { return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: "arrived"))) }
            return Response(status: .found, headers: [.location: "/_sandbox/redirect/\(n - 1)"])
        }
        // Redirects anywhere, to test refused schemes.
        routes.get("redirect-to") { request, _ in
            let target = request.uri.queryParameters.get("url") ?? "/"
            return Response(status: .found, headers: [.location: target])
        }
        // n deterministic bytes.
        routes.get("bytes/:n") { _, context in
            let n = max(0, min(context.parameters.get("n", as: Int.self) ?? 0, 1 << 30))
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: .init(byteBuffer: ByteBuffer(bytes: (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })))
        }
        // A generated file of any size with Range support; ?version= changes its ETag and bytes.
        routes.get("file/:size") { request, context in
            let size = max(0, min(context.parameters.get("size", as: Int.self) ?? 0, 1 << 40))
            let version = request.uri.queryParameters.get("version").flatMap { UInt64($0) } ?? context.mediaVersion
            return MediaFile(
                seed: 42 &+ version, size: size, etag: "\"file-\(size)-v\(version)\"", type: "application/octet-stream"
            )
            .response(to: request, bytesPerSecond: context.mediaBytesPerSecond)
        }
        // A gzip body for clients that accept it.
        routes.get("gzip") { request, _ in
            guard request.headers[.acceptEncoding]?.contains("gzip") == true else {
                return Response(status: .ok, body: .init(byteBuffer: ByteBuffer(string: GzipSample.text)))
            }
            return Response(
                status: .ok, headers: [.contentEncoding: "gzip", .contentType: "text/plain"],
                body: .init(byteBuffer: ByteBuffer(bytes: GzipSample.gzipped)))
        }
        // ETag and Last-Modified; 304 when the client has them.
        routes.get("conditional") { request, _ in
            let etag = "\"sandbox-v1\""
            let lastModified = "Wed, 01 Jan 2025 00:00:00 GMT"
            if request.headers[.ifNoneMatch] == etag || request.headers[.ifModifiedSince] == lastModified {
                return Response(status: .notModified, headers: [.eTag: etag, .lastModified: lastModified])
            }
            return Response(
                status: .ok, headers: [.eTag: etag, .lastModified: lastModified],
                body: .init(byteBuffer: ByteBuffer(string: "fresh content")))
        }
        // Any status, with an optional Retry-After.
        routes.get("status/:code") { request, context in
            var response = Response(status: .init(code: context.parameters.get("code", as: Int.self) ?? 200))
            if let retryAfter = request.uri.queryParameters.get("retryAfter") { response.headers[.retryAfter] = retryAfter }
            return response
        }
    }

    struct TrafficSummary: Codable {
        var counts: [String: Int]
        var connections: Int
        var requests: [TrafficLog.RequestRecord]
    }

    static func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        let data = try encoder.encode(value)
        return Response(
            status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

/// A small text and its gzip encoding (made once with Python's gzip module): no zlib needed.
public enum GzipSample {
    public static let text = String(repeating: "mediahost gzip sample line\n", count: 40)
    static let gzipped: [UInt8] = Array(Data(base64Encoded: base64)!)
    static let base64 = "H4sIAAAAAAACA8tNTclMzMgvLlFIr8osUChOzC3ISVXIycxL5codlRqVGpUalcImBQBszLmCOAQAAA=="
}
