import Basics
import FoundationEssentials
import Glibc

/// A chapter of an episode or a video: where it starts (seconds), its title, and what the
/// source gave with it.
public struct Chapter: Codable, Sendable, Equatable {
    /// Seconds from the start.
    public var start: Double
    /// Seconds; absent when the source gave none (the next chapter's start ends it).
    public var end: Double?
    public var title: String
    public var url: String?
    public var image: String?
    /// False for a chapter the source keeps out of the table of contents (Podcasting 2.0's
    /// `toc: false`: a picture change, a location); listed apart, never a seek target.
    public var toc: Bool

    public init(start: Double, end: Double? = nil, title: String, url: String? = nil, image: String? = nil, toc: Bool = true) {
        self.start = start
        self.end = end
        self.title = title
        self.url = url
        self.image = image
        self.toc = toc
    }
}

/// Chapters as read from one source, with what could not be used said in `notes`.
public struct ChapterList: Codable, Sendable, Equatable {
    public enum Source: String, Codable, Sendable, CaseIterable {
        /// A Podcasting 2.0 JSON chapters file (`<podcast:chapters>`).
        case podcastChapters = "podcast:chapters"
        /// Podlove Simple Chapters in the feed (`<psc:chapters>`).
        case podloveSimpleChapters = "psc"
        /// ID3v2 CHAP frames of the downloaded file.
        case id3
        /// The video's chapters as the service lists them (yt-dlp's `chapters`).
        case service
        /// Timestamps in the description ("00:00 Intro").
        case description
        /// SponsorBlock's segments alone (a video with no chapters of its own).
        case sponsorBlock = "sponsorblock"
    }

    public var source: Source
    public var chapters: [Chapter]
    /// What was not usable, one short sentence each ("2 chapters without a start time").
    public var notes: [String]

    public init(source: Source, chapters: [Chapter], notes: [String] = []) {
        self.source = source
        self.chapters = chapters
        self.notes = notes
    }

    /// No media is longer than this (30 days): a chapter or a segment past it is no time at all.
    public static let longestMedia: Double = 30 * 86_400

    /// The most chapters kept of one item: a file of 100,000 CHAP frames is no table of contents.
    public static let mostChapters = 5_000

    /// In time order, without what cannot be used: chapters past the end of the media (when its
    /// length is known; past `longestMedia` always), a chapter at the same start as an earlier
    /// one (the first is kept), ends that are not after their start or run past the next
    /// chapter (cut there), and those after `mostChapters`. Each thing dropped or changed is said
    /// in `notes`. In O(n log n): a file may hold a hundred thousand.
    public func normalized(duration: Double?) -> ChapterList {
        var notes = notes
        var chapters = chapters.filter { $0.start.isFinite && $0.start >= 0 }
        if chapters.count < self.chapters.count {
            notes.append(Self.count(self.chapters.count - chapters.count, "without a usable start time"))
        }
        let plausible = chapters.filter { $0.start < Self.longestMedia }
        if plausible.count < chapters.count {
            notes.append(Self.count(chapters.count - plausible.count, "starting more than 30 days in"))
            chapters = plausible
        }
        let sorted = chapters.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
        if chapters != sorted { notes.append("the chapters were out of order; sorted by start time") }
        chapters = sorted
        if let duration, duration > 0 {
            let inside = chapters.filter { $0.start < duration }
            if inside.count < chapters.count {
                notes.append(
                    Self.count(chapters.count - inside.count, "starting after the end of the media (\(Self.clock(duration)))"))
            }
            chapters = inside
        }
        var kept: [Chapter] = []
        var duplicates = 0
        var lastTOCStart: Double?
        for chapter in chapters {
            // Two table-of-contents chapters at one time: the first is kept. A toc:false chapter
            // (a picture change) may share its start with a real one.
            if chapter.toc, let last = lastTOCStart, abs(last - chapter.start) < 0.001 {
                duplicates += 1
                continue
            }
            if chapter.toc { lastTOCStart = chapter.start }
            kept.append(chapter)
        }
        if duplicates > 0 { notes.append(Self.count(duplicates, "at the same time as an earlier one")) }
        if kept.count > Self.mostChapters {
            notes.append(Self.count(kept.count - Self.mostChapters, "after the first \(Self.mostChapters); left out"))
            kept.removeLast(kept.count - Self.mostChapters)
        }
        var fixedEnds = 0
        let starts = kept.filter(\.toc).map(\.start)
        var nextIndex = 0
        for index in kept.indices {
            // The next table-of-contents start after this one's (both lists in time order).
            while nextIndex < starts.count, starts[nextIndex] <= kept[index].start { nextIndex += 1 }
            guard let end = kept[index].end else { continue }
            let next = nextIndex < starts.count ? starts[nextIndex] : nil
            if end <= kept[index].start {
                kept[index].end = nil
                fixedEnds += 1
            } else if kept[index].toc, let next, end > next + 0.001 {
                kept[index].end = next
                fixedEnds += 1
            } else if let duration, duration > 0, end > duration + 0.5 {
                kept[index].end = duration
                fixedEnds += 1
            }
        }
        if fixedEnds > 0 { notes.append(Self.count(fixedEnds, "whose end overlapped the next chapter or the media's end; cut")) }
        for index in kept.indices where kept[index].title.trimming(.whitespacesAndNewlines).isEmpty {
            kept[index].title = (kept[index].toc ? "Chapter at " : "Marker at ") + Self.clock(kept[index].start)
        }
        return ChapterList(source: source, chapters: kept, notes: notes)
    }

