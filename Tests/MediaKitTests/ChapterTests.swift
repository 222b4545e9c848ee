import Foundation
import Testing

@testable import MediaKit

/// Chapters from every source, read from real files public projects keep (Recorded/chapters,
/// SOURCES.md there says where each came from), and the messy cases made from them.
@Suite struct ChapterTests {
    static let recorded = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Recorded/chapters")

    static func data(_ name: String) throws -> Data { try Data(contentsOf: recorded.appendingPathComponent(name)) }

    @Test func podcastingTwoPointOhChaptersWithImagesLinksAndHiddenOnes() throws {
        let list = try ChapterReader.podcastJSON(try Self.data("pc20-chapters-complex.json")).normalized(duration: nil)
        #expect(list.source == .podcastChapters && list.notes.isEmpty)
        #expect(list.chapters.count == 11)
        #expect(list.chapters.map(\.start).prefix(4) == [0, 168, 260, 410])
        #expect(list.chapters[3].url == "https://github.com/Podcastindex-org/podcast-namespace")
        let hidden = try #require(list.chapters.first { !$0.toc })
        #expect(hidden.start == 4826 && hidden.title == "Marker at 1:20:26", "a toc:false chapter without a title")
        let example = try ChapterReader.podcastJSON(try Self.data("pc20-chapters-example.json"))
        #expect(example.chapters[1].image == "https://example.com/images/hearing_aids.jpg")
    }

