import Foundation
import MediaKit

/// A page of 500 Podcasting 2.0 episodes (people, a soundbite, sizes, a live state) as every
/// answer writes it: the fast writer with each `namespace` written by `JSONEncoder`, against
/// `JSONEncoder` for the whole page (what such a page cost while the writer declined it), and a
/// page without namespaces for scale.
func jsonBench() {
    func episode(_ n: Int, namespace: Bool) -> MediaItem {
        var item = MediaItem(
            id: ItemID(provider: "podcasts", kind: .episode, nativeID: "1200361736:ep-\(n)"),
            title: "Episode \(n): soil and roots",
            subtitle: "Slow Engine", summary: String(repeating: "Notes with links and credits. ", count: 12),
            url: "https://example.com/episodes/\(n)", artwork: "https://example.com/art/\(n).jpg",
            published: "2026-11-\(10 + n % 18)T08:00:00Z", duration: 3600 + Double(n), creator: "Ada")
        item.enclosure = Enclosure(url: "https://cdn.example.com/audio/\(n).mp3", type: "audio/mpeg", length: 48_000_000)
        item.feed = "https://example.com/feed.xml"
        item.extra = ["guid": "ep-\(n)", "season": "2"]
        if namespace {
            var space = PodcastNamespace()
            space.people = [
                .init(name: "Ada Lovelace", role: "host", link: "https://example.com/ada"),
                .init(name: "Guest \(n)", role: "guest"),
            ]
            space.seasonName = "The second"
            space.soundbites = [.init(start: 120.5, duration: 45, title: "The best minute")]
            space.images = [300, 600, 1500].map { (width: Int) in
                .init(url: "https://example.com/art/\(n)-\(width).jpg", width: width)
            }
            item.namespace = space
        }
        return item
    }
    let plain = Page(items: (0..<500).map { episode($0, namespace: false) })
    let rich = Page(items: (0..<500).map { episode($0, namespace: true) })
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    func median(_ body: () -> Void) -> Double {
        var times: [Double] = []
        for _ in 0..<30 {
            let start = now()
            body()
            times.append(now() - start)
        }
        return percentile(times, 0.5) * 1000
    }
    var size = 0
    let fast = median { size = MediaItemJSON.encode(rich, escapingSlashes: false)?.count ?? 0 }
    let whole = median { _ = try? encoder.encode(rich) }
    let without = median { _ = MediaItemJSON.encode(plain, escapingSlashes: false) }
    report(
        "a page of 500 Podcasting 2.0 episodes written (\(size / 1024) KB)",
        String(format: "%.1f ms (JSONEncoder for the page: %.1f ms; without namespaces: %.1f ms)", fast, whole, without),
        goal: "under the page's JSONEncoder time")
}
