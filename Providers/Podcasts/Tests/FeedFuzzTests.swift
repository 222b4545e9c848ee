import Foundation
import MediaKit
import Sandbox
import TestSupport
import Testing

@testable import Podcasts

/// Structure-aware fuzzing of the feed parser: real feeds (the recorded corpus) mutated where
/// feeds really go wrong (dates, numbers, entities, encodings, namespaces, truncation at tag
/// boundaries, duplicated elements, stray markup). The parser must never trap, must read a
/// document the same in one piece or in chunks, and a bad element may cost only that element.
///
/// `make test` runs a few thousand cases in seconds; `make fuzz` sets MEDIAHOST_FUZZ_CASES for a
/// long run (and MEDIAHOST_FUZZ_SEED to vary it).
@Suite struct FeedFuzzTests {
    static let corpus = Recorded()
    static let seeds: [[UInt8]] = {
        let paths =
            corpus.files(in: "feeds/podcastparser", suffix: ".rss") + corpus.files(in: "feeds/feedkit", suffix: ".xml")
            + ["feeds/podcastindex-example.xml", "feeds/wdr-1live-planb-reportage.xml"]
        return paths.compactMap { try? Array(corpus.data($0)) }
    }()
    static let cases = ProcessInfo.processInfo.environment["MEDIAHOST_FUZZ_CASES"].flatMap(Int.init) ?? 2500
    static let seed = ProcessInfo.processInfo.environment["MEDIAHOST_FUZZ_SEED"].flatMap(UInt64.init) ?? 20_261_122
    static let url = URL(string: "https://fuzz.invalid/show/feed.xml")

    static let hostileDates = [
        "", " ", "not a date", "yesterday", "Tue, 99 Xyz 99999 99:99:99 +9999", "1 Jan 99999999999999999999999",
        "2025-13-45T99:99:99Z", "0000-00-00", "9999-12-31T23:59:59Z", "-1", "Tue, 10 Jun 2025 09:41:00 +0000",
        "Mon, 31 Feb 2025 00:00:00 GMT", "99999999999:99999999999:9", "\u{0}", "2025-06-10T09:41:00.000000000000000000001Z",
    ]
    static let hostileNumbers = [
        "1e400", "-1", "99999999999999999999999", "NaN", "inf", "0x10", "1:99999999999999999999:00", "", "٣", "12:34:56:78",
    ]
    static let hostileEntities = [
        "&amp;", "&#0;", "&#xFFFFFFFF;", "&#x110000;", "&#55296;", "&nbsp;", "&unknown;", "&", "&#;", "&#x;", "&lt;&gt;",
        "&amp;amp;", "&#9999999999999999999999;",
    ]
    static let strayMarkup = [
        "<", ">", "\"", "]]>", "<!--", "<![CDATA[", "</", "<?", "<!DOCTYPE x>", "<a", "</channel>", "</item>", "\u{0}", "\u{FF}",
    ]

    @Test func mutatedRealFeedsNeverTrapAndReadTheSameInChunks() throws {
        #expect(Self.seeds.count > 60)
        var random = SplitMix64(seed: Self.seed)
        var outcomes = [String: Int]()
        for n in 0..<Self.cases {
            let seed = Self.seeds[Int(random.next() % UInt64(Self.seeds.count))]
            var document = seed
            let mutations = 1 + Int(random.next() % 3)
            var applied: [String] = []
            for _ in 0..<mutations { applied.append(Self.mutate(&document, &random)) }
            let feed = try Self.check(document, random: &random, label: "case \(n) (\(applied.joined(separator: ", ")))")
            outcomes[feed == nil ? "refused" : "feed", default: 0] += 1
        }
        // Most mutated feeds are still feeds; some are not: both outcomes are exercised.
        #expect((outcomes["feed"] ?? 0) > Self.cases / 2, "\(outcomes)")
        #expect((outcomes["refused"] ?? 0) > 0, "\(outcomes)")
    }

