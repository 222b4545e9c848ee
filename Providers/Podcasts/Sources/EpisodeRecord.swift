import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// An episode as a row of the host's cache: a compact binary record (JSONEncoder cost more than
/// parsing the feed). Versioned; anything unreadable decodes as nil and the feed is read again.
enum EpisodeRecord {
    /// 3: chapters (a file's URL, Podlove chapters) and every transcript offered, after the
    /// numbers. An older record reads as nil (and its cache is named apart): the feed is read
    /// again, and its episodes get their chapters and transcripts.
    /// 4: the episode's Podcasting 2.0 elements (people, soundbites, live state…) as JSON, last.
    static let version: UInt8 = 4

    static func encode(_ episode: ParsedEpisode) -> Data {
        let strings = [
            episode.guid, episode.title, episode.enclosureURL, episode.enclosureType, episode.artwork, episode.notes,
            episode.link,
            episode.transcript,
        ]
        // One allocation, of the record's size: a feed of 4,000 episodes makes 4,000 of these
        // while it is parsed.
        var size =
            3 + 5 * 8 + 3 + 12 + (episode.chapters?.utf8.count ?? 0) + (episode.simpleChapters?.utf8.count ?? 0)
            + (episode.transcripts?.utf8.count ?? 0)
        var mask: UInt16 = 0
        for (bit, value) in strings.enumerated() {
            guard let value else { continue }
            mask |= 1 << bit
            size += 4 + value.utf8.count
        }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        out.append(version)
        if episode.published != nil { mask |= 1 << 8 }
        if episode.duration != nil { mask |= 1 << 9 }
        if episode.enclosureLength != nil { mask |= 1 << 10 }
        if episode.season != nil { mask |= 1 << 11 }
        if episode.episode != nil { mask |= 1 << 12 }
        append(UInt64(mask), bytes: 2, to: &out)
        for value in strings {
            guard let value else { continue }
            append(UInt64(value.utf8.count), bytes: 4, to: &out)
            out.append(contentsOf: value.utf8)
        }
        if let published = episode.published { append(published.timeIntervalSince1970.bitPattern, bytes: 8, to: &out) }
        if let duration = episode.duration { append(duration.bitPattern, bytes: 8, to: &out) }
        if let length = episode.enclosureLength { append(UInt64(bitPattern: length), bytes: 8, to: &out) }
        if let season = episode.season { append(UInt64(bitPattern: Int64(season)), bytes: 8, to: &out) }
        if let number = episode.episode { append(UInt64(bitPattern: Int64(number)), bytes: 8, to: &out) }
        // JSON for the few episodes that have them (its cost is theirs alone).
        let namespace = episode.namespace.flatMap { try? JSONEncoder().encode($0) }.map { String(decoding: $0, as: UTF8.self) }
        for value in [episode.chapters, episode.simpleChapters, episode.transcripts, namespace] {
            guard let value else {
                append(0, bytes: 1, to: &out)
                continue
            }
            append(1, bytes: 1, to: &out)
            append(UInt64(value.utf8.count), bytes: 4, to: &out)
            out.append(contentsOf: value.utf8)
        }
        return Data(out)
    }

    static func decode(_ data: Data) -> ParsedEpisode? {
        data.withUnsafeBytes { raw -> ParsedEpisode? in
            var reader = Reader(bytes: raw)
            guard reader.read(1) == UInt64(version), let mask = reader.read(2) else { return nil }
            var strings: [String?] = []
            for bit in 0..<8 {
                guard mask & (1 << bit) != 0 else {
                    strings.append(nil)
                    continue
                }
                guard let count = reader.read(4), let text = reader.string(Int(count)) else { return nil }
                strings.append(text)
            }
            var episode = ParsedEpisode(
                guid: strings[0], title: strings[1], enclosureURL: strings[2], enclosureType: strings[3], artwork: strings[4],
                notes: strings[5], link: strings[6], transcript: strings[7])
            func field(_ bit: Int) -> UInt64?? {
                guard mask & (1 << bit) != 0 else { return .some(nil) }
                guard let value = reader.read(8) else { return nil }
                return .some(value)
            }
            guard let published = field(8), let duration = field(9), let length = field(10), let season = field(11),
                let number = field(12)
            else { return nil }
            episode.published = published.map { Date(timeIntervalSince1970: Double(bitPattern: $0)) }
            episode.duration = duration.map { Double(bitPattern: $0) }
            episode.enclosureLength = length.map { Int64(bitPattern: $0) }
            episode.season = season.flatMap { Int(exactly: Int64(bitPattern: $0)) }
            episode.episode = number.flatMap { Int(exactly: Int64(bitPattern: $0)) }
            var more: [String?] = []
            for _ in 0..<4 {
                guard let present = reader.read(1) else { return nil }
                guard present == 1 else {
                    more.append(nil)
                    continue
                }
                guard let count = reader.read(4), let text = reader.string(Int(count)) else { return nil }
                more.append(text)
            }
            episode.chapters = more[0]
            episode.simpleChapters = more[1]
            episode.transcripts = more[2]
            if let json = more[3] {
                guard let namespace = try? JSONDecoder().decode(PodcastNamespace.self, from: Data(json.utf8)) else { return nil }
                episode.namespace = namespace
            }
            return reader.atEnd ? episode : nil
        }
    }

    private static func append(_ value: UInt64, bytes: Int, to out: inout [UInt8]) {
        for i in 0..<bytes { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var atEnd: Bool { offset == bytes.count }

        mutating func read(_ count: Int) -> UInt64? {
            guard count <= 8, bytes.count - offset >= count else { return nil }
            var value: UInt64 = 0
            for i in 0..<count { value |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
            offset += count
            return value
        }

        mutating func string(_ count: Int) -> String? {
            guard count >= 0, bytes.count - offset >= count else { return nil }
            defer { offset += count }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]), as: UTF8.self)
        }
    }
}