    static func count(_ n: Int, _ what: String) -> String { n == 1 ? "1 chapter \(what)" : "\(n) chapters \(what)" }

    /// 1:02:03 or 2:03.
    public static func clock(_ seconds: Double) -> String {
        // A time from a file can be anything (1e300): never `Int(_: Double)` on it.
        let total = Int(finite: max(0, min(seconds, 1e12))) ?? 0
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
    }
}

/// Readers of every common source of chapters.
public enum ChapterReader {
    /// A Podcasting 2.0 JSON chapters file: `startTime`/`endTime`/`title`/`img`/`url`/`toc`
    /// (and the 2020 draft's `marker`); an object left with a trailing comma, as the spec's own
    /// example was for a year, is read too.
    public static func podcastJSON(_ data: Data) throws -> ChapterList {
        let object: Any
        do {
            object = try JSONValue(parsing: data).plainValue
        } catch {
            guard let repaired = try? JSONValue(parsing: withoutTrailingCommas(data)).plainValue else {
                throw ProviderError.invalidResponse("the chapters file is not JSON: \(describe(error))")
            }
            object = repaired
        }
        guard let root = object as? [String: Any], let entries = root["chapters"] as? [Any] else {
            throw ProviderError.invalidResponse("the chapters file has no \"chapters\" list")
        }
        var chapters: [Chapter] = []
        var unusable = 0
        for case let entry as [String: Any] in entries {
            guard let start = seconds(entry["startTime"] ?? entry["marker"]) else {
                unusable += 1
                continue
            }
            let toc = (entry["toc"] as? Bool) ?? true
            chapters.append(
                Chapter(
                    start: start, end: seconds(entry["endTime"]), title: (entry["title"] as? String) ?? "",
                    url: (entry["url"] as? String).flatMap(web),
                    image: ((entry["img"] ?? entry["image"]) as? String).flatMap(web),
                    toc: toc))
        }
        unusable += entries.count - entries.filter { $0 is [String: Any] }.count
        return ChapterList(
            source: .podcastChapters, chapters: chapters,
            notes: unusable > 0 ? [ChapterList.count(unusable, "without a usable start time")] : [])
    }

    /// Podlove Simple Chapters: `start` in Normal Play Time (`37`, `7:48`, `01:02:03.400`).
    public static func podloveSimple(_ entries: [(start: String, title: String, href: String?, image: String?)]) -> ChapterList {
        var chapters: [Chapter] = []
        var unusable = 0
        for entry in entries {
            guard let start = normalPlayTime(entry.start) else {
                unusable += 1
                continue
            }
            chapters.append(
                Chapter(start: start, title: entry.title, url: entry.href.flatMap(web), image: entry.image.flatMap(web)))
        }
        return ChapterList(
            source: .podloveSimpleChapters, chapters: chapters,
            notes: unusable > 0 ? [ChapterList.count(unusable, "without a usable start time")] : [])
    }

