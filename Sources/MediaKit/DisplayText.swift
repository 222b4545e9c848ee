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
