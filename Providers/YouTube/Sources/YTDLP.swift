import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// YouTube without an API key, through yt-dlp (the engine ytfzf, mpv and FreeTube's peers rely
/// on, updated as YouTube changes): searches and lists read flat (`--flat-playlist`, one page at
/// a time with `--playlist-items`), details with `-J`, media URLs with a format selection. Item
/// ids are the API backend's, so favorites, lists and history carry over when a key is added or
/// removed. Its JSON is read leniently: fields come and go between versions.
struct YTDLP: Sendable {
    let program: String
    let programs: any ProgramRunner
    /// `--cookies` file, for age-gated and members-only videos.
    let cookies: String?
    /// `--cookies-from-browser BROWSER[+KEYRING][:PROFILE][::CONTAINER]`: how most people give
    /// yt-dlp their YouTube cookies (YouTube's bot check and members-only videos need them).
    var cookiesFromBrowser: String?
    /// `--js-runtimes RUNTIME[:PATH]`: YouTube needs a JavaScript runtime since yt-dlp
    /// 2025.11.12; the one installed beside yt-dlp (mediahost's venv has deno) when it is not on
    /// PATH, or the `js_runtime` setting.
    var jsRuntime: String?
    /// The format of downloads (`-f`); "auto": up to 1080p, video and audio merged when ffmpeg is
    /// installed, else the best single file.
    let format: String
    /// Who downloads: "auto" (the host when the format is one file over HTTP, else yt-dlp), "host"
    /// or "ytdlp".
    var downloader = "auto"
    let pageSize: Int
    let timeout: Double
    /// Where yt-dlp is pointed: https://www.youtube.com, or a stand-in (the sandbox serves media
    /// at `<site>/watch?v=<id>`, which yt-dlp reads with its generic extractor).
    var site = "https://www.youtube.com"
    /// The chapters of the videos whose details were read last (details and chapters come in
    /// one answer of yt-dlp's; `chapters` after `item` costs no second run).
    let chapterMemo = Memo<ChapterList?>(lifetime: 600)
    /// The captions the same answers offered, by video.
    let captionMemo = Memo<[Caption]>(lifetime: 600)

    /// A subtitle track yt-dlp lists: a language's file in one format.
    struct Caption: Equatable, Sendable {
        var language: String
        var url: String
        var ext: String
        /// YouTube's automatic captions (speech recognition), not the uploader's.
        var automatic: Bool
    }

    // MARK: Reading

    func search(_ query: SearchQuery) async throws -> Page {
        let first = Self.firstIndex(query.cursor)
        let target: String
        switch query.kind {
        case nil, .video?:
            // ytsearchN: gives the first N; a page is the last pageSize of them.
            target = "ytsearch\(first + pageSize - 1):\(query.text)"
        case .channel?: target = searchURL(query.text, filter: "EgIQAg%3D%3D")
        case .playlist?: target = searchURL(query.text, filter: "EgIQAw%3D%3D")
        case let other?:
            throw ProviderError.unsupported("YouTube searches videos, channels and playlists, not \(other.rawValue)s")
        }
        return try await listing(target, from: first)
    }

