import Basics
import FoundationEssentials
import Glibc

/// Media items and pages written as JSON byte for byte as `JSONEncoder` with `.sortedKeys`
/// writes them (keys in byte order, doubles as their shortest description without a trailing
/// ".0", `/` escaped or not as asked), without going through `Encodable`: importing 10,000
/// items or answering a page of 500 spent most of its time there. Nil for what it does not
/// write the same way (a non-ASCII key in `stats` or `extra`, a number that is not finite):
/// the caller encodes those with `JSONEncoder`.
public enum MediaItemJSON {
    public static func encode(_ item: MediaItem, escapingSlashes: Bool) -> [UInt8]? {
        var writer = Writer(escapingSlashes: escapingSlashes)
        writer.out.reserveCapacity(256 + item.title.utf8.count + (item.summary?.utf8.count ?? 0))
        guard writer.item(item) else { return nil }
        return writer.out
    }

    public static func encode(_ page: Page, escapingSlashes: Bool) -> [UInt8]? {
        var writer = Writer(escapingSlashes: escapingSlashes)
        writer.out.reserveCapacity(64 + page.items.count * 400)
        writer.open("{")
        writer.key("items")
        writer.open("[")
        for item in page.items {
            writer.member()
            guard writer.item(item) else { return nil }
        }
        writer.close("]")
        writer.string("next", page.next?.rawValue)
        writer.string("prev", page.prev?.rawValue)
        writer.int("total", page.total.map(Int64.init))
        writer.close("}")
        return writer.out
    }

    /// Objects and arrays written with commas between their members.
    private struct Writer {
        let escapingSlashes: Bool
        var out: [UInt8] = []
        /// Whether the innermost open object or array has no member yet.
        private var empty: [Bool] = []

        init(escapingSlashes: Bool) { self.escapingSlashes = escapingSlashes }

        mutating func open(_ bracket: Character) {
            out.append(bracket.asciiValue!)
            empty.append(true)
        }

        mutating func close(_ bracket: Character) {
            out.append(bracket.asciiValue!)
            empty.removeLast()
        }

        /// Before a member: the comma after the one before.
        mutating func member() {
            if empty[empty.count - 1] {
                empty[empty.count - 1] = false
            } else {
                out.append(UInt8(ascii: ","))
            }
        }

        mutating func key(_ key: String) {
            member()
            MediaItemJSON.string(key, escapingSlashes: escapingSlashes, into: &out)
            out.append(UInt8(ascii: ":"))
        }

        mutating func string(_ key: String, _ value: String?) {
            guard let value else { return }
            self.key(key)
            MediaItemJSON.string(value, escapingSlashes: escapingSlashes, into: &out)
        }

        mutating func int(_ key: String, _ value: Int64?) {
            guard let value else { return }
            self.key(key)
            out.append(contentsOf: String(value).utf8)
        }

        mutating func bool(_ key: String, _ value: Bool?) {
            guard let value else { return }
            self.key(key)
            out.append(contentsOf: (value ? "true" : "false").utf8)
        }

        /// False for a number JSON cannot hold (the encoder refuses those).
        mutating func double(_ key: String, _ value: Double?) -> Bool {
            guard let value else { return true }
            guard value.isFinite else { return false }
            self.key(key)
            var text = value.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            out.append(contentsOf: text.utf8)
            return true
        }

