import Foundation
import MediaKit
import Synchronization
import TestSupport
import Testing

@testable import YouTube

/// Answers every yt-dlp call with recorded output and remembers the calls (a test double).
final class RecordedPrograms: ProgramRunner {
    let answer: @Sendable (ProgramCall) throws -> ProgramOutput
    let calls = Mutex<[ProgramCall]>([])

    init(_ answer: @escaping @Sendable (ProgramCall) throws -> ProgramOutput) { self.answer = answer }

    convenience init(stdout: Data, status: Int32 = 0, stderr: String = "") {
        self.init { _ in ProgramOutput(status: status, stdout: Array(stdout), stderr: Array(stderr.utf8)) }
    }

    func run(_ call: ProgramCall) async throws -> ProgramOutput {
        calls.withLock { $0.append(call) }
        return try answer(call)
    }

    var last: [String] { calls.withLock { $0.last?.arguments ?? [] } }
}

/// The key-less backend on yt-dlp's real output (Recorded/ytdlp, see SOURCES.md).
@Suite struct YTDLPTests {
    static let corpus = Recorded()

    static func provider(_ programs: RecordedPrograms, settings: [String: String] = [:]) throws -> YouTubeProvider {
        try YouTubeProvider(
            context: ProviderContext(
                config: ProviderConfig(settings), http: NoNetwork(), logger: Logger(label: "test"), programs: programs))
    }

    @Test func withoutAKeyReadingGoesThroughYTDLPWithTheSameIDs() async throws {
        let programs = RecordedPrograms(stdout: try Self.corpus.data("ytdlp/video-VcG1DZ4IlPg.json"))
        let provider = try Self.provider(programs)
        let item = try await provider.item(ItemID(provider: "youtube", kind: .video, nativeID: "VcG1DZ4IlPg"))
        #expect(item.id.description == "youtube:video:VcG1DZ4IlPg")
        #expect(item.title == "Cold Burn")
        #expect(item.creator == "Cult of Luna")
        #expect(item.duration == 581)
        #expect(item.stats?["views"] == 131303)
        #expect(item.published?.hasPrefix("2022-02-") == true)
        #expect(item.url == "https://www.youtube.com/watch?v=VcG1DZ4IlPg")
        #expect(item.artwork?.hasPrefix("https://i.ytimg.com/") == true)
        #expect(item.extra?["channel"]?.hasPrefix("youtube:channel:UC") == true)
        let call = try #require(programs.calls.withLock { $0.first })
        #expect(call.program == "yt-dlp")
        #expect(call.arguments.contains("-J") && call.arguments.contains("--no-playlist"))
        // The target comes after "--": nothing from an id or a query is read as an option.
        #expect(call.arguments.suffix(2) == ["--", "https://www.youtube.com/watch?v=VcG1DZ4IlPg"])
    }

    /// Counts of 0 and 1 are counts; true and false are no counts (read as yt-dlp's output is).
    @Test func zeroAndOneAreCountsAndBooleansAreNot() throws {
        let info = try #require(
            try JSONValue(parsing: #"{"id":"abc","view_count":0,"like_count":1,"duration":1,"comment_count":true}"#)
                .plainValue as? [String: Any])
        let item = YTDLP.video(from: info, id: "abc")
        #expect(item.stats == ["views": 0, "likes": 1])
        #expect(item.duration == 1)
    }

