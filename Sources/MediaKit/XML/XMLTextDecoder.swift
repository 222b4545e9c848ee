import Basics
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns an XML document's bytes, chunk by chunk, into UTF-8 for `XMLStream`, choosing the
/// encoding the way feed readers do: a byte-order mark, else the encoding the XML declaration
/// names, else the charset of the HTTP Content-Type, else UTF-8 where the bytes are valid UTF-8
/// and Windows-1252 for each byte that is not (Latin-1 feeds without a declaration are common).
/// A BOM, white space or a newline before `<?xml` is accepted.
public struct XMLTextDecoder {
    private enum Mode {
        /// Still collecting the first bytes to decide.
        case sniffing
        case utf8
        case windows1252
        case iconv(iconv_t)
    }

    private var mode = Mode.sniffing
    private var pending: [UInt8] = []
    private let httpCharset: String?
    /// The encoding in use once decided, for messages and tests.
    public private(set) var encoding: String?

    /// - Parameter httpCharset: the `charset` of the response's Content-Type, if any.
    public init(httpCharset: String? = nil) {
        self.httpCharset = httpCharset?.trimming(.characters(in: " \"'")).lowercased()
    }

    /// The charset parameter of a Content-Type header value.
    public static func charset(fromContentType value: String?) -> String? {
        guard let value else { return nil }
        for part in value.split(separator: ";").dropFirst() {
            let pair = part.split(separator: "=", maxSplits: 1)
            if pair.count == 2, pair[0].trimming(.whitespaces).lowercased() == "charset" {
                return pair[1].trimming(.characters(in: " \"'"))
            }
        }
        return nil
    }

    /// Appends the UTF-8 of `chunk` to `out` (some bytes may wait for the next chunk).
    public mutating func decode(_ chunk: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        pending.append(contentsOf: chunk)
        if case .sniffing = mode {
            guard decide(final: false) else { return }
        }
        convert(final: false, into: &out)
    }

    /// Appends what is left at the end of the document.
    public mutating func finish(into out: inout [UInt8]) {
        if case .sniffing = mode { _ = decide(final: true) }
        convert(final: true, into: &out)
        if case .iconv(let handle) = mode {
            iconv_close(handle)
            mode = .utf8
        }
    }

    // MARK: Choosing the encoding

    private mutating func decide(final: Bool) -> Bool {
        // The declaration sits in the first few hundred bytes; wait for them (or the end).
        if pending.count < 512, !final, !pending.contains(UInt8(ascii: ">")) { return false }
        if pending.starts(with: [0xEF, 0xBB, 0xBF]) {
            pending.removeFirst(3)
            return choose("utf-8")
        }
        if pending.starts(with: [0xFF, 0xFE]) {
            pending.removeFirst(2)
            return choose("utf-16le")
        }
        if pending.starts(with: [0xFE, 0xFF]) {
            pending.removeFirst(2)
            return choose("utf-16be")
        }
        if pending.starts(with: [0x3C, 0x00, 0x3F, 0x00]) { return choose("utf-16le") }
        if pending.starts(with: [0x00, 0x3C, 0x00, 0x3F]) { return choose("utf-16be") }
        if let declared = Self.declaredEncoding(pending) { return choose(declared) }
        if let httpCharset { return choose(httpCharset) }
        return choose("utf-8")
    }

    private mutating func choose(_ name: String) -> Bool {
        let name = name.lowercased()
        switch name {
        case "utf-8", "utf8", "us-ascii", "ascii", "":
            mode = .utf8
            encoding = "utf-8"
        case "iso-8859-1", "latin1", "latin-1", "iso8859-1", "iso_8859-1", "windows-1252", "cp1252", "x-cp1252":
            // As browsers do: ISO-8859-1 labels mean Windows-1252 (curly quotes at 0x80-0x9F).
            mode = .windows1252
            encoding = "windows-1252"
        default:
            let handle = iconv_open("UTF-8", name)
            if let handle, Int(bitPattern: handle) != -1 {
                mode = .iconv(handle)
                encoding = name
            } else {
                // An encoding no one here knows: read it as UTF-8 where it is valid.
                mode = .utf8
                encoding = "utf-8"
            }
        }
        return true
    }

