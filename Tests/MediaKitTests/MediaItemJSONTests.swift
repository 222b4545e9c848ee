import Foundation
import MediaKit
import Testing

/// Items and pages are written without `Encodable` (snapshots in the store, answers on the
/// wire): they must be the bytes `JSONEncoder` writes, with slashes escaped or not.
@Suite struct MediaItemJSONTests {
    static func encoder(escapingSlashes: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = escapingSlashes ? [.sortedKeys] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let pieces = [
        "a", "Show", " ", "/", "\\", "\"", "\n", "\r", "\t", "\u{8}", "\u{C}", "\u{1}", "\u{1F}", "\u{7F}", "é", "e\u{301}", "😀",
        "\u{2028}", "<b>", "&amp;", "https://example.com/feed.xml?a=1&b=2", "日本語", "\u{0}", "'",
    ]
    static let numbers: [Double] = [
        0, -0.0, 1, 3600, 12.5, 0.1, 1e-5, 1e20, 1e16, 123_456_789.123, 5e-324, 1.797_693_134_862_315_7e308, -42.25, 0.000_123,
        2_147_483_648, 9_007_199_254_740_993,
    ]

    static func text(_ g: inout Generator) -> String {
        (0..<Int.random(in: 0...6, using: &g)).map { _ in pieces.randomElement(using: &g)! }.joined()
    }

    static func maybe<T>(_ g: inout Generator, _ make: (inout Generator) -> T) -> T? {
        Bool.random(using: &g) ? make(&g) : nil
    }

    static func item(_ g: inout Generator) -> MediaItem {
        let kinds = MediaKind.allCases
        let id = ItemID(
            provider: ["podcasts", "youtube", "x"].randomElement(using: &g)!, kind: kinds.randomElement(using: &g)!,
            nativeID: "n\(g.next() % 1000)")
        var item = MediaItem(id: id, title: text(&g))
        item.subtitle = maybe(&g, text)
        item.summary = maybe(&g, text)
        item.url = maybe(&g, text)
        item.artwork = maybe(&g, text)
        item.published = maybe(&g, text)
        item.duration = maybe(&g) { numbers.randomElement(using: &$0)! }
        item.creator = maybe(&g, text)
        item.stats = maybe(&g) { g in
            Dictionary(
                (0..<Int.random(in: 0...4, using: &g)).map { _ in
                    (["views", "likes", "Zed", "a_b", "reposts", "1"].randomElement(using: &g)!, Int(g.next() % 100_000) - 50)
                }, uniquingKeysWith: { a, _ in a })
        }
        item.enclosure = maybe(&g) { g in
            Enclosure(url: text(&g), type: maybe(&g, text), length: maybe(&g) { Int64(bitPattern: $0.next()) })
        }
        item.entities = maybe(&g) { g in
            (0..<Int.random(in: 0...3, using: &g)).map { _ in
                TextEntity(
                    type: [.hashtag, .mention, .url, .media].randomElement(using: &g)!, start: Int(g.next() % 50),
                    end: Int(g.next() % 50), text: text(&g), value: text(&g))
            }
        }
        item.feed = maybe(&g, text)
        item.plays = maybe(&g) { g in MediaLink(id: id, url: maybe(&g, text), label: maybe(&g, text)) }
        item.favorite = maybe(&g) { Bool.random(using: &$0) }
        item.download = maybe(&g) { g in
            DownloadInfo(
                state: text(&g), path: maybe(&g, text), bytes: maybe(&g) { Int64($0.next() % 1000) },
                total: maybe(&g) { Int64($0.next() % 1000) })
        }
        item.position = maybe(&g) { numbers.randomElement(using: &$0)! }
        item.played = maybe(&g) { Bool.random(using: &$0) }
        item.lists = maybe(&g) { g in (0..<Int.random(in: 0...3, using: &g)).map { _ in text(&g) } }
        item.extra = maybe(&g) { g in
            Dictionary(
                (0..<Int.random(in: 0...4, using: &g)).map { _ in
                    (["feedError", "B", "a", "lang", "x-y"].randomElement(using: &g)!, text(&g))
                },
                uniquingKeysWith: { a, _ in a })
        }
        // Now and then a feed's Podcasting 2.0 elements, some with slashes and doubles.
        if g.next() % 8 == 0 {
            var namespace = PodcastNamespace()
            namespace.guid = maybe(&g, text)
            namespace.people = maybe(&g) { g in [.init(name: text(&g), role: "guest", link: maybe(&g, text))] }
            namespace.soundbites = maybe(&g) { g in
                [.init(start: numbers.randomElement(using: &g)!, duration: 6.5, title: maybe(&g, text))]
            }
            namespace.live = maybe(&g) { g in .init(status: "pending", start: text(&g)) }
            namespace.images = maybe(&g) { g in [.init(url: "https://example.com/a/" + text(&g), width: 600)] }
            item.namespace = namespace
        }
        return item
    }

    @Test(arguments: [true, false]) func theBytesAreJSONEncodersForThousandsOfItems(escapingSlashes: Bool) throws {
        var g = Generator(state: escapingSlashes ? 29 : 30)
        let encoder = Self.encoder(escapingSlashes: escapingSlashes)
        var items: [MediaItem] = []
        for n in 0..<5000 {
            let item = Self.item(&g)
            items.append(item)
            let written = try #require(MediaItemJSON.encode(item, escapingSlashes: escapingSlashes), "item \(n)")
            let expected = Array(try encoder.encode(item))
            #expect(
                written == expected,
                "item \(n):\n\(String(decoding: written, as: UTF8.self))\n\(String(decoding: expected, as: UTF8.self))")
            if written != expected { break }
            #expect(try JSONDecoder().decode(MediaItem.self, from: Data(written)) == item)
        }
        for (n, size) in [0, 1, 7, 500].enumerated() {
            let page = Page(
                items: Array(items.prefix(size)), next: n % 2 == 0 ? Cursor("next/\(n)") : nil, prev: n == 3 ? "p" : nil,
                total: n == 1 ? nil : size * 3)
            #expect(try MediaItemJSON.encode(page, escapingSlashes: escapingSlashes) == Array(encoder.encode(page)))
        }
    }

