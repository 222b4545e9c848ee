import Foundation
import Hummingbird
import MediaKit
import NIOCore
import Sandbox

#if canImport(Glibc)
    import Glibc
#endif

/// The benchmark's big feed: the Podcast Index's example feed (a published feed, recorded byte
/// for byte in Providers/Podcasts/Tests/Recorded/feeds) with its items repeated under unique
/// guids and falling dates, as a long-running show's feed looks.
struct BenchFeed: Sendable {
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Providers/Podcasts/Tests/Recorded/feeds/podcastindex-example.xml")

    private let head: [UInt8]
    private let tail: [UInt8]
    /// Each item split around its guid and its date: parts[0] guid parts[1] date parts[2].
    private let items: [[[UInt8]]]

    init() throws {
        let text = try String(contentsOf: Self.source, encoding: .utf8)
        guard let first = text.range(of: "<item>"), let last = text.range(of: "</item>", options: .backwards) else {
            throw BenchError("no items in \(Self.source.path)")
        }
        head = Array(text[..<first.lowerBound].utf8)
        tail = Array(text[last.upperBound...].utf8)
        var templates: [[[UInt8]]] = []
        var rest = text[first.lowerBound..<last.upperBound]
        while let start = rest.range(of: "<item>"), let end = rest.range(of: "</item>") {
            let item = String(rest[start.lowerBound..<end.upperBound])
            rest = rest[end.upperBound...]
            guard let guidOpen = item.range(of: "<guid"), let guidClose = item.range(of: "</guid>"),
                let dateOpen = item.range(of: "<pubDate>"), let dateClose = item.range(of: "</pubDate>"),
                guidClose.upperBound < dateOpen.lowerBound
            else { throw BenchError("an item of \(Self.source.path) has no guid before its pubDate") }
            templates.append([
                Array((item[..<guidOpen.lowerBound] + "<guid isPermaLink=\"false\">").utf8),
                Array(("</guid>" + item[guidClose.upperBound..<dateOpen.upperBound]).utf8),
                Array(item[dateClose.lowerBound...].utf8),
            ])
        }
        items = templates
    }

    /// Item `n` of the feed (0 is the newest).
    func item(_ n: Int, into out: inout [UInt8]) {
        let parts = items[n % items.count]
        out += parts[0]
        out += Array("bench-\(n)".utf8)
        out += parts[1]
        out += Array(Self.date(hoursAgo: n).utf8)
        out += parts[2]
        out += [0x0A]
    }

    /// The whole feed with `episodes` items.
    func document(episodes: Int) -> [UInt8] {
        var out = head
        for n in 0..<episodes { item(n, into: &out) }
        out += tail
        return out
    }

