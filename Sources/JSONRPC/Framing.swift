/// How messages are delimited on a stream.
public enum Framing: Sendable, Equatable {
    /// One JSON text per line (MCP's stdio transport).
    case newline
    /// LSP's base protocol: `Content-Length: N\r\n\r\n` then N bytes.
    case contentLength

    /// Frames one message for writing.
    public func frame(_ body: [UInt8]) -> [UInt8] {
        switch self {
        case .newline:
            var out = body
            out.append(0x0A)
            return out
        case .contentLength:
            var out = Array("Content-Length: \(body.count)\r\n\r\n".utf8)
            out.append(contentsOf: body)
            return out
        }
    }
}

/// Cuts a byte stream into messages, detecting the framing of each one.
public struct MessageSplitter {
    public enum Event: Equatable {
        case message([UInt8], Framing)
        /// A message larger than the limit was skipped.
        case tooLarge(Framing)
        /// A Content-Length header block that cannot be read was skipped.
        case badHeader(String)
    }

    public let maxMessageSize: Int
    private var buffer: [UInt8] = []
    private var start = 0
    /// Bytes of an over-size Content-Length body still to skip.
    private var skipBytes = 0
    /// Skipping the rest of an over-size line.
    private var skippingLine = false
    /// Where to resume scanning for a newline in the current line.
    private var scanFrom = 0

    public init(maxMessageSize: Int = 16 << 20) { self.maxMessageSize = maxMessageSize }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeSubrange(0..<start)
            scanFrom -= start
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Bytes received but not yet part of a whole message.
    public var pendingCount: Int { buffer.count - start }

    public mutating func next() -> Event? {
        while true {
            if skipBytes > 0 {
                let n = min(skipBytes, buffer.count - start)
                start += n
                skipBytes -= n
                if skipBytes > 0 { return nil }
            }
            if skippingLine {
                guard let newline = firstIndex(of: 0x0A, from: start) else {
                    start = buffer.count
                    scanFrom = start
                    return nil
                }
                start = newline + 1
                scanFrom = start
                skippingLine = false
            }
            // Skip blank space between messages.
            while start < buffer.count, [0x20, 0x09, 0x0D, 0x0A].contains(buffer[start]) { start += 1 }
            if scanFrom < start { scanFrom = start }
            guard start < buffer.count else { return nil }

            switch headerPrefixState() {
            case .needMore: return nil
            case .header: return nextHeaderMessage()
            case .notHeader: break
            }

            guard let newline = firstIndex(of: 0x0A, from: scanFrom) else {
                scanFrom = buffer.count
                if buffer.count - start > maxMessageSize {
                    skippingLine = true
                    start = buffer.count
                    scanFrom = start
                    return .tooLarge(.newline)
                }
                return nil
            }
            var end = newline
            if end > start, buffer[end - 1] == 0x0D { end -= 1 }
            let message = Array(buffer[start..<end])
            start = newline + 1
            scanFrom = start
            if message.count > maxMessageSize { return .tooLarge(.newline) }
            return .message(message, .newline)
        }
    }

    private enum HeaderState { case needMore, header, notHeader }

    private static let contentLength = Array("content-length:".utf8)
    private static let contentType = Array("content-type:".utf8)

    private func headerPrefixState() -> HeaderState {
        let available = buffer.count - start
        for name in [Self.contentLength, Self.contentType] {
            var matches = true
            for i in 0..<min(available, name.count) where lowercase(buffer[start + i]) != name[i] {
                matches = false
                break
            }
            if matches { return available >= name.count ? .header : .needMore }
        }
        return .notHeader
    }

    private func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
    }

    private mutating func nextHeaderMessage() -> Event? {
        // Find the blank line that ends the headers.
        var i = start
        var headerEnd: Int?
        var bodyStart = 0
        while i < buffer.count {
            if buffer[i] == 0x0A {
                if i + 1 < buffer.count, buffer[i + 1] == 0x0A { headerEnd = i; bodyStart = i + 2; break }
                if i + 2 < buffer.count, buffer[i + 1] == 0x0D, buffer[i + 2] == 0x0A { headerEnd = i; bodyStart = i + 3; break }
            }
            i += 1
        }
        guard let headerEnd else {
            if buffer.count - start > 8192 {
                skippingLine = true
                start = buffer.count
                return .badHeader("header block larger than 8 KiB")
            }
            return nil
        }
        let headerText = String(decoding: buffer[start..<headerEnd], as: UTF8.self)
        var length: Int?
        for line in headerText.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            if parts[0].trimmingWhitespace().lowercased() == "content-length" {
                length = Int(parts[1].trimmingWhitespace())
            }
        }
        guard let length, length >= 0 else {
            start = bodyStart
            return .badHeader("missing or invalid Content-Length")
        }
        if length > maxMessageSize {
            start = bodyStart
            skipBytes = length
            return .tooLarge(.contentLength)
        }
        guard buffer.count - bodyStart >= length else { return nil }
        let message = Array(buffer[bodyStart..<(bodyStart + length)])
        start = bodyStart + length
        scanFrom = start
        return .message(message, .contentLength)
    }

    private func firstIndex(of byte: UInt8, from: Int) -> Int? {
        guard from < buffer.count else { return nil }
        return buffer.withUnsafeBufferPointer { pointer -> Int? in
            guard let base = pointer.baseAddress,
                let found = memchr(base + from, Int32(byte), pointer.count - from)
            else { return nil }
            return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        var s = self
        while let first = s.first, first == " " || first == "\t" { s.removeFirst() }
        while let last = s.last, last == " " || last == "\t" || last == "\r" { s.removeLast() }
        return s
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
