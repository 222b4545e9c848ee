import Foundation
import JSONRPC
import Pictures

/// Pictures (`make bench --only pictures`, run in a process of its own for its peak memory):
/// what a cached picture adds to `show` (its `media.artwork` answer, then decoding and drawing),
/// a 3000x3000 cover, and a 20-row listing's thumbnails, cached and not, as the REPL makes them
/// (the answers concurrently, the decoding one at a time).
func pictureBench() throws {
    guard case .success = Picture.available else {
        report("pictures", "not measured: \(Picture.available)", goal: "")
        return
    }
    let (sandbox, settings) = try startSandbox()
    defer { sandbox.terminate() }
    let child = try RPCChild(dataDir: scratch + "/pictures", environment: settings)
    defer { child.finish() }
    var nextID = 0
    func call(_ method: String, _ params: String) -> JSONValue? {
        nextID += 1
        child.input.fileHandleForWriting.write(
            Data(#"{"jsonrpc":"2.0","id":\#(nextID),"method":"\#(method)","params":\#(params)}"#.utf8 + [0x0A]))
        var reply: JSONValue?
        child.readLines(1) { line in reply = try? JSONParser.parse(Array(line))["result"] }
        return reply
    }
    let cell = CellSize(width: 8, height: 16)
    func drawn(_ path: String, _ box: CellBox, _ mode: GraphicsMode) -> Double {
        let start = now()
        let picture = try? Picture(path: path, maxWidth: box.columns * cell.width, maxHeight: box.rows * cell.height)
        _ = picture?.draw(mode, colors: .truecolor, box: box, cell: cell)
        return now() - start
    }
    let found = call("media.search", #"{"provider":"youtube","query":"swift"}"#)
    let ids = (found?["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    guard ids.count >= 20 else { throw BenchError("the sandbox's search gave \(ids.count) items") }

    // 1. show: a cached thumbnail, 12 rows beside the details.
    guard let first = call("media.artwork", #"{"id":"\#(ids[0])"}"#)?["path"]?.stringValue else {
        throw BenchError("no artwork")
    }
    var answers: [Double] = []
    for _ in 0..<50 {
        let start = now()
        _ = call("media.artwork", #"{"id":"\#(ids[0])"}"#)
        answers.append(now() - start)
    }
    let showBox = CellBox(columns: 43, rows: 12)
    var parts: [String] = []
    for mode in [GraphicsMode.sixel, .kitty, .blocks] {
        let times = (0..<30).map { _ in drawn(first, showBox, mode) }
        parts.append(String(format: "%@ %.1f ms", mode.rawValue, percentile(times, 0.5) * 1000))
    }
    report(
        "a cached picture added to `show` (320x180 thumbnail in 43x12 cells: its `media.artwork` answer, then decoding and drawing)",
        String(format: "answer p50 %.2f ms; then ", percentile(answers, 0.5) * 1000) + parts.joined(separator: ", "),
        goal: "< 20 ms, after the rows")

    // 2. A large cover: decoded scaled, drawn large.
    let cover = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tests/PicturesTests/Images/big.jpg").path
    let large = (0..<10).map { _ in drawn(cover, CellBox(columns: 100, rows: 30), .sixel) }
    report(
        "a 3000x3000 JPEG cover drawn in 100x30 cells (sixels)", String(format: "p50 %.1f ms", percentile(large, 0.5) * 1000),
        goal: "report")

    // 3. A listing's 20 thumbnails, 14x4 cells each: answers pipelined (the REPL asks for them
    // at once), each decoded and drawn as it arrives.
    func listing() -> Double {
        let start = now()
        for id in ids.prefix(20) {
            nextID += 1
            child.input.fileHandleForWriting.write(
                Data(#"{"jsonrpc":"2.0","id":\#(nextID),"method":"media.artwork","params":{"id":"\#(id)"}}"#.utf8 + [0x0A]))
        }
        var paths: [String] = []
        child.readLines(20) { line in
            if let path = (try? JSONParser.parse(Array(line)))?["result"]?["path"]?.stringValue { paths.append(path) }
        }
        for path in paths { _ = drawn(path, CellBox(columns: 14, rows: 4), .sixel) }
        return now() - start
    }
    _ = call("cache.clear", "{}")
    let uncached = listing()
    let cached = (0..<5).map { _ in listing() }
    report(
        "a 20-row listing's thumbnails (14x4 cells, sixels), from the sandbox",
        String(
            format: "not cached %.0f ms, cached p50 %.0f ms; peak RSS of this process %.0f MB", uncached * 1000,
            percentile(cached, 0.5) * 1000, peakRSS()),
        goal: "cached < 100 ms")
}
