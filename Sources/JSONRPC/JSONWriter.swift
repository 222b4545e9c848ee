/// Writes compact JSON text.
public enum JSONWriter {
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(value, into: &out)
        return out
    }

    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: n.utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(element, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // Sorted keys: the same value always gives the same text.
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(members[key]!, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Indented JSON for people, keys sorted; empty containers stay on one line.
    public static func pretty(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .array(let elements) where !elements.isEmpty:
            return "[\n" + elements.map { inner + pretty($0, indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let members) where !members.isEmpty:
            let lines = members.keys.sorted().map { key in
                var name: [UInt8] = []
                writeString(key, into: &name)
                return inner + String(decoding: name, as: UTF8.self) + ": " + pretty(members[key]!, indent: inner)
            }
            return "{\n" + lines.joined(separator: ",\n") + "\n" + indent + "}"
        default:
            return value.jsonString
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    public static func writeString(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
