import Foundation
import MediaKit
import MediaStore

/// Transcripts (`make bench --only transcripts`): a search over 1,000 episodes' transcripts
/// (about 10 MB of text, kept as the host keeps them), and reading a 3-hour WebVTT file.
func transcriptBench() async throws {
    let store = try MediaStore(path: scratch + "/transcripts/db.sqlite")
    // Words drawn from a vocabulary of 2,000 made-up words with a Zipf-like skew, as speech has.
    var state: UInt64 = 0x5EED
    func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    let syllables = ["ka", "lo", "mi", "ne", "su", "ra", "to", "vi", "de", "po", "zu", "ha"]
    let vocabulary = (0..<2000).map { n in
        (0..<(2 + n % 3)).map { index in syllables[(n / (index + 1) + index * 7) % syllables.count] }.joined() + "\(n % 10)"
    }
    func word() -> String {
        let skew = Double(next() % 1_000_000) / 1_000_000
        return vocabulary[min(vocabulary.count - 1, Int(pow(skew, 3) * Double(vocabulary.count)))]
    }
    var bytes = 0
    let started = now()
    for episode in 0..<1000 {
        var cues: [TranscriptCue] = []
        var at = 0.0
        while cues.reduce(0, { $0 + $1.text.utf8.count }) < 10_000 {
            let text = (0..<12).map { _ in word() }.joined(separator: " ")
            cues.append(TranscriptCue(start: at, speaker: cues.count % 5 == 0 ? "Host" : "Guest", text: text))
            at += 4
        }
        bytes += cues.reduce(0) { $0 + $1.text.utf8.count }
        try await store.keepTranscript(
            ItemID(provider: "podcasts", kind: .episode, nativeID: "1:\(episode)"), title: "Episode \(episode)", show: "Bench",
            format: "vtt", cues: cues)
    }
    let keeping = now() - started
    let queries = [
        vocabulary[5], vocabulary[1500] + " " + vocabulary[3], "\"" + vocabulary[0] + " " + vocabulary[1] + "\"",
        vocabulary[77] + "*",
    ]
    var times: [Double] = []
    var found = 0
    for _ in 0..<20 {
        for query in queries {
            let start = now()
            found += try await store.searchTranscripts(query).count
            times.append(now() - start)
        }
    }
    report(
        "search 1,000 episodes' transcripts (\(String(format: "%.1f", Double(bytes) / 1_000_000)) MB of text), 4 kinds of query",
        String(
            format: "p50 %.1f ms, p90 %.1f ms, slowest %.1f ms (keeping them all: %.1f s)", percentile(times, 0.5) * 1000,
            percentile(times, 0.9) * 1000, (times.max() ?? 0) * 1000, keeping),
        goal: "< 50 ms")

    // A 3-hour show's captions: a cue every 3 s, two lines each, with voices.
    var vtt = "WEBVTT\n\n"
    var second = 0
    while second < 3 * 3600 {
        func stamp(_ s: Int) -> String {
            String(format: "%02d:%02d:%02d.000", s / 3600, s / 60 % 60, s % 60)
        }
        vtt +=
            "\(stamp(second)) --> \(stamp(second + 3))\n<v Speaker \(second % 2)>\((0..<7).map { _ in word() }.joined(separator: " "))\n"
        vtt += (0..<7).map { _ in word() }.joined(separator: " ") + "\n\n"
        second += 3
    }
    var reads: [Double] = []
    var cues = 0
    for _ in 0..<10 {
        let start = now()
        cues = try TranscriptReader.read(Data(vtt.utf8), type: "text/vtt", url: nil).cues.count
        reads.append(now() - start)
    }
    report(
        "read a 3-hour WebVTT (\(cues) cues, \(String(format: "%.1f", Double(vtt.utf8.count) / 1_000_000)) MB)",
        String(format: "p50 %.0f ms", percentile(reads, 0.5) * 1000), goal: "report")
}