    /// A channel's uploads (newest first) or a playlist's entries.
    func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        switch id.kind {
        case .channel: return try await listing(site + Self.channelPath(id.nativeID) + "/videos", from: Self.firstIndex(cursor))
        case .playlist: return try await listing(site + Self.playlistPath(id.nativeID), from: Self.firstIndex(cursor))
        default: throw ProviderError.unsupported("YouTube \(id.kind.rawValue)s have no children")
        }
    }

    func item(_ id: ItemID) async throws -> MediaItem {
        switch id.kind {
        case .video:
            let info = try await json(["--no-playlist", "--skip-download", site + Self.videoPath(id.nativeID)], for: id)
            chapterMemo.keep(Self.chapters(from: info), id.nativeID)
            captionMemo.keep(Self.captions(from: info), id.nativeID)
            // The video asked for, whichever extractor read it (a stand-in site is "Generic").
            return Self.video(from: info, id: id.nativeID)
        case .channel, .playlist:
            // The first entry is enough to read the channel's or playlist's own fields.
            let url = site + (id.kind == .channel ? Self.channelPath(id.nativeID) : Self.playlistPath(id.nativeID))
            let info = try await json(["--flat-playlist", "--playlist-items", "1", url], for: id)
            return Self.collection(from: info, id: id)
        default:
            throw ProviderError.unsupported("YouTube has no \(id.kind.rawValue)s")
        }
    }

    /// A video's chapters as the service lists them; nil when it has none.
    func chapters(_ id: ItemID) async throws -> ChapterList? {
        guard id.kind == .video else { return nil }
        if let known = chapterMemo.value(id.nativeID) { return known }
        _ = try await item(id)
        return chapterMemo.value(id.nativeID) ?? nil
    }

    /// A video's captions as yt-dlp listed them in its details.
    func captions(_ id: ItemID) async throws -> [Caption] {
        guard id.kind == .video else { return [] }
        if let known = captionMemo.value(id.nativeID) { return known }
        _ = try await item(id)
        return captionMemo.value(id.nativeID) ?? []
    }

    /// `subtitles` (the uploader's) and `automatic_captions`, WebVTT only; live chat is not
    /// a caption.
    static func captions(from info: [String: Any]) -> [Caption] {
        var found: [Caption] = []
        for (key, automatic) in [("subtitles", false), ("automatic_captions", true)] {
            guard let tracks = info[key] as? [String: Any] else { continue }
            for (language, formats) in tracks.sorted(by: { $0.key < $1.key }) where language != "live_chat" {
                for case let format as [String: Any] in (formats as? [Any]) ?? [] {
                    // A "vtt" served as an HLS playlist of pieces (live streams' captions) is no file.
                    guard let ext = string(format["ext"]), ext == "vtt", let url = string(format["url"]),
                        string(format["protocol"])?.hasPrefix("m3u8") != true, !url.contains("hls_timedtext_playlist")
                    else { continue }
                    found.append(Caption(language: language, url: url, ext: ext, automatic: automatic))
                }
            }
        }
        return found
    }

    /// The uploader's captions before automatic ones; in `language` (by its primary subtag)
    /// when asked, else English, else the video's first; an automatic track translated into
    /// another language (`en-de`, `de-orig`…) only when nothing else is there.
    static func chooseCaption(_ captions: [Caption], language: String?) -> Caption? {
        func primary(_ text: String) -> String { LanguageTag.primary(text) ?? "" }
        let wanted = LanguageTag.primary(language) ?? "en"
        func rank(_ caption: Caption) -> Int {
            let original = !caption.language.contains("-") || caption.language.hasSuffix("-orig")
            var score = caption.automatic ? 2 : 0
            if primary(caption.language) != wanted { score += 4 }
            if !original { score += 1 }
            return score
        }
        return captions.enumerated().min { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }?.element
    }

    static func chapters(from info: [String: Any]) -> ChapterList? {
        guard let entries = info["chapters"] as? [[String: Any]], !entries.isEmpty else { return nil }
        return ChapterReader.service(entries)
    }

    /// The format asked of yt-dlp.
    var formatSpec: String {
        guard format == "auto" else { return format }
        return Self.installed("ffmpeg")
            ? "bv*[height<=1080]+ba/b[height<=1080]/b" : "b[height<=1080][protocol^=http]/b[protocol^=http]/b"
    }

    /// Where a video's media is, in the configured format: one file over HTTP that the host
    /// downloads and resumes like any other, or else (formats to merge, a stream) yt-dlp's own
    /// download; and whether yt-dlp read it as YouTube (a stand-in site is read "Generic", its
    /// title the URL's name).
    func downloadSource(for id: ItemID) async throws -> (source: DownloadSource, youtube: Bool) {
        guard id.kind == .video else {
            throw ProviderError.unsupported("only videos download; open the \(id.kind.rawValue) to download its videos")
        }
        let spec = formatSpec
        let target = site + Self.videoPath(id.nativeID)
        let info = try await json(["--no-playlist", "-f", spec, target], for: id)
        var headers: [String: String] = [:]
        for (name, value) in info["http_headers"] as? [String: Any] ?? [:] {
            if let value = value as? String { headers[name] = value }
        }
        let size = Self.int(info["filesize"]) ?? Self.int(info["filesize_approx"])
        let oneFile = Self.string(info["url"]).flatMap(URL.init(string:)).flatMap {
            $0.scheme?.hasPrefix("http") == true ? $0 : nil
        }
        let protocolName = Self.string(info["protocol"]) ?? "https"
        var source = DownloadSource(
            url: oneFile ?? URL(string: Self.videoURL(id.nativeID))!, suggestedName: Self.string(info["title"]) ?? id.nativeID,
            collection: Self.string(info["channel"]) ?? Self.string(info["uploader"]), fileExtension: Self.string(info["ext"]),
            expectedLength: size.map(Int64.init), headers: headers)
        let merged = (info["requested_formats"] as? [Any])?.isEmpty == false
        let hostCan = oneFile != nil && protocolName.hasPrefix("http") && !merged
        if downloader == "ytdlp" || (downloader == "auto" && !hostCan) {
            var words = ["--ignore-config", "--no-warnings", "--newline", "--no-playlist", "--no-mtime", "-f", spec]
            words += extraOptions
            if merged, let ext = Self.string(info["ext"]) { words += ["--merge-output-format", ext] }
            words += [
                "--progress-template",
                "download:progress %(progress.downloaded_bytes)s %(progress.total_bytes)s %(progress.total_bytes_estimate)s",
                "-o", "{output}", "--", target,
            ]
            source.program = ProgramDownload(program: program, arguments: words)
        } else if oneFile == nil {
            throw ProviderError.unsupported(
                "the format '\(spec)' of \(id) is not one file over HTTP; set providers.youtube.downloader to auto or ytdlp")
        }
        return (source, (Self.string(info["extractor_key"]) ?? "Youtube").hasPrefix("Youtube"))
    }

    /// The format a player streams: one file with video and audio (or an HLS playlist), no
    /// larger than 1080p: a player plays it as it is, with nothing to merge.
    static let streamFormat = "b[height<=1080]/b"

    /// Where a player streams a video from: the URL yt-dlp finds for `streamFormat`.
    func streamSource(for id: ItemID) async throws -> DownloadSource? {
        guard id.kind == .video else { return nil }
        let info = try await json(["--no-playlist", "-f", Self.streamFormat, site + Self.videoPath(id.nativeID)], for: id)
        guard let url = Self.string(info["url"]).flatMap(URL.init(string:)), url.scheme?.hasPrefix("http") == true else {
            return nil
        }
        var headers: [String: String] = [:]
        for (name, value) in info["http_headers"] as? [String: Any] ?? [:] {
            if let value = value as? String { headers[name] = value }
        }
        return DownloadSource(
            url: url, suggestedName: Self.string(info["title"]) ?? id.nativeID, fileExtension: Self.string(info["ext"]),
            headers: headers)
    }

    /// The yt-dlp to run when providers.youtube.ytdlp is not set: the one on PATH, else the one
    /// `make install` put beside mediahost (`<prefix>/lib/mediahost/yt-dlp/bin/yt-dlp`, with
    /// deno beside it), else the name, for the error that says how to install it.
    static func defaultProgram(
        path: String? = ProcessInfo.processInfo.environment["PATH"], executable: String? = Self.executablePath()
    ) -> String {
        let directories = (path ?? "").split(separator: ":")
        if directories.contains(where: { FileManager.default.isExecutableFile(atPath: "\($0)/yt-dlp") }) { return "yt-dlp" }
        if let executable {
            let prefix = URL(fileURLWithPath: executable).deletingLastPathComponent().deletingLastPathComponent()
            let installed = prefix.appendingPathComponent("lib/mediahost/yt-dlp/bin/yt-dlp").path
            if FileManager.default.isExecutableFile(atPath: installed) { return installed }
        }
        return "yt-dlp"
    }

    /// This process's binary, symbolic links resolved.
    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `program` is an executable in PATH.
    static func installed(_ program: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(program)") }
    }

    /// One page of a flat listing (a search, a channel's videos, a playlist) from entry `first`.
    private func listing(_ target: String, from first: Int) async throws -> Page {
        let info = try await json(
            ["--flat-playlist", "--playlist-items", "\(first):\(first + pageSize - 1)", target], for: nil,
            maxOutput: Self.maxListingOutput)
        guard let listed = info["entries"] as? [Any] else {
            throw ProviderError.invalidResponse("yt-dlp listed no entries for \(target); `\(program) -U` may update it")
        }
        // A page is a page, whatever yt-dlp (or a program standing in for it) lists.
        let entries = listed.prefix(pageSize)
        let items = entries.compactMap { ($0 as? [String: Any]).flatMap(Self.item(from:)) }
        let total = Self.int(info["playlist_count"])
        // An empty page ends the listing whatever the count says (hidden videos count there):
        // its next would be the cursor it came from.
        let more = !entries.isEmpty && (total.map { first - 1 + entries.count < $0 } ?? (entries.count >= pageSize))
        return Page(
            items: items, next: more ? Cursor(String(first + entries.count)) : nil,
            prev: first > 1 ? Cursor(String(max(1, first - pageSize))) : nil, total: total)
    }

    // MARK: Running yt-dlp

    /// yt-dlp's JSON for `arguments` (`-J` is added, with options that keep its output clean).
    /// The most a page of a flat listing may print: 20 entries are 20-60 KB.
    static let maxListingOutput = 8 << 20

    func json(_ arguments: [String], for id: ItemID?, maxOutput: Int = 64 << 20) async throws -> [String: Any] {
        var words = ["-J", "--ignore-config", "--no-warnings", "--no-progress", "--encoding", "utf-8"] + extraOptions
        // "--" ends the options: a query starting with "-" is never taken for one.
        words += arguments.dropLast() + ["--", arguments.last ?? ""]
        let output: ProgramOutput
        do {
            output = try await programs.run(
                ProgramCall(program: program, arguments: words, timeout: timeout, maxOutput: maxOutput))
        } catch let error as ProgramError {
            throw Self.providerError(error, program: program)
        }
        guard output.status == 0 else { throw Self.providerError(stderr: output.lastError, status: output.status, id: id) }
        guard let object = (try? JSONValue(parsing: output.stdout))?.plainValue as? [String: Any] else {
            throw ProviderError.invalidResponse(
                "yt-dlp printed no JSON object (\(output.stdout.count) bytes); `\(program) -U` may update it")
        }
        return object
    }

    /// Cookies and the JavaScript runtime, as set: passed on every run.
    var extraOptions: [String] {
        var words: [String] = []
        if let cookies { words += ["--cookies", cookies] }
        if let cookiesFromBrowser { words += ["--cookies-from-browser", cookiesFromBrowser] }
        if let jsRuntime { words += ["--js-runtimes", jsRuntime] }
        return words
    }

    /// The JavaScript runtime to name to yt-dlp: deno installed beside it (mediahost's venv, by
    /// `make run` or `make install`) when no deno is on PATH, where yt-dlp would find its own.
    static func runtimeBeside(_ program: String, path: String? = ProcessInfo.processInfo.environment["PATH"]) -> String? {
        let directories = (path ?? "").split(separator: ":").map(String.init)
        func executable(_ file: String) -> Bool { FileManager.default.isExecutableFile(atPath: file) }
        if directories.contains(where: { executable($0 + "/deno") }) { return nil }
        let resolved =
            program.contains("/") ? program : directories.map { $0 + "/" + program }.first(where: executable)
        guard let resolved else { return nil }
        let folder = Path.directory(of: URL(fileURLWithPath: resolved).resolvingSymlinksInPath().path)
        let deno = folder + "/deno"
        return executable(deno) ? "deno:" + deno : nil
    }

    static let install =
        "install it: `pip install -U yt-dlp` (or pipx; Debian's package is often too old for YouTube), or set providers.youtube.ytdlp to its path; or set providers.youtube.api_key to use the Data API"

    static func providerError(_ error: ProgramError, program: String) -> ProviderError {
        switch error {
        case .notFound:
            // The first clause says it all where the room is short (an editor's echo area).
            .notConfigured(
                "yt-dlp is missing (`make ytdlp`); YouTube without an API key and every download need it, and '\(program)' was not found: \(install)"
            )
        case .cannotStart(_, let reason): .notConfigured("yt-dlp ('\(program)') cannot be started: \(reason)")
        case .timedOut(_, let seconds):
            .network("yt-dlp did not answer in \(Int(seconds)) s (YouTube slow or blocking; try again later)")
        case .tooMuchOutput(_, let bytes):
            .invalidResponse("yt-dlp printed more than \(bytes >> 20) MB for one answer; that is not a page of YouTube")
        }
    }

    /// The setting that gives yt-dlp a browser's cookies, in words a person can act on.
    static let cookiesRemedy =
        "`config providers.youtube.cookies_from_browser firefox` gives yt-dlp your browser's cookies (or chrome, brave, edge, safari; BROWSER:PROFILE; or a cookies.txt as providers.youtube.cookies)"

    /// yt-dlp's last error line as a typed error that says what happened and what to do; an
    /// unknown one quotes yt-dlp's own line. None speaks of HTTP: no status was seen.
    static func providerError(stderr: String?, status: Int32, id: ItemID?) -> ProviderError {
        let line = DisplayText.cut(stderr ?? "exit status \(status)", to: 400)
        // YouTube writes "you’re" (U+2019); a console in another code page shows U+FFFD.
        let text = line.lowercased().replacing("\u{2019}", with: "'")
            .replacing("\u{FFFD}", with: "'")
        let what = id.map { "\($0)" } ?? "this"
        if text.contains("confirm you're not a bot") || text.contains("confirm youre not a bot") {
            return .unauthorized(
                "YouTube wants a signed-in browser (its \"not a bot\" check): \(cookiesRemedy), or try again later"
            )
        }
        if text.contains("members-only") || text.contains("join this channel") || text.contains("channel's members") {
            return .unauthorized("\(what) is for the channel's members only: \(cookiesRemedy), signed in as a member")
        }
        if let range = text.firstRange(of: "this live event will begin in ") {
            let when = String(
                line[line.index(line.startIndex, offsetBy: text.distance(from: text.startIndex, to: range.upperBound))...]
            )
            .trimming(.characters(in: ". "))
            return .notFound("\(what) is a live event that has not begun: it begins in \(when); play it then")
        }
        if let range = text.firstRange(of: "premieres in ") {
            let when = String(
                line[line.index(line.startIndex, offsetBy: text.distance(from: text.startIndex, to: range.upperBound))...]
            )
            .trimming(.characters(in: ". "))
            return .notFound("\(what) is a premiere that has not begun: it premieres in \(when); play it then")
        }
        if text.contains("private video") { return .notFound("\(what) is a private video: \(line)") }
        if text.contains("sign in to confirm your age") || text.contains("age-restricted") || text.contains("inappropriate") {
            return .unauthorized("\(what) is age-restricted: \(cookiesRemedy), signed in as an adult")
        }
        if text.contains("available in your country") || text.contains("blocked it in your country") {
            return .notFound("\(what) is not available in this country: \(line)")
        }
        if text.contains("video unavailable") || text.contains("has been removed") || text.contains("does not exist")
            || text.contains("video is not available") || text.contains("content isn't available")
            || text.contains("this channel") && text.contains("not exist") || text.contains("http error 404")
        {
            return .notFound("\(what) is not on YouTube (removed or never there): \(line)")
        }
        if text.contains("http error 429") || text.contains("too many requests") || text.contains("rate-limit") {
            return .rateLimited(retryAfter: nil)
        }
        if text.contains("requested format is not available") || text.contains("only images are available")
            || text.contains("no video formats found") || text.contains("n challenge") || text.contains("signature solving")
            || text.contains("javascript runtime")
        {
            return .upstream(
                status: 0,
                message:
                    "yt-dlp found no format it can download: YouTube needs a JavaScript runtime and a current yt-dlp (`mediahost doctor` checks both; `make ytdlp-update` or `pip install -U \"yt-dlp[default]\"` updates): \(line)"
            )
        }
        if text.contains("unable to extract") || text.contains("nsig extraction failed")
            || text.contains("please report this issue")
        {
            return .upstream(
                status: 0,
                message:
                    "yt-dlp could not read YouTube's page (YouTube changed; update yt-dlp: `make ytdlp-update` or `pip install -U \"yt-dlp[default]\"`): \(line)"
            )
        }
        if text.contains("unable to download") || text.contains("urlopen error") || text.contains("name or service not known") {
            return .network("yt-dlp could not reach YouTube: \(line)")
        }
        return .upstream(status: 0, message: "yt-dlp failed: \(line)")
    }

    // MARK: Reading yt-dlp's JSON

    /// A video, channel or playlist from a full info object or a flat entry; nil for what is
    /// none of them (a Shorts shelf, an entry without an id).
    static func item(from info: [String: Any]) -> MediaItem? {
        guard let id = string(info["id"]) else { return nil }
        let key = string(info["ie_key"]) ?? string(info["extractor_key"]) ?? "Youtube"
        let url = string(info["url"]) ?? string(info["webpage_url"]) ?? ""
        let kind: MediaKind
        if key == "YoutubeTab" || url.contains("/channel/") || url.contains("/playlist?") || url.contains("/@") {
            kind = url.contains("list=") || id.hasPrefix("PL") || id.hasPrefix("OL") ? .playlist : .channel
        } else if key.hasPrefix("Youtube") {
            kind = .video
        } else {
            return nil
        }
        if kind != .video { return collection(from: info, id: ItemID(provider: "youtube", kind: kind, nativeID: id)) }
        return video(from: info, id: id)
    }

    /// A video from its info (full or flat).
    static func video(from info: [String: Any], id: String) -> MediaItem {
        var extra: [String: String] = [:]
        if let channel = string(info["channel_id"]) { extra["channel"] = "youtube:channel:\(channel)" }
        if let chapters = info["chapters"] as? [[String: Any]], !chapters.isEmpty {
            extra["chapters"] = chapters.compactMap { chapter -> String? in
                guard let title = string(chapter["title"]) else { return nil }
                return clock(number(chapter["start_time"]) ?? 0) + " " + title
            }.joined(separator: "\n")
        }
        let subtitles = (info["subtitles"] as? [String: Any])?.keys.filter { $0 != "live_chat" }.sorted() ?? []
        if !subtitles.isEmpty { extra["subtitles"] = subtitles.joined(separator: " ") }
        if let categories = info["categories"] as? [String], let first = categories.first { extra["category"] = first }
        if let live = string(info["live_status"]), live != "not_live", live != "was_live" { extra["live"] = live }
        var stats: [String: Int] = [:]
        for (name, field) in [("views", "view_count"), ("likes", "like_count"), ("comments", "comment_count")] {
            if let value = int(info[field]) { stats[name] = value }
        }
        let channel = string(info["channel"]) ?? string(info["uploader"])
        return MediaItem(
            id: ItemID(provider: "youtube", kind: .video, nativeID: id), title: string(info["title"]) ?? id,
            subtitle: channel, summary: string(info["description"]), url: videoURL(id),
            artwork: thumbnail(info), published: published(info), duration: number(info["duration"]), creator: channel,
            stats: stats.isEmpty ? nil : stats, extra: extra.isEmpty ? nil : extra)
    }

    /// A channel or playlist from its own fields (a listing's top level, or a search entry).
    static func collection(from info: [String: Any], id: ItemID) -> MediaItem {
        var title = string(info["title"]) ?? string(info["channel"]) ?? id.nativeID
        // A channel's tab is titled "<name> - Videos": the channel is <name>.
        if id.kind == .channel, let name = string(info["channel"]) ?? string(info["uploader"]) { title = name }
        var stats: [String: Int] = [:]
        if let followers = int(info["channel_follower_count"]) { stats["subscribers"] = followers }
        if let count = int(info["playlist_count"]) { stats["videos"] = count }
        var extra: [String: String] = [:]
        if let handle = string(info["uploader_id"]), handle.hasPrefix("@") { extra["handle"] = handle }
        if id.kind == .playlist, let channel = string(info["channel_id"]) { extra["channel"] = "youtube:channel:\(channel)" }
        var item = MediaItem(
            id: id, title: title,
            subtitle: id.kind == .channel ? nil : string(info["channel"]) ?? string(info["uploader"]),
            summary: string(info["description"]),
            url: id.kind == .channel ? channelURL(id.nativeID) : playlistURL(id.nativeID), artwork: thumbnail(info),
            creator: string(info["channel"]) ?? string(info["uploader"]), stats: stats.isEmpty ? nil : stats,
            extra: extra.isEmpty ? nil : extra)
        // Feed readers follow a channel by its feed (an OPML export lists it).
        item.feed = YouTubeChannelFeed.url(site: "https://www.youtube.com", for: id)
        return item
    }

    /// The largest thumbnail: `thumbnail`, else the widest of `thumbnails` (flat entries).
    static func thumbnail(_ info: [String: Any]) -> String? {
        if let url = string(info["thumbnail"]), url.hasPrefix("http") { return url }
        let list = (info["thumbnails"] as? [[String: Any]] ?? []).filter { string($0["url"])?.hasPrefix("http") == true }
        return list.max { (int($0["width"]) ?? 0) < (int($1["width"]) ?? 0) }.flatMap { string($0["url"]) }
    }

    /// When it was published: `timestamp` (seconds), else `upload_date` (YYYYMMDD).
    static func published(_ info: [String: Any]) -> String? {
        if let seconds = number(info["timestamp"]) ?? number(info["release_timestamp"]), seconds > 0, seconds < 1e11 {
            return ISODate.string(from: Date(timeIntervalSince1970: seconds))
        }
        guard let day = string(info["upload_date"]), day.count == 8, day.allSatisfy(\.isASCII), Int(day) != nil else {
            return nil
        }
        let digits = Array(day)
        return "\(String(digits[0..<4]))-\(String(digits[4..<6]))-\(String(digits[6..<8]))T00:00:00Z"
    }

    static func string(_ value: Any?) -> String? {
        guard let text = value as? String, !text.isEmpty else { return nil }
        return text
    }

    static func number(_ value: Any?) -> Double? {
        // JSON's true/false are Bools, never numbers (a video with no views is 0, not false).
        guard let double = value as? Double else { return nil }
        return double.isFinite ? double : nil
    }

    static func int(_ value: Any?) -> Int? {
        guard let double = number(value), double >= 0, double < 9e15 else { return nil }
        return Int(double)
    }

    static func clock(_ seconds: Double) -> String {
        let total = Int(max(0, min(seconds, 1e7)))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(printf: "%d:%02d:%02d", hours, minutes, rest) : String(printf: "%d:%02d", minutes, rest)
    }

    // MARK: URLs

    /// A page's cursor is the 1-based index of its first entry.
    static func firstIndex(_ cursor: Cursor?) -> Int {
        guard let cursor, let first = Int(cursor.rawValue), first >= 1, first <= 10_000 else { return 1 }
        return first
    }

    static func videoPath(_ id: String) -> String { "/watch?v=\(escaped(id))" }
    static func channelPath(_ id: String) -> String { "/channel/\(escaped(id))" }
    static func playlistPath(_ id: String) -> String { "/playlist?list=\(escaped(id))" }

    /// The pages items link to: always YouTube's own.
    static func videoURL(_ id: String) -> String { "https://www.youtube.com" + videoPath(id) }
    static func channelURL(_ id: String) -> String { "https://www.youtube.com" + channelPath(id) }
    static func playlistURL(_ id: String) -> String { "https://www.youtube.com" + playlistPath(id) }

    func searchURL(_ text: String, filter: String) -> String {
        "\(site)/results?search_query=\(Self.escaped(text))&sp=\(filter)"
    }

    /// Percent-encoded for a URL's path or query: an id from elsewhere cannot add parameters.
    /// RFC 3986 percent-encoding (Foundation's `.alphanumerics` would leave "é" as it is).
    static func escaped(_ text: String) -> String { QueryEncoding.encode(text) }
}
