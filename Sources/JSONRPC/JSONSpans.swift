/// Where a member's value is in a JSON object's text, found without reading the object into
/// values: a relay passes an answer's `result` on as the bytes it came in.
public enum JSONSpans {
    /// The bytes of the value of the top-level member `name` of the object `bytes` holds; nil
    /// when it is not an object, has no such member, or is not well formed where looked at.
    public static func member(_ name: String, of bytes: [UInt8]) -> Range<Int>? {
        let key = Array(name.utf8)
        var index = skipSpace(bytes, 0)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        while true {
            index = skipSpace(bytes, index)
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
            guard let keyEnd = stringEnd(bytes, index) else { return nil }
            // A key with an escape is compared as written: the members looked for have none.
            let found = Array(bytes[(index + 1)..<(keyEnd - 1)]) == key
            index = skipSpace(bytes, keyEnd)
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            let start = skipSpace(bytes, index + 1)
            guard let end = valueEnd(bytes, start) else { return nil }
            if found { return start..<end }
            index = skipSpace(bytes, end)
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "}") { return nil }
            guard bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
    }

    private static func skipSpace(_ bytes: [UInt8], _ start: Int) -> Int {
        var index = start
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }

    /// Just after the string starting at `start` (its opening quote).
    private static func stringEnd(_ bytes: [UInt8], _ start: Int) -> Int? {
        var index = start + 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return nil
    }

    /// Just after the value starting at `start`.
    private static func valueEnd(_ bytes: [UInt8], _ start: Int) -> Int? {
        guard start < bytes.count else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return stringEnd(bytes, start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var index = start
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    guard let end = stringEnd(bytes, index) else { return nil }
                    index = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return nil
        default:
            // A number or a literal: up to the next delimiter.
            var index = start
            while index < bytes.count,
                ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D]
                    .contains(bytes[index])
            {
                index += 1
            }
            return index > start ? index : nil
        }
    }
}