        /// The fields in the order of their keys' bytes.
        mutating func item(_ item: MediaItem) -> Bool {
            open("{")
            string("artwork", item.artwork)
            string("creator", item.creator)
            if let download = item.download {
                key("download")
                open("{")
                int("bytes", download.bytes)
                string("path", download.path)
                string("state", download.state)
                int("total", download.total)
                close("}")
            }
            guard double("duration", item.duration) else { return false }
            if let enclosure = item.enclosure {
                key("enclosure")
                open("{")
                int("length", enclosure.length)
                string("type", enclosure.type)
                string("url", enclosure.url)
                close("}")
            }
            if let entities = item.entities {
                key("entities")
                open("[")
                for entity in entities {
                    member()
                    open("{")
                    int("end", Int64(entity.end))
                    int("start", Int64(entity.start))
                    string("text", entity.text)
                    string("type", entity.type.rawValue)
                    string("value", entity.value)
                    close("}")
                }
                close("]")
            }
            if let extra = item.extra {
                guard let keys = sortedASCIIKeys(extra) else { return false }
                key("extra")
                open("{")
                for key in keys { string(key, extra[key]) }
                close("}")
            }
            bool("favorite", item.favorite)
            string("feed", item.feed)
            string("id", item.id.description)
            string("kind", item.kind.rawValue)
            if let lists = item.lists {
                key("lists")
                open("[")
                for list in lists {
                    member()
                    MediaItemJSON.string(list, escapingSlashes: escapingSlashes, into: &out)
                }
                close("]")
            }
            if let namespace = item.namespace {
                // A feed's Podcasting 2.0 elements, many and nested, seldom: `JSONEncoder` writes
                // that value alone (the page around it stays here).
                let encoder = JSONEncoder()
                encoder.outputFormatting = escapingSlashes ? [.sortedKeys] : [.sortedKeys, .withoutEscapingSlashes]
                guard let bytes = try? encoder.encode(namespace) else { return false }
                key("namespace")
                out.append(contentsOf: bytes)
            }
            bool("played", item.played)
            if let plays = item.plays {
                key("plays")
                open("{")
                string("id", plays.id.description)
                string("label", plays.label)
                string("url", plays.url)
                close("}")
            }
            guard double("position", item.position) else { return false }
            string("provider", item.provider)
            string("published", item.published)
            if let stats = item.stats {
                guard let keys = sortedASCIIKeys(stats) else { return false }
                key("stats")
                open("{")
                for key in keys { int(key, stats[key].map(Int64.init)) }
                close("}")
            }
            string("subtitle", item.subtitle)
            string("summary", item.summary)
            string("title", item.title)
            string("url", item.url)
            close("}")
            return true
        }

        /// A dictionary's keys in byte order, or nil when one is not ASCII (`JSONEncoder` orders
        /// those as Strings compare, which is not byte order).
        private func sortedASCIIKeys<Value>(_ dictionary: [String: Value]) -> [String]? {
            for key in dictionary.keys where !key.utf8.allSatisfy({ $0 < 0x80 }) { return nil }
            return dictionary.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Compact JSON (as `encode` writes it) laid out as `JSONEncoder`'s `.prettyPrinted` lays
    /// it out: two spaces a level, `"key" : value`, an empty object or array as `{`, an empty
    /// line and `}` at its own indentation. `depth` is the level the value starts at (its first
    /// line is not indented: the caller wrote that).
    public static func pretty(_ json: [UInt8], depth: Int, into out: inout [UInt8]) {
        out.reserveCapacity(out.count + json.count * 2)
        var depth = depth
        var indentNext = false
        func newline() {
            out.append(0x0A)
            out.append(contentsOf: repeatElement(0x20, count: depth * 2))
        }
        json.withUnsafeBufferPointer { bytes in
            var i = 0
            while i < bytes.count {
                let byte = bytes[i]
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    if indentNext { newline() }
                    out.append(byte)
                    depth += 1
                    indentNext = true
                    i += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if indentNext { out.append(0x0A) }
                    newline()
                    out.append(byte)
                    indentNext = false
                    i += 1
                case UInt8(ascii: ","):
                    out.append(byte)
                    indentNext = true
                    i += 1
                case UInt8(ascii: ":"):
                    out.append(contentsOf: [0x20, UInt8(ascii: ":"), 0x20])
                    i += 1
                default:
                    if indentNext { newline() }
                    indentNext = false
                    let start = i
                    if byte == UInt8(ascii: "\"") {
                        // A string, to its closing quote (an escaped one does not close it).
                        i += 1
                        while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
                        i = min(i + 1, bytes.count)
                    } else {
                        // A number or a literal, to the next structural byte.
                        while i < bytes.count, !",:]}".utf8.contains(bytes[i]) { i += 1 }
                    }
                    out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
                }
            }
        }
    }

