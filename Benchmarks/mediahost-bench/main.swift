import BuiltinProviders
// Benchmarks for the host core (`make bench`). Figures, not pass/fail: the README keeps a table.
import Foundation
import JSONRPC
import MediaHTTP
import MediaHost
import MediaKit
import MediaStore
import Podcasts
import PodcastsSandbox
import Sandbox

#if canImport(Glibc)
    import Glibc
#endif

let arguments = CommandLine.arguments
let binary = arguments.firstIndex(of: "--binary").map { arguments[$0 + 1] } ?? ".build/release/mediahost"
/// Run one group only: json, rpc, cold, favorites, lists, service, feed, pictures, transcripts, sync, queue, refresh, http, search, plugin, downloads, ytdlp.
let only = arguments.firstIndex(of: "--only").map { arguments[$0 + 1] }
/// An earlier build to compare size and start-up with (`make bench PREVIOUS=<binary>`).
let previous = arguments.firstIndex(of: "--previous").map { arguments[$0 + 1] }
/// The Python virtual environment with the peers (podcastparser, feedparser, yt-dlp).
let venv = arguments.firstIndex(of: "--peers").map { arguments[$0 + 1] }
func selected(_ name: String) -> Bool { only == nil || only == name }
let scratch = NSTemporaryDirectory() + "mediahost-bench-\(getpid())"
try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: scratch) }

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func report(_ name: String, _ value: String, goal: String) {
    print("| \(name) | \(value) | \(goal) |")
}

/// `mediahost rpc` with raw pipes.
final class RPCChild: @unchecked Sendable {
    let process = Process()
    let input = Pipe()
    let output = Pipe()

    init(dataDir: String, environment: [String: String] = [:], command: String = "rpc") throws {
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [command, "--data-dir", dataDir]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// Reads reply lines, calling `body` with each line's bytes, until `count` lines arrived.
    func readLines(_ count: Int, _ body: (ArraySlice<UInt8>) -> Void) {
        let fd = output.fileHandleForReading.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var pending: [UInt8] = []
        var seen = 0
        while seen < count {
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { return }
            pending.append(contentsOf: buffer[0..<n])
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                body(pending[start..<newline])
                seen += 1
                start = newline + 1
            }
            pending.removeSubrange(pending.startIndex..<start)
        }
    }

