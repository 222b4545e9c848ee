import Foundation
import JSONRPC
import MediaHTTP
import MediaKit
import MediaStore
import TestSupport
import Testing

@testable import MediaHost

/// Media servers that try to fill the disk or leave litter behind.
@Suite struct HostileDownloadTests {
    /// 64 MiB of zeros, gzip-compressed (about 64 KB).
    static func bomb() async -> [UInt8] {
        await runProgram("/bin/sh", ["-c", "head -c 67108864 /dev/zero | gzip -9"]).output
    }

    func fixture(_ server: HostileServer) throws -> HostFixture {
        var configuration = MediaHTTPClient.Configuration()
        configuration.maxRetries = 0
        return try HostFixture(
            environment: ["MEDIAHOST_CATALOG_MEDIA_BASE": server.baseURL + "/media"],
            http: MediaHTTPClient(configuration: configuration))
    }

    func wait(_ fixture: HostFixture, _ id: String, until states: Set<DownloadRecord.State>) async throws -> DownloadRecord {
        let itemID = try ItemID(parsing: id)
        for _ in 0..<1500 {
            if let record = try await fixture.host.store.download(itemID), states.contains(record.state) { return record }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw CancellationError()
    }

    @Test func compressedMediaIsStoredAsSentNotInflated() async throws {
        let bomb = await Self.bomb()
        #expect(bomb.count > 1000 && bomb.count < 1_000_000)
        let server = try HostileServer { request, connection in
            // Served whatever was asked: media must not be asked for compressed, and what comes
            // compressed anyway is kept as it came.
            connection.respond(
                headers: ["Content-Encoding": "gzip", "Content-Type": "audio/mpeg", "ETag": "\"b\""], body: bomb)
        }
        defer { server.stop() }
        let fixture = try fixture(server)
        _ = try await fixture.call("downloads.start", ["id": "catalog:video:v1"])
        let record = try await wait(fixture, "catalog:video:v1", until: [.completed, .failed])
        #expect(record.state == .completed, "\(record.error ?? "")")
        let size = try FileManager.default.attributesOfItem(atPath: record.path)[.size] as? Int
        #expect(size == bomb.count, "the file is the bytes sent, not 64 MiB of inflated zeros")
        let request = try #require(server.requests.withLock { $0.first })
        #expect(request.headers["accept-encoding"] == nil, "media is not asked for compressed")
    }

    @Test func aBodyLongerThanAnnouncedIsCutAndLeavesNoPart() async throws {
        let server = try HostileServer { _, connection in
            // Announces 1,000 bytes, then keeps sending.
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n")
            let chunk = [UInt8](repeating: 0x41, count: 64 * 1024)
            for _ in 0..<256 where connection.write(chunk) {}
        }
        defer { server.stop() }
        let fixture = try fixture(server)
        _ = try await fixture.call("downloads.start", ["id": "catalog:video:v2"])
        let record = try await wait(fixture, "catalog:video:v2", until: [.completed, .failed])
        // curl itself stops at Content-Length on a keep-alive-less answer; either way nothing
        // beyond the announced length reaches the disk.
        if record.state == .completed {
            #expect(try FileManager.default.attributesOfItem(atPath: record.path)[.size] as? Int == 1000)
        }
        #expect(!FileManager.default.fileExists(atPath: record.partPath))
    }

    @Test func chunkedBodyBeyondAnnouncedRangeIsRefused() async throws {
        let server = try HostileServer { _, connection in
            // A 206 for bytes 0-999 of 1000 that streams on (chunked) past the range it named.
            connection.write(
                "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-999/1000\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
            )
            let chunk = [UInt8](repeating: 0x42, count: 32 * 1024)
            for _ in 0..<64 {
                guard connection.write(String(chunk.count, radix: 16) + "\r\n"), connection.write(chunk), connection.write("\r\n")
                else { return }
            }
            connection.write("0\r\n\r\n")
        }
        defer { server.stop() }
        let fixture = try fixture(server)
        _ = try await fixture.call("downloads.start", ["id": "catalog:video:v3"])
        let record = try await wait(fixture, "catalog:video:v3", until: [.completed, .failed])
        #expect(record.state == .failed)
        #expect(record.error?.contains("more than the 1000 bytes it announced") == true, "\(record.error ?? "")")
        #expect(!FileManager.default.fileExists(atPath: record.path))
    }

    @Test func failedDownloadsLeaveNoEmptyOrUnresumablePart() async throws {
        let server = try HostileServer { request, connection in
            if request.path.hasSuffix("/210000") {
                connection.respond(status: 404, reason: "Not Found", body: Array("gone".utf8))
            } else {
                // Half a body, no validator: nothing to resume from.
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 5000\r\nConnection: close\r\n\r\n")
                connection.write([UInt8](repeating: 0x43, count: 2000))
            }
        }
        defer { server.stop() }
        let fixture = try fixture(server)
        for n in [1, 4] {
            _ = try await fixture.call("downloads.start", ["id": .string("catalog:video:v\(n)")])
            let record = try await wait(fixture, "catalog:video:v\(n)", until: [.failed])
            #expect(!FileManager.default.fileExists(atPath: record.partPath), "v\(n): \(record.error ?? "")")
            #expect(record.bytes == 0)
        }
        let folder = fixture.directory + "/data/downloads"
        let litter = (FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String } ?? []).filter {
            $0.hasSuffix(".part")
        }
        #expect(litter.isEmpty, "\(litter)")
    }
}
