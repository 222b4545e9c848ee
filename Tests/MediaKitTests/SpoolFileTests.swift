import Foundation
import MediaKit
import Testing

@Suite struct SpoolFileTests {
    /// Bytes 0, 1, 2… (mod 251, so a chunk read from the wrong place shows).
    static func bytes(_ range: Range<Int>) -> [UInt8] { range.map { UInt8($0 % 251) } }

    /// Writes `total` bytes in chunks of `chunk` on another thread while reading them back in
    /// pieces of `piece`; returns what was read and whether the body went through the disk.
    static func roundTrip(total: Int, chunk: Int, piece: Int, memoryLimit: Int) async throws -> ([UInt8], Bool) {
        let spool = SpoolFile(memoryLimit: memoryLimit)
        let writer = Thread {
            var offset = 0
            while offset < total {
                let part = bytes(offset..<min(total, offset + chunk))
                _ = part.withUnsafeBytes { spool.write($0, limit: .max) }
                offset += part.count
            }
            spool.finish()
        }
        writer.start()
        let read = try await readAll(spool, piece: piece)
        return (read, spool.spilled)
    }

    /// Everything from where the last read ended, `piece` bytes a time.
    static func readAll(_ spool: SpoolFile, from start: Int = 0, piece: Int) async throws -> [UInt8] {
        var read: [UInt8] = []
        while try await spool.read(from: start + read.count, count: piece, { read += $0 }) > 0 {}
        return read
    }

    @Test func aReaderThatKeepsUpReadsFromMemory() async throws {
        let (read, spilled) = try await Self.roundTrip(total: 300_000, chunk: 1000, piece: 4096, memoryLimit: 1 << 30)
        #expect(read == Self.bytes(0..<300_000))
        #expect(!spilled)
    }

    @Test func aReaderThatFallsBehindReadsThroughTheDisk() async throws {
        let spool = SpoolFile(memoryLimit: 10_000)
        for start in stride(from: 0, to: 50_000, by: 3000) {
            _ = Self.bytes(start..<min(50_000, start + 3000)).withUnsafeBytes { spool.write($0, limit: .max) }
        }
        spool.finish()
        #expect(spool.spilled, "50 kB written with none read and 10 kB allowed in memory")
        #expect(try await Self.readAll(spool, piece: 7000) == Self.bytes(0..<50_000))
        // Whatever the interleaving of writer and reader, every byte arrives once, in order.
        let (racing, _) = try await Self.roundTrip(total: 200_000, chunk: 1500, piece: 999, memoryLimit: 8192)
        #expect(racing == Self.bytes(0..<200_000))
    }

    /// A body trickled a byte at a time costs its chunks' bookkeeping too: it goes to the disk
    /// long before its bytes alone would fill the memory allowed.
    @Test func tinyChunksCountWhatTheyCost() async throws {
        let spool = SpoolFile(memoryLimit: 10_000)
        for byte in Self.bytes(0..<1000) { _ = [byte].withUnsafeBytes { spool.write($0, limit: .max) } }
        spool.finish()
        #expect(spool.spilled)
        #expect(try await Self.readAll(spool, piece: 300) == Self.bytes(0..<1000))
    }

    @Test func theLimitRefusesTheRest() async throws {
        let spool = SpoolFile()
        #expect(Self.bytes(0..<100).withUnsafeBytes { spool.write($0, limit: 150) })
        #expect(!Self.bytes(0..<100).withUnsafeBytes { spool.write($0, limit: 150) })
        #expect(spool.overflowed && spool.size == 100)
        spool.finish()
        #expect(await spool.hasBytes())
        #expect(try await Self.readAll(spool, piece: 1000) == Self.bytes(0..<100))
        #expect(try await spool.read(from: 100, count: 1000, { _ in Issue.record("read past the end") }) == 0)
    }

    /// What was let go is not handed out as if it were other bytes.
    @Test func readingOutOfOrderIsAnError() async throws {
        let spool = SpoolFile()
        _ = Self.bytes(0..<5000).withUnsafeBytes { spool.write($0, limit: .max) }
        spool.finish()
        #expect(try await Self.readAll(spool, piece: 1024).count == 5000)
        await #expect(throws: ProviderError.self) { try await spool.read(from: 0, count: 10, { _ in }) }
        let nothing = SpoolFile()
        nothing.finish()
        #expect(await !nothing.hasBytes())
    }
}