    /// `encoding="…"` of an XML declaration at the start (after white space).
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        var i = 0
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
        guard bytes.count - i >= 5, Array(bytes[i..<(i + 5)]) == Array("<?xml".utf8) else { return nil }
        guard let end = bytes[i...].firstIndex(of: UInt8(ascii: ">")) else { return nil }
        let declaration = String(decoding: bytes[i..<end], as: UTF8.self)
        guard let range = declaration.firstRange(of: "encoding") else { return nil }
        var rest = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\t" }
        guard let quote = rest.first, quote == "\"" || quote == "'" else { return nil }
        rest = rest.dropFirst()
        guard let close = rest.firstIndex(of: quote) else { return nil }
        return String(rest[..<close]).trimming(.whitespaces)
    }

    // MARK: Converting

    private mutating func convert(final: Bool, into out: inout [UInt8]) {
        switch mode {
        case .sniffing: return
        case .utf8:
            let used = Self.utf8Lenient(pending, final: final, into: &out)
            pending.removeFirst(used)
        case .windows1252:
            out.reserveCapacity(out.count + pending.count)
            for byte in pending { Self.appendWindows1252(byte, to: &out) }
            pending.removeAll(keepingCapacity: true)
        case .iconv(let handle):
            convertIconv(handle, final: final, into: &out)
        }
    }

    /// Valid UTF-8 is copied; each byte that is not part of a valid sequence is read as
    /// Windows-1252. A sequence cut by the chunk's end waits (unless `final`).
    /// - Returns: how many bytes were consumed.
    static func utf8Lenient(_ bytes: [UInt8], final: Bool, into out: inout [UInt8]) -> Int {
        let count = bytes.count
        out.reserveCapacity(out.count + count)
        return bytes.withUnsafeBufferPointer { input -> Int in
            var i = 0
            var runStart = 0
            let raw = UnsafeRawBufferPointer(input)
            while i < count {
                // ASCII eight bytes at a time.
                while i + 8 <= count, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                }
                guard i < count else { break }
                let lead = input[i]
                if lead < 0x80 {
                    i += 1
                    continue
                }
                let length: Int
                switch lead {
                case 0xC2...0xDF: length = 2
                case 0xE0...0xEF: length = 3
                case 0xF0...0xF4: length = 4
                default: length = 0
                }
                if length > 0, i + length > count, !final {
                    // Maybe the rest comes in the next chunk.
                    var plausible = true
                    for j in (i + 1)..<count where input[j] & 0xC0 != 0x80 { plausible = false }
                    if plausible {
                        out.append(contentsOf: input[runStart..<i])
                        return i
                    }
                }
                if length > 0, i + length <= count, isValidSequence(input, at: i, length: length) {
                    i += length
                    continue
                }
                out.append(contentsOf: input[runStart..<i])
                appendWindows1252(lead, to: &out)
                i += 1
                runStart = i
            }
            out.append(contentsOf: input[runStart..<count])
            return count
        }
    }

    private static func isValidSequence(_ input: UnsafeBufferPointer<UInt8>, at i: Int, length: Int) -> Bool {
        let lead = input[i]
        let second = input[i + 1]
        switch lead {
        case 0xE0: guard (0xA0...0xBF).contains(second) else { return false }
        case 0xED: guard (0x80...0x9F).contains(second) else { return false }
        case 0xF0: guard (0x90...0xBF).contains(second) else { return false }
        case 0xF4: guard (0x80...0x8F).contains(second) else { return false }
        default: guard second & 0xC0 == 0x80 else { return false }
        }
        for j in 2..<length where input[i + j] & 0xC0 != 0x80 { return false }
        return true
    }

    /// Windows-1252's characters at 0x80-0x9F (the rest of the high half is Latin-1).
    private static let windows1252High: [UInt32] = [
        0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0xFFFD, 0x017D,
        0xFFFD,
        0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E,
        0x0178,
    ]

    static func appendWindows1252(_ byte: UInt8, to out: inout [UInt8]) {
        if byte < 0x80 {
            out.append(byte)
            return
        }
        let scalar = byte < 0xA0 ? windows1252High[Int(byte - 0x80)] : UInt32(byte)
        if scalar < 0x800 {
            out.append(UInt8(0xC0 | (scalar >> 6)))
            out.append(UInt8(0x80 | (scalar & 0x3F)))
        } else {
            out.append(UInt8(0xE0 | (scalar >> 12)))
            out.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            out.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    private mutating func convertIconv(_ handle: iconv_t, final: Bool, into out: inout [UInt8]) {
        guard !pending.isEmpty else { return }
        var output = [UInt8](repeating: 0, count: pending.count * 4 + 16)
        var consumed = 0
        var produced = 0
        pending.withUnsafeMutableBufferPointer { input in
            output.withUnsafeMutableBufferPointer { buffer in
                var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(input.baseAddress!).assumingMemoryBound(
                    to: CChar.self)
                var inLeft = input.count
                var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(buffer.baseAddress!).assumingMemoryBound(
                    to: CChar.self)
                var outLeft = buffer.count
                while inLeft > 0 {
                    let result = iconv(handle, &inPointer, &inLeft, &outPointer, &outLeft)
                    if result != -1 { break }
                    if errno == EILSEQ {
                        // A byte this encoding cannot have: U+FFFD for it, and on.
                        inPointer = inPointer.map { $0 + 1 }
                        inLeft -= 1
                        if outLeft >= 3, let target = outPointer {
                            target[0] = CChar(bitPattern: 0xEF)
                            target[1] = CChar(bitPattern: 0xBF)
                            target[2] = CChar(bitPattern: 0xBD)
                            outPointer = target + 3
                            outLeft -= 3
                        }
                    } else {
                        // EINVAL: a sequence cut by the chunk's end waits; E2BIG cannot happen.
                        break
                    }
                }
                consumed = input.count - inLeft
                produced = buffer.count - outLeft
            }
        }
        out.append(contentsOf: output[0..<produced])
        pending.removeFirst(consumed)
        if final { pending.removeAll() }
    }
}
