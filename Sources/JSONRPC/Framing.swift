import Basics

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
    /// Skipping the body of a message whose header was unreadable.
    private var skippingBody = false
    /// Skipping the rest of an over-long header block, to its blank line.
    private var skippingHeaderBlock = false
    /// The Content-Length that block announced, if it was read before the block grew too long.
    private var skippedBlockLength: Int?
    /// At the end of input: header-looking lines are read as lines too.
    private var treatRestAsLines = false

    public init(maxMessageSize: Int = 16 << 20) { self.maxMessageSize = maxMessageSize }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if start == buffer.count, buffer.capacity > Self.idleCapacity {
            // One 16 MiB message must not keep 16 MiB reserved for the life of the connection.
            buffer = []
            scanFrom -= start
            start = 0
        } else if start > 0, start >= buffer.count / 2 {
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

    /// What the buffer may keep reserved between messages.
    static let idleCapacity = 1 << 20

    /// Bytes reserved by the buffer (for tests of the bound above).
    public var reservedBytes: Int { buffer.capacity }

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
            if skippingHeaderBlock {
                // Line by line (however long), until the blank line; then the body goes too.
                while true {
                    guard let newline = firstIndex(of: 0x0A, from: start) else {
                        start = max(start, buffer.count - 1)  // keep a possible '\r' of the next line
                        scanFrom = start
                        return nil
                    }
                    let blank = newline == start || (newline == start + 1 && buffer[start] == 0x0D)
                    start = newline + 1
                    scanFrom = start
                    if blank { break }
                }
                skippingHeaderBlock = false
                // Its body goes with it: the announced length, or one JSON value.
                if let length = skippedBlockLength { skipBytes = length } else { skippingBody = true }
                skippedBlockLength = nil
                continue
            }
            if skippingBody {
                guard skipBrokenBody() else { return nil }
                skippingBody = false
                continue
            }
            // Skip blank space between messages.
            while start < buffer.count, [0x20, 0x09, 0x0D, 0x0A].contains(buffer[start]) { start += 1 }
            if scanFrom < start { scanFrom = start }
            guard start < buffer.count else { return nil }

            if !treatRestAsLines {
                switch headerPrefixState() {
                case .needMore: return nil
                case .header: return nextHeaderMessage()
                case .notHeader: break
                }
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

    /// A header block: `Name: value` lines, then a blank line, then Content-Length bytes.
    /// A line that is not a header ends the block as an error and is read again as what it is
    /// (a newline-framed request, say), so no request after a broken header is lost.
    private mutating func nextHeaderMessage() -> Event? {
        var lineStart = start
        var length: Int?
        var lengthText: String?
        while true {
            guard let newline = firstIndex(of: 0x0A, from: lineStart) else {
                // No complete line yet: wait, unless the block is already absurdly long.
                if buffer.count - start > Self.maxHeaderBlock {
                    start = lineStart
                    scanFrom = start
                    skippingHeaderBlock = true
                    skippedBlockLength = length
                    return .badHeader("header block larger than 8 KiB")
                }
                return nil
            }
            var lineEnd = newline
            if lineEnd > lineStart, buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            if lineEnd == lineStart {
                // The blank line: the body follows.
                return headerBody(from: newline + 1, length: length, lengthText: lengthText)
            }
            guard let (name, value) = Self.headerLine(buffer[lineStart..<lineEnd]) else {
                // Not a header: the block was broken. Report it and read this line anew.
                start = lineStart
                scanFrom = start
                return .badHeader("a Content-Length header must be followed by a blank line, then the message")
            }
            if name == "content-length" {
                lengthText = value
                length = Int(value).flatMap { $0 >= 0 ? $0 : nil }
            }
            lineStart = newline + 1
            if lineStart - start > Self.maxHeaderBlock {
                // The rest of the block (to its blank line) and its body are skipped too.
                start = lineStart
                scanFrom = start
                skippingHeaderBlock = true
                skippedBlockLength = length
                return .badHeader("header block larger than 8 KiB")
            }
        }
    }

    static let maxHeaderBlock = 8192

    private mutating func headerBody(from bodyStart: Int, length: Int?, lengthText: String?) -> Event? {
        guard let length else {
            // The body that follows belongs to the broken message: skip it rather than run it.
            start = bodyStart
            scanFrom = start
            skippingBody = true
            return .badHeader(lengthText.map { "invalid Content-Length '\($0.prefix(20))'" } ?? "missing Content-Length")
        }
        if length > maxMessageSize {
            start = bodyStart
            scanFrom = start
            skipBytes = length
            return .tooLarge(.contentLength)
        }
        guard buffer.count - bodyStart >= length else { return nil }
        let message = Array(buffer[bodyStart..<(bodyStart + length)])
        start = bodyStart + length
        scanFrom = start
        return .message(message, .contentLength)
    }

    /// `Name: value` with a token name, lower-cased; nil for anything else.
    private static func headerLine(_ line: ArraySlice<UInt8>) -> (String, String)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else { return nil }
        for byte in line[line.startIndex..<colon] {
            let isToken =
                (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || byte == 0x2D || byte == 0x5F
            guard isToken else { return nil }
        }
        let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self).lowercased()
        let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimming(.whitespaces)
        return (name, value)
    }

    /// Skips the body of a message whose header was broken: one JSON value (or the rest of the
    /// line when it is not one). Returns false when more bytes are needed.
    private mutating func skipBrokenBody() -> Bool {
        while start < buffer.count, [0x20, 0x09, 0x0D, 0x0A].contains(buffer[start]) { start += 1 }
        guard start < buffer.count else { return false }
        let first = buffer[start]
        if first != UInt8(ascii: "{") && first != UInt8(ascii: "[") {
            // Not JSON (or another header): only the rest of this line, and never a header.
            if headerPrefixState() != .notHeader { return true }
            skippingLine = true
            return true
        }
        var depth = 0
        var inString = false
        var escaped = false
        var i = start
        while i < buffer.count {
            let byte = buffer[i]
            if inString {
                if escaped { escaped = false } else if byte == 0x5C { escaped = true } else if byte == 0x22 { inString = false }
            } else if byte == 0x22 {
                inString = true
            } else if byte == 0x7B || byte == 0x5B {
                depth += 1
            } else if byte == 0x7D || byte == 0x5D {
                depth -= 1
                if depth == 0 {
                    start = i + 1
                    scanFrom = start
                    return true
                }
            }
            i += 1
            if i - start > maxMessageSize {
                start = i
                skippingLine = true
                return true
            }
        }
        return false
    }

    /// What is left when the input ends: a last line without a newline is a message; a message
    /// cut short is reported, and its bytes are then read as lines so no request in them is lost.
    public mutating func finish() -> [Event] {
        var events: [Event] = []
        while let event = next() { events.append(event) }
        skipBytes = 0
        skippingBody = false
        skippingHeaderBlock = false
        if skippingLine {
            skippingLine = false
            start = buffer.count
        }
        while start < buffer.count, [0x20, 0x09, 0x0D, 0x0A].contains(buffer[start]) { start += 1 }
        guard start < buffer.count else { return events }
        if headerPrefixState() == .header {
            events.append(.badHeader("the input ended inside a Content-Length message"))
            // Past the header block, if it ended: what follows is read as lines.
            var i = start
            while i + 1 < buffer.count {
                if buffer[i] == 0x0A, buffer[i + 1] == 0x0A { start = i + 2; break }
                if buffer[i] == 0x0A, i + 2 < buffer.count, buffer[i + 1] == 0x0D, buffer[i + 2] == 0x0A { start = i + 3; break }
                i += 1
            }
            if i + 1 >= buffer.count { start = buffer.count }
            treatRestAsLines = true
            while let event = next() { events.append(event) }
        }
        while start < buffer.count, [0x20, 0x09, 0x0D, 0x0A].contains(buffer[start]) { start += 1 }
        if start < buffer.count {
            let message = Array(buffer[start...])
            start = buffer.count
            events.append(message.count > maxMessageSize ? .tooLarge(.newline) : .message(message, .newline))
        }
        return events
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
