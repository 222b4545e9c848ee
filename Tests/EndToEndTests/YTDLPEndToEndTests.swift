import Basics
import Foundation
import JSONRPC
import MediaHTTP
import MediaKit
import TestSupport
import Testing
import YouTubeSandbox

#if canImport(Glibc)
    import Glibc
#endif

/// YouTube through the real yt-dlp (from PyPI, installed by `make test`) and the built binary,
/// against the sandbox: yt-dlp reads the site's stand-in with its generic extractor, the host
/// downloads what it chose like any other download.
@Suite struct YTDLPEndToEndTests {
    /// The yt-dlp `make test` installs; a run without it says how to get it.
    static var ytdlp: String? {
        let path =
            ProcessInfo.processInfo.environment["MEDIAHOST_TEST_YTDLP"]
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/ytdlp-venv/bin/yt-dlp").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    /// The installed yt-dlp, or nil after recording that it is missing and how to get it.
    static func requireYTDLP(sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        guard let ytdlp else {
            Issue.record(
                "yt-dlp is not installed: `make ytdlp` (part of `make test`) puts it in .build/ytdlp-venv",
                sourceLocation: sourceLocation)
            return nil
        }
        return ytdlp
    }

    /// A video of the sandbox's catalogue, found through the API replica.
    static func sandboxVideo(dataDir: String) async throws -> String {
        let search = try await runMediahost(
            ["--sandbox", "call", "media.search", #"{"provider":"youtube","query":"cat"}"#], dataDir: dataDir)
        #expect(search.status == 0, "\(search.stderr)")
        let items = try JSONValue(parsing: search.stdout)["items"]?.arrayValue ?? []
        return try #require(items.first?["id"]?.stringValue)
    }

    /// `download <id>` in the REPL on the sandbox, to its end: the completed file's path.
    static func downloadInTheREPL(
        _ id: String, ytdlp: String, dataDir: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        let result = try await runMediahost(
            ["--sandbox"], input: "download \(id)\ndownloads\n", dataDir: dataDir,
            environment: ["MEDIAHOST_YOUTUBE_YTDLP": ytdlp])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
        let list = try await runMediahost(["call", "downloads.list"], dataDir: dataDir)
        let downloads = try JSONValue(parsing: list.stdout).arrayValue ?? []
        let download = try #require(
            downloads.first { $0["id"]?.stringValue == id }, "\(list.stdout)", sourceLocation: sourceLocation)
        #expect(download["state"] == "completed", "\(download)", sourceLocation: sourceLocation)
        return try #require(download["path"]?.stringValue, sourceLocation: sourceLocation)
    }

    @Test func aYouTubeVideoDownloadsThroughTheRealYTDLP() async throws {
        guard let ytdlp = Self.requireYTDLP() else { return }
        let dataDir = try makeTemporaryDirectory()
        let id = try await Self.sandboxVideo(dataDir: dataDir)
        let path = try await Self.downloadInTheREPL(id, ytdlp: ytdlp, dataDir: dataDir)
        let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
        #expect(size >= 400_000, "\(path): \(size) bytes")
        // What yt-dlp chose is a WAV (the stand-in's media), named by its type; the file is named
        // by the video's title, not the page's ("watch"), which is all yt-dlp knows of a stand-in.
        #expect(path.hasSuffix(".wav"))
        #expect(!path.hasSuffix("/watch.wav"), "\(path)")
    }

    /// Video and audio apart (HLS, as YouTube serves most formats): yt-dlp downloads both and
    /// the real ffmpeg merges them into one file holding both streams.
    @Test func videoAndAudioApartAreMergedByFFmpeg() async throws {
        guard let ytdlp = Self.requireYTDLP() else { return }
        guard ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].contains(where: FileManager.default.isExecutableFile(atPath:)) else {
            Issue.record("ffmpeg is not installed (`make test` installs it)")
            return
        }
        let dataDir = try makeTemporaryDirectory()
        let id = "youtube:video:" + YouTubeReplica().separateStreamsVideo
        let path = try await Self.downloadInTheREPL(id, ytdlp: ytdlp, dataDir: dataDir)
        #expect(path.hasSuffix(".mp4"), "\(path)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // An MP4 with a video track (MPEG-4 Visual) and an audio track (AAC) in it.
        for box in ["ftyp", "moov", "mp4v", "mp4a"] {
            #expect(bytes.range(of: Data(box.utf8)) != nil, "\(path) has no \(box)")
        }
        // Neither the .part files nor the two formats yt-dlp merged (`<name>.f<format>.<ext>`) are left.
        let parts = (try? FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)) ?? []
        let leftovers = parts.filter {
            $0.hasSuffix(".part") || $0.range(of: #"\.f[\w-]+\.\w+$"#, options: .regularExpression) != nil
        }
        #expect(leftovers.isEmpty, "\(parts)")
    }

    /// The service killed mid-download takes its sandbox with it; the next one serves the media at
    /// another address, which the download learns by asking yt-dlp again, and it resumes from its
    /// `.part` to a byte-identical file.
    /// Either downloader: the host's HTTP transfer, or yt-dlp itself (whose words, holding the
    /// old address, are asked of the provider again).
    @Test(arguments: ["host", "ytdlp"])
    func aYouTubeDownloadOutlivesAKilledServiceThroughYTDLP(downloader: String) async throws {
        guard let ytdlp = Self.requireYTDLP() else { return }
        let dataDir = try makeTemporaryDirectory()
        let id = try await Self.sandboxVideo(dataDir: dataDir)
        let environment = [
            "MEDIAHOST_YOUTUBE_YTDLP": ytdlp, "MEDIAHOST_SANDBOX_MEDIA_RATE": "100000",
            "MEDIAHOST_YOUTUBE_DOWNLOADER": downloader,
        ]
        let service = try MediahostProcess(["--sandbox", "serve"], dataDir: dataDir, environment: environment)
        try await ServiceTests.waitForService(dataDir)
        let started = try await runMediahost(
            ["call", "downloads.start", #"{"id":"\#(id)"}"#], dataDir: dataDir, environment: environment)
        let path = try #require(try JSONValue(parsing: started.stdout)["path"]?.stringValue, "\(started.stderr)")
        let deadline = ContinuousClock.now + .seconds(60)
        while ((try? FileManager.default.attributesOfItem(atPath: path + ".part")[.size] as? Int) ?? 0) < 100_000,
            ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        kill(service.process.processIdentifier, SIGKILL)
        _ = await service.waitForExit()
        #expect(!FileManager.default.fileExists(atPath: path), "never a partial final file")

        let again = try MediahostProcess(
            ["--sandbox", "serve"], dataDir: dataDir,
            environment: environment.merging(["MEDIAHOST_SANDBOX_MEDIA_RATE": "0"]) { $1 })
        defer { again.process.terminate() }
        try await ServiceTests.waitForService(dataDir)
        // Completed once the record says so (yt-dlp puts the file in place before it exits).
        let done = ContinuousClock.now + .seconds(90)
        var row: JSONValue?
        repeat {
            try await Task.sleep(for: .milliseconds(300))
            let list = try await runMediahost(["call", "downloads.list"], dataDir: dataDir, environment: environment)
            row = (try? JSONValue(parsing: list.stdout))?.arrayValue?.first
        } while row?["state"] != "completed" && ContinuousClock.now < done
        let completed = try #require(row)
        #expect(completed["state"] == "completed", "\(completed)")
        let url = try #require(completed["url"]?.stringValue.flatMap(URL.init(string:)))
        var request = HTTPRequest(url: url)
        request.maxBodySize = 1 << 30
        let source = try await MediaHTTPClient().send(request).body
        #expect(FileManager.default.contents(atPath: path) == source, "byte-identical to what the new sandbox serves")
    }

    /// yt-dlp as the downloader (what formats to merge need): the host runs it with the path,
    /// shows its progress, pauses it by killing it and resumes it from its own `.part`.
    @Test func yTDLPDownloadsItselfWithProgressPauseAndResume() async throws {
        guard let ytdlp = Self.requireYTDLP() else { return }
        let dataDir = try makeTemporaryDirectory()
        let id = try await Self.sandboxVideo(dataDir: dataDir)
        let process = try MediahostProcess(
            ["--sandbox", "rpc"], dataDir: dataDir,
            environment: [
                "MEDIAHOST_YOUTUBE_YTDLP": ytdlp, "MEDIAHOST_YOUTUBE_DOWNLOADER": "ytdlp",
                "MEDIAHOST_SANDBOX_MEDIA_RATE": "60000",
            ])
        defer { process.process.terminate() }
        func call(_ number: Int, _ method: String, _ params: String) {
            process.sendLine(#"{"jsonrpc":"2.0","id":\#(number),"method":"\#(method)","params":\#(params)}"#)
        }
        /// Messages until one satisfies `done` (or 60 s pass), all of them kept.
        var seen: [JSONValue] = []
        func until(_ done: (JSONValue) -> Bool) async -> JSONValue? {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline, let message = await process.next(timeout: .seconds(60))?.value {
                seen.append(message)
                if done(message) { return message }
            }
            return nil
        }
        call(1, "downloads.start", #"{"id":"\#(id)"}"#)
        let started = await until { $0["id"] == 1 }
        let path = try #require(started?["result"]?["path"]?.stringValue, "\(String(describing: started))")
        let progressed = await until {
            $0["method"] == "downloads.progress" && ($0["params"]?["bytes"]?.intValue ?? 0) >= 100_000
        }
        #expect(progressed != nil, "yt-dlp's progress reaches downloads.progress: \(seen.suffix(5))")
        call(2, "downloads.pause", #"{"id":"\#(id)"}"#)
        let paused = await until { $0["id"] == 2 }
        #expect(paused?["result"]?["state"] == "paused", "\(String(describing: paused))")
        let part = (try? FileManager.default.attributesOfItem(atPath: path + ".part")[.size] as? Int) ?? 0
        #expect(part >= 100_000, "yt-dlp's .part is kept to resume from: \(part) bytes")
        call(3, "downloads.resume", #"{"id":"\#(id)"}"#)
        let completed = await until {
            $0["method"] == "downloads.state" && $0["params"]?["state"] == "completed"
        }
        #expect(completed != nil, "\(seen.suffix(5))")
        call(4, "downloads.list", "{}")
        let list = await until { $0["id"] == 4 }
        let row = try #require(list?["result"]?.arrayValue?.first)
        let url = try #require(row["url"]?.stringValue.flatMap(URL.init(string:)))
        var request = HTTPRequest(url: url)
        request.maxBodySize = 1 << 30
        let source = try await MediaHTTPClient().send(request).body
        #expect(FileManager.default.contents(atPath: path) == source, "byte-identical to the source")
        #expect(!FileManager.default.fileExists(atPath: path + ".part"))
    }

    @Test func withoutAKeyDetailsComeFromTheRealYTDLPWithTheSameID() async throws {
        guard let ytdlp = Self.requireYTDLP() else { return }
        let dataDir = try makeTemporaryDirectory()
        let id = try await Self.sandboxVideo(dataDir: dataDir)
        let result = try await runMediahost(
            ["--sandbox", "call", "media.get", #"{"id":"\#(id)"}"#], dataDir: dataDir,
            environment: ["MEDIAHOST_YOUTUBE_YTDLP": ytdlp, "MEDIAHOST_YOUTUBE_BACKEND": "ytdlp"])
        #expect(result.status == 0, "\(result.stderr)")
        let item = try JSONValue(parsing: result.stdout)
        #expect(item["id"]?.stringValue == id)
        #expect(item["url"]?.stringValue?.hasPrefix("https://www.youtube.com/watch?v=") == true)
    }

    /// Following a podcast and a channel (key-less: its feed), what is new from both, newest first.
    /// A data dir following a sandbox channel (key-less: its feed) and a show; the channel's id.
    static func followingAChannelAndAShow(_ dataDir: String, keyless: [String: String]) async throws -> String {
        let video = try await Self.sandboxVideo(dataDir: dataDir)
        let details = try await runMediahost(["--sandbox", "call", "media.get", #"{"id":"\#(video)"}"#], dataDir: dataDir)
        let channel = try #require(try JSONValue(parsing: details.stdout)["extra"]?["channel"]?.stringValue)
        for id in [channel, "podcasts:podcast:1000007919"] {
            let added = try await runMediahost(
                ["--sandbox", "call", "favorites.add", #"{"id":"\#(id)"}"#], dataDir: dataDir, environment: keyless)
            #expect(added.status == 0, "\(id): \(added.stderr)")
        }
        return channel
    }

    static let keyless = ["MEDIAHOST_YOUTUBE_BACKEND": "ytdlp", "MEDIAHOST_YOUTUBE_YTDLP": "/nonexistent/yt-dlp"]

    @Test func whatIsNewMergesFollowedShowsAndChannels() async throws {
        let dataDir = try makeTemporaryDirectory()
        let keyless = Self.keyless
        _ = try await Self.followingAChannelAndAShow(dataDir, keyless: keyless)
        let result = try await runMediahost(
            ["--sandbox", "call", "favorites.latest", #"{"limit":40}"#], dataDir: dataDir, environment: keyless)
        #expect(result.status == 0, "\(result.stderr)")
        let latest = try JSONValue(parsing: result.stdout)
        #expect(latest["followed"] == 2)
        #expect(latest["errors"] == nil, "\(result.stdout)")
        let items = latest["items"]?.arrayValue ?? []
        #expect(Set(items.compactMap { $0["provider"]?.stringValue }) == ["youtube", "podcasts"])
        let dates = items.compactMap { $0["published"]?.stringValue }
        #expect(dates.count == items.count && dates == dates.sorted(by: >))
    }

    /// A followed channel whose feed cannot be fetched, and no yt-dlp to list it instead: what
    /// is new answers the other favorites and names the channel in `errors` with both reasons
    /// (it answered `items: []` with no error); the debug log says which path was taken.
    @Test func aFollowedChannelWhoseFeedFailsIsAnError() async throws {
        let dataDir = try makeTemporaryDirectory()
        let keyless = Self.keyless
        let channel = try await Self.followingAChannelAndAShow(dataDir, keyless: keyless)
        // The podcast on a sandbox of its own; YouTube's site where nothing answers.
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        var broken = keyless
        broken["MEDIAHOST_YOUTUBE_SITE_URL"] = "http://127.0.0.1:9"
        broken["MEDIAHOST_PODCASTS_BASE_URL"] = base
        let result = try await runMediahost(
            ["--log-level", "debug", "call", "favorites.latest", #"{"limit":40}"#], dataDir: dataDir, environment: broken)
        #expect(result.status == 0, "\(result.stderr)")
        let latest = try JSONValue(parsing: result.stdout)
        let errors = latest["errors"]?.arrayValue ?? []
        let failure = try #require(errors.first { $0["id"]?.stringValue == channel }, "\(result.stdout)")
        let message = failure["message"]?.stringValue ?? ""
        #expect(message.contains("its feed failed") && message.contains("yt-dlp"), "\(message)")
        #expect(!message.contains("HTTP 0"), "\(message)")
        #expect(latest["items"]?.arrayValue?.contains { $0["provider"] == "podcasts" } == true, "the others still answer")
        #expect(result.stderr.contains("listing it through yt-dlp"), "the path taken, in the debug log")
    }

    /// Subscriptions from FreeTube (or YouTube's own export) come in as YouTube channels, next to
    /// the podcasts of the same file, and go out again as the same feeds.
    @Test func anOPMLOfChannelFeedsImportsAsChannelsAndExportsAsTheSameFeeds() async throws {
        let dataDir = try makeTemporaryDirectory()
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Recorded/freetube-subscriptions.opml").path
        let imported = try await runMediahost(
            ["--sandbox", "call", "lists.import", #"{"path":"\#(file)","name":"subs"}"#], dataDir: dataDir)
        #expect(imported.status == 0, "\(imported.stderr)")
        let items = try await runMediahost(["call", "lists.items", #"{"name":"subs"}"#], dataDir: dataDir)
        let ids = (try JSONValue(parsing: items.stdout)["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        #expect(ids.contains("youtube:channel:UCYO_jab_esuFRV4b17AJtAw"), "\(items.stdout)")
        #expect(ids.contains("youtube:channel:UCHnyfMqiRRG1u-2MsSQLbXA"))
        #expect(ids.contains { $0.hasPrefix("podcasts:podcast:") })
        let exported = try await runMediahost(
            ["call", "lists.export", #"{"name":"subs","format":"opml"}"#], dataDir: dataDir)
        #expect(exported.status == 0, "\(exported.stderr)")
        let text = try JSONValue(parsing: exported.stdout)["text"]?.stringValue ?? ""
        #expect(text.contains("xmlUrl=\"https://www.youtube.com/feeds/videos.xml?channel_id=UCYO_jab_esuFRV4b17AJtAw\""))
        #expect(text.contains("xmlUrl=\"https://feeds.example.org/show.xml\""))
    }

    @Test func aMissingYTDLPSaysHowToInstallIt() async throws {
        let result = try await runMediahost(
            ["--sandbox", "call", "media.search", #"{"provider":"youtube","query":"cat"}"#],
            environment: ["MEDIAHOST_YOUTUBE_YTDLP": "/nonexistent/yt-dlp", "MEDIAHOST_YOUTUBE_BACKEND": "ytdlp"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("pip install -U yt-dlp"), "\(result.stderr)")
    }
}
