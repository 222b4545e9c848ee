import Foundation
import MediaKit
import MediaStore
import Testing

@testable import MediaHost

/// A provider's list as the host's database keeps it: rows appended in batches while earlier
/// ones are being written (gathered into larger writes, the last ones committed with the list).
@Suite struct StoreProviderCacheTests {
    let directory = NSTemporaryDirectory() + "mediahost-cache-" + UUID().uuidString

    func cache() throws -> StoreProviderCache {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try MediaStore(path: directory + "/db.sqlite")
        return StoreProviderCache(store: store, provider: "p", logger: Logger(label: "test"))
    }

    func row(_ n: Int, order: Double? = nil) -> CachedRow {
        CachedRow(id: "r\(n)", order: order, data: Data("row \(n)".utf8))
    }

    /// Batches of every size, some appended while a write is in flight and some after a pause:
    /// every row is there once, in order (ties in the order appended), counted.
    @Test func rowsAppendedWhileWritingAreAllKeptInOrder() async throws {
        let cache = try cache()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var sizes: [Int] = []
        var total = 0
        while total < 5000 {
            let size = [1, 7, 256, 300, 1000][sizes.count % 5]
            sizes.append(size)
            total += size
        }
        try await cache.replaceList("list") { append in
            var n = 0
            for (index, size) in sizes.enumerated() {
                // Orders in tens: ten rows share each, so ties are common.
                try await append((n..<n + size).map { row($0, order: Double(10_000 - $0 / 10)) })
                n += size
                if index % 4 == 3 { try await Task.sleep(for: .milliseconds(5)) }
            }
        }
        #expect(await cache.listCount("list") == total)
        var read: [String] = []
        var offset = 0
        while let page = await cache.listRows("list", offset: offset, limit: 700), !page.isEmpty {
            read += page.map(\.id)
            offset += page.count
        }
        #expect(read.count == total)
        let misplaced = read.indices.first { read[$0] != "r\($0)" }
        #expect(misplaced == nil, "row \(misplaced ?? 0) is \(misplaced.map { read[$0] } ?? "")")
        #expect(await cache.listRow("list", id: "r4321")?.data == Data("row 4321".utf8))
    }

    /// Values as they were handed over: an empty id or record, text beyond ASCII, a record
    /// with NULs, orders that are not numbers (kept as none, after every number).
    @Test func rowsKeepTheirBytes() async throws {
        let cache = try cache()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rows = [
            CachedRow(id: "", order: 3, data: Data()),
            CachedRow(id: "épisode 🎧 après", order: 2, data: Data([0, 1, 0, 255])),
            CachedRow(id: "nan", order: .nan, data: Data("x".utf8)),
            CachedRow(id: "none", order: nil, data: Data(repeating: 7, count: 100_000)),
        ]
        try await cache.replaceList("list") { append in try await append(rows) }
        #expect(
            await cache.listRows("list", offset: 0, limit: 10)
                == rows.map { row in
                    var kept = row
                    if !(row.order?.isFinite ?? true) { kept.order = nil }
                    return kept
                })
        #expect(await cache.listRow("list", id: "épisode 🎧 après")?.data == Data([0, 1, 0, 255]))
    }

    /// A list whose making fails after rows were written (some in flight, some gathered) leaves
    /// the previous list as it was.
    @Test func aFailedReplacementKeepsThePreviousList() async throws {
        let cache = try cache()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await cache.replaceList("list") { append in try await append((0..<10).map { row($0) }) }
        struct Broken: Error {}
        await #expect(throws: Broken.self) {
            try await cache.replaceList("list") { append in
                for batch in 0..<20 { try await append((0..<256).map { row(100 + batch * 256 + $0) }) }
                throw Broken()
            }
        }
        #expect(await cache.listCount("list") == 10)
        #expect(await cache.listRows("list", offset: 0, limit: 100)?.map(\.id) == (0..<10).map { "r\($0)" })
        #expect(await cache.listRow("list", id: "r100") == nil)
    }
}