    /// A JSON string as `JSONEncoder` escapes it.
    public static func string(_ text: String, escapingSlashes: Bool, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var run = 0
            for (index, byte) in bytes.enumerated() {
                let escape: UInt8?
                switch byte {
                case UInt8(ascii: "\""): escape = UInt8(ascii: "\"")
                case UInt8(ascii: "\\"): escape = UInt8(ascii: "\\")
                case UInt8(ascii: "/"):
                    guard escapingSlashes else { continue }
                    escape = UInt8(ascii: "/")
                case 0x08: escape = UInt8(ascii: "b")
                case 0x0C: escape = UInt8(ascii: "f")
                case 0x0A: escape = UInt8(ascii: "n")
                case 0x0D: escape = UInt8(ascii: "r")
                case 0x09: escape = UInt8(ascii: "t")
                case 0..<0x20: escape = UInt8(ascii: "u")
                default: continue
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                run = index + 1
                out.append(UInt8(ascii: "\\"))
                if let escape, escape == UInt8(ascii: "u") {
                    out.append(contentsOf: [UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
                } else if let escape {
                    out.append(escape)
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}

// MARK: Reading

extension MediaItemJSON {
    /// An item read back from JSON as `encode` writes it (and as `JSONEncoder` does), without
    /// `Decodable`; nil for anything else (another layout, an unknown key, a value of the wrong
    /// type, bad JSON), which the caller hands to `JSONDecoder` to read or to explain.
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> MediaItem? {
        var reader = Reader(bytes: bytes.assumingMemoryBound(to: UInt8.self))
        guard let item = reader.item(), reader.atEnd() else { return nil }
        return item
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0

        mutating func skipSpace() {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        }

        mutating func atEnd() -> Bool {
            skipSpace()
            return i == bytes.count
        }

        mutating func consume(_ byte: UInt8) -> Bool {
            skipSpace()
            guard i < bytes.count, bytes[i] == byte else { return false }
            i += 1
            return true
        }

        /// The members of an object, `body` called with each key; false on bad JSON or when
        /// `body` refuses a member (a key written twice is refused there: `set` takes a slot
        /// once, `dictionary` a key once).
        mutating func object(_ body: (inout Reader, String) -> Bool) -> Bool {
            guard consume(UInt8(ascii: "{")) else { return false }
            if consume(UInt8(ascii: "}")) { return true }
            repeat {
                guard let key = string(), consume(UInt8(ascii: ":")), body(&self, key) else { return false }
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "}"))
        }

        mutating func array(_ body: (inout Reader) -> Bool) -> Bool {
            guard consume(UInt8(ascii: "[")) else { return false }
            if consume(UInt8(ascii: "]")) { return true }
            repeat {
                guard body(&self) else { return false }
            } while consume(UInt8(ascii: ","))
            return consume(UInt8(ascii: "]"))
        }

        mutating func string() -> String? {
            guard consume(UInt8(ascii: "\"")) else { return nil }
            let start = i
            // The common case: no escapes.
            while i < bytes.count, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\"), bytes[i] >= 0x20 { i += 1 }
            guard i < bytes.count else { return nil }
            if bytes[i] == UInt8(ascii: "\"") {
                i += 1
                return Self.validString(UnsafeBufferPointer(rebasing: bytes[start..<(i - 1)]))
            }
            var out = Array(bytes[start..<i])
            while i < bytes.count {
                let byte = bytes[i]
                if byte == UInt8(ascii: "\"") {
                    i += 1
                    return out.withUnsafeBufferPointer { Self.validString($0) }
                }
                guard byte >= 0x20 else { return nil }
                guard byte == UInt8(ascii: "\\") else {
                    out.append(byte)
                    i += 1
                    continue
                }
                guard i + 1 < bytes.count else { return nil }
                let escaped = bytes[i + 1]
                i += 2
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4() else { return nil }
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A surrogate pair, or nothing.
                        guard i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                            return nil
                        }
                        i += 2
                        guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let value = Unicode.Scalar(scalar) else { return nil }
                    out.append(contentsOf: UTF8.encode(value)!)
                default: return nil
                }
            }
            return nil
        }

        private mutating func hex4() -> UInt32? {
            guard i + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[i] | 0x20
                let digit: UInt8
                switch byte {
                case 0x30...0x39: digit = byte - 0x30
                case 0x61...0x66: digit = byte - 0x61 + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
                i += 1
            }
            return value
        }

        /// Nil for bytes that are not UTF-8 (the decoder refuses those too).
        private static func validString(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
            String(validating: bytes, as: UTF8.self)
        }

        /// The text of a JSON number.
        private mutating func number() -> UnsafeBufferPointer<UInt8>? {
            skipSpace()
            let start = i
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            let digits = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            guard i > digits, bytes[digits] != 0x30 || i == digits + 1 else { return nil }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                let fraction = i
                while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
                guard i > fraction else { return nil }
            }
            if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
                // Only as encoders write exponents: after a digit other than 0, with a sign
                // ("1e-05"); other spellings are left to the decoder.
                guard bytes[digits] != 0x30 else { return nil }
                i += 1
                guard i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") else { return nil }
                i += 1
                let exponent = i
                while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
                guard i > exponent else { return nil }
            }
            return UnsafeBufferPointer(rebasing: bytes[start..<i])
        }

        /// Nil for a number a Double cannot hold: too large, or so small it would read as 0
        /// (the decoder refuses both).
        mutating func double() -> Double? {
            guard let text = number(), let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else {
                return nil
            }
            if value == 0 {
                for byte in text {
                    if byte | 0x20 == UInt8(ascii: "e") { break }
                    if byte >= 0x31, byte <= 0x39 { return nil }
                }
            }
            return value
        }

        /// An integer written as one (no fraction or exponent, in range); else nil.
        mutating func int64() -> Int64? {
            guard let text = number() else { return nil }
            return Int64(String(decoding: text, as: UTF8.self))
        }

        mutating func int() -> Int? { int64().flatMap { Int(exactly: $0) } }

        mutating func bool() -> Bool? {
            skipSpace()
            if bytes.count - i >= 4, bytes[i] == UInt8(ascii: "t"), bytes[i + 1] == UInt8(ascii: "r"),
                bytes[i + 2] == UInt8(ascii: "u"), bytes[i + 3] == UInt8(ascii: "e")
            {
                i += 4
                return true
            }
            if bytes.count - i >= 5, bytes[i] == UInt8(ascii: "f"), bytes[i + 1] == UInt8(ascii: "a"),
                bytes[i + 2] == UInt8(ascii: "l"), bytes[i + 3] == UInt8(ascii: "s"), bytes[i + 4] == UInt8(ascii: "e")
            {
                i += 5
                return false
            }
            return nil
        }

        /// Reads a value into `slot`: false (the member is refused) when it is not of its type,
        /// or when the slot was set already: each key once, as an encoder writes them (a
        /// repeated key is left to the decoder).
        private static func set<T>(_ value: T?, _ slot: inout T?) -> Bool {
            guard slot == nil else { return false }
            slot = value
            return value != nil
        }

        mutating func itemID() -> ItemID? { string().flatMap { try? ItemID(parsing: $0) } }

        mutating func item() -> MediaItem? {
            var id: ItemID?, provider: String?, kind: MediaKind?, title: String?
            var item = MediaItem(id: ItemID(provider: "", kind: .video, nativeID: ""), title: "")
            let read = object { reader, key in
                switch key {
                case "id": return Self.set(reader.itemID(), &id)
                case "provider": return Self.set(reader.string(), &provider)
                case "kind": return Self.set(reader.string().flatMap(MediaKind.init(rawValue:)), &kind)
                case "title": return Self.set(reader.string(), &title)
                case "subtitle": return Self.set(reader.string(), &item.subtitle)
                case "summary": return Self.set(reader.string(), &item.summary)
                case "url": return Self.set(reader.string(), &item.url)
                case "artwork": return Self.set(reader.string(), &item.artwork)
                case "published": return Self.set(reader.string(), &item.published)
                case "duration": return Self.set(reader.double(), &item.duration)
                case "creator": return Self.set(reader.string(), &item.creator)
                case "feed": return Self.set(reader.string(), &item.feed)
                case "favorite": return Self.set(reader.bool(), &item.favorite)
                case "played": return Self.set(reader.bool(), &item.played)
                case "position": return Self.set(reader.double(), &item.position)
                case "stats": return Self.set(reader.dictionary { $0.int() }, &item.stats)
                case "extra": return Self.set(reader.dictionary { $0.string() }, &item.extra)
                case "lists": return Self.set(reader.list { $0.string() }, &item.lists)
                case "enclosure": return Self.set(reader.enclosure(), &item.enclosure)
                case "plays": return Self.set(reader.link(), &item.plays)
                case "download": return Self.set(reader.download(), &item.download)
                case "entities": return Self.set(reader.list { $0.entity() }, &item.entities)
                default: return false
                }
            }
            guard read, let id, let provider, let kind, let title else { return nil }
            item.id = id
            item.provider = provider
            item.kind = kind
            item.title = title
            return item
        }

        mutating func dictionary<Value>(_ value: (inout Reader) -> Value?) -> [String: Value]? {
            var result: [String: Value] = [:]
            let read = object { reader, key in
                guard result[key] == nil, let element = value(&reader) else { return false }
                result[key] = element
                return true
            }
            return read ? result : nil
        }

        mutating func list<Element>(_ element: (inout Reader) -> Element?) -> [Element]? {
            var result: [Element] = []
            let read = array { reader in
                guard let value = element(&reader) else { return false }
                result.append(value)
                return true
            }
            return read ? result : nil
        }

        mutating func enclosure() -> Enclosure? {
            var url: String?, type: String?, length: Int64?
            let read = object { reader, key in
                switch key {
                case "url": return Self.set(reader.string(), &url)
                case "type": return Self.set(reader.string(), &type)
                case "length": return Self.set(reader.int64(), &length)
                default: return false
                }
            }
            guard read, let url else { return nil }
            return Enclosure(url: url, type: type, length: length)
        }

        mutating func link() -> MediaLink? {
            var id: ItemID?, url: String?, label: String?
            let read = object { reader, key in
                switch key {
                case "id": return Self.set(reader.itemID(), &id)
                case "url": return Self.set(reader.string(), &url)
                case "label": return Self.set(reader.string(), &label)
                default: return false
                }
            }
            guard read, let id else { return nil }
            return MediaLink(id: id, url: url, label: label)
        }

        mutating func download() -> DownloadInfo? {
            var state: String?, path: String?, bytes: Int64?, total: Int64?
            let read = object { reader, key in
                switch key {
                case "state": return Self.set(reader.string(), &state)
                case "path": return Self.set(reader.string(), &path)
                case "bytes": return Self.set(reader.int64(), &bytes)
                case "total": return Self.set(reader.int64(), &total)
                default: return false
                }
            }
            guard read, let state else { return nil }
            return DownloadInfo(state: state, path: path, bytes: bytes, total: total)
        }

        mutating func entity() -> TextEntity? {
            var type: TextEntity.EntityType?, start: Int?, end: Int?, text: String?, value: String?
            let read = object { reader, key in
                switch key {
                case "type": return Self.set(reader.string().flatMap(TextEntity.EntityType.init(rawValue:)), &type)
                case "start": return Self.set(reader.int(), &start)
                case "end": return Self.set(reader.int(), &end)
                case "text": return Self.set(reader.string(), &text)
                case "value": return Self.set(reader.string(), &value)
                default: return false
                }
            }
            guard read, let type, let start, let end, let text, let value else { return nil }
            return TextEntity(type: type, start: start, end: end, text: text, value: value)
        }
    }
}
