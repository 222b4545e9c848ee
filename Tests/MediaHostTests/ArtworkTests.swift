import Foundation
import JSONRPC
import MediaHTTP
import MediaKit
import MediaStore
import Sandbox
import TestSupport
import Testing

@testable import MediaHost

@Suite struct ArtworkTests {
    func fixture() async throws -> (SandboxServer, HostFixture) {
        let server = SandboxServer(replicas: [])
        let port = try await server.start()
        let fixture = try HostFixture(
            environment: [
                "MEDIAHOST_CATALOG_ARTWORK_BASE": "http://127.0.0.1:\(port)/_sandbox/bytes",
                "MEDIAHOST_CATALOG_MEDIA_BASE": "http://127.0.0.1:\(port)/_sandbox/file",
            ], http: MediaHTTPClient())
        return (server, fixture)
    }

    @Test func sha256MatchesTheStandardVectors() {
        #expect(SHA256.hex(Array("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // Two blocks of padding: a 56-byte message.
        #expect(
            SHA256.hex([UInt8](repeating: 0x61, count: 56)) == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
    }

    /// A show whose feed offers its picture in sizes (`podcast:images`): 300, 600 and 1500 pixels
    /// wide, and its own picture (`bytes/3000`). Each size is as many bytes as it is named.
    struct Sized: CompiledProvider {
        static let descriptor = ProviderDescriptor(
            id: "sized", name: "Sized", kinds: [.podcast], capabilities: [.item],
            configKeys: [.init(name: "base", summary: "Where its pictures are served: a sandbox's /_sandbox/bytes")])
        let base: String
        init(context: ProviderContext) throws { base = context.config["base"] ?? "" }
        func item(_ id: ItemID) async throws -> MediaItem {
            var item = MediaItem(id: id, title: "Sized")
            item.artwork = "\(base)/3000"
            var namespace = PodcastNamespace()
            namespace.images = [300, 600, 1500].map { (pixels: Int) in .init(url: "\(base)/\(pixels)", width: pixels) }
            item.namespace = namespace
            return item
        }
    }

    /// `media.artwork`'s `width`: the smallest size at least that wide, else the item's own
    /// picture (never a small size blown up); without a width, the item's own picture. Read
    /// from a show just listed (the remembered sizes) and from the provider alike.
    @Test func theSizeFetchedIsTheOneForTheWidthDrawn() async throws {
        let server = SandboxServer(replicas: [])
        let port = try await server.start()
        defer { server.stop() }
        let fixture = try HostFixture(
            environment: ["MEDIAHOST_SIZED_BASE": "http://127.0.0.1:\(port)/_sandbox/bytes"], http: MediaHTTPClient(),
            more: [.of(Sized.self)])
        func size(_ width: Int?) async throws -> Int? {
            var params: [String: JSONValue] = ["id": "sized:podcast:one"]
            if let width { params["width"] = JSONValue(width) }
            return try await fixture.call("media.artwork", .object(params))["size"]?.intValue
        }
        #expect(try await size(500) == 600)
        #expect(try await size(600) == 600)
        #expect(try await size(1000) == 1500)
        #expect(try await size(2000) == 3000, "none wide enough: the show's own picture")
        #expect(try await size(nil) == 3000)
        // Listed first: the sizes are remembered, and the same choices are made.
        _ = try await fixture.call("media.get", ["id": "sized:podcast:one"])
        #expect(try await size(100) == 300)
        let refused = await fixture.error("media.artwork", ["id": "sized:podcast:one", "width": 20000])
        #expect(refused?.code == -32602, "\(String(describing: refused))")
    }

    @Test func artworkIsFetchedOnceAndServedFromTheCache() async throws {
        let (server, fixture) = try await fixture()
        defer { server.stop() }
        let first = try await fixture.call("media.artwork", ["id": "catalog:video:v7"])
        try expectConforms(first, to: "media.artwork")
        #expect(first["cached"] == false)
        let path = try #require(first["path"]?.stringValue)
        #expect(path.hasPrefix(fixture.host.paths.cacheDir + "/artwork/"))
        #expect(FileManager.default.contents(atPath: path)?.count == 1007)
        let second = try await fixture.call("media.artwork", ["id": "catalog:video:v7"])
        #expect(second["cached"] == true)
        #expect(second["path"] == first["path"])
        #expect(server.traffic.count(prefix: "/_sandbox/bytes/") == 1)
        let stats = try await fixture.call("cache.stats")
        try expectConforms(stats, to: "cache.stats")
        #expect(stats["entries"] == 1 && stats["bytes"] == 1007)
        #expect(try await fixture.call("cache.clear") == ["removed": 1])
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func concurrentRequestsShareOneTransferAndNeverMixItems() async throws {
        let (server, fixture) = try await fixture()
        defer { server.stop() }
        server.faults.add(FaultRule(path: "/_sandbox/bytes/", latencyMs: 150))
        let ids = (0..<20).map { "catalog:video:v\($0 % 10)" }
        let results = try await withThrowingTaskGroup(of: (String, JSONValue).self) { group in
            for id in ids {
                group.addTask {
                    let answer = try await fixture.call("media.artwork", ["id": .string(id)])
                    return (id, answer)
                }
            }
            var results: [(String, JSONValue)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results.count == 20)
        for (id, result) in results {
            #expect(result["id"]?.stringValue == id, "the answer names the item asked for")
            let n = Int(id.split(separator: "v").last!)!
            #expect(result["url"]?.stringValue?.hasSuffix("/\(1000 + n)") == true)
            let bytes = try #require(FileManager.default.contents(atPath: result["path"]?.stringValue ?? ""))
            #expect(bytes.count == 1000 + n, "\(id) got its own image")
        }
        #expect(server.traffic.count(prefix: "/_sandbox/bytes/") == 10, "one transfer per image, however many asked")
    }

    @Test func leastRecentlyUsedImagesAreEvictedWithinTheBound() async throws {
        let (server, fixture) = try await fixture()
        defer { server.stop() }
        let cache = ArtworkCache(
            store: fixture.host.store, http: MediaHTTPClient(), root: fixture.directory + "/small", limit: { 3_100 })
        let base = "http://127.0.0.1:\(server.port!)/_sandbox/bytes"
        let a = try await cache.file(for: "\(base)/1000").entry
        let b = try await cache.file(for: "\(base)/1001").entry
        let c = try await cache.file(for: "\(base)/1002").entry
        _ = try await cache.file(for: "\(base)/1000")  // a is used again: b is now the oldest
        let d = try await cache.file(for: "\(base)/1003").entry
        #expect(FileManager.default.fileExists(atPath: a.path))
        #expect(!FileManager.default.fileExists(atPath: b.path), "the least recently used went first")
        #expect(FileManager.default.fileExists(atPath: c.path))
        #expect(FileManager.default.fileExists(atPath: d.path))
        let stats = try await cache.stats()
        #expect(stats.bytes <= 3_100)
        #expect(stats.entries == 3)
    }
}
