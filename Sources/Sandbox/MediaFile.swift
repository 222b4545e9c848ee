import Foundation
import Hummingbird
import NIOCore

/// A generated binary file of any size, served with Range, If-Range, ETag and Last-Modified like
/// a real media host. Byte i depends only on (seed, i), so any range is generated directly and
/// a client's download can be checked byte for byte.
public struct MediaFile: Sendable {
    public var seed: UInt64
    public var size: Int
    public var etag: String
    public var lastModified: String
    public var type: String
    /// When set, the file is a WAV of a tone at this many samples a second (8-bit mono) that
    /// real players play, instead of random bytes.
    public var waveRate: Int?
    /// One second of the tone's samples (its pitch is a whole number of Hz, so it repeats every
    /// second): filling is a lookup, as fast as random bytes.
    private var toneSamples: [UInt8] = []

    public init(seed: UInt64, size: Int, etag: String, lastModified: String = "Tue, 10 Jun 2025 09:41:00 GMT", type: String) {
        self.seed = seed
        self.size = size
        self.etag = etag
        self.lastModified = lastModified
        self.type = type
    }

    /// A playable WAV of `seconds` of a 440 Hz tone: 8-bit mono at `rate` samples a second.
    public static func wave(seconds: Int, rate: Int = 8000, etag: String) -> MediaFile {
        var file = MediaFile(seed: 0, size: waveHeaderSize + seconds * rate, etag: etag, type: "audio/wav")
        file.setTone(frequency: 440, rate: rate)
        return file
    }

    private mutating func setTone(frequency: Int, rate: Int) {
        waveRate = rate
        toneSamples = (0..<rate).map { UInt8(128 + 40 * sin(2 * Double.pi * Double(frequency * $0) / Double(rate))) }
    }

    /// A playable WAV of exactly `size` bytes (a podcast episode of the listed length), its tone's
    /// pitch from `seed`, so each episode (and each version of it) has bytes of its own.
    public static func wave(size: Int, seed: UInt64, etag: String, type: String) -> MediaFile {
        var file = MediaFile(seed: seed, size: max(size, waveHeaderSize), etag: etag, type: type)
        file.setTone(frequency: 220 + Int(SplitMix64.mix(seed) % 440), rate: 8000)
        return file
    }

    static let waveHeaderSize = 44

