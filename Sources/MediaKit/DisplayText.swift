import Basics
import FoundationEssentials
import Glibc

/// Text from outside (titles, server error bodies, user input echoed back) made safe to show:
/// every C0 and C1 control character is dropped (so no escape sequence can act on a terminal:
/// no OSC 52 clipboard write, no screen clear), and the right-to-left override that can disguise
/// a file name. Their printable remains stay visible.
public enum DisplayText {
    /// - Parameter keepNewlines: keep line breaks and tabs (else each becomes a space).
    public static func clean(_ text: String, keepNewlines: Bool = false) -> String {
        // Fast path: nothing to remove.
        if !text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\n" || scalar == "\t" {
                out.append(keepNewlines ? scalar : " ")
            } else if scalar.properties.generalCategory == .control || scalar.value == 0x202E {
                continue
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }
}

extension DisplayText {
    /// Whether `text` has a control character or white space anywhere (a link or a feed URL
    /// never does). ASCII is decided from its bytes; only other scalars look up their properties,
    /// which cost more than the rest of checking a link.
    public static func hasControlOrSpace(_ text: String) -> Bool {
        for byte in text.utf8 {
            if byte <= 0x20 || byte == 0x7F { return true }
            if byte >= 0x80 {
                return text.unicodeScalars.contains { $0.properties.generalCategory == .control || $0.properties.isWhitespace }
            }
        }
        return false
    }

    /// Whether `text` has a control character (general category Cc: U+0000-001F, U+007F-009F),
    /// read from its UTF-8 bytes alone.
    public static func hasControl(_ text: String) -> Bool {
        var afterC2 = false
        for byte in text.utf8 {
            if byte < 0x20 || byte == 0x7F || (afterC2 && byte >= 0x80 && byte <= 0x9F) { return true }
            afterC2 = byte == 0xC2
        }
        return false
    }

    /// `text` cut to at most `characters`, ending in "…" where it was cut. Outside text is cut
    /// this way only: the mark is where the host's redactor looks for a secret cut in half (a
    /// password a server echoed at byte 290 of a body cut at 300).
    public static func cut<S: StringProtocol>(_ text: S, to characters: Int) -> String {
        guard text.count > characters else { return String(text) }
        return String(text.prefix(max(0, characters - 1))) + "…"
    }

    /// `text` without white space and line breaks at either end; itself, with no copy, when it
    /// has none (the common case: Foundation's trimming bridges through NSString every time).
    public static func trimmed(_ text: String) -> String {
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) }
        guard let first = text.utf8.first, let last = text.utf8.last else { return text }
        // Any non-ASCII byte at an end may be a Unicode space: Foundation decides.
        if first >= 0x80 || last >= 0x80 || isSpace(first) || isSpace(last) {
            return text.trimming(.whitespacesAndNewlines)
        }
        return text
    }
}
