import Foundation
import Testing

@testable import MediaKit

/// `ItemID.isFeedURL` answers plain web URLs from their bytes; wherever it does, the answer must
/// be the full URL parse's.
@Suite struct FeedURLTests {
    static let recorded = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("MediaHostTests/Recorded/opml")

    @Test func recordedSubscriptionsTakeTheQuickWayAndAgree() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.recorded.path).filter { $0.hasSuffix(".opml") }
        var urls: [String] = []
        for file in files {
            let text = String(decoding: try Data(contentsOf: Self.recorded.appendingPathComponent(file)), as: UTF8.self)
            var rest = text[...]
            while let start = rest.range(of: "xmlUrl=\"") {
                rest = rest[start.upperBound...]
                guard let end = rest.firstIndex(of: "\"") else { break }
                urls.append(String(rest[..<end]).replacingOccurrences(of: "&amp;", with: "&"))
                rest = rest[end...]
            }
        }
        try #require(urls.count >= 20, "feed URLs in \(files)")
        let quick = urls.filter { ItemID.plainWebURL($0) != nil }
        #expect(quick.count * 10 >= urls.count * 9, "most real feed URLs are answered without a parse")
        for url in urls { #expect(ItemID.isFeedURL(url) == ItemID.parsedAsFeedURL(url), "\(url)") }
    }

    @Test func generatedURLsAgreeWithTheFullParse() {
        let schemes = ["http://", "HTTPS://", "https://", "hTtP://", "ftp://", "http:/", "", "https:", "http://user@"]
        let hosts = [
            "example.com", "a-b.c", "-x.com", ".x", "[::1]", "h", "", "ex ample.com", "xn--bcher-kva.de", "127.0.0.1",
            "b\u{fc}cher.de",
            "x_y.com", "a..b",
        ]
        let ports = ["", ":80", ":", ":99999", ":123456", ":8a", ":0"]
        let paths = [
            "", "/", "/a b", "/feed.xml", "/%41", "/%zz", "/%4", "/\u{fc}", "/a#b#c", "?q=1&x=2", "#frag", "/<x>", "/\"", "/|",
            "/[1]", "/a\\b", "/~u/(1)!$*+,;=:@", "/\t", "//x", "/a%2", "?", "#", "/{x}", "/^", "/`",
        ]
        // Seeded: a disagreement found is found again.
        var generator = MediaItemJSONTests.Generator(state: 41)
        var quick = 0
        for _ in 0..<20_000 {
            let url =
                schemes.randomElement(using: &generator)! + hosts.randomElement(using: &generator)!
                + ports.randomElement(using: &generator)! + paths.randomElement(using: &generator)!
                + paths.randomElement(using: &generator)!
            // A link is kept as the full parse would keep it, whichever way it is decided.
            let parsedLink = !DisplayText.hasControlOrSpace(url) && URL(string: url)?.scheme?.isEmpty == false
            #expect((MediaItem.checkedLink(url) != nil) == parsedLink, "\(url.debugDescription)")
            guard let answer = ItemID.plainWebURL(url) else { continue }
            quick += 1
            #expect(answer == ItemID.parsedAsFeedURL(url), "\(url.debugDescription)")
        }
        #expect(quick > 100, "some generated URLs are plain enough for the quick way")
    }

    @Test func feedIDsAreBase64URLWithoutPadding() throws {
        var generator = MediaItemJSONTests.Generator(state: 7)
        let pieces = ["a", "/", "?", "~", "\u{fc}", "\u{1F600}", "https://x.org/", "+", "=", "\u{0}", "\u{7F}"]
        for length in 0..<40 {
            let text = (0..<length).map { _ in pieces.randomElement(using: &generator)! }.joined()
            let expected = Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(ItemID.base64URL(text) == expected, "\(text.debugDescription)")
        }
        let url = "https://feeds.example.com/show/1/feed.xml"
        let id = try #require(ItemID.feed(url, provider: "podcasts"))
        #expect(ItemID.feedURL(nativeID: id.nativeID) == url)
        // The longest id there may be, and one byte more.
        let room = ItemID.maxLength - "podcasts:podcast:".utf8.count - ItemID.feedPrefix.utf8.count
        let fits = "https://x.org/" + String(repeating: "a", count: room / 4 * 3 - 14)
        #expect(ItemID.feed(fits, provider: "podcasts")?.description.utf8.count ?? 0 <= ItemID.maxLength)
        #expect(ItemID.feed(fits, provider: "podcasts") != nil)
        #expect(ItemID.feed(fits + "aaaa", provider: "podcasts") == nil)
    }
}