    @Test func aChannelsVideosArePagedFlat() async throws {
        let programs = RecordedPrograms(stdout: try Self.corpus.data("ytdlp/channel-UCbdVsLFphtk2UWuJC-gcXoQ.json"))
        let provider = try Self.provider(programs)
        let page = try await provider.children(
            of: ItemID(provider: "youtube", kind: .channel, nativeID: "UCbdVsLFphtk2UWuJC-gcXoQ"), cursor: nil)
        #expect(page.items.map(\.id.description) == ["youtube:video:CSxJQeWFDek", "youtube:video:ttpdmcwNsK8"])
        #expect(page.items.first?.title == "Sandro Rojas - SOLA (feat Brown) Video Oficial 4K")
        #expect(page.items.first?.duration == 166)
        #expect(page.total == 2)
        #expect(page.next == nil)
        let arguments = programs.last
        #expect(arguments.contains("--flat-playlist"))
        let items = try #require(arguments.firstIndex(of: "--playlist-items"))
        #expect(arguments[items + 1] == "1:20")
        #expect(arguments.last == "https://www.youtube.com/channel/UCbdVsLFphtk2UWuJC-gcXoQ/videos")
    }

    /// yt-dlp's real error lines, as people reported them (Recorded/ytdlp-errors.txt, each with
    /// its thread), say what happened and what to do; none speaks of an HTTP status.
    @Test func realErrorLinesSayWhatToDo() throws {
        let text = String(decoding: try Self.corpus.data("ytdlp-errors.txt"), as: UTF8.self)
        var section = ""
        var checked = 0
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("## ") {
                section = String(line.dropFirst(3))
                continue
            }
            guard !line.hasPrefix("#"), !line.hasPrefix("source: "), !line.isEmpty else { continue }
            let error = YTDLP.providerError(stderr: line, status: 1, id: ItemID(provider: "youtube", kind: .video, nativeID: "x"))
            let message = error.message
            #expect(!message.contains("HTTP"), "\(section): \(message)")
            let expected: (kind: String, words: String)? =
                switch section {
                case let s where s.hasPrefix("not a bot"): ("unauthorized", "cookies_from_browser")
                case "members-only": ("unauthorized", "members only")
                case "live event not begun": ("notFound", "live event that has not begun: it begins in")
                case let s where s.hasPrefix("premieres"): ("notFound", "premieres in")
                case "age-restricted": ("unauthorized", "cookies_from_browser")
                case "private video": ("notFound", "private")
                case "video unavailable": ("notFound", "not on YouTube")
                case let s where s.hasPrefix("not available in your country"): ("notFound", "country")
                case "requested format not available", "no video formats found": ("upstream", "JavaScript runtime")
                default: nil
                }
            if let expected, !line.hasPrefix("[debug]") {
                #expect(error.kind == expected.kind, "\(section): \(line) -> \(error)")
                #expect(message.contains(expected.words), "\(section): \(line) -> \(message)")
                checked += 1
            }
        }
        #expect(checked >= 25, "\(checked) lines checked")
    }

    /// A listing of 100,000 entries for a page of 20 (a yt-dlp that ignores --playlist-items, or
    /// something standing in for it) is a page of 20, whose next page starts after it.
    @Test func aPageIsAPageWhateverYTDLPLists() async throws {
        let entries = (0..<100_000).map { #"{"id":"v\#($0)","title":"t\#($0)","ie_key":"Youtube"}"# }
        let listing = #"{"_type":"playlist","playlist_count":100000,"entries":["# + entries.joined(separator: ",") + "]}"
        let provider = try Self.provider(RecordedPrograms(stdout: Data(listing.utf8)))
        let page = try await provider.children(of: ItemID(provider: "youtube", kind: .channel, nativeID: "UCx"), cursor: nil)
        #expect(page.items.count == 20)
        #expect(page.items.first?.id.nativeID == "v0" && page.items.last?.id.nativeID == "v19")
        #expect(page.next?.rawValue == "21")
    }

    /// An empty page whose count says there is more (hidden and unavailable videos count there)
    /// ends the listing: its next would lead back to the page it came from.
    @Test func anEmptyPageHasNoNextWhateverTheCount() async throws {
        let listing = #"{"_type":"playlist","playlist_count":57,"entries":[]}"#
        let provider = try Self.provider(RecordedPrograms(stdout: Data(listing.utf8)))
        let id = ItemID(provider: "youtube", kind: .channel, nativeID: "UCx")
        let page = try await provider.children(of: id, cursor: Cursor("21"))
        #expect(page.items.isEmpty)
        #expect(page.next == nil)
        #expect(page.prev?.rawValue == "1")
    }

    @Test func aPlaylistIsItsEntriesAndItsOwnDetails() async throws {
        let programs = RecordedPrograms(stdout: try Self.corpus.data("ytdlp/playlist-PL1hlX04-g75DGniSXtYRSlMBaroamq96d.json"))
        let provider = try Self.provider(programs)
        let id = ItemID(provider: "youtube", kind: .playlist, nativeID: "PL1hlX04-g75DGniSXtYRSlMBaroamq96d")
        let page = try await provider.children(of: id, cursor: nil)
        #expect(page.items.map(\.id.nativeID) == ["2AOz2Zfr6LU", "_YuVTacI2FA"])
        let playlist = try await provider.item(id)
        #expect(playlist.title == "Richard Benson a Quelli della Notte (1985)")
        #expect(playlist.kind == .playlist)
        #expect(playlist.url == "https://www.youtube.com/playlist?list=PL1hlX04-g75DGniSXtYRSlMBaroamq96d")
    }

    @Test func searchPagesAskForTheirSliceAndKindsTheirFilter() async throws {
        let programs = RecordedPrograms(stdout: try Self.corpus.data("ytdlp/channel-UCbdVsLFphtk2UWuJC-gcXoQ.json"))
        let provider = try Self.provider(programs)
        _ = try await provider.search(SearchQuery(text: "-rf cats & dogs", cursor: Cursor("41")))
        var arguments = programs.last
        #expect(arguments.suffix(2) == ["--", "ytsearch60:-rf cats & dogs"])
        #expect(arguments[try #require(arguments.firstIndex(of: "--playlist-items")) + 1] == "41:60")
        _ = try await provider.search(SearchQuery(text: "cats & dogs", kind: .channel))
        arguments = programs.last
        #expect(arguments.last == "https://www.youtube.com/results?search_query=cats%20%26%20dogs&sp=EgIQAg%3D%3D")
        await #expect(throws: ProviderError.self) { try await provider.search(SearchQuery(text: "x", kind: .episode)) }
    }

    @Test func chartsNeedTheAPIAndSaySo() async throws {
        let provider = try Self.provider(RecordedPrograms(stdout: Data()))
        let error = await #expect(throws: ProviderError.self) { try await provider.categories() }
        #expect("\(String(describing: error))".contains("YOUTUBE_API_KEY"))
    }

    @Test func aKeyKeepsTheAPIAndBackendChoosesOtherwise() throws {
        #expect(try Self.provider(RecordedPrograms(stdout: Data()), settings: ["api_key": "k"]).keyless == false)
        #expect(
            try Self.provider(RecordedPrograms(stdout: Data()), settings: ["api_key": "k", "backend": "ytdlp"]).keyless
                == true)
        #expect(throws: ProviderError.self) { try Self.provider(RecordedPrograms(stdout: Data()), settings: ["backend": "api"]) }
        #expect(throws: ProviderError.self) { try Self.provider(RecordedPrograms(stdout: Data()), settings: ["backend": "x"]) }
    }

    @Test func aDownloadIsTheChosenFormatsFileWithItsHeaders() async throws {
        let programs = RecordedPrograms(stdout: try Self.corpus.data("ytdlp/video-VcG1DZ4IlPg.json"))
        // A key reads through the API; the media still comes through yt-dlp.
        let provider = try Self.provider(programs, settings: ["api_key": "k", "download_format": "18"])
        let source = try await provider.downloadSource(for: ItemID(provider: "youtube", kind: .video, nativeID: "VcG1DZ4IlPg"))
        #expect(source.url.host?.hasSuffix(".googlevideo.com") == true)
        #expect(source.fileExtension == "mp4")
        #expect(source.suggestedName == "Cold Burn")
        #expect(source.collection == "Cult of Luna")
        #expect(source.headers["User-Agent"]?.hasPrefix("Mozilla/") == true)
        let arguments = programs.last
        #expect(arguments[try #require(arguments.firstIndex(of: "-f")) + 1] == "18")
        // The title came with the media: the host need not run yt-dlp again to ask for the item.
        #expect(source.title == "Cold Burn")
        #expect(programs.calls.withLock { $0.count } == 1)
    }

    /// On a stand-in site yt-dlp reads videos as "Generic"; without a key the item would be that
    /// same reading, so yt-dlp runs once for a download; with a key the API names the file.
    @Test func aKeylessDownloadFromAStandInRunsYTDLPOnce() async throws {
        var info = try #require(
            try JSONSerialization.jsonObject(with: try Self.corpus.data("ytdlp/video-VcG1DZ4IlPg.json")) as? [String: Any])
        info["extractor_key"] = "Generic"
        let generic = try JSONSerialization.data(withJSONObject: info)
        let programs = RecordedPrograms(stdout: generic)
        let provider = try Self.provider(
            programs, settings: ["backend": "ytdlp", "site_url": "http://127.0.0.1:9/site", "download_format": "18"])
        let source = try await provider.downloadSource(for: ItemID(provider: "youtube", kind: .video, nativeID: "VcG1DZ4IlPg"))
        #expect(source.title == "Cold Burn")
        #expect(programs.calls.withLock { $0.count } == 1)
    }

    /// Formats to merge (or a stream) are yt-dlp's to download: the host runs it with the path.
    @Test func aFormatThatIsNotOneFileIsDownloadedByYTDLP() async throws {
        // The same video with a merged selection: no top-level url, requested formats.
        var info = try #require(
            try JSONSerialization.jsonObject(with: Self.corpus.data("ytdlp/video-VcG1DZ4IlPg.json")) as? [String: Any])
        info["url"] = nil
        info["requested_formats"] = [["format_id": "137"], ["format_id": "140"]]
        let programs = RecordedPrograms(stdout: try JSONSerialization.data(withJSONObject: info))
        let id = ItemID(provider: "youtube", kind: .video, nativeID: "VcG1DZ4IlPg")
        let source = try await Self.provider(programs, settings: ["download_format": "bv*+ba"]).downloadSource(for: id)
        let program = try #require(source.program)
        #expect(program.program == "yt-dlp")
        let words = program.arguments
        #expect(words.contains("{output}") && words.contains("--newline"))
        #expect(words[try #require(words.firstIndex(of: "--merge-output-format")) + 1] == "mp4")
        #expect(words.suffix(2) == ["--", "https://www.youtube.com/watch?v=VcG1DZ4IlPg"])
        // Told to leave downloads to the host, it says what to set instead.
        let error = await #expect(throws: ProviderError.self) {
            try await Self.provider(programs, settings: ["downloader": "host"]).downloadSource(for: id)
        }
        #expect("\(String(describing: error))".contains("downloader"))
    }

    /// Real yt-dlp offline: exit status 1, its JSON printed anyway, the reason on stderr.
    @Test func aFailedRunIsTheErrorItsLastLineSays() async throws {
        let programs = RecordedPrograms(
            stdout: try Self.corpus.data("ytdlp/search-offline.json"), status: 1,
            stderr: try Self.corpus.text("ytdlp/search-offline.stderr"))
        let provider = try Self.provider(programs)
        let error = await #expect(throws: ProviderError.self) { try await provider.search(SearchQuery(text: "cats")) }
        guard case .network(let message)? = error else {
            Issue.record("not a network error: \(String(describing: error))")
            return
        }
        #expect(message.contains("Name or service not known"))
    }

    @Test(arguments: [
        ("ERROR: [youtube] abc: Private video. Sign in if you've been granted access to this video", "notFound"),
        (
            "ERROR: [youtube] abc: Sign in to confirm your age. This video may be inappropriate for some users.",
            "unauthorized"
        ),
        ("ERROR: [youtube] abc: Video unavailable. This video has been removed by the uploader", "notFound"),
        (
            "ERROR: [youtube] abc: The uploader has not made this video available in your country", "notFound"
        ),
        // The bot check is not a rate limit: cookies fix it (issue 39), and the message says how.
        ("ERROR: [youtube] abc: Sign in to confirm you’re not a bot. Use --cookies-from-browser", "unauthorized"),
        ("ERROR: unable to download video data: HTTP Error 429: Too Many Requests", "rateLimited"),
        ("ERROR: [youtube] abc: Unable to extract yt initial data; please report this issue on GitHub", "upstream"),
    ])
    func yTDLPsErrorsAreTyped(line: String, kind: String) {
        let error = YTDLP.providerError(
            stderr: ProgramOutput(status: 1, stdout: [], stderr: Array(("WARNING: x\n" + line + "\n").utf8)).lastError,
            status: 1, id: ItemID(provider: "youtube", kind: .video, nativeID: "abc"))
        #expect(error.kind == kind, "\(line) -> \(error)")
    }

    @Test func aMissingYTDLPSaysHowToInstallIt() async throws {
        let provider = try Self.provider(RecordedPrograms { call in throw ProgramError.notFound(call.program) })
        let error = await #expect(throws: ProviderError.self) { try await provider.search(SearchQuery(text: "cats")) }
        #expect("\(String(describing: error))".contains("pip install -U yt-dlp"))
    }

    /// Mutated recordings: no crash, and a broken entry costs that entry.
    @Test(arguments: [
        "ytdlp/video-VcG1DZ4IlPg.json", "ytdlp/channel-UCbdVsLFphtk2UWuJC-gcXoQ.json",
        "ytdlp/playlist-PL1hlX04-g75DGniSXtYRSlMBaroamq96d.json",
    ])
    func mutatedOutputIsReadLeniently(file: String) async throws {
        await checkTolerance(of: try Self.corpus.data(file), named: file, minDepth: 1) { body in
            let provider = try Self.provider(RecordedPrograms(stdout: body))
            if file.contains("video-") {
                _ = try await provider.item(ItemID(provider: "youtube", kind: .video, nativeID: "VcG1DZ4IlPg"))
                return 1
            }
            return try await provider.children(
                of: ItemID(provider: "youtube", kind: .playlist, nativeID: "PL1"), cursor: nil
            ).items.count
        }
    }

    /// `make install` puts yt-dlp in a venv under <prefix>/lib/mediahost: found there when none
    /// is on PATH, and the one on PATH wins.
    @Test func theInstalledYTDLPBesideTheBinaryIsFoundWhenNoneIsOnPath() throws {
        let prefix = try makeTemporaryDirectory()
        let venv = prefix + "/lib/mediahost/yt-dlp/bin"
        try FileManager.default.createDirectory(atPath: venv, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(
                atPath: venv + "/yt-dlp", contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755]))
        let binary = prefix + "/bin/mediahost"
        #expect(YTDLP.defaultProgram(path: "/nonexistent", executable: binary) == venv + "/yt-dlp")
        #expect(YTDLP.defaultProgram(path: venv, executable: binary) == "yt-dlp")
        #expect(YTDLP.defaultProgram(path: "/nonexistent", executable: "/elsewhere/bin/mediahost") == "yt-dlp")
    }

    /// Captions as yt-dlp lists them (the recorded video's details with tracks added in yt-dlp's
    /// shape), fetched and read as a transcript: the uploader's before automatic ones, the
    /// person's language first; YouTube's rolling automatic captions said once (the captions
    /// served are youtube-dl's real automatic-caption file from webvtt-py's tests).
    @Test func captionsBecomeTranscripts() async throws {
        var info = try #require(
            try JSONSerialization.jsonObject(with: try Self.corpus.data("ytdlp/video-VcG1DZ4IlPg.json")) as? [String: Any])
        func track(_ language: String, _ kind: String) -> [[String: Any]] {
            [
                [
                    "ext": "json3",
                    "url": "https://www.youtube.com/api/timedtext?v=VcG1DZ4IlPg&lang=\(language)&kind=\(kind)&fmt=json3",
                ],
                [
                    "ext": "vtt",
                    "url": "https://www.youtube.com/api/timedtext?v=VcG1DZ4IlPg&lang=\(language)&kind=\(kind)&fmt=vtt",
                    "name": language,
                ],
            ]
        }
        info["automatic_captions"] = ["en": track("en", "asr"), "de-en": track("de-en", "asr"), "sv": track("sv", "asr")]
        info["subtitles"] = [
            "live_chat": [["ext": "json", "url": "https://www.youtube.com/live_chat"]], "sv": track("sv", "manual"),
        ]
        let captions = YTDLP.captions(from: info)
        #expect(captions.count == 4 && captions.allSatisfy { $0.ext == "vtt" })
        #expect(YTDLP.chooseCaption(captions, language: "sv-SE").map { "\($0.language) \($0.automatic)" } == "sv false")
        #expect(YTDLP.chooseCaption(captions, language: nil).map { "\($0.language) \($0.automatic)" } == "en true")
        #expect(YTDLP.chooseCaption(captions, language: "de")?.language == "de-en", "a translated track when nothing else")
        #expect(YTDLP.chooseCaption([], language: "en") == nil)

        let vtt = try Data(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Tests/MediaKitTests/Recorded/transcripts/vtt-youtube-autocaption-webvtt-py.vtt"))
        let http = RecordedHTTPClient { request in
            request.url.absoluteString.contains("lang=en&kind=asr&fmt=vtt") ? (200, ["content-type": "text/vtt"], vtt) : nil
        }
        let programs = RecordedPrograms(stdout: try JSONSerialization.data(withJSONObject: info))
        let provider = try YouTubeProvider(
            context: ProviderContext(
                config: ProviderConfig(["backend": "ytdlp"]), http: http, logger: Logger(label: "test"), programs: programs))
        let transcript = try #require(
            try await provider.transcript(of: ItemID(provider: "youtube", kind: .video, nativeID: "VcG1DZ4IlPg"), language: "en"))
        #expect(transcript.cues.map(\.text) == ["yeah", "what", "this will happen is I'm telling"])
        #expect(transcript.notes == ["YouTube's automatic captions (en)"])
        #expect(programs.calls.withLock { $0.count } == 1, "the details run gave the captions")
    }

    /// Real details with captions: tubesync's (126 automatic languages, English spoken) and
    /// pinchflat's (the uploader's German track, 251 automatic ones, one "vtt" served as an HLS
    /// playlist, which is no file).
    @Test func realDetailsListTheirCaptions() throws {
        func info(_ name: String) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: try Self.corpus.data("ytdlp/" + name)) as? [String: Any])
        }
        let tubesync = YTDLP.captions(from: try info("tubesync_metadata_2023-06-29.json"))
        #expect(tubesync.count == 126 && tubesync.allSatisfy { $0.automatic })
        let english = try #require(YTDLP.chooseCaption(tubesync, language: "en-GB"))
        #expect(english.language == "en" && english.url.hasSuffix("kind=asr&lang=en&fmt=vtt"), "\(english)")
        let pinchflat = YTDLP.captions(from: try info("pinchflat_example.info.json"))
        #expect(pinchflat.filter { !$0.automatic }.map(\.language) == ["de"])
        #expect(!pinchflat.contains { $0.url.contains("hls_timedtext_playlist") })
        let german = try #require(YTDLP.chooseCaption(pinchflat, language: "de-DE"))
        #expect(german.language == "de" && !german.automatic, "the uploader's own track")
    }
}