    /// The spec's own example was invalid JSON for a year (a trailing comma, and a missing comma
    /// after it): a trailing comma is forgiven, as browsers' lenient readers do; a file that is
    /// not JSON otherwise is an error that says so. The 2020 draft said `marker` for the start.
    @Test func theSpecsInvalidExampleAndTheDraftsMarkersAreRead() throws {
        #expect {
            try ChapterReader.podcastJSON(try Self.data("pc20-chapters-complex-2023-invalid-json.json"))
        } throws: { "\($0)".contains("not JSON") }
        let valid = try String(decoding: Self.data("pc20-chapters-example.json"), as: UTF8.self)
        let trailing = valid.replacingOccurrences(of: "\"title\": \"Intro\"", with: "\"title\": \"Intro\",")
        #expect(trailing != valid)
        #expect(try ChapterReader.podcastJSON(Data(trailing.utf8)).chapters.first?.title == "Intro")
        let draft = try ChapterReader.podcastJSON(try Self.data("pc20-chapters-draft-2020-marker.json"))
        #expect(draft.chapters.count == 3 && draft.chapters[1].title == "Donation Segment" && draft.chapters[1].start == 94)
        #expect(throws: ProviderError.self) { try ChapterReader.podcastJSON(Data("<html>not found</html>".utf8)) }
    }

    /// A real episode: 57 chapters, 23 of them picture changes (toc:false), millisecond starts.
    @Test func aRealEpisodesChaptersKeepTheirHiddenOnesApart() throws {
        let list = try ChapterReader.podcastJSON(try Self.data("pc20-chapters-real-outrun.json")).normalized(duration: nil)
        #expect(list.chapters.count == 57 && list.chapters.filter { !$0.toc }.count == 23, "\(list.notes)")
        #expect(list.chapters[1].start == 41.97 && list.chapters[1].title == "Velkommen til cd SPILL")
        for name in ["pc20-chapters-real-rainbowsix.json", "pc20-chapters-real-tiltcast3.json"] {
            let other = try ChapterReader.podcastJSON(try Self.data(name)).normalized(duration: nil)
            #expect(other.chapters.count > 20 && other.notes.isEmpty, "\(name): \(other.notes)")
        }
    }

    /// Unsorted, duplicated, ending before they start, past the media's end, no start at all.
    @Test func messyChaptersAreMadeUsableAndWhatWasDroppedIsSaid() throws {
        let json = """
            {"version":"1.2.0","chapters":[
              {"startTime":300,"title":"Three","endTime":900},
              {"startTime":0,"title":"One"},
              {"startTime":120,"title":"Two","endTime":60},
              {"startTime":120,"title":"Two again"},
              {"title":"No start"},
              {"startTime":"5:00:00","title":"Past the end"},
              {"startTime":-3,"title":"Negative"}
            ]}
            """
        let list = try ChapterReader.podcastJSON(Data(json.utf8)).normalized(duration: 600)
        #expect(list.chapters.map(\.title) == ["One", "Two", "Three"])
        #expect(list.chapters[1].end == nil, "an end before the start is dropped")
        #expect(list.chapters[2].end == 600, "an end past the media is cut at its end")
        let notes = list.notes.joined(separator: "; ")
        for said in ["without a usable start time", "out of order", "after the end of the media (10:00)", "same time"] {
            #expect(notes.contains(said), "\(said) in \(notes)")
        }
    }

    /// Podlove Simple Chapters' Normal Play Time, as podcastparser's test feed writes it.
    @Test(arguments: [
        ("0", 0.0), ("01", 1), ("01:02", 62), ("01:02:03", 3723), ("01:02:03.400", 3723.4), ("35:12.250", 2112.25),
        ("7:48", 468), ("37", 37),
    ])
    func normalPlayTime(text: String, seconds: Double) {
        #expect(ChapterReader.normalPlayTime(text).map { abs($0 - seconds) < 0.0001 } == true)
    }

    @Test func notTimesAreNotTimes() {
        for text in ["", "1:2:3:4", "a:00", "1:-2", "1.5:00", ":30", "12:", "１２"] {
            #expect(ChapterReader.normalPlayTime(text) == nil, "\(text)")
        }
    }

    @Test func chaptersInADescription() throws {
        let text = """
            In this video we build a thing.

            00:00 Intro
            • 1:30 - Setting up
            (12:05) The build
            1:02:03 | Q&A
            Links: https://example.com 10:00 is not a chapter
            """
        let list = try #require(ChapterReader.description(text))
        #expect(list.chapters.map(\.title) == ["Intro", "Setting up", "The build", "Q&A"])
        #expect(list.chapters.map(\.start) == [0, 90, 725, 3723])
        #expect(ChapterReader.description("Recorded 10:00 to 12:00.\n12:30 lunch") == nil, "two times are not chapters")
        #expect(ChapterReader.description("1:00 a\n2:00 b\n3:00 c") == nil, "chapters start at 0:00")
    }

    /// ID3v2 CHAP frames as five tools write them: Auphonic, Hindenburg, mp3chaps.py,
    /// music-metadata's sample (CHAP before CTOC, UTF-16 titles) and SwiftTaggerID3's (2.4, out
    /// of order).
    @Test func id3ChaptersFromFiveWriters() throws {
        func read(_ name: String) throws -> ChapterList {
            try #require(try ID3Chapters.read(path: Self.recorded.appendingPathComponent(name).path), "\(name)")
        }
        let auphonic = try read("id3-chap-auphonic.mp3")
        #expect(auphonic.chapters.map(\.start) == [0, 3, 6, 9], "\(auphonic)")
        #expect(auphonic.chapters.allSatisfy { !$0.title.isEmpty }, "\(auphonic.chapters.map(\.title))")
        #expect(auphonic.chapters.contains { $0.url == "https://example.com" }, "\(auphonic.chapters.map(\.url))")
        #expect(
            auphonic.chapters.contains { $0.title.contains("爱") || $0.title.contains("ß") }, "\(auphonic.chapters.map(\.title))")
        let hindenburg = try read("id3-chap-hindenburg.mp3")
        #expect(hindenburg.chapters.map(\.start) == [0, 5.006] && hindenburg.chapters[0].title == "Chapter Marker 1")
        let mp3chaps = try read("id3-chap-mp3chaps-py.mp3")
        #expect(mp3chaps.chapters.map(\.title) == ["Start", "Chapter 1", "Chapter 2", "Chapter 3"])
        #expect(mp3chaps.chapters.map(\.start) == [0, 7, 9, 11])
        let musicMetadata = try read("id3-chap-music-metadata.mp3")
        #expect(musicMetadata.chapters.count == 3 && musicMetadata.chapters[0].title == "Introduction", "\(musicMetadata)")
        #expect(musicMetadata.chapters[0].end == 1)
        let swiftTagger = try read("id3-chap-swifttagger.mp3").normalized(duration: nil)
        #expect(swiftTagger.chapters.map(\.title) == ["Chapter 01", "Chapter 02"], "\(swiftTagger)")
        #expect(swiftTagger.chapters.map(\.start) == [0, 2.795])
    }

    /// Cut, truncated or random bytes never trap and never read past the tag.
    @Test func brokenTagsAreNoChapters() throws {
        let whole = try [UInt8](Self.data("id3-chap-mp3chaps-py.mp3"))
        var generator = SystemRandomNumberGenerator()
        for cut in stride(from: 10, to: min(whole.count, 2000), by: 37) {
            let body = Array(whole[10..<cut])
            _ = ID3Chapters.parse(header: Array(whole[0..<10]), body: body)
        }
        for _ in 0..<200 {
            var mutated = whole.prefix(1500).map { $0 }
            for _ in 0..<20 {
                mutated[Int.random(in: 10..<mutated.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            _ = ID3Chapters.parse(header: Array(mutated[0..<10]), body: Array(mutated[10...]))
        }
        let notAnMP3 = FileManager.default.temporaryDirectory.appendingPathComponent("not-id3-\(getpid()).mp3")
        try Data("<html>".utf8).write(to: notAnMP3)
        defer { try? FileManager.default.removeItem(at: notAnMP3) }
        #expect(try ID3Chapters.read(path: notAnMP3.path) == nil)
    }

    /// What a hostile file holds: chapters at 1e15 and 1e300 s are no times of any media, and a
    /// tag of 100,000 CHAP frames is read and made usable quickly, its first 5,000 kept.
    @Test func absurdTimesAndHugeTablesCostLittle() throws {
        let far = ChapterList(
            source: .podcastChapters,
            chapters: [
                Chapter(start: 0, title: "Start"), Chapter(start: 1e15, title: ""), Chapter(start: 1e300, title: ""),
                Chapter(start: 60, end: 1e300, title: "Minute"),
            ]
        ).normalized(duration: nil)
        #expect(far.chapters.map(\.title) == ["Start", "Minute"], "\(far.chapters)")
        #expect(far.notes.contains("2 chapters starting more than 30 days in"), "\(far.notes)")
        #expect(ChapterList.clock(1e300) == ChapterList.clock(1e12) && ChapterList.clock(-.infinity) == "0:00")

        // 100,000 CHAP frames in an ID3v2.3 tag, built here.
        func be(_ value: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) } }
        var body: [UInt8] = []
        for index in 0..<100_000 {
            let title: [UInt8] = Array("TIT2".utf8) + be(6) + [0, 0] + [0] + Array("c\(index % 10)ab".utf8)
            let chap: [UInt8] =
                Array("ch\(index)".utf8) + [0] + be(index * 1000) + be(index * 1000 + 999) + be(-1) + be(-1) + title
            body += Array("CHAP".utf8) + be(chap.count) + [0, 0] + chap
        }
        let header: [UInt8] = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, 0]
        let started = ContinuousClock.now
        let read = try #require(ID3Chapters.parse(header: header, body: body))
        #expect(read.chapters.count == 100_000)
        let normalized = read.normalized(duration: nil)
        #expect(ContinuousClock.now - started < .seconds(10), "\(ContinuousClock.now - started)")
        #expect(normalized.chapters.count == ChapterList.mostChapters)
        #expect(normalized.notes.contains { $0.contains("after the first 5000") }, "\(normalized.notes)")
    }

    @Test func theServicesChaptersFromYTDLP() {
        let list = ChapterReader.service([
            ["start_time": 0.0, "end_time": 65.0, "title": "Intro"], ["start_time": 65.0, "end_time": 300.0, "title": "Main"],
            ["title": "broken"],
        ])
        #expect(list.chapters.map(\.title) == ["Intro", "Main"] && list.chapters[0].end == 65)
        #expect(list.notes == ["1 chapter without a usable start time"])
    }
}
