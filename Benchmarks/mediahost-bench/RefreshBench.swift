import Foundation
import JSONRPC
import PodcastsSandbox
import Sandbox

#if canImport(Glibc)
    import Glibc
#endif

/// Refreshing what is followed (`make bench --only refresh`): 500 feeds of the sandbox's podcast
/// replica on loopback (real RSS and Atom bodies), followed by an OPML import; after a warm-up,
/// 50 of them publish a new episode and the rest answer 304. A cold `mediahost refresh` (its own
/// process, as cron starts it) is timed beside newsboat (`newsboat -x reload`) and gPodder's
/// `gpo update` on the same feeds in the same rounds (Benchmarks/peers/refresh-peers.py prepares
/// their homes and times them), three rounds, medians.
func refreshBench() async throws {
    let replica = PodcastsReplica()
    let server = SandboxServer(replicas: [replica])
    let port = try await server.start()
    let base = "http://127.0.0.1:\(port)/podcasts"
    let folder = scratch + "/refresh"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let script = "Benchmarks/peers/refresh-peers.py"

    // The feeds every reader can read (the script leaves out those gPodder's parser refuses).
    let listed = spawnAndWait(
        "/usr/bin/python3", [script, "--sandbox-urls", base, "--count", "500"], stdout: folder + "/urls.txt")
    guard listed.status == 0, let text = try? String(contentsOfFile: folder + "/urls.txt", encoding: .utf8) else {
        print("note: \(script) could not list the feeds; no refresh benchmark")
        return
    }
    let urls = text.split(separator: "\n").map(String.init)
    let shows = urls.compactMap { url in url.split(separator: "/").last.flatMap { Int($0.dropLast(4)) } }
    precondition(shows.count == 500, "500 feeds")
    let outlines = urls.map { #"<outline type="rss" text="\#($0)" xmlUrl="\#($0)"/>"# }.joined(separator: "\n")
    try """
    <?xml version="1.0" encoding="UTF-8"?>
    <opml version="2.0"><head><title>bench</title></head><body>
    \(outlines)
    </body></opml>
    """.write(toFile: folder + "/feeds.opml", atomically: true, encoding: .utf8)

    let data = folder + "/data"
    let environment = ["MEDIAHOST_PODCASTS_BASE_URL": base, "MEDIAHOST_LOG_LEVEL": "error"]
    let imported = spawnAndWait(
        binary, ["call", "lists.import", #"{"path":"\#(folder)/feeds.opml","name":"favorites"}"#, "--data-dir", data],
        environment: environment)
    guard imported.status == 0 else {
        print("note: the OPML import failed (status \(imported.status)); no refresh benchmark")
        return
    }
    let refresh = ["refresh", "--json", "--no-service", "--data-dir", data]
    // Warm: the first refresh learns each show and keeps each feed's validators.
    let warm = spawnAndWait(binary, refresh, environment: environment, stdout: folder + "/warm.json")
    let first = (try? JSONParser.parse(Array(Data(contentsOf: URL(fileURLWithPath: folder + "/warm.json"))))) ?? .null
    print(
        "note: the first refresh of 500 feeds (every body read and kept): \(String(format: "%.2f s", warm.seconds)), \(first["failed"]?.arrayValue?.count ?? -1) failed"
    )

    // The peers, prepared on the same feeds (their homes warm too), when they are installed.
    let peers = folder + "/peers"
    let prepared = spawnAndWait(
        "/usr/bin/python3", [script, "--prepare", peers, "--urls", folder + "/urls.txt"], stdout: folder + "/prepared.json")
    if prepared.status != 0 { print("note: the peers could not be prepared (`make bench` installs newsboat and gpodder)") }

    var ours: [Double] = []
    var oursPeakMB = 0.0
    var newsboat: [Double] = []
    var gpo: [Double] = []
    var peerPeaks: [String: Double] = [:]
    for round in 0..<3 {
        // 50 shows publish a new episode each; the other 450 answer 304.
        for show in shows[(round * 50)..<(round * 50 + 50)] { _ = replica.publish(show, count: 1) }
        let timed = spawnAndWait(binary, refresh, environment: environment, stdout: folder + "/round.json", sampleRSS: true)
        let answer = (try? JSONParser.parse(Array(Data(contentsOf: URL(fileURLWithPath: folder + "/round.json"))))) ?? .null
        let arrived = answer["arrived"]?.arrayValue?.count ?? -1
        let failed = answer["failed"]?.arrayValue?.count ?? -1
        if timed.status != 0 || arrived != 50 || failed != 0 {
            print("note: round \(round + 1): status \(timed.status), \(arrived) arrived (50 expected), \(failed) failed")
        }
        ours.append(timed.seconds)
        oursPeakMB = max(oursPeakMB, Double(timed.maxRSSKB) / 1024)
        guard prepared.status == 0 else { continue }
        _ = spawnAndWait("/usr/bin/python3", [script, "--time", peers], stdout: folder + "/peers.json")
        let times = (try? JSONParser.parse(Array(Data(contentsOf: URL(fileURLWithPath: folder + "/peers.json"))))) ?? .null
        for (name, into) in [("newsboat", 0), ("gpo", 1)] {
            guard times[name]?["ok"] == true, let seconds = times[name]?["seconds"]?.doubleValue else {
                if round == 0 { print("note: \(name) did not run: \(times[name]?["why"]?.stringValue ?? "no answer")") }
                continue
            }
            if into == 0 { newsboat.append(seconds) } else { gpo.append(seconds) }
            peerPeaks[name] = max(peerPeaks[name] ?? 0, times[name]?["peak_rss_mb"]?.doubleValue ?? 0)
        }
    }
    let median = percentile(ours, 0.5)
    var versus = "no peers ran"
    let peerMedians = [("newsboat", newsboat), ("gpo update", gpo)].filter { !$0.1.isEmpty }.map {
        ($0.0, percentile($0.1, 0.5))
    }
    if let fastest = peerMedians.min(by: { $0.1 < $1.1 }) {
        versus =
            peerMedians.map { name, seconds in
                String(format: "%@ %.2f s (%.0f MB)", name, seconds, peerPeaks[name == "gpo update" ? "gpo" : name] ?? 0)
            }.joined(separator: ", ") + String(format: "; %.1f× the faster (%@)", fastest.1 / median, fastest.0)
    }
    report(
        "refresh: 500 followed feeds (450 answer 304, 50 new), a cold `mediahost refresh`",
        String(format: "median %.2f s, peak %.0f MB; ", median, oursPeakMB) + versus,
        goal: "< 3 s, < 100 MB, ≥ 5× the faster peer")
    server.stop()
}
