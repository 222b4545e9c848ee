import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// What YouTube without a key needs on this machine: yt-dlp (recent: YouTube changes weekly),
/// a JavaScript runtime for it (since yt-dlp 2025.11.12), ffmpeg to merge formats, and the
/// cookies it is given, readable.
extension YouTubeProvider: DiagnosableProvider {
    /// yt-dlp older than this many days is likely to fail on YouTube.
    static let ytdlpStaleDays = 60

    public func healthChecks(network: Bool) async -> [HealthCheck] {
        var checks: [HealthCheck] = []
        let area = Self.descriptor.id
        let update = "`make ytdlp-update` in mediahost's source (or `pip install -U \"yt-dlp[default]\"`)"
        let needed = keyless ? "reading YouTube and downloads" : "downloads"
        var version: String?
        do {
            let output = try await ytdlp.programs.run(
                ProgramCall(program: ytdlp.program, arguments: ["--version"], timeout: 20, maxOutput: 4096))
            version = String(decoding: output.stdout, as: UTF8.self).trimming(.whitespacesAndNewlines)
        } catch ProgramError.notFound {
            checks.append(
                HealthCheck(
                    area: area, name: "yt-dlp", status: keyless ? .failed : .warning,
                    detail: "'\(ytdlp.program)' is not installed; \(needed) need it",
                    fix:
                        "`make ytdlp` (a venv with yt-dlp and deno), or `pip install \"yt-dlp[default]\"`, or set providers.youtube.ytdlp to its path"
                ))
        } catch {
            checks.append(
                HealthCheck(
                    area: area, name: "yt-dlp", status: .failed, detail: "'\(ytdlp.program)' does not run: \(error)",
                    fix: update))
        }
        if let version {
            let age = Self.age(ofVersion: version, now: now())
            let old = age.map { $0 > Self.ytdlpStaleDays } ?? false
            checks.append(
                HealthCheck(
                    area: area, name: "yt-dlp", status: old ? .warning : .ok,
                    detail: "\(ytdlp.program) \(version)" + (age.map { ", \($0) days old" } ?? ""),
                    fix: old ? "YouTube changes often; update it: \(update)" : nil))
            let runtime = ytdlp.jsRuntime ?? (Self.onPath("deno") ? "deno (on PATH)" : nil)
            checks.append(
                HealthCheck(
                    area: area, name: "JavaScript runtime", status: runtime == nil ? .warning : .ok,
                    detail: runtime.map { "yt-dlp runs YouTube's player with \($0)" }
                        ?? "none: yt-dlp needs one for YouTube since 2025.11 (formats go missing without it)",
                    fix: runtime == nil
                        ? "`make ytdlp` puts deno beside yt-dlp; or install deno and put it on PATH; or set providers.youtube.js_runtime (e.g. node:/usr/bin/node)"
                        : nil))
        }
        let ffmpeg = Self.onPath("ffmpeg")
        checks.append(
            HealthCheck(
                area: area, name: "ffmpeg", status: ffmpeg ? .ok : .warning,
                detail: ffmpeg
                    ? "found: video and audio downloaded apart are merged" : "not found: downloads take the best single file",
                fix: ffmpeg ? nil : "install ffmpeg (apt-get install ffmpeg)"))
        if let cookies = ytdlp.cookies {
            let readable = FileManager.default.isReadableFile(atPath: cookies)
            checks.append(
                HealthCheck(
                    area: area, name: "cookies", status: readable ? .ok : .failed,
                    detail: readable ? "\(cookies) is readable" : "\(cookies) cannot be read",
                    fix: readable
                        ? nil : "export your browser's YouTube cookies to it, or set providers.youtube.cookies_from_browser"))
        }
        if let browser = ytdlp.cookiesFromBrowser {
            checks.append(HealthCheck(area: area, name: "cookies", status: .ok, detail: "taken from \(browser) by yt-dlp"))
        }
        checks.append(
            HealthCheck(
                area: area, name: "API key", status: .ok,
                detail: keyless
                    ? "none: YouTube is read through yt-dlp (charts and categories need a key)"
                    : "set: the Data API reads YouTube",
                fix: keyless ? "optional: set YOUTUBE_API_KEY for charts and categories" : nil))
        return checks
    }

    /// Days since the date a yt-dlp version names ("2026.10.26" or "2026.10.26.1").
    static func age(ofVersion version: String, now: Date) -> Int? {
        let parts = version.split(separator: ".").prefix(3).compactMap { Int($0) }
        guard parts.count == 3, var calendar = Optional(Calendar(identifier: .gregorian)) else { return nil }
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .current
        guard let date = calendar.date(from: DateComponents(year: parts[0], month: parts[1], day: parts[2])) else { return nil }
        return max(0, Int(now.timeIntervalSince(date) / 86_400))
    }

    static func onPath(_ program: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(program)")
        }
    }
}
