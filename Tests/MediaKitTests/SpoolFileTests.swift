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
        var read: [UInt8] = []
        var buffer: [UInt8] = []
        while try await spool.read(from: read.count, count: piece, minimum: 1, into: &buffer) { read += buffer }
        return (read, spool.spilled)
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
        #expect(try await spool.read(from: 0, count: 1) == [0], "the bytes held before spilling went to the file too")
        var read: [UInt8] = []
        while let piece = try await spool.read(from: read.count, count: 7000) { read += piece }
        #expect(read == Self.bytes(0..<50_000))
        // Whatever the interleaving of writer and reader, every byte arrives once, in order.
        let (racing, _) = try await Self.roundTrip(total: 200_000, chunk: 1500, piece: 999, memoryLimit: 8192)
        #expect(racing == Self.bytes(0..<200_000))
    }

    @Test func theLimitRefusesTheRest() async throws {
        let spool = SpoolFile()
        #expect(Self.bytes(0..<100).withUnsafeBytes { spool.write($0, limit: 150) })
        #expect(!Self.bytes(0..<100).withUnsafeBytes { spool.write($0, limit: 150) })
        #expect(spool.overflowed && spool.size == 100)
        spool.finish()
        #expect(try await spool.read(from: 0, count: 1000) == Self.bytes(0..<100))
        #expect(try await spool.read(from: 100, count: 1000) == nil)
    }

    /// What was let go is not handed out as if it were other bytes.
    @Test func readingBackBeforeWhatWasLetGoIsAnError() async throws {
        let spool = SpoolFile()
        _ = Self.bytes(0..<(3 << 20)).withUnsafeBytes { spool.write($0, limit: .max) }
        spool.finish()
        _ = try await spool.read(from: 2 << 20, count: 10)
        await #expect(throws: ProviderError.self) { try await spool.read(from: 0, count: 10) }
    }
}
