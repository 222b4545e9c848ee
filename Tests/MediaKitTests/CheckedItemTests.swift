import Foundation
import Testing

@testable import MediaKit

/// `MediaItem.checked()`: what the host lets in and passes on, whoever made the item.
@Suite struct CheckedItemTests {
    @Test func plainTextCarriesOnlyLineFeedsAndEntitiesFollow() throws {
        // YouTube's descriptions come with "\r\n"; a hostile one with escape sequences.
        var item = MediaItem(
            id: try ItemID(parsing: "youtube:video:x"), title: "Title\u{1B}[31m\u{07}",
            summary: "Line one\r\nLine two \u{1B}[2J#swift here")
        let tag = Array("Line one\r\nLine two \u{1B}[2J".unicodeScalars).count
        item.entities = [
            TextEntity(type: .hashtag, start: tag, end: tag + 6, text: "#swift", value: "swift"),
            TextEntity(type: .url, start: 90, end: 95, text: "x", value: "https://x"),
        ]
        let checked = item.checked()
        #expect(checked.title == "Title[31m")
        let summary = try #require(checked.summary)
        #expect(summary == "Line one\nLine two [2J#swift here")
        let entity = try #require(checked.entities?.first)
        #expect(checked.entities?.count == 1, "an entity outside its text is dropped")
        let scalars = Array(summary.unicodeScalars)
        #expect(String(String.UnicodeScalarView(scalars[entity.start..<entity.end])) == "#swift")
    }

    /// A feed and what an item plays come from providers and plugins too: links with spaces or
    /// control characters are dropped, words are cleaned.
    @Test func feedAndWhatPlaysAreChecked() throws {
        var item = MediaItem(id: try ItemID(parsing: "films:movie:1"), title: "M")
        item.feed = "http://example.com/a\nb.xml"
        item.plays = MediaLink(
            id: try ItemID(parsing: "youtube:video:x"), url: "javascript:alert(1) x", label: "the \u{1B}[31mtrailer")
        let checked = item.checked()
        #expect(checked.feed == nil)
        #expect(checked.plays?.url == nil && checked.plays?.id.description == "youtube:video:x")
        #expect(checked.plays?.label?.contains("\u{1B}") == false)
        item.feed = "https://example.com/feed.xml"
        #expect(item.checked().feed == "https://example.com/feed.xml")
    }

    @Test func numbersAndLinksOutOfRangeAreDropped() throws {
        var item = MediaItem(
            id: try ItemID(parsing: "podcasts:episode:1:2"), title: "T", url: "javascript:alert(1)\n",
            artwork: "https://example.com/a b.png", duration: 1e40, stats: ["plays": -3, "likes": 4],
            enclosure: Enclosure(url: "https://example.com/a.mp3", length: -1))
        item.position = .infinity
        let checked = item.checked()
        #expect(checked.duration == nil && checked.position == nil)
        #expect(checked.url == nil && checked.artwork == nil)
        #expect(checked.stats == ["likes": 4])
        #expect(checked.enclosure?.url == "https://example.com/a.mp3" && checked.enclosure?.length == nil)
    }
}