    /// `[[hh:]mm:]ss[.fff]`, each part a number; nil for anything else.
    public static func normalPlayTime(_ text: String) -> Double? {
        let parts = text.trimming(.whitespaces).split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (index, part) in parts.enumerated() {
            let last = index == parts.count - 1
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && ($0.isNumber || (last && $0 == ".")) }),
                let value = Double(part), value.isFinite
            else { return nil }
            total = total * 60 + value
        }
        return total
    }

    /// Chapter lines in a description: a time at the start of a line (or after a bullet), then
    /// the title ("00:00 Intro", "1:02:03 - Q&A", "(12:30) Outro"). Used when they start at 0:00
    /// and there are at least three, in increasing order, as YouTube itself requires.
    public static func description(_ text: String) -> ChapterList? {
        var chapters: [Chapter] = []
        for rawLine in text.split(whereSeparator: \.isNewline) {
            var line = Substring(rawLine).drop { $0 == " " || $0 == "\t" || $0 == "•" || $0 == "-" || $0 == "*" || $0 == "▶" }
            let bracketed = line.first == "(" || line.first == "["
            if bracketed { line = line.dropFirst() }
            let time = line.prefix { $0.isASCII && ($0.isNumber || $0 == ":") }
            guard time.contains(":"), let start = normalPlayTime(String(time)) else { continue }
            var rest = line.dropFirst(time.count)
            if bracketed, rest.first == ")" || rest.first == "]" { rest = rest.dropFirst() }
            let title = rest.drop { $0 == " " || $0 == "-" || $0 == "–" || $0 == "—" || $0 == ":" || $0 == "|" || $0 == "\t" }
                .trimming(.whitespaces)
            guard !title.isEmpty else { continue }
            chapters.append(Chapter(start: start, title: title))
        }
        guard chapters.count >= 3, chapters.first?.start == 0,
            zip(chapters, chapters.dropFirst()).allSatisfy({ $0.start < $1.start })
        else { return nil }
        return ChapterList(source: .description, chapters: chapters)
    }

    /// yt-dlp's `chapters` (`start_time`, `end_time`, `title`).
    public static func service(_ entries: [[String: Any]]) -> ChapterList {
        var chapters: [Chapter] = []
        var unusable = 0
        for entry in entries {
            guard let start = seconds(entry["start_time"]) else {
                unusable += 1
                continue
            }
            chapters.append(Chapter(start: start, end: seconds(entry["end_time"]), title: (entry["title"] as? String) ?? ""))
        }
        return ChapterList(
            source: .service, chapters: chapters,
            notes: unusable > 0 ? [ChapterList.count(unusable, "without a usable start time")] : [])
    }

    private static func seconds(_ value: Any?) -> Double? {
        switch value {
        case let text as String: return normalPlayTime(text)
        case let double as Double:
            return double.isFinite && double >= 0 ? double : nil
        default: return nil
        }
    }

    /// Only web links are kept (a chapter's link is opened by whoever reads it).
    private static func web(_ link: String) -> String? {
        let lower = link.lowercased()
        return lower.hasPrefix("https://") || lower.hasPrefix("http://") ? link : nil
    }

    /// The JSON with each comma that only a closing bracket follows removed (outside strings).
    static func withoutTrailingCommas(_ data: Data) -> Data {
        let bytes = [UInt8](data)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var inString = false
        var escaped = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: ",") {
                var next = index + 1
                while next < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[next]) { next += 1 }
                if next < bytes.count, bytes[next] == UInt8(ascii: "}") || bytes[next] == UInt8(ascii: "]") {
                    index += 1
                    continue
                }
            }
            out.append(byte)
            index += 1
        }
        return Data(out)
    }
}

/// ID3v2.3/2.4 chapters (CHAP frames, in the order of the top-level CTOC when there is one) of a
/// media file: its tag is read from the start of the file, at most 64 MB of it.
public enum ID3Chapters {
    public static let maxTag = 64 << 20

