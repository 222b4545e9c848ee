import Foundation
import MediaHTTP
import MediaKit
import Sandbox
import Synchronization
import Testing

/// A sandbox with only the generic test routes, and a client aimed at it.
struct HTTPFixture {
    let server = SandboxServer(replicas: [])
    let base: String

    init() async throws {
        let port = try await server.start()
        base = "http://127.0.0.1:\(port)/_sandbox"
    }

    func url(_ path: String) -> URL { URL(string: base + path)! }

    static func client(_ change: (inout MediaHTTPClient.Configuration) -> Void = { _ in }) -> MediaHTTPClient {
        var configuration = MediaHTTPClient.Configuration()
        configuration.baseDelay = 0.01
        configuration.maxDelay = 0.05
        change(&configuration)
        return MediaHTTPClient(configuration: configuration)
    }
}

@Suite struct MediaHTTPClientTests {
    @Test func getsBodiesHeadersAndUserAgent() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        let response = try await HTTPFixture.client().send(HTTPRequest(url: fixture.url("/echo?q=1")))
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json")
        let text = String(decoding: response.body, as: UTF8.self)
        #expect(text.contains("mediahost/"))
        #expect(fixture.server.traffic.requests.last?.headers["user-agent"]?.hasPrefix("mediahost/") == true)
    }

    @Test func manyConcurrentRequestsReuseConnections() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        let client = HTTPFixture.client { $0.perHostLimit = 4 }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<200 { group.addTask { try await client.send(HTTPRequest(url: fixture.url("/bytes/\(n)"))).status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.count == 200 && statuses.allSatisfy { $0 == 200 })
        // 200 requests, at most 4 at a time: keep-alive means a handful of connections, not 200.
        #expect(fixture.server.traffic.connections <= 8, "\(fixture.server.traffic.connections) connections")
        for _ in 0..<20 { _ = try await client.send(HTTPRequest(url: fixture.url("/echo"))) }
        #expect(fixture.server.traffic.connections <= 8)
    }

    @Test func perHostLimitQueuesRequests() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        fixture.server.faults.add(FaultRule(path: "/_sandbox/echo", latencyMs: 200))
        let client = HTTPFixture.client { $0.perHostLimit = 2 }
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 { group.addTask { _ = try await client.send(HTTPRequest(url: fixture.url("/echo"))) } }
            try await group.waitForAll()
        }
        #expect(ContinuousClock.now - start >= .milliseconds(590), "6 requests of 200 ms, 2 at a time")
    }

    @Test func retriesServerErrorsThenSucceeds() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        fixture.server.faults.add(FaultRule(path: "/_sandbox/echo", status: 503, times: 2))
        let response = try await HTTPFixture.client().send(HTTPRequest(url: fixture.url("/echo")))
        #expect(response.status == 200)
        #expect(fixture.server.traffic.count(prefix: "/_sandbox/echo") == 3)
    }

    @Test func honoursRetryAfter() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        fixture.server.faults.add(FaultRule(path: "/_sandbox/echo", status: 429, retryAfter: 1, times: 1))
        let start = ContinuousClock.now
        let response = try await HTTPFixture.client().send(HTTPRequest(url: fixture.url("/echo")))
        #expect(response.status == 200)
        #expect(ContinuousClock.now - start >= .milliseconds(950))
        // A wait longer than the client allows goes back to the caller at once.
        fixture.server.faults.add(FaultRule(path: "/_sandbox/echo", status: 429, retryAfter: 120, times: 1))
        let limited = try await HTTPFixture.client().send(HTTPRequest(url: fixture.url("/echo")))
        #expect(limited.status == 429)
        #expect(limited.header("retry-after") == "120")
    }

    @Test func neverRetriesNonIdempotentRequests() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        fixture.server.faults.add(FaultRule(path: "/_sandbox/echo", status: 503))
        let response = try await HTTPFixture.client().send(
            HTTPRequest(method: "POST", url: fixture.url("/echo"), body: Data("x".utf8)))
        #expect(response.status == 503)
        #expect(fixture.server.traffic.count(prefix: "/_sandbox/echo") == 1)
    }

    @Test func timesOut() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        fixture.server.faults.add(FaultRule(path: "/_sandbox/echo", latencyMs: 3000))
        let start = ContinuousClock.now
        await #expect {
            try await HTTPFixture.client { $0.maxRetries = 0 }.send(HTTPRequest(url: fixture.url("/echo"), timeout: 0.3))
        } throws: { ($0 as? HTTPClientError)?.kind == .timedOut }
        // Well before the server's 3 s answer (a loaded machine takes its time to fail, too).
        #expect(ContinuousClock.now - start < .seconds(2.8))
    }

    @Test func followsRedirectsButOnlyToHTTP() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        let client = HTTPFixture.client()
        let response = try await client.send(HTTPRequest(url: fixture.url("/redirect/5")))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "arrived")
        #expect(response.url.path.hasSuffix("/redirect/0"))
        await #expect { try await client.send(HTTPRequest(url: fixture.url("/redirect/6"))) } throws: {
            ($0 as? HTTPClientError)?.kind == .tooManyRedirects
        }
        await #expect { try await client.send(HTTPRequest(url: fixture.url("/redirect-to?url=file:///etc/passwd"))) } throws: {
            ($0 as? HTTPClientError)?.kind == .unsupportedScheme
        }
        for scheme in ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/"] {
            await #expect { try await client.send(HTTPRequest(url: URL(string: scheme)!)) } throws: {
                ($0 as? HTTPClientError)?.kind == .unsupportedScheme
            }
        }
    }

    @Test func capsBodySize() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        let client = HTTPFixture.client()
        await #expect { try await client.send(HTTPRequest(url: fixture.url("/bytes/5000"), maxBodySize: 1000)) } throws: {
            error in
            let error = error as? HTTPClientError
            return error?.kind == .bodyTooLarge && error?.description.contains("1000 bytes") == true
        }
        #expect(try await client.send(HTTPRequest(url: fixture.url("/bytes/1000"), maxBodySize: 1000)).body.count == 1000)
    }

    @Test func decodesGzip() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        let response = try await HTTPFixture.client().send(HTTPRequest(url: fixture.url("/gzip")))
        #expect(response.header("content-encoding") == "gzip")
        #expect(String(decoding: response.body, as: UTF8.self) == GzipSample.text)
    }

    @Test func conditionalGet() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        let client = HTTPFixture.client()
        let first = try await client.send(HTTPRequest(url: fixture.url("/conditional")))
        #expect(first.status == 200)
        var again = HTTPRequest(url: fixture.url("/conditional"))
        again.setValidators(etag: first.header("etag"), lastModified: first.header("last-modified"))
        let second = try await client.send(again)
        #expect(second.status == 304)
        #expect(second.body.isEmpty)
        #expect(fixture.server.traffic.requests.last?.headers["if-none-match"] == first.header("etag"))
    }

    @Test func cancellationStopsATransfer() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        fixture.server.faults.add(FaultRule(path: "/_sandbox/echo", latencyMs: 10_000))
        let client = HTTPFixture.client()
        let task = Task { try await client.send(HTTPRequest(url: fixture.url("/echo"))) }
        try await Task.sleep(for: .milliseconds(150))
        let start = ContinuousClock.now
        task.cancel()
        await #expect { try await task.value } throws: { ($0 as? HTTPClientError)?.kind == .cancelled }
        // Well before the 10 s the server takes (slack for a busy 2-core machine).
        #expect(ContinuousClock.now - start < .seconds(4))
    }

    @Test func truncatedBodiesFailAndAreRetried() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        fixture.server.faults.add(FaultRule(path: "/_sandbox/file/", truncateAfterBytes: 100, times: 1))
        let response = try await HTTPFixture.client().send(HTTPRequest(url: fixture.url("/file/5000")))
        #expect(response.body.count == 5000, "the retry got the whole body")
        fixture.server.faults.add(FaultRule(path: "/_sandbox/file/", truncateAfterBytes: 100))
        await #expect {
            try await HTTPFixture.client { $0.maxRetries = 1 }.send(HTTPRequest(url: fixture.url("/file/5000")))
        } throws: {
            ($0 as? HTTPClientError)?.kind == .connection
        }
    }

    @Test func throttledBodiesArriveWhole() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        fixture.server.faults.add(FaultRule(path: "/_sandbox/file/", throttleBytesPerSecond: 20_000))
        let start = ContinuousClock.now
        let response = try await HTTPFixture.client().send(HTTPRequest(url: fixture.url("/file/10000")))
        #expect(response.body.count == 10_000)
        #expect(Array(response.body) == MediaFile(seed: 43, size: 10_000, etag: "", type: "").bytes(0..<10_000))
        #expect(ContinuousClock.now - start >= .milliseconds(400), "10 kB at 20 kB/s")
    }

    @Test func errorsRedactSecrets() async throws {
        let client = HTTPFixture.client { $0.maxRetries = 0 }
        await #expect {
            try await client.send(HTTPRequest(url: URL(string: "http://127.0.0.1:1/x?api_key=SUPERSECRET&q=ok")!))
        } throws: { error in
            let text = "\(error)"
            return !text.contains("SUPERSECRET") && text.contains("api_key=REDACTED") && text.contains("q=ok")
        }
    }

    @Test func streamsRangesWithProgress() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        let size = 3_000_000
        let received = Mutex<[UInt8]>([])
        let progressCalls = Mutex<Int>(0)
        let head = try await HTTPFixture.client().stream(
            HTTPRequest(url: fixture.url("/file/\(size)")), offset: 1_000_000,
            onData: { chunk in
                received.withLock { $0.append(contentsOf: chunk) }
                return true
            }, progress: { _, _ in progressCalls.withLock { $0 += 1 } })
        #expect(head.status == 206)
        #expect(head.headers["content-range"] == "bytes 1000000-2999999/3000000")
        let expected = MediaFile(seed: 43, size: size, etag: "", type: "").bytes(1_000_000..<size)
        #expect(received.withLock { $0 } == expected)
        #expect(progressCalls.withLock { $0 } > 0)
        #expect(fixture.server.traffic.requests.last?.headers["range"] == "bytes=1000000-")
    }

    @Test func streamStopsWhenTheSinkSaysSo() async throws {
        let fixture = try await HTTPFixture()
        defer { fixture.server.stop() }
        let count = Mutex<Int>(0)
        let head = try await HTTPFixture.client().stream(
            HTTPRequest(url: fixture.url("/file/50000000")),
            onData: { chunk in
                count.withLock { $0 += chunk.count }
                return count.withLock { $0 } < 100_000
            })
        #expect(head.status == 200)
        #expect(count.withLock { $0 } < 5_000_000)
    }

    @Test func parsesRetryAfterForms() {
        #expect(MediaHTTPClient.retryAfter("3") == 3)
        #expect(MediaHTTPClient.retryAfter(" 0 ") == 0)
        #expect(MediaHTTPClient.retryAfter("nonsense") == nil)
        let future = Date().addingTimeInterval(60)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let seconds = MediaHTTPClient.retryAfter(formatter.string(from: future)) ?? -1
        #expect(seconds > 55 && seconds <= 60)
    }

    @Test func redactsKnownSecretParameters() {
        #expect(URLRedaction.redact("https://x/y?key=abc&token=t&other=1") == "https://x/y?key=REDACTED&token=REDACTED&other=1")
        #expect(URLRedaction.redact("https://x/y") == "https://x/y")
    }
}
