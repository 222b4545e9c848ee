import Foundation
import MediaKit
import TestSupport
import Testing

@testable import MediaHost

/// SponsorBlock's answers, read: a recorded one (CastSponsorSkip's test data, Recorded/sponsorblock,
/// SOURCES.md there) and the shapes its API describes.
@Suite struct SponsorBlockTests {
    static let recorded = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Recorded/sponsorblock")

    @Test func aRecordedHashPrefixAnswerGivesTheVideosSegments() throws {
        let body = try Data(contentsOf: Self.recorded.appendingPathComponent("castsponsorskip_hashprefix_fy9jO8JHaPo.json"))
        let id = try ItemID(parsing: "youtube:video:fy9jO8JHaPo")
        let read = try MediaSegments.read(body, id: id, skip: ["sponsor"], mute: [])
        #expect(read.segments.count == 3 && read.segments.allSatisfy { $0.category == "sponsor" && $0.action == "skip" })
        #expect(read.segments.first?.start == 53.433 && read.segments.first?.end == 57.705)
        #expect(read.segments.map(\.start) == read.segments.map(\.start).sorted())
        // Another video of the same prefix is not this one's; marked when the category is not skipped.
        #expect(
            try MediaSegments.read(body, id: try ItemID(parsing: "youtube:video:other"), skip: ["sponsor"], mute: []).segments
                .isEmpty)
        #expect(try MediaSegments.read(body, id: id, skip: [], mute: []).segments.allSatisfy { $0.action == "mark" })
        #expect(try MediaSegments.read(body, id: id, skip: [], mute: ["sponsor"]).segments.allSatisfy { $0.action == "mute" })
    }

    /// The API's other action types: a highlight (a point), a whole-video label, a mute segment;
    /// a broken segment costs only itself; a body that is not a list is an error.
    @Test func highlightsFullLabelsAndBrokenSegments() throws {
        let body = Data(
            """
            [{"videoID":"abc","hash":"4f2e","segments":[
              {"category":"poi_highlight","actionType":"poi","segment":[30.5,30.5],"UUID":"1"},
              {"category":"exclusive_access","actionType":"full","segment":[0,0],"UUID":"2"},
              {"category":"music_offtopic","actionType":"skip","segment":[0,12],"UUID":"3"},
              {"category":"sponsor","actionType":"mute","segment":[40,50],"UUID":"4"},
              {"category":"sponsor","actionType":"skip","segment":[60],"UUID":"5"},
              {"category":"sponsor","actionType":"skip","segment":[90,80],"UUID":"6"},
              {"category":"filler","actionType":"skip","segment":["a","b"],"UUID":"7"},
              {"category":"sponsor","actionType":"skip","segment":[100,1e300],"UUID":"8"},
              {"category":"sponsor","actionType":"skip","segment":[700,720],"videoDuration":300,"UUID":"9"}
            ]}]
            """.utf8)
        let read = try MediaSegments.read(body, id: try ItemID(parsing: "youtube:video:abc"), skip: ["sponsor"], mute: [])
        #expect(read.full == "exclusive_access")
        #expect(read.segments.map(\.action) == ["mark", "highlight", "mute"], "\(read.segments)")
        #expect(MediaChapters.chapter(read.segments[1]) == Chapter(start: 30.5, title: "Highlight"))
        #expect(
            MediaChapters.chapter(read.segments[2]).title == "Sponsor (muted)" && !MediaChapters.chapter(read.segments[2]).toc)
        #expect(throws: (any Error).self) {
            try MediaSegments.read(
                Data("{\"message\":\"rate limited\"}".utf8), id: try ItemID(parsing: "youtube:video:abc"), skip: [], mute: [])
        }
    }

    /// sponsorblock.server is a setting anyone may type: anything but an http(s) URL is refused
    /// naming the setting, before any request; off answers nothing without asking.
    @Test(arguments: ["file:///etc/passwd", "ftp://example.com", "not a url", "javascript:alert(1)"])
    func aServerThatIsNoWebAddressIsRefused(server: String) async throws {
        let fixture = try HostFixture(environment: ["MEDIAHOST_SPONSORBLOCK_SERVER": server])
        // `broken` has the segments capability (as YouTube has): the runtime asks capabilities,
        // not provider names.
        let error = try #require(await fixture.error("media.segments", ["id": "broken:video:abc"]))
        #expect(error.code == -32602 && error.message.contains("sponsorblock.server"), "\(error.message)")
    }

    @Test func offAsksNothingAndOtherProvidersHaveNone() async throws {
        let off = try HostFixture(environment: ["MEDIAHOST_SPONSORBLOCK": "off"])
        let answer = try await off.call("media.segments", ["id": "broken:video:abc"])
        #expect(answer["segments"]?.arrayValue?.isEmpty == true)
        let fixture = try HostFixture()
        let error = try #require(await fixture.error("media.segments", ["id": "catalog:video:v3"]))
        #expect(error.message.contains("segments are SponsorBlock's, for videos of broken"), "\(error.message)")
    }

    /// The transcript language: the setting, else the locale's (LC_ALL, LC_MESSAGES, LANG),
    /// never C or POSIX.
    @Test func theTranscriptLanguageComesFromTheSettingElseTheLocale() {
        #expect(MediaTranscript.language(setting: " de-AT ", environment: ["LANG": "en_US.UTF-8"]) == "de-AT")
        #expect(MediaTranscript.language(setting: "", environment: ["LANG": "en_US.UTF-8"]) == "en-US")
        #expect(MediaTranscript.language(setting: "", environment: ["LC_ALL": "de_DE.UTF-8@euro", "LANG": "en_US"]) == "de-DE")
        #expect(MediaTranscript.language(setting: "", environment: ["LANG": "C.UTF-8"]) == nil)
        #expect(MediaTranscript.language(setting: "", environment: ["LANG": "POSIX"]) == nil)
        #expect(MediaTranscript.language(setting: "", environment: [:]) == nil)
        #expect(LanguageTag.primary("EN_gb") == "en" && LanguageTag.primary("") == nil && LanguageTag.primary(nil) == nil)
    }
}
