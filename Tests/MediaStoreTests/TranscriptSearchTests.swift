import Foundation
import MediaKit
import Testing

@testable import MediaStore

/// Full-text search over kept transcripts (FTS5): a few hundred generated ones and real ones.
@Suite struct TranscriptSearchTests {
    static func store() throws -> MediaStore {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("transcripts-\(UUID().uuidString)").path
        return try MediaStore(path: directory + "/db.sqlite")
    }

    static let recorded = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("MediaKitTests/Recorded/transcripts")

    /// 300 generated episodes of 200 lines each, every word from a small vocabulary, and one
    /// line in one episode that says something no other does.
    @Test func findsTheOnePassageAmongThreeHundredTranscripts() async throws {
        let store = try Self.store()
        let vocabulary = ["podcast", "episode", "guest", "music", "weather", "coffee", "city", "river", "story", "night"]
        var generator = SplitMixForTests(seed: 42)
        for show in 0..<300 {
            var cues: [TranscriptCue] = []
            for line in 0..<200 {
                let words = (0..<8).map { _ in vocabulary[Int(generator.next() % UInt64(vocabulary.count))] }
                cues.append(
                    TranscriptCue(
                        start: Double(line) * 4, speaker: line % 2 == 0 ? "Host" : "Guest", text: words.joined(separator: " ")))
            }
            if show == 123 {
                cues[150].text = "we finally talked about the Café Müller in Wuppertal"
            }
            try await store.keepTranscript(
                try ItemID(parsing: "podcasts:episode:1:\(show)"), title: "Episode \(show)", show: "Show", format: "vtt",
                cues: cues)
        }
        #expect(try await store.transcriptCount() == 300)
        let hits = try await store.searchTranscripts("cafe muller wuppertal")
        #expect(hits.count == 1, "accents are matched without: \(hits)")
        let hit = try #require(hits.first)
        #expect(hit.id.description == "podcasts:episode:1:123" && hit.title == "Episode 123")
        #expect(abs(hit.start - 600) <= 20, "where it was said: \(hit.start)")
        #expect(hit.text.contains("[Wuppertal]"), "\(hit.text)")
        // A phrase, a prefix, and all words must match.
        #expect(try await store.searchTranscripts("\"talked about the\"").map(\.id.description) == ["podcasts:episode:1:123"])
        #expect(try await store.searchTranscripts("Wupper*").count == 1)
        #expect(try await store.searchTranscripts("wuppertal zebra").isEmpty)
        // Common words are everywhere: ranked, bounded.
        #expect(try await store.searchTranscripts("coffee river", limit: 7).count == 7)
    }

    /// What people type is words, never FTS5 syntax: operators, quotes, parentheses and
    /// columns are searched as words or dropped, never an error.
    @Test(arguments: [
        "AND", "OR NOT", "NEAR(a b)", "text:foo", "c++", "\"", "\"unclosed phrase", "a\"b", "*", "^start", "(((", "-minus",
        "a\u{0}b", "\"x\u{0}y\"", "\u{0}",
    ])
    func typedSyntaxIsNeverAnError(text: String) async throws {
        let store = try Self.store()
        try await store.keepTranscript(
            try ItemID(parsing: "podcasts:episode:1:x"), title: "X", show: nil, format: "vtt",
            cues: [TranscriptCue(start: 0, text: "and or not near text foo c start minus unclosed phrase a b")])
        _ = try await store.searchTranscripts(text)
    }

    @Test func keepingAgainReplacesAndTheOldestGoFirst() async throws {
        let store = try Self.store()
        let id = try ItemID(parsing: "podcasts:episode:1:a")
        try await store.keepTranscript(
            id, title: "A", show: nil, format: "vtt", cues: [TranscriptCue(start: 0, text: "first words")])
        try await store.keepTranscript(
            id, title: "A", show: nil, format: "vtt", cues: [TranscriptCue(start: 0, text: "second words")])
        #expect(try await store.searchTranscripts("first").isEmpty)
        #expect(try await store.searchTranscripts("second").count == 1)
        for n in 0..<5 {
            try await store.keepTranscript(
                try ItemID(parsing: "podcasts:episode:1:b\(n)"), title: "B\(n)", show: nil, format: "vtt",
                cues: [TranscriptCue(start: 0, text: "bounded \(n)")], limit: 3,
                at: Date(timeIntervalSince1970: Double(1_000 + n)))
        }
        // A (fetched now) and the two latest of the five are kept.
        #expect(try await store.transcriptCount() == 3)
        #expect(try await store.searchTranscripts("bounded").map(\.title).sorted() == ["B3", "B4"])
        #expect(try await store.transcript(try ItemID(parsing: "podcasts:episode:1:b0")) == nil)
        #expect(try await store.transcript(try ItemID(parsing: "podcasts:episode:1:b4"))?.cues.first?.text == "bounded 4")
    }

    /// Real transcripts, read and kept: their own words are found where they were said.
    @Test func realTranscriptsAreFoundWhereTheWordsWereSaid() async throws {
        let store = try Self.store()
        let files = [
            "srt-real-podcasting20-ep124.srt", "vtt-real-podnews-weekly-3-speakers.vtt",
            "pc20-transcript-real-podnews-words.json",
        ]
        for (index, file) in files.enumerated() {
            let data = try Data(contentsOf: Self.recorded.appendingPathComponent(file))
            let transcript = try TranscriptReader.read(data, type: nil, url: file)
            try await store.keepTranscript(
                try ItemID(parsing: "podcasts:episode:9:\(index)"), title: file, show: nil, format: transcript.format.rawValue,
                cues: transcript.cues)
            // A line from the middle, searched by three of its words, is found at its time.
            let cue = transcript.cues[transcript.cues.count / 2]
            let words = cue.text.split(separator: " ").map(String.init).filter { word in
                word.count > 3 && word.allSatisfy { $0.isLetter }
            }.prefix(3)
            guard words.count == 3 else {
                Issue.record("\(file): no three words in \(cue.text)")
                continue
            }
            let hits = try await store.searchTranscripts(words.joined(separator: " "), limit: 50)
            let mine = hits.filter { $0.id.description == "podcasts:episode:9:\(index)" }
            #expect(mine.contains { abs($0.start - cue.start) <= 25 }, "\(file): \(words) at \(cue.start): \(mine.map(\.start))")
        }
    }
}

/// Deterministic words (a test must not depend on the process's random seed).
struct SplitMixForTests {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