    /// The feed written piece by piece, for sizes not worth holding in memory.
    func write(episodes: Int, to body: inout some ResponseBodyWriter) async throws {
        try await body.write(ByteBuffer(bytes: head))
        var chunk: [UInt8] = []
        for n in 0..<episodes {
            item(n, into: &chunk)
            if chunk.count > 1 << 20 {
                try await body.write(ByteBuffer(bytes: chunk))
                chunk.removeAll(keepingCapacity: true)
            }
        }
        try await body.write(ByteBuffer(bytes: chunk + tail))
    }

    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// RFC 822, `n` hours before 2026-11-01.
    static func date(hoursAgo n: Int) -> String {
        var time = time_t(1_793_491_200 - n * 3600)
        var parts = tm()
        gmtime_r(&time, &parts)
        let day = days[Int(time / 86400) % 7]
        return String(
            format: "%@, %02d %@ %04d %02d:%02d:%02d GMT", day, parts.tm_mday, months[Int(parts.tm_mon)], parts.tm_year + 1900,
            parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}

/// Serves the benchmark feed as the podcasts provider finds it: a directory lookup naming the
/// feed, and the feed with an ETag (answering 304 to it). `?episodes=N` on the feed changes its
/// length (written as it is sent).
struct BenchFeedReplica: SandboxReplica {
    let id: String
    let feed: BenchFeed
    let document: [UInt8]
    let episodes: Int
    /// The length the directory's feed URL asks for, when not `document`.
    var written: Int? = nil

    func register(_ routes: SandboxRoutes) {
        routes.get("lookup") { request, _ in
            let host = request.head.authority ?? "127.0.0.1"
            let json =
                #"{"resultCount":1,"results":[{"wrapperType":"track","kind":"podcast","collectionId":1,"trackId":1,"collectionName":"Bench Feed","artistName":"Bench","feedUrl":"http://\#(host)/\#(id)/feed.xml\#(written.map { "?episodes=\($0)" } ?? "")","trackCount":\#(written ?? episodes)}]}"#
            return Response(
                status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: json)))
        }
        routes.get("feed.xml") { request, _ in
            let count = request.uri.queryParameters.get("episodes").flatMap { Int($0) }
            let etag = "\"bench-\(count ?? episodes)\""
            if request.headers[.ifNoneMatch] == etag { return Response(status: .notModified, headers: [.eTag: etag]) }
            let headers: HTTPFields = [.contentType: "application/rss+xml; charset=utf-8", .eTag: etag]
            guard let count else {
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: document)))
            }
            let feed = self.feed
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { body in
                    try await feed.write(episodes: count, to: &body)
                    try await body.finish(nil)
                })
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A child process's wall time, peak RSS (KB, when sampled) and exit status (posix_spawn + waitid: Foundation's
/// Process polls for the exit).
func spawnAndWait(
    _ executable: String, _ args: [String], environment: [String: String] = [:], stdout: String = "/dev/null",
    sampleRSS: Bool = false
) -> (
    seconds: Double, maxRSSKB: Int, status: Int32
) {
    var pid: pid_t = 0
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    defer { posix_spawn_file_actions_destroy(&actions) }
    let argv = ([executable] + args).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { envp.forEach { free($0) } }
    let start = now()
    guard posix_spawn(&pid, executable, &actions, nil, argv, envp) == 0 else { return (0, 0, -1) }
    // The peak is the child's high-water mark in /proc, read while it runs (with `sampleRSS`):
    // wait4's ru_maxrss would count the moment between spawn and exec, when the child still
    // shares this (big) process's memory.
    var status: Int32 = 0
    var peak = 0
    if sampleRSS {
        while waitpid(pid, &status, WNOHANG) == 0 {
            peak = max(peak, Int(peakRSS(pid: pid) * 1024))
            usleep(1000)
        }
    } else {
        waitpid(pid, &status, 0)
    }
    let seconds = now() - start
    return (seconds, peak, status)
}

/// The peers' programs in the virtual environment `make bench` makes (nil when it could not).
struct Peers {
    let python: String

    init?(venv: String?) {
        guard let venv, FileManager.default.isExecutableFile(atPath: venv + "/bin/python") else { return nil }
        python = venv + "/bin/python"
    }

    var ytdlp: String { URL(fileURLWithPath: python).deletingLastPathComponent().appendingPathComponent("yt-dlp").path }

    /// Seconds each feed parser takes on the file, best of `runs` (podcastparser, feedparser).
    func parseTimes(file: String, runs: Int) -> [String: Double] {
        let script = """
            import io, json, sys, time
            data = open(sys.argv[1], 'rb').read()
            out = {}
            try:
                import podcastparser
                best = min(timed(lambda: podcastparser.parse('http://127.0.0.1/feed.xml', io.BytesIO(data))) for _ in range(\(runs)))
                out['podcastparser'] = best
            except Exception as e:
                sys.stderr.write('podcastparser: %s\\n' % e)
            try:
                import feedparser
                out['feedparser'] = timed(lambda: feedparser.parse(data))
            except Exception as e:
                sys.stderr.write('feedparser: %s\\n' % e)
            print(json.dumps(out))
            """
        let prelude = "import time\ndef timed(f):\n    t = time.perf_counter(); f(); return time.perf_counter() - t\n"
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", prelude + script, file]
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return [:] }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Double]) ?? [:]
    }
}

/// Reads everything and keeps nothing: what the XML tokenizer alone costs.
final class NullXMLDelegate: XMLStreamDelegate {
    var elements = 0
    func xmlStart(_ name: XMLName, attributes: XMLAttributes) { elements += 1 }
    func xmlEnd(_ name: XMLName, explicit: Bool) {}
    func xmlText(_ text: UnsafeBufferPointer<UInt8>) {}
    var wantsText: Bool { false }
}