    /// Laid out as `.prettyPrinted` lays it out, at any depth: empty lists and objects, strings
    /// with brackets, commas, colons and escaped quotes in them included.
    @Test func prettyIsJSONEncodersPrettyPrinting() throws {
        var g = Generator(state: 33)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        for n in 0..<2000 {
            var item = Self.item(&g)
            if n % 5 == 0 { item.title = "[{\"a\" : 1, \\\"}]:,\\" }
            let compact = try #require(MediaItemJSON.encode(item, escapingSlashes: false))
            var written: [UInt8] = []
            MediaItemJSON.pretty(compact, depth: 0, into: &written)
            let expected = Array(try encoder.encode(item))
            #expect(
                written == expected,
                "item \(n):\n\(String(decoding: written, as: UTF8.self))\n\(String(decoding: expected, as: UTF8.self))")
            if written != expected { break }
            // Nested one level down (in a list), each line after the first is indented two more
            // (an empty line, inside an empty list or object, stays empty).
            var nested: [UInt8] = []
            MediaItemJSON.pretty(compact, depth: 1, into: &nested)
            let expectedNested = String(decoding: expected, as: UTF8.self).split(
                separator: "\n", omittingEmptySubsequences: false
            )
            .enumerated().map { $0.offset == 0 || $0.element.isEmpty ? String($0.element) : "  " + $0.element }
            .joined(separator: "\n")
            #expect(String(decoding: nested, as: UTF8.self) == expectedNested)
        }
    }

    /// A key written twice (which JSONEncoder never writes) is left to JSONDecoder, at every
    /// level; the same text without the repeat is read the quick way.
    @Test func aRepeatedKeyIsLeftToTheDecoder() throws {
        let base = #"{"id":"x:video:1","kind":"video","provider":"x","title":"T""#
        let once = [
            base + "}", base + #","extra":{"a":"1","b":"2"}}"#, base + #","enclosure":{"url":"u","type":"t"}}"#,
        ]
        let twice = [
            base + #","title":"U"}"#, base + #","extra":{"a":"1","a":"2"}}"#,
            base + #","enclosure":{"url":"u","url":"v"}}"#, base + #","id":"x:video:1"}"#,
        ]
        for text in once {
            #expect(Array(text.utf8).withUnsafeBytes { MediaItemJSON.decode($0) } != nil, "\(text)")
        }
        for text in twice {
            #expect(Array(text.utf8).withUnsafeBytes { MediaItemJSON.decode($0) } == nil, "\(text)")
        }
    }

    /// Read back, every item is itself; and whatever is read from JSON the quick way is what
    /// `JSONDecoder` reads from it: valid snapshots, and 40,000 mutations of them (the quick
    /// way may decline any of those; when it answers, it must agree).
    @Test func readingAgreesWithJSONDecoder() throws {
        var g = Generator(state: 31)
        let decoder = JSONDecoder()
        let mutations: [UInt8] = Array(#"{}[]":,\/ 0123456789.eE+-truefalsnul"#.utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xFF]
        var answered = 0
        for n in 0..<4000 {
            let item = Self.item(&g)
            let bytes = try #require(MediaItemJSON.encode(item, escapingSlashes: n % 2 == 0))
            // One with a namespace is left to `JSONDecoder` (the quick reader declines it).
            let read = bytes.withUnsafeBytes { MediaItemJSON.decode($0) }
            #expect(item.namespace == nil ? read == item : read == nil, "item \(n)")
            if item.namespace != nil { #expect(try decoder.decode(MediaItem.self, from: Data(bytes)) == item) }
            for _ in 0..<10 {
                var mutated = bytes
                let at = Int(g.next() % UInt64(mutated.count))
                switch g.next() % 4 {
                case 0: mutated[at] = mutations.randomElement(using: &g)!
                case 1: mutated.remove(at: at)
                case 2: mutated.insert(mutations.randomElement(using: &g)!, at: at)
                default:
                    let end = min(mutated.count, at + Int(g.next() % 12))
                    mutated.insert(contentsOf: mutated[at..<end], at: at)
                }
                guard let quick = mutated.withUnsafeBytes({ MediaItemJSON.decode($0) }) else { continue }
                answered += 1
                let slow = try? decoder.decode(MediaItem.self, from: Data(mutated))
                #expect(slow == quick, "\(String(decoding: mutated, as: UTF8.self))")
            }
        }
        #expect(answered > 1000, "some mutations are still snapshots the quick way reads")
    }

    /// What it would not write as `JSONEncoder` does is left to `JSONEncoder`.
    @Test func whatItCannotMatchItLeaves() {
        var item = MediaItem(id: ItemID(provider: "x", kind: .post, nativeID: "1"), title: "t")
        item.extra = ["clé": "v"]
        #expect(MediaItemJSON.encode(item, escapingSlashes: true) == nil)
        item.extra = nil
        item.duration = .infinity
        #expect(MediaItemJSON.encode(item, escapingSlashes: true) == nil)
        item.duration = nil
        item.stats = ["ünï": 1]
        #expect(MediaItemJSON.encode(item, escapingSlashes: true) == nil)
    }

    /// A feed's Podcasting 2.0 elements are written (every answer once carried items without
    /// them), as `JSONEncoder` writes them.
    @Test func theNamespaceIsWritten() throws {
        var item = MediaItem(id: ItemID(provider: "podcasts", kind: .episode, nativeID: "1"), title: "Tone 2")
        var namespace = PodcastNamespace()
        namespace.soundbites = [.init(start: 40, duration: 6, title: "The tone at forty")]
        item.namespace = namespace
        item.played = true
        let written = try #require(MediaItemJSON.encode(item, escapingSlashes: false))
        #expect(written == Array(try Self.encoder(escapingSlashes: false).encode(item)))
        #expect(String(decoding: written, as: UTF8.self).contains(#""namespace":{"soundbites":[{"duration":6,"#))
    }
}
