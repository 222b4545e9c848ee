import Foundation
import Testing

@testable import MediaKit

/// Transcripts in every format, read from real files public projects keep (Recorded/transcripts,
/// SOURCES.md there says where each came from).
@Suite struct TranscriptTests {
    static let recorded = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Recorded/transcripts")

    static func read(_ name: String, type: String? = nil) throws -> Transcript {
        try TranscriptReader.read(
            try Data(contentsOf: recorded.appendingPathComponent(name)), type: type, url: "https://example.com/" + name)
    }

    @Test func webVTTWithVoicesAndEntities() throws {
        let transcript = try Self.read("pc20-transcript.vtt", type: "text/vtt")
        #expect(transcript.format == .vtt && transcript.timed)
        let first = try #require(transcript.cues.first)
        #expect(first.speaker == "Sarah" && first.start == 0 && first.end == 2.76)
        #expect(first.text == "In today's episode, you'll learn whether or not you")
        #expect(transcript.cues.contains { $0.text.contains("Podcasting Q&A") }, "&amp; decoded")
        #expect(transcript.cues.contains { $0.speaker == "Gillian" && $0.start == 19.08 })
    }

    @Test func srtWithASpeakerNamedOnceAndTwoLineCues() throws {
        let transcript = try Self.read("pc20-transcript.srt", type: "application/x-subrip")
        #expect(transcript.format == .srt)
        let first = try #require(transcript.cues.first)
        #expect(first.speaker == "Travis" && abs(first.start - 0.179) < 0.0001)
        #expect(first.text == "When you first get started in podcasting, it's")
        #expect(transcript.cues[1].speaker == "Travis", "named once, speaking on")
        let real = try Self.read("srt-real-podcasting20-ep124.srt")
        #expect(real.cues.count > 500 && real.cues.contains { $0.speaker == "Adam Curry" }, "\(real.cues.prefix(2))")
    }

    /// The namespace's JSON: word-level segments become lines; zero-length segments of a space
    /// or a comma join the words they follow.
    @Test func wordLevelJSONBecomesLines() throws {
        let example = try Self.read("pc20-transcript.json", type: "application/json")
        let first = try #require(example.cues.first)
        #expect(first.speaker == "Darth Vader" && first.start == 0.5 && first.text.hasPrefix("I am your"), "\(example.cues)")
        let real = try Self.read("pc20-transcript-real-podnews-words.json", type: "application/json")
        let line = try #require(real.cues.first)
        #expect(line.text.hasPrefix("It's Friday, the 2nd"), "\(line.text)")
        #expect(!real.cues.contains { $0.text.contains(" ,") || $0.text.contains("  ") })
        #expect(real.cues.allSatisfy { $0.text.split(separator: " ").count <= 41 })
        let noEnd = try Self.read("pc20-transcript-no-endtime.json", type: "application/json")
        #expect(!noEnd.cues.isEmpty && noEnd.cues.allSatisfy { $0.speaker != nil })
        let noSpeaker = try Self.read("pc20-transcript-no-speaker.json", type: "application/json")
        #expect(!noSpeaker.cues.isEmpty && noSpeaker.cues.allSatisfy { $0.speaker == nil })
        let duplicates = try Self.read("pc20-transcript-real-podnews-duplicate-times.json", type: "application/json")
        #expect(duplicates.cues.contains { $0.speaker == "Jingles" })
    }