    /// Every prefix of a real feed that ends at a tag boundary: the episodes whose end tag came
    /// are read, nothing else.
    @Test func truncationAtEveryTagBoundary() throws {
        var random = SplitMix64(seed: Self.seed &+ 1)
        for path in ["feeds/podcastindex-example.xml", "feeds/wdr-1live-planb-reportage.xml", "feeds/feedkit/Podcast.xml"] {
            let document = try Array(Self.corpus.data(path))
            let whole = try FeedParser.parse(Data(document), url: Self.url)
            var boundaries = 0
            // Every boundary of the small feeds; every third of the big one (make fuzz: all).
            let stride = document.count > 10_000 && Self.cases < 10_000 ? 3 : 1
            var seen = 0
            for (index, byte) in document.enumerated() where byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") {
                seen += 1
                guard seen % stride == 0 else { continue }
                let prefix = Array(document[0..<(byte == UInt8(ascii: ">") ? index + 1 : index)])
                if let feed = try Self.check(prefix, random: &random, label: "\(path) cut at \(index)") {
                    // Only whole episodes, and in order: a prefix of the full reading.
                    #expect(Array(whole.episodes.prefix(feed.episodes.count)) == feed.episodes, "\(path) cut at \(index)")
                }
                boundaries += 1
            }
            #expect(boundaries > 30)
        }
    }

    // MARK: Checking one document

    /// Parses whole and in random chunks and checks the invariants; the feed, or nil when the
    /// document was refused as not a feed.
    @discardableResult
    static func check(_ document: [UInt8], random: inout SplitMix64, label: String) throws -> ParsedFeed? {
        let whole: ParsedFeed
        do {
            whole = try FeedParser.parse(Data(document), url: url)
        } catch is FeedError {
            return nil
        }
        var episodes: [ParsedEpisode] = []
        let parser = FeedParser(url: url) { episodes.append($0) }
        var offset = 0
        let maxChunk = [1, 3, 64, 4096][Int(random.next() % 4)]
        try document.withUnsafeBytes { raw in
            while offset < raw.count {
                let size = min(1 + Int(random.next() % UInt64(maxChunk)), raw.count - offset)
                try parser.feed(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + size)]))
                offset += size
            }
        }
        var chunked = try parser.finish()
        chunked.episodes = episodes
        #expect(chunked == whole, "\(label): read differently in chunks of up to \(maxChunk) bytes")
        // Count elements in the text as the parser saw it (the document may be UTF-16 or Latin-1).
        var decoder = XMLTextDecoder()
        var utf8: [UInt8] = []
        document.withUnsafeBytes { decoder.decode($0, into: &utf8) }
        decoder.finish(into: &utf8)
        let text = String(decoding: utf8, as: UTF8.self)
        let elements = text.components(separatedBy: "item").count + text.components(separatedBy: "entry").count
        #expect(whole.episodes.count <= elements, "\(label): more episodes than elements")
        for episode in whole.episodes {
            if let duration = episode.duration { #expect(duration.isFinite && duration >= 0, "\(label): duration \(duration)") }
            if let length = episode.enclosureLength { #expect(length > 0, "\(label)") }
            if let number = episode.episode { #expect(number >= 0, "\(label)") }
            // What the provider makes of it must not trap either.
            _ = PodcastsProvider.episodeKey(episode)
            _ = episode.summary
            _ = episode.published.map(FeedDates.isoString)
        }
        return whole
    }

    // MARK: Mutations

    static func pick<T>(_ values: [T], _ random: inout SplitMix64) -> T { values[Int(random.next() % UInt64(values.count))] }

    /// Ranges of `<name ...>text</name>` for element names matching `names`.
    static func elements(_ document: [UInt8], named names: [String]) -> [(open: Range<Int>, text: Range<Int>, whole: Range<Int>)]
    {
        let text = String(decoding: document, as: UTF8.self)
        guard text.utf8.count == document.count else { return [] }  // only on valid UTF-8 seeds
        var found: [(Range<Int>, Range<Int>, Range<Int>)] = []
        let bytes = document
        for name in names {
            let open = Array("<\(name)".utf8)
            let close = Array("</\(name)>".utf8)
            var i = 0
            while i + open.count < bytes.count {
                guard bytes[i] == open[0], Array(bytes[i..<(i + open.count)]) == open,
                    bytes[i + open.count] == UInt8(ascii: ">") || bytes[i + open.count] == UInt8(ascii: " ")
                else {
                    i += 1
                    continue
                }
                guard let gt = bytes[i...].firstIndex(of: UInt8(ascii: ">")) else { break }
                var j = gt + 1
                var end: Int?
                while j + close.count <= bytes.count {
                    if bytes[j] == close[0], Array(bytes[j..<(j + close.count)]) == close {
                        end = j
                        break
                    }
                    j += 1
                }
                guard let end else { break }
                found.append((i..<(gt + 1), (gt + 1)..<end, i..<(end + close.count)))
                i = end + close.count
            }
        }
        return found
    }

    static func mutate(_ document: inout [UInt8], _ random: inout SplitMix64) -> String {
        switch random.next() % 9 {
        case 0:
            let dates = elements(document, named: ["pubDate", "published", "updated", "dc:date", "lastBuildDate"])
            guard !dates.isEmpty else { return "no date" }
            let target = pick(dates, &random)
            document.replaceSubrange(target.text, with: Array(pick(hostileDates, &random).utf8))
            return "date"
        case 1:
            let numbers = elements(
                document, named: ["itunes:duration", "itunes:episode", "itunes:season", "podcast:season", "podcast:episode"])
            if !numbers.isEmpty {
                let target = pick(numbers, &random)
                document.replaceSubrange(target.text, with: Array(pick(hostileNumbers, &random).utf8))
                return "number"
            }
            let lengths = String(decoding: document, as: UTF8.self).ranges(of: "length=\"")
            guard let range = lengths.randomElement(using: &random) else { return "no number" }
            let start = String(decoding: document, as: UTF8.self).utf8.distance(
                from: String(decoding: document, as: UTF8.self).startIndex, to: range.upperBound)
            document.insert(contentsOf: Array(pick(hostileNumbers, &random).utf8), at: start)
            return "length"
        case 2:
            let texts = elements(document, named: ["title", "description", "itunes:summary", "link", "guid"])
            guard !texts.isEmpty else { return "no text" }
            let target = pick(texts, &random)
            let at = target.text.lowerBound + Int(random.next() % UInt64(max(1, target.text.count)))
            document.insert(contentsOf: Array(pick(hostileEntities, &random).utf8), at: min(at, target.text.upperBound))
            return "entity"
        case 3:
            return encode(&document, &random)
        case 4:
            var text = String(decoding: document, as: UTF8.self)
            switch random.next() % 4 {
            case 0:
                text = text.replacingOccurrences(of: "itunes:", with: "it:").replacingOccurrences(
                    of: "xmlns:itunes=", with: "xmlns:it=")
            case 1:
                text = text.replacingOccurrences(
                    of: "http://www.itunes.com/dtds/podcast-1.0.dtd", with: "http://www.itunes.com/DTDs/Podcast-1.0.dtd")
            case 2: text = text.replacingOccurrences(of: "xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"", with: "")
            default:
                text = text.replacingOccurrences(
                    of: "xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"", with: "xmlns:itunes=\"urn:not-itunes\"")
            }
            document = Array(text.utf8)
            return "namespace"
        case 5:
            let candidates = elements(
                document, named: ["item", "title", "enclosure", "pubDate", "itunes:duration", "guid", "entry", "channel"])
            guard !candidates.isEmpty else { return "nothing to duplicate" }
            let target = pick(candidates, &random)
            document.insert(contentsOf: Array(document[target.whole]), at: target.whole.upperBound)
            return "duplicate"
        case 6:
            let tags = document.indices.filter { document[$0] == UInt8(ascii: "<") }
            guard !tags.isEmpty else { return "no tag" }
            document.removeSubrange(pick(tags, &random)..<document.count)
            return "truncate"
        case 7:
            let at = Int(random.next() % UInt64(max(1, document.count)))
            document.insert(contentsOf: Array(pick(strayMarkup, &random).utf8), at: at)
            return "stray"
        default:
            // A few random bytes anywhere.
            for _ in 0..<(1 + random.next() % 4) where !document.isEmpty {
                document[Int(random.next() % UInt64(document.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            return "bytes"
        }
    }

    static func encode(_ document: inout [UInt8], _ random: inout SplitMix64) -> String {
        let text = String(decoding: document, as: UTF8.self)
        switch random.next() % 6 {
        case 0:
            document = [0xEF, 0xBB, 0xBF] + Array("\n  \r\n".utf8) + document
            return "bom and space"
        case 1:
            // Latin-1 bytes, with or without saying so.
            let latin = text.data(using: .isoLatin1, allowLossyConversion: true).map(Array.init) ?? document
            document =
                random.next() % 2 == 0
                ? latin
                : Array(
                    text.replacingOccurrences(of: "UTF-8", with: "ISO-8859-1").data(using: .isoLatin1, allowLossyConversion: true)
                        ?? Data(document))
            return "latin-1"
        case 2:
            document = Array(("\u{FEFF}" + text).data(using: .utf16LittleEndian) ?? Data(document))
            return "utf-16"
        case 3:
            document = Array(text.replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"x-no-such-charset\"").utf8)
            return "unknown charset"
        case 4:
            document = Array(text.replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"UTF-16\"").utf8)
            return "lying declaration"
        default:
            // A stray high byte in the middle of a UTF-8 sequence or text.
            if !document.isEmpty { document.insert(0xC3, at: Int(random.next() % UInt64(document.count))) }
            return "broken utf-8"
        }
    }
}

extension String {
    fileprivate func ranges(of needle: String) -> [Range<String.Index>] {
        var result: [Range<String.Index>] = []
        var start = startIndex
        while let range = self.range(of: needle, range: start..<endIndex) {
            result.append(range)
            start = range.upperBound
        }
        return result
    }
}