    func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

func replyID(_ line: ArraySlice<UInt8>) -> Int? {
    // Replies start with {"jsonrpc":"2.0","id":N,
    let prefix = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
    guard line.count > prefix.count, line.starts(with: prefix) else { return nil }
    var value = 0
    for byte in line.dropFirst(prefix.count) {
        guard byte >= 0x30, byte <= 0x39 else { break }
        value = value * 10 + Int(byte - 0x30)
    }
    return value
}

/// Peak resident memory of a process so far (VmHWM), in MB.
func peakRSS(pid: Int32? = nil) -> Double {
    let path = pid.map { "/proc/\($0)/status" } ?? "/proc/self/status"
    guard let status = try? String(contentsOfFile: path, encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return 0 }
    return Double(line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0) / 1024
}

if !arguments.contains("--quiet-header") {
    print("| benchmark | result | goal |")
    print("|---|---|---|")
    fflush(nil)
}

// The feed and picture benchmarks run first, each in a fresh process of its own, so its peak
// memory is its own.
if only == nil {
    for group in ["feed", "pictures"] {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["--only", group, "--quiet-header", "--binary", binary] + (venv.map { ["--peers", $0] } ?? [])
        try child.run()
        child.waitUntilExit()
    }
}
if only == "pictures" { try pictureBench() }
if selected("json") { jsonBench() }
if selected("transcripts") { try await transcriptBench() }
if selected("sync") { try await syncBench() }
if selected("queue") { try await queueBench() }
if selected("refresh") { try await refreshBench() }
if only == "feed" {
    // 5. The big feed: parse alone in this process, the peers on the same bytes, then end to end
    // from a cold `mediahost call media.children` with a fresh data dir, re-opened (304), and a
    // 100 MB feed's peak memory.
    let feed = try BenchFeed()
    let episodes = 4000
    let document = feed.document(episodes: episodes)
    let file = scratch + "/feed.xml"
    try Data(document).write(to: URL(fileURLWithPath: file))
    let megabytes = Double(document.count) / 1_000_000
    let size = String(format: "%d episodes, %.1f MB", episodes, megabytes)
    let data = Data(document)
    var parseTimes: [Double] = []
    for _ in 0..<7 {
        let start = now()
        let parsed = try FeedParser.parse(data, url: URL(string: "http://127.0.0.1/feed.xml"))
        parseTimes.append(now() - start)
        guard parsed.episodes.count == episodes else { throw BenchError("parsed \(parsed.episodes.count) episodes") }
    }
    let parse = percentile(parseTimes, 0.5)
    // The same bytes in the quarter-MiB chunks the provider reads: the tokenizer alone (no
    // delegate work), then the feed parser.
    func chunked(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try document.withUnsafeBytes { all in
            var offset = 0
            while offset < all.count {
                let end = min(all.count, offset + (1 << 18))
                try body(UnsafeRawBufferPointer(rebasing: all[offset..<end]))
                offset = end
            }
        }
    }
    var tokenizerTimes: [Double] = []
    var chunkedTimes: [Double] = []
    for _ in 0..<7 {
        let null = NullXMLDelegate()
        let stream = XMLStream(delegate: null)
        var start = now()
        try chunked { try stream.feed($0) }
        try stream.finish()
        tokenizerTimes.append(now() - start)
        guard null.elements > episodes * 10 else { throw BenchError("the tokenizer saw \(null.elements) elements") }
        var count = 0
        let parser = FeedParser(url: URL(string: "http://127.0.0.1/feed.xml")) { _ in count += 1 }
        start = now()
        try chunked { try parser.feed($0) }
        _ = try parser.finish()
        chunkedTimes.append(now() - start)
        guard count == episodes else { throw BenchError("parsed \(count) episodes in chunks") }
    }
    let tokenizer = percentile(tokenizerTimes, 0.5)
    report(
        "tokenize it alone (XMLStream, no delegate work, 256 KiB chunks)",
        String(format: "%.0f ms (%.0f MB/s)", tokenizer * 1000, megabytes / tokenizer), goal: "report")
    let chunkedParse = percentile(chunkedTimes, 0.5)
    report(
        "parse it in 256 KiB chunks (as the provider reads it)",
        String(format: "%.0f ms (%.0f MB/s)", chunkedParse * 1000, megabytes / chunkedParse), goal: "report")
    let peerTimes = Peers(venv: venv)?.parseTimes(file: file, runs: 3) ?? [:]
    func versus(_ seconds: Double) -> String {
        let ratios = ["podcastparser", "feedparser"].compactMap { peer in
            peerTimes[peer].map { String(format: "%@ %.0f ms: %.1f× faster", peer, $0 * 1000, $0 / seconds) }
        }
        return ratios.isEmpty ? "(no peers: `make bench` installs them in .build/bench-venv)" : ratios.joined(separator: "; ")
    }
    report(
        "parse a real-world feed (\(size)) in process",
        String(format: "%.0f ms (%.0f MB/s); ", parse * 1000, megabytes / parse) + versus(parse),
        goal: "report")

    let server = SandboxServer(replicas: [
        BenchFeedReplica(id: "benchfeed", feed: feed, document: document, episodes: episodes),
        BenchFeedReplica(
            id: "benchbig", feed: feed, document: [], episodes: 0, written: Int(100e6 / (megabytes * 1e6) * Double(episodes))),
    ])
    let port = try await server.start()
    defer { server.stop() }
    func open(_ replica: String, _ dataDir: String, sampleRSS: Bool = false) throws -> (seconds: Double, maxRSSKB: Int) {
        let output = scratch + "/children.json"
        let run = spawnAndWait(
            binary, ["call", "media.children", #"{"id":"podcasts:podcast:1"}"#, "--data-dir", dataDir],
            environment: ["MEDIAHOST_PODCASTS_BASE_URL": "http://127.0.0.1:\(port)/\(replica)"], stdout: output,
            sampleRSS: sampleRSS)
        let answer = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: output))))
        guard run.status == 0, answer["items"]?.arrayValue?.count == 20 else {
            throw BenchError("`mediahost call media.children` failed (status \(run.status)): \(answer.jsonString.prefix(300))")
        }
        return (run.seconds, run.maxRSSKB)
    }
    // Cold processes, alternating: a fresh data dir (the first call ever creates the database),
    // and a copy of a data dir made by an earlier call (a person opening a feed new to them).
    let made = scratch + "/made"
    guard spawnAndWait(binary, ["call", "host.info", "--data-dir", made]).status == 0 else {
        throw BenchError("`mediahost call host.info` failed")
    }
    var cold: [Double] = []
    var coldExisting: [Double] = []
    for n in 0..<9 {
        cold.append(try open("benchfeed", scratch + "/feed-\(n)").seconds)
        let copy = scratch + "/existing-\(n)"
        try FileManager.default.copyItem(atPath: made, toPath: copy)
        coldExisting.append(try open("benchfeed", copy).seconds)
    }
    var reopen: [Double] = []
    for _ in 0..<15 { reopen.append(try open("benchfeed", scratch + "/feed-0").seconds) }
    let endToEnd = percentile(cold, 0.5)
    let endToEndExisting = percentile(coldExisting, 0.5)
    report(
        "open it end to end: cold `mediahost call media.children`, existing data dir",
        String(format: "median %.0f ms; ", endToEndExisting * 1000) + versus(endToEndExisting), goal: "≥ 10× podcastparser")
    report(
        "the same with a fresh data dir (the call creates the database)",
        String(format: "median %.0f ms; ", endToEnd * 1000) + versus(endToEnd), goal: "report")
    report(
        "re-open it (the server answers 304)", String(format: "median %.1f ms", percentile(reopen, 0.5) * 1000), goal: "≤ 25 ms")
    let big = try open("benchbig", scratch + "/feed-big", sampleRSS: true)
    report(
        "open a 100 MB feed end to end", String(format: "%.2f s, peak RSS %.0f MB", big.seconds, Double(big.maxRSSKB) / 1024),
        goal: "< 150 MB")
    exit(0)
}

