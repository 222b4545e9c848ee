import Foundation

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

    /// A JSON string as `JSONEncoder` escapes it.
    static func string(_ text: String, escapingSlashes: Bool, into out: inout [UInt8]) {
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