    /// The bytes of `range`, as the server sends them.
    public func bytes(_ range: Range<Int>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: range.count)
        out.withUnsafeMutableBufferPointer { fill($0, from: range.lowerBound) }
        return out
    }

    private func fill(_ buffer: UnsafeMutableBufferPointer<UInt8>, from offset: Int) {
        if let waveRate {
            fillWave(buffer, from: offset, rate: waveRate)
            return
        }
        var index = 0
        while index < buffer.count {
            let position = offset + index
            let block = UInt64(position / 8)
            let z = SplitMix64.mix((seed ^ (block &* 0x9E37_79B9_7F4A_7C15)) &+ 0x9E37_79B9_7F4A_7C15)
            var byteInBlock = position % 8
            while byteInBlock < 8, index < buffer.count {
                buffer[index] = UInt8(truncatingIfNeeded: z >> (UInt64(byteInBlock) * 8))
                byteInBlock += 1
                index += 1
            }
        }
    }

    private func fillWave(_ buffer: UnsafeMutableBufferPointer<UInt8>, from offset: Int, rate: Int) {
        var header: [UInt8] = Array("RIFF".utf8)
        func le(_ value: Int, _ bytes: Int) {
            for shift in 0..<bytes { header.append(UInt8(truncatingIfNeeded: value >> (8 * shift))) }
        }
        le(size - 8, 4)
        header += Array("WAVEfmt ".utf8)
        le(16, 4)
        le(1, 2)  // PCM
        le(1, 2)  // mono
        le(rate, 4)
        le(rate, 4)  // bytes a second
        le(1, 2)  // block align
        le(8, 2)  // bits a sample
        header += Array("data".utf8)
        le(size - Self.waveHeaderSize, 4)
        for index in 0..<buffer.count {
            let position = offset + index
            if position < Self.waveHeaderSize {
                buffer[index] = header[position]
            } else {
                buffer[index] = toneSamples[(position - Self.waveHeaderSize) % rate]
            }
        }
    }

    /// - Parameter bytesPerSecond: pace the body (demos); nil: as fast as possible.
    public func response(to request: Request, bytesPerSecond: Int? = nil) -> Response {
        var headers: HTTPFields = [
            .contentType: type, .acceptRanges: "bytes", .eTag: etag, .lastModified: lastModified,
        ]
        var range = 0..<size
        var status = HTTPResponse.Status.ok
        let ifRange = request.headers[.ifRange]
        let rangeApplies = ifRange == nil || ifRange == etag || ifRange == lastModified
        if let header = request.headers[.range], rangeApplies {
            guard let requested = Self.parseRange(header, size: size) else {
                headers[.contentRange] = "bytes */\(size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            range = requested
            status = .partialContent
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(size)"
        }
        headers[.contentLength] = String(range.count)
        if request.method == .head { return Response(status: status, headers: headers) }
        let file = self
        let body = range
        return Response(
            status: status, headers: headers,
            body: ResponseBody(contentLength: body.count) { writer in
                var offset = body.lowerBound
                let chunk = 64 * 1024
                let pace = bytesPerSecond.map { Double($0) }
                let started = ContinuousClock.now
                var sent = 0
                while offset < body.upperBound {
                    let end = min(offset + chunk, body.upperBound)
                    if let pace {
                        // Sleep until this many bytes are due at the rate.
                        let due = Duration.seconds(Double(sent) / pace)
                        let elapsed = ContinuousClock.now - started
                        if due > elapsed { try await Task.sleep(for: due - elapsed) }
                    }
                    sent += end - offset
                    var buffer = ByteBufferAllocator().buffer(capacity: end - offset)
                    buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: end - offset) { raw in
                        file.fill(
                            UnsafeMutableBufferPointer(
                                start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: end - offset), from: offset)
                        return end - offset
                    }
                    try await writer.write(buffer)
                    offset = end
                }
                try await writer.finish(nil)
            })
    }

    /// `bytes=a-b`, `bytes=a-`, `bytes=-n`; nil when unsatisfiable or not a single range.
    static func parseRange(_ header: String, size: Int) -> Range<Int>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard let suffix = Int(parts[1]), suffix > 0 else { return nil }
            return max(0, size - suffix)..<size
        }
        guard let start = Int(parts[0]), start < size else { return nil }
        let end = parts[1].isEmpty ? size - 1 : min(Int(parts[1]) ?? -1, size - 1)
        guard end >= start else { return nil }
        return start..<(end + 1)
    }
}

/// A JSON response from Foundation values, as the replicas build their bodies.
public func jsonResponse(
    _ object: Any, status: HTTPResponse.Status = .ok, contentType: String = "application/json; charset=utf-8"
) -> Response {
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes])) ?? Data("{}".utf8)
    var headers = HTTPFields()
    headers[.contentType] = contentType
    return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
}

/// Stand-ins for a service's file hosts (its CDN): replicas write image URLs on the real hosts,
/// as the service does, and `localized` points them at `/<replica>/files/<host>/…` on the sandbox,
/// which answers with a small image, so artwork can be fetched offline.
public struct FileHosts: Sendable {
    let replica: String
    let hosts: [String]

    public init(replica: String, hosts: [String]) {
        self.replica = replica
        self.hosts = hosts
    }

    public func register(_ routes: SandboxRoutes) {
        routes.get("files/**") { request, _ in
            let path = request.uri.path.lowercased()
            guard [".png", ".jpg", ".jpeg"].contains(where: { path.hasSuffix($0) }) else {
                return Response(status: .notFound)
            }
            return Response(
                status: .ok, headers: [.contentType: "image/png"],
                body: .init(byteBuffer: ByteBuffer(bytes: SandboxPicture.png(for: path))))
        }
    }

    /// `object` with every URL on one of the hosts rewritten to this sandbox, as the request reached it.
    public func localized(_ object: Any, for request: Request) -> Any {
        let base = "http://\(request.head.authority ?? "127.0.0.1")/\(replica)/files/"
        func walk(_ value: Any) -> Any {
            switch value {
            case let text as String:
                for host in hosts {
                    for prefix in ["https://\(host)/", "http://\(host)/"] where text.hasPrefix(prefix) {
                        return base + host + "/" + text.dropFirst(prefix.count)
                    }
                }
                return text
            case let array as [Any]: return array.map(walk)
            case let dictionary as [String: Any]: return dictionary.mapValues(walk)
            default: return value
            }
        }
        return walk(object)
    }

    /// A 1×1 PNG.
    public static let png: [UInt8] = Array(
        Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")!)
}
