import Basics
import FoundationEssentials
import Glibc

/// One line of what was said: when, by whom, and the words.
public struct TranscriptCue: Codable, Sendable, Equatable {
    /// Seconds from the start; 0 for every line of a transcript without times (plain text).
    public var start: Double
    public var end: Double?
    public var speaker: String?
    public var text: String

    public init(start: Double, end: Double? = nil, speaker: String? = nil, text: String) {
        self.start = start
        self.end = end
        self.speaker = speaker
        self.text = text
    }
}

/// A transcript as read from one file.
public struct Transcript: Codable, Sendable, Equatable {
    public enum Format: String, Codable, Sendable, CaseIterable {
        case vtt, srt, json, html, text
    }

    public var format: Format
    public var cues: [TranscriptCue]
    /// Whether the cues have times (plain text has none).
    public var timed: Bool
    /// What was not usable, one sentence each.
    public var notes: [String]

    public init(format: Format, cues: [TranscriptCue], timed: Bool = true, notes: [String] = []) {
        self.format = format
        self.cues = cues
        self.timed = timed
        self.notes = notes
    }
}

/// Readers of every transcript format podcasts and video sites use: WebVTT (voice tags, cue
/// settings, inline timestamps, YouTube's rolling automatic captions, bare-second timings some
/// hosts write), SRT (speaker prefixes), the Podcasting 2.0 JSON (word-level segments merged into
/// lines) and HTML (`<cite>`, `<time>`, `<p>`), and plain text.
public enum TranscriptReader {
    /// The largest transcript read (a 3-hour show's word-level JSON is a few MB).
    public static let maxSize = 16 << 20
    /// The most lines read of one: a 3-hour show's captions are a few thousand lines; 1,000,000
    /// one-word cues (14 MB of WebVTT) took 749 MB and 29 s and made a 34 MB answer.
    public static let maxCues = 50_000
    static let tooManyNote = "the transcript has more than \(maxCues) lines; the first \(maxCues) are read"

    /// Reads `data` as the format its type (a MIME type) or its URL's extension says, or, when
    /// neither is known or they lie (WebVTT served as text/plain), as its first bytes show.
    public static func read(_ data: Data, type: String?, url: String?) throws -> Transcript {
        guard data.count <= maxSize else {
            throw ProviderError.invalidResponse("the transcript is over \(maxSize >> 20) MB; not read")
        }
        // Subtitle files come in the encodings their makers' editors wrote: UTF-8 (a BOM or not),
        // UTF-16 with a BOM, Windows-1252/Latin-1; each is read as the feed reader reads them.
        var decoder = XMLTextDecoder(httpCharset: XMLTextDecoder.charset(fromContentType: type))
        var bytes: [UInt8] = []
        data.withUnsafeBytes { decoder.decode($0, into: &bytes) }
        decoder.finish(into: &bytes)
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        var transcript = try readText(text, data: data, type: type, url: url)
        if transcript.cues.count > maxCues {
            transcript.cues.removeLast(transcript.cues.count - maxCues)
            transcript.notes.append(tooManyNote)
        }
        return transcript
    }

    private static func readText(_ text: String, data: Data, type: String?, url: String?) throws -> Transcript {
        let head = text.prefix(512).trimming(.whitespacesAndNewlines)
        if head.hasPrefix("WEBVTT") { return webVTT(text) }
        if head.hasPrefix("{") { return try podcastJSON(data) }
        let declared = (type ?? "").lowercased()
        let path = (url.flatMap { URL(string: $0)?.path } ?? "").lowercased()
        if declared.contains("subrip") || declared.contains("srt") || path.hasSuffix(".srt") || looksLikeSRT(head) {
            return srt(text)
        }
        if declared.contains("vtt") || path.hasSuffix(".vtt") { return webVTT(text) }
        if declared.contains("json") || path.hasSuffix(".json") { return try podcastJSON(data) }
        if declared.contains("html") || path.hasSuffix(".html") || path.hasSuffix(".htm") || head.contains("<p")
            || head.contains("<cite") || head.contains("<time")
        {
            return html(text)
        }
        return plain(text)
    }

    static func looksLikeSRT(_ head: String) -> Bool {
        let lines = head.split(whereSeparator: \.isNewline).prefix(2)
        return lines.count == 2 && lines.first?.allSatisfy(\.isNumber) == true && lines.last?.contains("-->") == true
    }