// 1. Pipelined host.info over stdio.
if selected("rpc") {
    let count = 100_000
    let child = try RPCChild(dataDir: scratch + "/pipelined")
    let payload = Data((0..<count).flatMap { id in Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"host.info"}"#.utf8) + [0x0A] })
    // Warm up the process (start-up, first calls) before timing.
    child.input.fileHandleForWriting.write(Data(#"{"jsonrpc":"2.0","id":0,"method":"host.info"}"#.utf8 + [0x0A]))
    child.readLines(1) { _ in }
    let start = now()
    let writer = Thread { child.input.fileHandleForWriting.write(payload) }
    writer.start()
    var received = 0
    child.readLines(count) { _ in received += 1 }
    let elapsed = now() - start
    let serverPeak = peakRSS(pid: child.process.processIdentifier)
    child.finish()
    report("peak RSS of `mediahost rpc` during that run", String(format: "%.1f MB", serverPeak), goal: "flat")
    report(
        "pipelined host.info over stdio",
        String(format: "%.0f req/s (%d in %.2f s)", Double(received) / elapsed, received, elapsed), goal: "≥ 73,000 req/s")
}

// 2. Latency at a steady 1,000 requests/s.
if selected("rpc") {
    let count = 5_000
    let child = try RPCChild(dataDir: scratch + "/paced")
    let sent = SendTimes(count: count)
    var latencies: [Double] = []
    latencies.reserveCapacity(count)
    let writer = Thread {
        let handle = child.input.fileHandleForWriting
        let begin = now()
        for id in 0..<count {
            let due = begin + Double(id) / 1000
            while now() < due { usleep(50) }
            sent.set(id, now())
            handle.write(Data(#"{"jsonrpc":"2.0","id":\#(id),"method":"host.info"}"#.utf8 + [0x0A]))
        }
    }
    writer.start()
    child.readLines(count) { line in
        let arrived = now()
        guard let id = replyID(line) else { return }
        latencies.append(arrived - sent.get(id))
    }
    child.finish()
    report(
        "host.info latency at 1,000 req/s",
        String(format: "p50 %.3f ms, p99 %.3f ms", percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000),
        goal: "p99 < 0.5 ms")
}

// 3. Start-up: `mediahost --version` and a cold `mediahost call host.info` (wall time from
// process start, and peak memory), against `yt-dlp --version` when the peers are installed.
if selected("cold") {
    func median(_ runs: Int, _ executable: String, _ args: [String]) -> (seconds: Double, p90: Double, maxRSSKB: Int) {
        var times: [Double] = []
        var peakKB = 0
        for _ in 0..<runs { times.append(spawnAndWait(executable, args).seconds) }
        // Memory in runs of their own: sampling /proc while timing would slow the timed runs.
        for _ in 0..<3 { peakKB = max(peakKB, spawnAndWait(executable, args, sampleRSS: true).maxRSSKB) }
        return (percentile(times, 0.5), percentile(times, 0.9), peakKB)
    }
    // The yardstick: a statically linked Swift hello that imports Foundation, built here by the
    // same toolchain, timed in the same runs.
    let hello = scratch + "/hello"
    try "import Foundation\nprint(Date.now.timeIntervalSince1970 > 0 ? \"hello\" : \"\")\n".write(
        toFile: hello + ".swift", atomically: true, encoding: .utf8)
    let built = spawnAndWait("/usr/bin/env", ["swiftc", "-O", "-static-stdlib", hello + ".swift", "-o", hello])
    let haveHello = built.status == 0 && FileManager.default.isExecutableFile(atPath: hello)
    if !haveHello { print("note: the Swift hello could not be built (swiftc not on PATH?): no ratios") }
    let args = ["call", "host.info", "--data-dir", scratch + "/cold"]
    _ = spawnAndWait(binary, args)  // creates the database
    // Alternating, so that a noisy minute weighs on each the same.
    var helloTimes: [Double] = [], versionTimes: [Double] = [], coldTimes: [Double] = []
    var previousVersion: [Double] = [], previousCold: [Double] = []
    let previousArgs = ["call", "host.info", "--data-dir", scratch + "/cold-previous"]
    if let previous { _ = spawnAndWait(previous, previousArgs) }
    for _ in 0..<60 {
        if haveHello { helloTimes.append(spawnAndWait(hello, []).seconds) }
        versionTimes.append(spawnAndWait(binary, ["--version"]).seconds)
        coldTimes.append(spawnAndWait(binary, args).seconds)
        if let previous {
            previousVersion.append(spawnAndWait(previous, ["--version"]).seconds)
            previousCold.append(spawnAndWait(previous, previousArgs).seconds)
        }
    }
    func ms(_ times: [Double]) -> Double { percentile(times, 0.5) * 1000 }
    func ratio(_ times: [Double]) -> String {
        haveHello ? String(format: " (%.1f× the hello's %.2f ms)", ms(times) / ms(helloTimes), ms(helloTimes)) : ""
    }
    func before(_ times: [Double]) -> String {
        previous == nil ? "" : String(format: "; the previous build %.2f ms%@", ms(times), ratio(times))
    }
    report(
        "`mediahost --version`",
        String(format: "median %.2f ms", ms(versionTimes)) + ratio(versionTimes) + before(previousVersion),
        goal: "≤ 1.5× the hello")
    func megabytes(_ path: String, stripped: Bool) -> String {
        var file = path
        if stripped {
            file = scratch + "/stripped-\(abs(path.hashValue))"
            _ = spawnAndWait("/usr/bin/strip", [path, "-o", file])
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        return String(format: "%.1f MB", Double(size) / 1_000_000)
    }
    report(
        "the release binary's size",
        "\(megabytes(binary, stripped: false)), stripped \(megabytes(binary, stripped: true))"
            + (previous.map {
                "; the previous build \(megabytes($0, stripped: false)), stripped \(megabytes($0, stripped: true))"
            } ?? ""),
        goal: "< 25 MB stripped")
    var peakKB = 0
    for _ in 0..<3 { peakKB = max(peakKB, spawnAndWait(binary, args, sampleRSS: true).maxRSSKB) }
    let cold = (seconds: percentile(coldTimes, 0.5), p90: percentile(coldTimes, 0.9), maxRSSKB: peakKB)
    var versus = ""
    if let peers = Peers(venv: venv), FileManager.default.isExecutableFile(atPath: peers.ytdlp) {
        let ytdlp = median(10, peers.ytdlp, ["--version"])
        versus = String(format: "; `yt-dlp --version` %.0f ms: %.0f× faster", ytdlp.seconds * 1000, ytdlp.seconds / cold.seconds)
    }
    report(
        "cold `mediahost call host.info`",
        String(
            format: "median %.1f ms, p90 %.1f ms; peak RSS %.1f MB", cold.seconds * 1000, cold.p90 * 1000,
            Double(cold.maxRSSKB) / 1024) + ratio(coldTimes) + before(previousCold) + versus,
        goal: "≤ 4× the hello")
}

// 3b. `mediahost mcp` from its start to its answer to `initialize` (it asks the host which
// methods it serves first), against `mediahost rpc` to its first answer.
if selected("cold") {
    func firstAnswer(_ command: String, _ request: String) throws -> Double {
        var times: [Double] = []
        for _ in 0..<20 {
            let start = now()
            let child = try RPCChild(dataDir: scratch + "/cold", command: command)
            child.input.fileHandleForWriting.write(Data(request.utf8 + [0x0A]))
            child.readLines(1) { _ in }
            times.append(now() - start)
            child.finish()
        }
        return percentile(times, 0.5)
    }
    let mcp = try firstAnswer(
        "mcp",
        #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#
    )
    let rpc = try firstAnswer("rpc", #"{"jsonrpc":"2.0","id":1,"method":"host.info"}"#)
    report(
        "`mediahost mcp` start to its `initialize` answer",
        String(format: "median %.1f ms; `mediahost rpc` to its first answer %.1f ms", mcp * 1000, rpc * 1000), goal: "≤ 20 ms")
}

// 4. favorites.list, a page of 50, with 100,000 favorites stored.
if selected("favorites") {
    let paths = HostPaths(configFile: scratch + "/none.toml", dataDir: scratch + "/favorites", cacheDir: scratch + "/cache")
    let store = try MediaStore(path: paths.database)
    let fill = now()
    let items = (0..<100_000).map { n in
        MediaItem(
            id: ItemID(provider: ["podcasts", "youtube", "tmdb"][n % 3], kind: .video, nativeID: "item-\(n)"),
            title: "Favorite number \(n) with a realistic title", subtitle: "Channel \(n % 100)",
            summary: String(repeating: "A summary sentence. ", count: 10), url: "https://example.invalid/\(n)",
            artwork: "https://example.invalid/\(n).jpg", published: "2026-01-01T00:00:00Z", duration: 1234, stats: ["views": n])
    }
    try await store.addFavorites(items, at: Date(timeIntervalSince1970: 1_700_000_000))
    let fillTime = now() - fill
    let host = try HostRuntime(paths: paths, providers: [], http: BenchNoNetwork(), environment: [:])
    var firstPage: [Double] = []
    var deepPage: [Double] = []
    var providerPage: [Double] = []
    var cursor: JSONValue?
    for _ in 0..<200 {
        var start = now()
        let bytes = try await host.dispatcher.call("favorites.list", params: ["limit": 50])
        firstPage.append(now() - start)
        if cursor == nil, let next = try JSONParser.parse(bytes)["next"] { cursor = next }
        start = now()
        _ = try await host.dispatcher.call("favorites.list", params: ["limit": 50, "cursor": cursor ?? nil])
        deepPage.append(now() - start)
        start = now()
        _ = try await host.dispatcher.call("favorites.list", params: ["limit": 50, "provider": "tmdb"])
        providerPage.append(now() - start)
    }
    report(
        "favorites.list page of 50, 100,000 stored",
        String(
            format: "p50 %.2f ms, p99 %.2f ms (next page p50 %.2f ms, one provider p50 %.2f ms; filling took %.1f s)",
            percentile(firstPage, 0.5) * 1000, percentile(firstPage, 0.99) * 1000, percentile(deepPage, 0.5) * 1000,
            percentile(providerPage, 0.5) * 1000, fillTime),
        goal: "< 5 ms")
}

// 4b. A 10,000-item list: an OPML of 10,000 subscriptions imported, exported (OPML and JSON) and
// paged through (500 a page), each a cold `mediahost call` as a person or a script runs it.
if selected("lists") {
    let count = 10_000
    var opml =
        #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<opml version=\"2.0\"><head><title>Subscriptions</title></head><body>\n"
    for n in 0..<count {
        opml +=
            #"<outline type="rss" text="Show number \#(n) &amp; friends" title="Show number \#(n) &amp; friends" "#
            + #"xmlUrl="https://feeds.example.com/show/\#(n)/feed.xml" htmlUrl="https://example.com/show/\#(n)"/>"# + "\n"
    }
    opml += "</body></opml>\n"
    let file = scratch + "/subscriptions.opml"
    try Data(opml.utf8).write(to: URL(fileURLWithPath: file))
    func cold(_ dataDir: String, _ method: String, _ params: String, stdout: String = "/dev/null") throws -> Double {
        let run = spawnAndWait(binary, ["call", method, params, "--data-dir", dataDir, "--no-service"], stdout: stdout)
        guard run.status == 0 else { throw BenchError("\(method) failed (\(run.status))") }
        return run.seconds
    }
    var imports: [Double] = []
    var exportsOPML: [Double] = []
    var exportsJSON: [Double] = []
    var pages: [Double] = []
    var pageTotals: [Double] = []
    for run in 0..<5 {
        let dataDir = scratch + "/lists-\(run)"
        _ = try cold(dataDir, "host.info", "{}")
        imports.append(try cold(dataDir, "lists.import", #"{"path":"\#(file)","name":"big"}"#))
        exportsOPML.append(try cold(dataDir, "lists.export", #"{"name":"big","format":"opml","path":"\#(scratch)/out.opml"}"#))
        exportsJSON.append(try cold(dataDir, "lists.export", #"{"name":"big","format":"json","path":"\#(scratch)/out.json"}"#))
        var cursor: JSONValue? = nil
        var total = 0.0
        var seen = 0
        repeat {
            let page = scratch + "/page.json"
            let params: JSONValue = ["name": "big", "limit": 500, "cursor": cursor ?? nil]
            let seconds = try cold(dataDir, "lists.items", params.jsonString, stdout: page)
            pages.append(seconds)
            total += seconds
            let answer = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: page))))
            seen += answer["items"]?.arrayValue?.count ?? 0
            cursor = answer["next"]
        } while cursor != nil && cursor != .null
        guard seen == count else { throw BenchError("paged through \(seen) of \(count) items") }
        pageTotals.append(total)
    }
    // An editor pages in one `mediahost rpc` session: the 20 pages there, start excluded.
    var sessionTotals: [Double] = []
    for _ in 0..<5 {
        let child = try RPCChild(dataDir: scratch + "/lists-0")
        child.input.fileHandleForWriting.write(Data(#"{"jsonrpc":"2.0","id":0,"method":"host.info"}"#.utf8 + [0x0A]))
        child.readLines(1) { _ in }
        let start = now()
        var cursor: JSONValue? = nil
        var id = 0
        repeat {
            id += 1
            let request: JSONValue = [
                "jsonrpc": "2.0", "id": .number(String(id)), "method": "lists.items",
                "params": ["name": "big", "limit": 500, "cursor": cursor ?? nil],
            ]
            child.input.fileHandleForWriting.write(Data(request.jsonString.utf8 + [0x0A]))
            var line: [UInt8] = []
            child.readLines(1) { line = Array($0) }
            cursor = try JSONParser.parse(line)["result"]?["next"]
        } while cursor != nil && cursor != .null
        sessionTotals.append(now() - start)
        child.finish()
    }
    let exported = try String(contentsOfFile: scratch + "/out.opml", encoding: .utf8)
    guard exported.components(separatedBy: "<outline").count - 1 == count else { throw BenchError("the export lost items") }
    report(
        "a 10,000-item list, cold `mediahost call`s: import its OPML (2.0 MB)",
        String(format: "median %.0f ms", percentile(imports, 0.5) * 1000), goal: "< 200 ms")
    report(
        "export that list as OPML / as JSON",
        String(
            format: "median %.0f ms / %.0f ms", percentile(exportsOPML, 0.5) * 1000, percentile(exportsJSON, 0.5) * 1000),
        goal: "< 200 ms")
    report(
        "page through it, 500 a page (20 cold calls)",
        String(
            format: "a page median %.1f ms, p90 %.1f ms; all 20 %.0f ms; all 20 in one `mediahost rpc` session %.0f ms",
            percentile(pages, 0.5) * 1000, percentile(pages, 0.9) * 1000, percentile(pageTotals, 0.5) * 1000,
            percentile(sessionTotals, 0.5) * 1000),
        goal: "< 200 ms")
}

// 4c. The background service: 20 clients calling host.info one after another, alone and then
// beside 2 clients that send and never read (the service must cut those, not slow the others
// nor grow without bound).
if selected("service") {
    let load = ServiceLoad(binary: binary, dataDir: scratch + "/service")
    let alone = try load.run(readers: 20, silent: 0, seconds: 5)
    let loaded = try load.run(readers: 20, silent: 2, seconds: 10)
    func figures(_ run: ServiceLoad.Figures) -> String {
        String(
            format: "p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms, %.0f calls/s", percentile(run.latencies, 0.5) * 1000,
            percentile(run.latencies, 0.99) * 1000, percentile(run.latencies, 0.999) * 1000, Double(run.calls) / run.seconds)
    }
    report(
        "service: `host.info` from 20 clients at once, while 2 more send and never read",
        figures(loaded)
            + String(
                format: "; the 2 sent %.1f MB of calls and were cut off %d times; service RSS peak %.0f MB, at the end %.0f MB",
                loaded.silentSentMB, loaded.cutOff, loaded.peakRSSMB, loaded.lastRSSMB),
        goal: "p99 < 5 ms, memory bounded")
    report(
        "the same 20 clients with no silent ones",
        figures(alone) + String(format: "; service RSS peak %.0f MB", alone.peakRSSMB), goal: "report")
}

// 6 and 7. The HTTP path against the sandbox on loopback.
if selected("http") {
    let server = SandboxServer(replicas: [PodcastsReplica()])
    let port = try await server.start()
    let base = "http://127.0.0.1:\(port)/podcasts"
    let searchURL = "\(base)/search?country=us&entity=podcast&limit=20&media=podcast&offset=0&term=garden"

    // curl's own measure of the transfer (no process start-up in it).
    var curlTimes: [Double] = []
    for _ in 0..<30 {
        let curl = Process()
        let pipe = Pipe()
        curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        curl.arguments = ["-s", "-o", "/dev/null", "-w", "%{time_total}", searchURL]
        curl.standardOutput = pipe
        try curl.run()
        curl.waitUntilExit()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        if let seconds = Double(text) { curlTimes.append(seconds) }
    }
    let paths = HostPaths(configFile: scratch + "/none.toml", dataDir: scratch + "/http", cacheDir: scratch + "/cache")
    let host = try HostRuntime(
        paths: paths, providers: BuiltinProviders.all, http: MediaHTTPClient(),
        environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
    var hostTimes: [Double] = []
    for n in 0..<60 {
        let start = now()
        _ = try await host.dispatcher.call("media.search", params: ["provider": "podcasts", "query": "garden"])
        if n >= 10 { hostTimes.append(now() - start) }  // the first calls open connections
    }
    let curlMedian = percentile(curlTimes, 0.5) * 1000
    let hostMedian = percentile(hostTimes, 0.5) * 1000
    report(
        "`media.search` vs curl on the same URL",
        String(format: "host %.2f ms, curl %.2f ms: %.2f ms added per call", hostMedian, curlMedian, hostMedian - curlMedian),
        goal: "< 5 ms added")

    let client = MediaHTTPClient()
    let start = now()
    let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
        for n in 0..<200 {
            group.addTask {
                try await client.send(HTTPRequest(url: URL(string: "\(base)/lookup?id=\(1_000_000_000 + (n % 600) * 7919)")!))
                    .status
            }
        }
        var statuses: [Int] = []
        for try await status in group { statuses.append(status) }
        return statuses
    }
    let elapsed = now() - start
    report(
        "200 concurrent requests to the sandbox",
        String(
            format: "%d/200 succeeded in %.0f ms: %.0f req/s (6 per host at once)", statuses.filter { $0 == 200 }.count,
            elapsed * 1000, 200 / elapsed),
        goal: "all succeed")
    server.stop()
}

// Federated search: `media.search` with no provider against the separate sandbox process, as
// `mediahost --sandbox` runs it, next to each provider alone in the same `mediahost rpc`.
if selected("search") {
    let sandbox = Process()
    let sandboxIn = Pipe()
    let sandboxOut = Pipe()
    sandbox.executableURL = URL(fileURLWithPath: binary).deletingLastPathComponent().appendingPathComponent("mediahost-sandbox")
    sandbox.arguments = ["--child"]
    sandbox.standardInput = sandboxIn
    sandbox.standardOutput = sandboxOut
    try sandbox.run()
    var line = Data()
    while !line.contains(0x0A) {
        let data = sandboxOut.fileHandleForReading.availableData
        if data.isEmpty { break }
        line += data
    }
    let environment = (try JSONSerialization.jsonObject(with: line) as? [String: String]) ?? [:]
    let child = try RPCChild(dataDir: scratch + "/search", environment: environment)
    var nextID = 0
    func timed(_ params: String) -> Double {
        nextID += 1
        let start = now()
        child.input.fileHandleForWriting.write(
            Data(#"{"jsonrpc":"2.0","id":\#(nextID),"method":"media.search","params":\#(params)}"#.utf8 + [0x0A]))
        child.readLines(1) { _ in }
        return now() - start
    }
    let providers = ["youtube", "tmdb", "podcasts", "twitter", "mastodon"]
    let queries = ["swift", "garden", "orbit", "kitchen", "space"]
    var alone: [String: [Double]] = [:]
    var all: [Double] = []
    for round in 0..<40 {
        let query = queries[round % queries.count]
        var slowest = 0.0
        for provider in providers {
            let time = timed(#"{"provider":"\#(provider)","query":"\#(query)"}"#)
            alone[provider, default: []].append(time)
            slowest = max(slowest, time)
        }
        let federated = timed(#"{"query":"\#(query)"}"#)
        if round >= 5 { all.append(federated - slowest) }  // the first rounds open connections
    }
    child.finish()
    try? sandboxIn.fileHandleForWriting.close()
    sandbox.waitUntilExit()
    let slowestProvider = providers.max { percentile(alone[$0]!, 0.5) < percentile(alone[$1]!, 0.5) }!
    report(
        "`media.search` across 5 providers vs the slowest alone (same query, same process)",
        String(
            format: "median %.2f ms more than the slowest (%@, median %.1f ms alone), p90 %.2f ms", percentile(all, 0.5) * 1000,
            slowestProvider, percentile(alone[slowestProvider]!, 0.5) * 1000, percentile(all, 0.9) * 1000),
        goal: "≤ 5 ms more")
}

// A plugin's round trip: `media.search` through a minimal plugin in Python against `host.info` in
// the same `mediahost rpc` (what the plugin protocol adds per call), and its start to first answer.
if selected("plugin") {
    let dataDir = scratch + "/plugin-data"
    let folder = dataDir + "/plugins/echo"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try """
    #!/usr/bin/env python3
    import json, sys
    ITEM = {"id": "echo:video:1", "provider": "echo", "kind": "video", "title": "One"}
    for line in sys.stdin:
        m = json.loads(line)
        if "id" not in m:
            continue
        r = {"id": "echo"} if m["method"] == "initialize" else {"items": [ITEM]}
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)

    """.write(toFile: folder + "/echo.py", atomically: true, encoding: .utf8)
    chmod(folder + "/echo.py", 0o755)
    try #"command = "./echo.py"\#nkinds = ["video"]\#ncapabilities = ["search"]\#n"#.write(
        toFile: folder + "/plugin.toml", atomically: true, encoding: .utf8)
    let child = try RPCChild(dataDir: dataDir)
    var nextID = 0
    func timed(_ method: String, _ params: String) -> Double {
        nextID += 1
        let start = now()
        child.input.fileHandleForWriting.write(
            Data(#"{"jsonrpc":"2.0","id":\#(nextID),"method":"\#(method)","params":\#(params)}"#.utf8 + [0x0A]))
        child.readLines(1) { _ in }
        return now() - start
    }
    _ = timed("host.info", "{}")
    let first = timed("media.search", #"{"provider":"echo","query":"one"}"#)
    var plugin: [Double] = []
    var info: [Double] = []
    for _ in 0..<500 {
        plugin.append(timed("media.search", #"{"provider":"echo","query":"one"}"#))
        info.append(timed("host.info", "{}"))
    }
    child.finish()
    report(
        "`media.search` through a minimal Python plugin vs `host.info`, same `mediahost rpc`",
        String(
            format: "p50 %.2f ms vs %.2f ms: %.2f ms added per call (p99 %.2f ms); start to first answer %.0f ms",
            percentile(plugin, 0.5) * 1000, percentile(info, 0.5) * 1000,
            (percentile(plugin, 0.5) - percentile(info, 0.5)) * 1000,
            percentile(plugin, 0.99) * 1000, first * 1000),
        goal: "< 1 ms added")
}

/// `mediahost sandbox` in a process of its own, serving media as fast as it can, and the settings
/// it prints (`NAME=value`: base URLs, the stand-in site, keys).
func startSandbox() throws -> (Process, [String: String]) {
    let sandbox = Process()
    let output = Pipe()
    sandbox.executableURL = URL(fileURLWithPath: binary)
    sandbox.arguments = ["sandbox", "--port", "0", "--media-rate", "0"]
    sandbox.standardOutput = output
    try sandbox.run()
    var buffered = ""
    // The settings are printed at once, ending with the keys' lines.
    while !buffered.contains("YOUTUBE_API_KEY=") {
        let data = output.fileHandleForReading.availableData
        if data.isEmpty { break }
        buffered += String(decoding: data, as: UTF8.self)
    }
    var settings: [String: String] = [:]
    for line in buffered.split(separator: "\n") {
        let words = line.split(separator: " ").last ?? ""
        if let equals = words.firstIndex(of: "=") {
            settings[String(words[..<equals])] = String(words[words.index(after: equals)...])
        }
    }
    guard settings["MEDIAHOST_PODCASTS_BASE_URL"] != nil else { throw BenchError("the sandbox printed no settings") }
    return (sandbox, settings)
}

/// Starts downloads of `ids` in one `mediahost rpc` (a fresh `dataDir`, removed after) and waits
/// until each has completed: the time that took and the rpc's peak memory.
/// - Throws: when one fails or is refused.
func downloadThroughRPC(_ ids: [String], dataDir: String, environment: [String: String]) throws -> (
    seconds: Double, peakMB: Double
) {
    let child = try RPCChild(dataDir: dataDir, environment: environment)
    defer { try? FileManager.default.removeItem(atPath: dataDir) }
    let start = now()
    let requests = ids.enumerated().map { index, id in
        #"{"jsonrpc":"2.0","id":\#(index + 1),"method":"downloads.start","params":{"id":"\#(id)"}}"# + "\n"
    }
    child.input.fileHandleForWriting.write(Data(requests.joined().utf8))
    var completed = Set<String>()
    var failure: String?
    var peak = 0.0
    var lastSample = now()
    while completed.count < ids.count, failure == nil {
        var ended = true
        child.readLines(1) { line in
            ended = false
            guard let message = try? JSONParser.parse(Array(line)) else { return }
            if message["error"] != nil { failure = message.jsonString }
            guard message["method"] == "downloads.state", let id = message["params"]?["id"]?.stringValue else { return }
            switch message["params"]?["state"] {
            case "completed": completed.insert(id)
            case "failed": failure = message.jsonString
            default: break
            }
        }
        if ended { failure = failure ?? "mediahost rpc ended" }
        if now() - lastSample > 0.2 {
            peak = max(peak, peakRSS(pid: child.process.processIdentifier))
            lastSample = now()
        }
    }
    let seconds = now() - start
    peak = max(peak, peakRSS(pid: child.process.processIdentifier))
    child.finish()
    if let failure { throw BenchError("a download did not complete: \(failure)") }
    return (seconds, peak)
}

// 8 and 9. Downloads through `mediahost rpc` from a separate sandbox process, against curl.
if selected("downloads") {
    let (sandbox, settings) = try startSandbox()
    defer { sandbox.terminate() }
    let base = settings["MEDIAHOST_PODCASTS_BASE_URL"] ?? ""
    let show = 1_999_999_999

    // curl -o, the reference.
    let curlStart = now()
    let curl = Process()
    curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    curl.arguments = ["-s", "-o", scratch + "/curl.bin", "\(base)/media/\(show)/21.mp3"]
    try curl.run()
    curl.waitUntilExit()
    let curlSeconds = now() - curlStart
    try? FileManager.default.removeItem(atPath: scratch + "/curl.bin")

    func download(_ episodes: [Int], concurrency: Int) throws -> (seconds: Double, peakMB: Double, bytes: Int64) {
        let run = try downloadThroughRPC(
            episodes.map { "podcasts:episode:\(show):\(show)-ep-\($0)" }, dataDir: scratch + "/downloads-\(episodes.count)",
            environment: ["MEDIAHOST_PODCASTS_BASE_URL": base, "MEDIAHOST_DOWNLOADS_CONCURRENCY": String(concurrency)])
        return (run.seconds, run.peakMB, episodes.reduce(Int64(0)) { $0 + ($1 == 21 ? 1_000_000_000 : 50_000_000) })
    }

    let one = try download([21], concurrency: 1)
    report(
        "1 GB download vs `curl -o` (loopback)",
        String(
            format: "mediahost %.2f s (%.0f MB/s), curl %.2f s: ratio %.2f; peak RSS %.0f MB", one.seconds, 1000 / one.seconds,
            curlSeconds, curlSeconds / one.seconds, one.peakMB),
        goal: "ratio ≥ 0.9, < 60 MB")
    let twenty = try download(Array(1...20), concurrency: 20)
    report(
        "20 concurrent 50 MB downloads",
        String(
            format: "%.2f s, %.0f MB/s in all; peak RSS %.0f MB", twenty.seconds,
            Double(twenty.bytes) / 1_000_000 / twenty.seconds, twenty.peakMB),
        goal: "report")
}

// YouTube without a key: mediahost over yt-dlp alone, on the sandbox's stand-in site (a video's
// page there is its media, which yt-dlp reads with its generic extractor): a video's details,
// and a 1 GB video downloaded, by the host itself (yt-dlp finds the URL) and by yt-dlp inside.
if selected("ytdlp"), let peers = Peers(venv: venv), FileManager.default.isExecutableFile(atPath: peers.ytdlp) {
    let (sandbox, settings) = try startSandbox()
    defer { sandbox.terminate() }
    let site = settings["MEDIAHOST_YOUTUBE_SITE_URL"] ?? ""
    let keyless = [
        "MEDIAHOST_YOUTUBE_BACKEND": "ytdlp", "MEDIAHOST_YOUTUBE_YTDLP": peers.ytdlp, "MEDIAHOST_YOUTUBE_SITE_URL": site,
    ]
    func median(_ runs: Int, _ executable: String, _ args: [String], _ environment: [String: String] = [:]) throws -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            let run = spawnAndWait(executable, args, environment: environment)
            guard run.status == 0 else { throw BenchError("\(executable) \(args.prefix(3)) failed (\(run.status))") }
            times.append(run.seconds)
        }
        return percentile(times, 0.5)
    }
    let page = site + "/watch?v=large-1"
    let alone = try median(
        10, peers.ytdlp, ["-J", "--ignore-config", "--no-warnings", "--no-progress", "--no-playlist", "--skip-download", page])
    let through = try median(
        10, binary, ["call", "media.get", #"{"id":"youtube:video:large-1"}"#, "--data-dir", scratch + "/ytdlp", "--no-service"],
        keyless)
    report(
        "a video's details without a key: cold `mediahost call media.get` vs `yt-dlp -J` alone",
        String(
            format: "median %.0f ms vs %.0f ms: %.1f ms (%.1f %%) more", through * 1000, alone * 1000, (through - alone) * 1000,
            (through - alone) / alone * 100),
        goal: "within 5 %")

    let file = scratch + "/ytdlp-alone.wav"
    let ytdlpStart = now()
    let direct = spawnAndWait(
        peers.ytdlp, ["--ignore-config", "--no-warnings", "--no-progress", "-o", file, site + "/watch?v=large-1000"])
    let ytdlpSeconds = now() - ytdlpStart
    try? FileManager.default.removeItem(atPath: file)
    guard direct.status == 0 else { throw BenchError("yt-dlp alone failed (\(direct.status))") }
    func download(_ downloader: String) throws -> (seconds: Double, peakMB: Double) {
        try downloadThroughRPC(
            ["youtube:video:large-1000"], dataDir: scratch + "/ytdlp-download-\(downloader)",
            environment: keyless.merging(["MEDIAHOST_YOUTUBE_DOWNLOADER": downloader]) { $1 })
    }
    let host = try download("auto")
    let inside = try download("ytdlp")
    report(
        "1 GB video without a key vs `yt-dlp -o` alone (sandbox stand-in)",
        String(
            format:
                "yt-dlp alone %.2f s; mediahost (yt-dlp finds the URL, the host downloads) %.2f s: ratio %.2f, peak RSS %.0f MB; yt-dlp inside mediahost %.2f s: ratio %.2f",
            ytdlpSeconds, host.seconds, ytdlpSeconds / host.seconds, host.peakMB, inside.seconds, ytdlpSeconds / inside.seconds),
        goal: "within 5 %")
}

struct BenchNoNetwork: HTTPClient {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse { throw ProviderError.network("benchmarks have no network") }
}

/// Send times by request id, written by the pacing thread and read by the reader.
final class SendTimes: @unchecked Sendable {
    private var times: [Double]
    private let lock = NSLock()
    init(count: Int) { times = [Double](repeating: 0, count: count) }
    func set(_ id: Int, _ time: Double) { lock.withLock { times[id] = time } }
    func get(_ id: Int) -> Double { lock.withLock { times[id] } }
}