    @Test func htmlWithCitesTimesAndASavedPage() throws {
        let example = try Self.read("pc20-transcript.html", type: "text/html")
        let first = try #require(example.cues.first)
        #expect(
            first.speaker == "Travis" && first.start == 0
                && first.text.hasPrefix("When you first get started in podcasting, it's"))
        #expect(example.cues.contains { $0.speaker == "Sarah" && $0.start == 53 })
        for name in [
            "html-transcript-real-buzzcast.html", "html-transcript-real-hhmmss-empty-p.html",
            "html-transcript-real-podnews-no-cite.html",
        ] {
            let real = try Self.read(name, type: "text/html")
            #expect(real.cues.count > 5 && real.timed, "\(name): \(real.cues.prefix(2))")
            #expect(real.cues.allSatisfy { !$0.text.isEmpty && !$0.text.contains("<") }, "\(name)")
        }
    }

    /// YouTube's automatic captions roll: each line is said once.
    @Test func rollingAutomaticCaptionsAreSaidOnce() throws {
        let vtt = try Self.read("vtt-youtube-autocaption-webvtt-py.vtt", type: "text/vtt")
        #expect(vtt.cues.map(\.text) == ["yeah", "what", "this will happen is I'm telling"], "\(vtt.cues)")
        let srt = try Self.read("srt-youtube-autocaption-converted.en.srt")
        let texts = srt.cues.map(\.text)
        #expect(texts.first == "okay welcome to this session this is", "\(texts.prefix(3))")
        #expect(zip(texts, texts.dropFirst()).allSatisfy { $0 != $1 }, "no line twice in a row")
        #expect(texts.count(where: { $0 == "okay welcome to this session this is" }) == 1)
        // Two more real automatic-caption files (videogrep's, lattifai's newer yt-dlp output).
        for name in ["videogrep_manifesto.vtt", "lattifai_DoesFastChargingHurttheBatteryRaw.vtt"] {
            let real = try Self.read(name, type: "text/vtt")
            let lines = real.cues.map(\.text)
            #expect(lines.count > 10 && real.notes.isEmpty, "\(name)")
            #expect(zip(lines, lines.dropFirst()).allSatisfy { $0 != $1 }, "\(name): no line twice in a row")
            #expect(lines.allSatisfy { !$0.contains("<") && !$0.isEmpty }, "\(name)")
            let words = lines.joined(separator: " ").split(separator: " ")
            #expect(Double(Set(words).count) / Double(words.count) > 0.2, "\(name): not the same words over and over")
        }
    }

    /// What real hosts write: bare-second timings, a BOM, a VTT served as .txt, Descript's
    /// speaker prefixes, Whisper's leading spaces, cue identifiers and settings.
    @Test(arguments: [
        "vtt-real-podnews-seconds-only.vtt", "vtt-real-podnews-weekly-3-speakers.vtt", "vtt-bom.vtt",
        "vtt-real-served-as-txt.txt",
        "vtt-real-descript-name-prefix.vtt", "vtt-real-kde-express-whisper.vtt", "vtt-cue-identifiers.vtt",
        "vtt-voice-classes-styles.vtt", "vtt-voice-no-hours.vtt", "vtt-cue-timestamps.vtt", "vtt-kind-language-headers.vtt",
        "srt-sample.srt",
    ])
    func realFilesReadWhole(name: String) throws {
        let transcript = try Self.read(name, type: name.hasSuffix(".txt") ? "text/plain" : nil)
        #expect(transcript.timed && !transcript.cues.isEmpty && transcript.notes.isEmpty, "\(name): \(transcript.notes)")
        #expect(
            transcript.cues.allSatisfy { !$0.text.contains("<") && !$0.text.hasPrefix(" ") && !$0.text.contains("-->") },
            "\(name)")
        #expect(zip(transcript.cues, transcript.cues.dropFirst()).allSatisfy { $0.start <= $1.start }, "\(name): in order")
        switch name {
        case "vtt-real-podnews-seconds-only.vtt":
            #expect(transcript.cues.first?.start == 0.86 && transcript.cues.first?.speaker == "SPEAKER_1")
        case "vtt-real-served-as-txt.txt":
            #expect(transcript.format == .vtt && transcript.cues.contains { $0.speaker == "Yishai Beeri" })
        case "vtt-real-descript-name-prefix.vtt":
            #expect(
                transcript.cues.first?.speaker == "Michael" && transcript.cues.first?.text.hasPrefix("Hello, and welcome") == true
            )
            #expect(transcript.cues[1].speaker == "Michael", "speaking on until the next is named")
        case "vtt-voice-classes-styles.vtt":
            #expect(transcript.cues.contains { $0.speaker == "Speaker3" }, "<v.loud Speaker3>")
        default: break
        }
    }

    /// Real subtitle files whose every cue a correct reader keeps, checked against what
    /// independent parsers (srt, pysrt, webvtt-py) read in them (Recorded/transcripts/expected.json):
    /// films numbered from 0 with lines said twice in a row, one-word cues, a blank line inside a
    /// cue, UTF-16 and Windows-1252, CRLF, a BOM and font tags.
    @Test func everyCueOfRealSubtitleFilesIsKept() throws {
        let expected =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: Self.recorded.appendingPathComponent("expected.json"))) as? [String: Any] ?? [:]
        try #require(expected.count > 10)
        for (name, value) in expected.sorted(by: { $0.key < $1.key }) where !name.hasPrefix("_") {
            let entry = try #require(value as? [String: Any])
            let transcript = try Self.read(name)
            let count = try #require(entry["cuesWithText"] as? Int)
            #expect(transcript.cues.count == count, "\(name): \(transcript.cues.count) cues of \(count)")
            #expect(!transcript.cues.contains { $0.text.contains("\u{FFFD}") }, "\(name): text decoded whole")
            for keep in entry["mustKeep"] as? [[String: Any]] ?? [] {
                let start = try #require(keep["start"] as? Double)
                let text = try #require(keep["text"] as? String)
                let found = transcript.cues.contains { abs($0.start - start) < 0.0015 && $0.text == text }
                let near = transcript.cues.filter { abs($0.start - start) < 0.0015 }.map(\.text)
                #expect(found, "\(name): \(start) \"\(text)\" is gone (there: \(near))")
            }
        }
    }

    /// Hard spaces (U+00A0), font tags, CRLF and a BOM, as some subtitle editors write them: a
    /// cue that says again what the one before said ("Yes." "<font>Yes.</font>") is a cue.
    @Test func hardSpacesFontTagsAndRepeatsKeepEveryCue() throws {
        let cues = [
            (55.0, "\u{00A0}Are\u{00A0}you sure?\u{00A0}"), (56.501, "<font color=\"#ffff00\">Yes.</font>"),
            (58.2, "Yes.\u{00A0}"), (60.0, "<i>i</i>"), (61.0, "i"),
        ]
        var text = "\u{FEFF}"
        for (number, (start, line)) in cues.enumerated() {
            func stamp(_ t: Double) -> String {
                let ms = Int((t * 1000).rounded())
                return String(format: "00:%02d:%02d,%03d", ms / 60_000, ms / 1000 % 60, ms % 1000)
            }
            text += "\(number + 1)\r\n\(stamp(start)) --> \(stamp(start + 1.2))\r\n\(line)\r\n\r\n"
        }
        let transcript = try TranscriptReader.read(Data(text.utf8), type: nil, url: "https://example.com/a.srt")
        #expect(transcript.cues.map(\.text) == ["Are you sure?", "Yes.", "Yes.", "i", "i"], "\(transcript.cues)")
        #expect(transcript.cues.map(\.start) == [55.0, 56.501, 58.2, 60.0, 61.0])
    }

    /// A credit or a word before a colon in a film ("Subtitles: @someone", "Yeah. 6:45.") is no
    /// speaker, and names nobody for the cues after it.
    @Test func aFilmsCreditIsNoSpeaker() throws {
        let film = try Self.read("srt-real-la-la-land-latin1-crlf.srt")
        #expect(film.cues.allSatisfy { $0.speaker == nil }, "\(film.cues.first { $0.speaker != nil }.map { "\($0)" } ?? "")")
        #expect(film.cues.contains { $0.text.contains("84°F") })
    }

    @Test func brokenInputIsAnErrorOrNothingNeverATrap() throws {
        #expect(throws: ProviderError.self) {
            try TranscriptReader.read(Data("{\"not\":1}".utf8), type: "application/json", url: nil)
        }
        let garbage = TranscriptReader.webVTT("WEBVTT\n\nxx:yy --> zz\nwords\n\n00:01.000 -->\nsaid\n")
        #expect(garbage.cues.map(\.text) == ["said"] && garbage.notes.count == 1, "\(garbage)")
        let whole = try String(contentsOf: Self.recorded.appendingPathComponent("pc20-transcript.vtt"), encoding: .utf8)
        for cut in stride(from: 0, to: whole.count, by: 17) { _ = TranscriptReader.webVTT(String(whole.prefix(cut))) }
        #expect(TranscriptReader.plain("One.\n\nTwo\nlines.").cues.map(\.text) == ["One.", "Two lines."])
    }
}