    // MARK: WebVTT and SRT

    public static func webVTT(_ text: String) -> Transcript { cueFile(text, format: .vtt) }
    public static func srt(_ text: String) -> Transcript { cueFile(text, format: .srt) }

    /// Cues are a timing line and the text lines after it, up to a blank line or the next timing
    /// line (YouTube's captions leave out the blank line). Anything else (the header, `NOTE` and
    /// `STYLE` blocks, cue identifiers, SRT's numbers) is not text. An SRT cue goes on past a
    /// blank line when what follows is not the next cue's number and timing (some tools write
    /// blank lines inside a cue). Every line of a real subtitle file is kept, a line said twice
    /// too ("No." "No."); only YouTube's rolling automatic captions, which repeat each line in
    /// the next cue, are said once (`isRolling`).
    static func cueFile(_ text: String, format: Transcript.Format) -> Transcript {
        var raw: [RawCue] = []
        var inCue = false
        var afterBlank = false
        var unreadable = 0
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
        var tooMany = false
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimming(.whitespaces)
            if trimmed.contains("-->") {
                if let (start, end) = timing(trimmed) {
                    if raw.count >= maxCues {
                        tooMany = true
                        break
                    }
                    raw.append(RawCue(start: start, end: end, lines: []))
                    inCue = true
                } else {
                    unreadable += 1
                    inCue = false
                }
                afterBlank = false
            } else if trimmed.isEmpty {
                if format != .srt { inCue = false }
                afterBlank = inCue
            } else if inCue {
                if afterBlank, startsCue(lines, at: index) {
                    // The next cue's number: not text.
                    inCue = false
                    continue
                }
                afterBlank = false
                raw[raw.count - 1].lines.append(String(line))
            }
        }
        let cleaned = raw.map { cue in cue.lines.map { clean(Substring($0)) } }
        let rolling = isRolling(raw, cleaned)
        // Speakers named by a prefix ("Travis: …") are read only where the file names several
        // so, often: a credit ("Subtitles: …" at each end) or a word and a colon in a film is text.
        let prefixes = cleaned.compactMap { lines in
            lines.first { !$0.words.isEmpty }.flatMap { speakerPrefix($0.words)?.0 }
        }
        let prefixSpeakers = Set(prefixes).count >= 2 && prefixes.count * 50 >= raw.count
        var cues: [TranscriptCue] = []
        var recent: [String] = []
        var speaker: String?
        for (cue, lines) in zip(raw, cleaned) {
            var said: [String] = []
            var voice: String?
            for (name, words) in lines {
                if let name { voice = name }
                guard !words.isEmpty else { continue }
                if rolling {
                    // Each rolling cue repeats the line before and adds one; 10 ms cues repeat
                    // what is shown: a line said just before is not said again.
                    guard !recent.contains(words) else { continue }
                    recent.append(words)
                    if recent.count > 3 { recent.removeFirst() }
                }
                said.append(words)
            }
            guard !said.isEmpty else { continue }
            var joined = said.joined(separator: " ")
            if voice == nil, prefixSpeakers, let (name, rest) = speakerPrefix(joined) {
                voice = name
                joined = rest
            }
            // A speaker named once (a prefix on a change of speaker, as Descript and Buzzsprout
            // write them) goes on speaking until the next is named.
            if let voice { speaker = voice } else if !prefixSpeakers { speaker = nil }
            cues.append(TranscriptCue(start: cue.start, end: cue.end, speaker: voice ?? speaker, text: joined))
        }
        var notes = unreadable > 0 ? ["\(unreadable) cue\(unreadable == 1 ? "" : "s") with a timing that cannot be read"] : []
        if tooMany { notes.append(tooManyNote) }
        return Transcript(format: format, cues: cues, notes: notes)
    }

    struct RawCue {
        var start: Double
        var end: Double?
        var lines: [String]
    }

    /// Whether the line at `index` begins a cue: a timing line, or an identifier (SRT's number)
    /// with the timing line after it.
    static func startsCue(_ lines: [Substring], at index: Int) -> Bool {
        if lines[index].contains("-->") { return true }
        return index + 1 < lines.count && lines[index + 1].contains("-->")
    }

    /// YouTube's automatic captions, as yt-dlp writes them: cue after cue whose first line is
    /// the line before's last, starting as it ends. A film's captions repeat a line now and then
    /// ("You are not alone." four times); these do it in at least a quarter of their cues.
    static func isRolling(_ raw: [RawCue], _ cleaned: [[(speaker: String?, words: String)]]) -> Bool {
        var rolls = 0
        for index in raw.indices.dropFirst() {
            guard let last = cleaned[index - 1].last(where: { !$0.words.isEmpty })?.words,
                let first = cleaned[index].first(where: { !$0.words.isEmpty })?.words, first == last,
                let end = raw[index - 1].end, abs(raw[index].start - end) < 0.05
            else { continue }
            rolls += 1
        }
        return rolls >= 2 && rolls * 4 >= raw.count
    }

    /// `00:01:02.500 --> 00:01:04.000 align:start`, SRT's commas, `mm:ss.ttt`, and the bare
    /// seconds (`0.860 --> 7.380`) some hosts write.
    static func timing(_ line: String) -> (Double, Double?)? {
        let parts = line.components(separatedBy: "-->")
        guard parts.count == 2, let start = time(parts[0]) else { return nil }
        let endWord = parts[1].trimming(.whitespaces).split(whereSeparator: \.isWhitespace).first.map(String.init)
        return (start, endWord.flatMap(time))
    }

    static func time(_ text: String) -> Double? {
        ChapterReader.normalPlayTime(text.trimming(.whitespaces).replacing(",", with: "."))
    }

    /// A cue line without its markup: the voice's name (`<v Name>`, `<v.loud Name>`), and the
    /// words with tags, inline timestamps and entities gone and spaces collapsed.
    static func clean(_ line: Substring) -> (speaker: String?, words: String) {
        // Most lines are words alone: no tag, no entity.
        if !line.utf8.contains(UInt8(ascii: "<")), !line.utf8.contains(UInt8(ascii: "&")) {
            return (nil, line.split(whereSeparator: \.isWhitespace).joined(separator: " "))
        }
        var speaker: String?
        var out = ""
        var index = line.startIndex
        while index < line.endIndex {
            if line[index] == "<", let close = line[index...].firstIndex(of: ">") {
                let tag = line[line.index(after: index)..<close]
                if tag.hasPrefix("v ") || tag.hasPrefix("v.") {
                    let name = tag.drop { $0 != " " }.trimming(.whitespaces)
                    if !name.isEmpty { speaker = name }
                }
                index = line.index(after: close)
                continue
            }
            out.append(line[index])
            index = line.index(after: index)
        }
        let decoded = out.utf8.contains(UInt8(ascii: "&")) ? HTMLText.decodeEntities(out) : out
        return (speaker, decoded.split(whereSeparator: \.isWhitespace).joined(separator: " "))
    }

    /// "Travis: When you…": a name of at most four words, each capitalized, then a colon. A word
    /// ends in a full stop only as a short title does ("Dr."): "Yeah. 6:45" is no name.
    static func speakerPrefix(_ text: String) -> (String, String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon]
        let words = name.split(separator: " ")
        guard (1...4).contains(words.count), name.count <= 40,
            words.allSatisfy({ $0.first?.isUppercase == true || $0.first?.isNumber == true }),
            !name.contains(where: { $0.isNumber && words.count == 1 && name.count <= 2 }),
            name.allSatisfy({ $0.isLetter || $0.isNumber || " '’-_.".contains($0) }),
            words.allSatisfy({ !$0.contains(".") || ($0.hasSuffix(".") && $0.count <= 4 && $0.dropLast().allSatisfy(\.isLetter)) }
            )
        else { return nil }
        let rest = text[text.index(after: colon)...].trimming(.whitespaces)
        guard !rest.isEmpty else { return nil }
        return (String(name), rest)
    }

    // MARK: Podcasting 2.0 JSON

    /// `segments` of `speaker`, `startTime`, `endTime`, `body`: word-level ones (as tools write
    /// them) are merged into lines, each ending at a sentence's end, a change of speaker, a
    /// pause of 2 s, or 40 words.
    public static func podcastJSON(_ data: Data) throws -> Transcript {
        guard let root = (try? JSONValue(parsing: data))?.plainValue as? [String: Any],
            let segments = root["segments"] as? [Any]
        else {
            throw ProviderError.invalidResponse("the transcript is not Podcasting 2.0 JSON (no \"segments\" list)")
        }
        var cues: [TranscriptCue] = []
        var unusable = 0
        var words = 0
        var lastEnd: Double?
        var tooMany = false
        for case let segment as [String: Any] in segments {
            guard let start = number(segment["startTime"]) else {
                unusable += 1
                continue
            }
            let body = ((segment["body"] as? String) ?? "").trimming(.whitespacesAndNewlines)
            let speaker = (segment["speaker"] as? String).flatMap { $0.isEmpty ? nil : $0 }
            let end = number(segment["endTime"])
            guard !body.isEmpty else { continue }
            let punctuationOnly = body.allSatisfy { $0.isPunctuation }
            if var last = cues.last,
                punctuationOnly
                    || (last.speaker == speaker && !endsSentence(last.text) && words < 40
                        && start - (lastEnd ?? last.start) < 2)
            {
                last.text += punctuationOnly ? body : " " + body
                last.end = end ?? last.end
                cues[cues.count - 1] = last
                words += punctuationOnly ? 0 : 1
            } else {
                if cues.count >= maxCues {
                    tooMany = true
                    break
                }
                cues.append(TranscriptCue(start: start, end: end, speaker: speaker, text: body))
                words = 1
            }
            lastEnd = end ?? start
        }
        unusable += segments.count - segments.filter { $0 is [String: Any] }.count
        var notes = unusable > 0 ? ["\(unusable) segment\(unusable == 1 ? "" : "s") without a usable start time"] : []
        if tooMany { notes.append(tooManyNote) }
        return Transcript(format: .json, cues: cues, notes: notes)
    }

    static func endsSentence(_ text: String) -> Bool { text.last.map { ".?!…".contains($0) } ?? false }

    static func number(_ value: Any?) -> Double? {
        switch value {
        case let text as String: return ChapterReader.normalPlayTime(text)
        case let double as Double:
            return double.isFinite && double >= 0 ? double : nil
        default: return nil
        }
    }

    // MARK: HTML

    /// `<cite>Speaker:</cite> <time>0:53</time> <p>…</p>`, the namespace's HTML form; a page
    /// saved from a browser around it, or blocks without a `<cite>`, too.
    public static func html(_ text: String) -> Transcript {
        var cues: [TranscriptCue] = []
        var speaker: String?
        var start = 0.0
        var timed = false
        var element = ""
        var buffer = ""
        var index = text.startIndex
        func flush() {
            let words = HTMLText.decodeEntities(buffer).split(whereSeparator: \.isWhitespace).joined(separator: " ")
            buffer = ""
            switch element {
            case "cite":
                let name = words.hasSuffix(":") ? String(words.dropLast()) : words
                speaker = name.isEmpty ? nil : name
            case "time":
                if let seconds = ChapterReader.normalPlayTime(words) {
                    start = seconds
                    timed = true
                }
            case "p":
                if !words.isEmpty { cues.append(TranscriptCue(start: start, speaker: speaker, text: words)) }
            default: break
            }
        }
        while index < text.endIndex {
            guard text[index] == "<", let close = text[index...].firstIndex(of: ">") else {
                if !element.isEmpty { buffer.append(text[index]) }
                index = text.index(after: index)
                continue
            }
            let tag = text[text.index(after: index)..<close].lowercased()
            let name = tag.drop { $0 == "/" }.prefix { $0.isLetter }
            if tag.hasPrefix("/") {
                if name == element {
                    flush()
                    element = ""
                }
            } else if ["cite", "time", "p"].contains(String(name)) {
                if !element.isEmpty { flush() }
                element = String(name)
            } else if name == "br" {
                buffer.append(" ")
            }
            index = text.index(after: close)
        }
        if !element.isEmpty { flush() }
        return Transcript(format: .html, cues: cues, timed: timed)
    }

    // MARK: Plain text

    /// A paragraph a line, without times.
    public static func plain(_ text: String) -> Transcript {
        let paragraphs = text.components(separatedBy: "\n\n").map {
            $0.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        }.filter { !$0.isEmpty }
        return Transcript(format: .text, cues: paragraphs.map { TranscriptCue(start: 0, text: $0) }, timed: false)
    }
}

/// A provider that has transcripts of its items (a feed's `<podcast:transcript>`).
public protocol TranscriptProvider: MediaProvider {
    /// `language` is the person's (an IETF tag like `en` or `de-DE`), nil for no preference;
    /// nil when the item has no transcript.
    func transcript(of id: ItemID, language: String?) async throws -> Transcript?
}
