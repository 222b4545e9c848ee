import Foundation
import MediaKit
import MediaStore

/// The queue (`make bench --only queue`): adding 1,000 items in one call, moving one, taking one
/// off the front (what the player does as it goes), and listing them all, on the store as the
/// host keeps it.
func queueBench() async throws {
    let store = try MediaStore(path: scratch + "/queue/db.sqlite")
    let items = (0..<1000).map { n in
        var item = MediaItem(
            id: ItemID(provider: "podcasts", kind: .episode, nativeID: "1:\(n)"), title: "Episode \(n) of the bench")
        item.subtitle = "Bench"
        item.summary = String(repeating: "Notes of the episode. ", count: 20)
        item.enclosure = Enclosure(url: "https://example.com/\(n).mp3", type: "audio/mpeg", length: 40_000_000)
        return item
    }
    var adds: [Double] = []
    var moves: [Double] = []
    var lists: [Double] = []
    var takes: [Double] = []
    for _ in 0..<5 {
        try await store.clearQueue()
        var start = now()
        try await store.enqueue(items)
        adds.append(now() - start)
        for n in 0..<20 {
            start = now()
            try await store.moveInQueue(from: 999 - n, to: n)
            moves.append(now() - start)
        }
        for _ in 0..<5 {
            start = now()
            let (listed, total) = try await store.queue()
            precondition(listed.count == total && total == 1000)
            lists.append(now() - start)
        }
        // As the player does when mpv comes to the first: it leaves the queue.
        for _ in 0..<20 {
            guard let first = try await store.queue(limit: 1).items.first else { preconditionFailure("the queue emptied") }
            start = now()
            try await store.dequeue([first.id])
            takes.append(now() - start)
        }
    }
    func ms(_ times: [Double]) -> String { String(format: "%.1f ms", percentile(times, 0.5) * 1000) }
    report("queue: add 1,000 items in one call", ms(adds), goal: "< 200 ms")
    report("queue: move one of 1,000", ms(moves), goal: "< 20 ms")
    report("queue: list 1,000 (snapshots read)", ms(lists), goal: "< 100 ms")
    report("queue: take the first of 1,000 (the player moving on)", ms(takes), goal: "< 20 ms")
}
