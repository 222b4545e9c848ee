import FoundationEssentials
import Glibc

// What full Foundation's NSString gave text and FoundationEssentials does not: trimming by a set
// of characters, padding, case-insensitive comparison, printf formats, percent-encoding.

/// Which Unicode scalars `trimming(_:)` takes off: Foundation's character sets of the same names.
public struct ScalarSet: Sendable {
    let contains: @Sendable (Unicode.Scalar) -> Bool

    public init(_ contains: @escaping @Sendable (Unicode.Scalar) -> Bool) { self.contains = contains }

    /// Spaces and the tab, not line breaks: CoreFoundation's list (general category Zs, the tab
    /// and the zero-width space).
    public static let whitespaces = ScalarSet(isSpace)

    /// Spaces, tabs and line breaks (U+000A-U+000D, U+0085, U+2028, U+2029).
    public static let whitespacesAndNewlines = ScalarSet {
        switch $0.value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: true
        default: isSpace($0)
        }
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20, 0x09, 0xA0, 0x1680, 0x2000...0x200B, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// The scalars of `characters`.
    public static func characters(in characters: String) -> ScalarSet {
        let set = Set(characters.unicodeScalars)
        return ScalarSet { set.contains($0) }
    }

    /// What a URL's path segment holds as it is (Foundation's `.urlPathAllowed` without "/").
    public static let urlPathSegment = asciiAlphanumerics(plus: "!$&'()*+,-.:;=@_~")

    /// ASCII letters and digits and `extra` (for percent-encoding: what stays as it is).
    public static func asciiAlphanumerics(plus extra: String = "") -> ScalarSet {
        let more = Set(extra.unicodeScalars)
        return ScalarSet {
            $0.isASCII && (("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || more.contains($0))
        }
    }
}

extension StringProtocol {
    /// Without the scalars of `set` at either end.
    public func trimming(_ set: ScalarSet) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !set.contains($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !set.contains($0) })!
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    /// Padded with spaces (or cut) to `length` characters, as NSString's `padding(toLength:)`.
    public func padded(toLength length: Int) -> String {
        let count = self.count
        if count >= length { return String(prefix(length)) }
        return String(self) + String(repeating: " ", count: length - count)
    }

    /// Whether the two are the same text but for case.
    public func equalsIgnoringCase<Other: StringProtocol>(_ other: Other) -> Bool {
        lowercased() == other.lowercased()
    }

    /// The first range of `needle` ignoring ASCII case (HTML tags, header names), from `start`.
    public func rangeIgnoringASCIICase(of needle: String, from start: Index? = nil) -> Range<Index>? {
        let wanted = Array(needle.utf8.map(Self.lowerASCII))
        guard !wanted.isEmpty else { return nil }
        let utf8 = self.utf8
        var index = start ?? utf8.startIndex
        while index != utf8.endIndex {
            var probe = index
            var matched = 0
            while matched < wanted.count, probe != utf8.endIndex, Self.lowerASCII(utf8[probe]) == wanted[matched] {
                matched += 1
                probe = utf8.index(after: probe)
            }
            if matched == wanted.count { return index..<probe }
            index = utf8.index(after: index)
        }
        return nil
    }

    private static func lowerASCII(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }

    /// Percent-encoded as UTF-8, every scalar outside `allowed` as %XX (upper-case hex).
    public func percentEncoded(allowing allowed: ScalarSet) -> String {
        var out = ""
        for scalar in unicodeScalars {
            if allowed.contains(scalar) {
                out.unicodeScalars.append(scalar)
            } else {
                for byte in String(scalar).utf8 {
                    out += "%"
                    out += String(byte >> 4, radix: 16, uppercase: true) + String(byte & 15, radix: 16, uppercase: true)
                }
            }
        }
        return out
    }

    /// `%XX` sequences decoded; nil when one is malformed or the bytes are not UTF-8 (as
    /// NSString's `removingPercentEncoding`).
    public var percentDecoded: String? {
        var bytes: [UInt8] = []
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 65...70: byte - 55
        case 97...102: byte - 87
        default: nil
        }
    }
}

extension String {
    /// `format` with C's printf conventions (`%d`, `%3d`, `%.1f`, `%02d`, `%g`): numbers only,
    /// never `%@` or `%s`.
    public init(printf format: String, _ arguments: any CVarArg...) {
        self = withVaList(arguments) { list in
            var buffer = [CChar](repeating: 0, count: 64)
            var copy = list
            let needed = Int(vsnprintf(&buffer, buffer.count, format, copy))
            guard needed >= buffer.count else { return Self(cText: buffer) }
            buffer = [CChar](repeating: 0, count: needed + 1)
            copy = list
            _ = withVaList(arguments) { again in vsnprintf(&buffer, buffer.count, format, again) }
            return Self(cText: buffer)
        }
    }
}

extension String {
    /// The text of a C buffer, up to its first NUL.
    init(cText buffer: [CChar]) {
        self = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension BinaryInteger {
    /// With a comma between thousands ("12,345"), as the REPL shows counts.
    public var groupedThousands: String {
        let digits = String(self.magnitude)
        var out = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { out += "," }
            out.append(digit)
        }
        return (self < 0 ? "-" : "") + out
    }
}