    /// nil when the file has no ID3v2 tag or no chapters in it.
    public static func read(path: String) throws -> ChapterList? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ProviderError.invalidResponse("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        func read(_ count: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let got = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, count - done) }
                if got < 0, errno == EINTR { continue }
                guard got > 0 else { break }
                done += got
            }
            return Array(bytes[0..<done])
        }
        let header = read(10)
        guard header.count == 10, header[0] == 0x49, header[1] == 0x44, header[2] == 0x33 else { return nil }
        let size = syncsafe(header[6...9])
        guard size <= maxTag else {
            return ChapterList(source: .id3, chapters: [], notes: ["the ID3 tag is over 64 MB; not read"])
        }
        let body = read(size)
        return parse(header: header, body: body)
    }

    /// The tag: its 10-byte header and what follows it.
    public static func parse(header: [UInt8], body tagBody: [UInt8]) -> ChapterList? {
        let version = header[3]
        guard version == 3 || version == 4 else { return nil }
        let flags = header[5]
        var body = tagBody
        if flags & 0x80 != 0, version == 3 { body = resynchronized(body) }
        var offset = 0
        if flags & 0x40 != 0, body.count >= 4 {
            // The extended header: its size excludes itself in 2.3, includes itself (syncsafe) in 2.4.
            offset = version == 3 ? Int(bigEndian(body[0..<4])) + 4 : syncsafe(body[0..<4])
        }
        let frames = self.frames(in: body, from: offset, version: version)
        var chapters: [String: Chapter] = [:]
        var order: [String] = []
        var contents: [String]?
        for frame in frames {
            switch frame.id {
            case "CHAP":
                guard let (element, rest) = terminated(frame.data[...]), rest.count >= 16 else { continue }
                let start = Double(bigEndian(rest.prefix(4))) / 1000
                let endRaw = bigEndian(rest.dropFirst(4).prefix(4))
                var chapter = Chapter(start: start, end: endRaw == 0xFFFF_FFFF ? nil : Double(endRaw) / 1000, title: "")
                for sub in self.frames(in: Array(rest.dropFirst(16)), from: 0, version: version) {
                    switch sub.id {
                    case "TIT2": chapter.title = text(sub.data) ?? chapter.title
                    case "WXXX": chapter.url = userURL(sub.data).flatMap { $0.hasPrefix("http") ? $0 : nil }
                    default: break
                    }
                }
                let id = String(decoding: element, as: UTF8.self)
                if chapters[id] == nil { order.append(id) }
                chapters[id] = chapter
            case "CTOC":
                guard let (_, rest) = terminated(frame.data[...]), rest.count >= 2 else { continue }
                let topLevel = rest[rest.startIndex] & 0x02 != 0
                var count = Int(rest[rest.startIndex + 1])
                var children: [String] = []
                var cursor = rest.dropFirst(2)
                while count > 0, let (child, after) = terminated(cursor) {
                    children.append(String(decoding: child, as: UTF8.self))
                    cursor = after
                    count -= 1
                }
                if topLevel || contents == nil { contents = children }
            default:
                continue
            }
        }
        guard !chapters.isEmpty else { return nil }
        let listed = (contents ?? []).compactMap { chapters[$0] }
        let rest = order.filter { !(contents ?? []).contains($0) }.compactMap { chapters[$0] }
        return ChapterList(source: .id3, chapters: listed.isEmpty ? order.compactMap { chapters[$0] } : listed + rest)
    }

    struct Frame {
        var id: String
        var data: [UInt8]
    }

    static func frames(in body: [UInt8], from start: Int, version: UInt8) -> [Frame] {
        var frames: [Frame] = []
        var offset = start
        while offset + 10 <= body.count {
            let idBytes = body[offset..<(offset + 4)]
            guard idBytes.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) }) else { break }
            var size =
                version == 4 ? syncsafe(body[(offset + 4)..<(offset + 8)]) : Int(bigEndian(body[(offset + 4)..<(offset + 8)]))
            // Some 2.4 writers put plain sizes: trust the plain one when the syncsafe one runs
            // past the tag and the plain one fits.
            if version == 4, offset + 10 + size > body.count {
                let plain = Int(bigEndian(body[(offset + 4)..<(offset + 8)]))
                if offset + 10 + plain <= body.count { size = plain }
            }
            let formatFlags = body[offset + 9]
            guard size >= 0, offset + 10 + size <= body.count else { break }
            var data = Array(body[(offset + 10)..<(offset + 10 + size)])
            if version == 4, formatFlags & 0x02 != 0 { data = resynchronized(data) }
            // A data length indicator (2.4) comes first when flagged.
            if version == 4, formatFlags & 0x01 != 0, data.count >= 4 { data.removeFirst(4) }
            frames.append(Frame(id: String(decoding: idBytes, as: UTF8.self), data: data))
            offset += 10 + size
        }
        return frames
    }

    /// A text frame's text (its first string).
    static func text(_ data: [UInt8]) -> String? {
        guard let encoding = data.first else { return nil }
        let text = decode(Array(data.dropFirst()), encoding: encoding)
        let first = text.split(separator: "\u{0}", omittingEmptySubsequences: false).first.map(String.init) ?? text
        let trimmed = first.trimming(.whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// WXXX: encoding, a description in that encoding, then the URL in Latin-1.
    static func userURL(_ data: [UInt8]) -> String? {
        guard let encoding = data.first else { return nil }
        var rest = Array(data.dropFirst())
        let wide = encoding == 1 || encoding == 2
        var index = 0
        while index < rest.count {
            if wide {
                if index + 1 < rest.count, rest[index] == 0, rest[index + 1] == 0, index % 2 == 0 { index += 2; break }
                index += 2
            } else {
                if rest[index] == 0 { index += 1; break }
                index += 1
            }
        }
        rest = Array(rest.dropFirst(min(index, rest.count)))
        let url = String(decoding: rest.prefix { $0 != 0 }, as: UTF8.self).trimming(.whitespaces)
        return url.isEmpty ? nil : url
    }

    static func decode(_ bytes: [UInt8], encoding: UInt8) -> String {
        switch encoding {
        case 1, 2:
            var units: [UInt16] = []
            var bigEndian = encoding == 2
            var index = 0
            if encoding == 1, bytes.count >= 2 {
                if bytes[0] == 0xFF, bytes[1] == 0xFE {
                    index = 2
                } else if bytes[0] == 0xFE, bytes[1] == 0xFF {
                    bigEndian = true
                    index = 2
                }
            }
            while index + 1 < bytes.count {
                let unit =
                    bigEndian
                    ? UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]) : UInt16(bytes[index + 1]) << 8 | UInt16(bytes[index])
                units.append(unit)
                index += 2
            }
            return String(decoding: units, as: UTF16.self)
        case 3: return String(decoding: bytes, as: UTF8.self)
        default: return String(bytes.map { Character(Unicode.Scalar($0)) })
        }
    }

    /// The bytes up to a NUL, and what follows it.
    static func terminated(_ bytes: ArraySlice<UInt8>) -> (ArraySlice<UInt8>, ArraySlice<UInt8>)? {
        guard let end = bytes.firstIndex(of: 0) else { return nil }
        return (bytes[bytes.startIndex..<end], bytes[(end + 1)...])
    }

    static func syncsafe(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 7 | Int($1 & 0x7F) }
    }

    static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Undoes unsynchronisation: every 0xFF 0x00 is 0xFF.
    static func resynchronized(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var previous: UInt8 = 0
        for byte in bytes {
            if previous == 0xFF, byte == 0 {
                previous = 0
                continue
            }
            out.append(byte)
            previous = byte
        }
        return out
    }
}

/// A provider that knows an item's chapters from its service (a feed's chapters file or
/// Podlove chapters, a video's chapters). The host falls back to a downloaded file's ID3 chapters
/// and to timestamps in the description.
public protocol ChapterProvider: MediaProvider {
    /// nil when the service gives none for `id`.
    func chapters(of id: ItemID) async throws -> ChapterList?
}
