import Foundation
import MediaKit
import Testing

@testable import Podcasts

@Suite struct FeedParserTests {
    let url = URL(string: "https://feeds.example.invalid/show/feed.xml")!

    func parse(_ xml: String) throws -> ParsedFeed { try FeedParser.parse(Data(xml.utf8), url: url) }

    func rss(_ items: String, channel: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
        <channel><title>Show &amp; Tell</title><link>https://show.example.invalid/home/</link>
        <itunes:author>Ada</itunes:author><itunes:image href="art.png"/>\(channel)
        \(items)
        </channel></rss>
        """
    }

    /// The store's record of an episode reads back as the episode, whichever fields it has; a
    /// record cut short or with bytes added reads as nothing (the feed is read again).
    @Test func episodeRecordsRoundTrip() {
        for present in [0, 1, 0x1FFF, 0x0AAA, 0x1555] {
            func has(_ bit: Int) -> Bool { present & (1 << bit) != 0 }
            var episode = ParsedEpisode()
            episode.guid = has(0) ? "urn:uuid:\u{e9}\u{1F600}" : nil
            episode.title = has(1) ? "Episode \"1\" <b>" : nil
            episode.enclosureURL = has(2) ? "https://example.com/a.mp3" : nil
            episode.enclosureType = has(3) ? "audio/mpeg" : nil
            episode.artwork = has(4) ? "" : nil
            episode.notes = has(5) ? String(repeating: "notes \u{65e5}", count: 500) : nil
            episode.link = has(6) ? "https://example.com/1" : nil
            episode.transcript = has(7) ? "https://example.com/1.vtt" : nil
            episode.published = has(8) ? Date(timeIntervalSince1970: 1_700_000_000.5) : nil
            episode.duration = has(9) ? 3601.25 : nil
            episode.enclosureLength = has(10) ? -1 : nil
            episode.season = has(11) ? 2 : nil
            episode.episode = has(12) ? Int.max : nil
            let record = EpisodeRecord.encode(episode)
            #expect(EpisodeRecord.decode(record) == episode, "fields \(present)")
            #expect(EpisodeRecord.decode(record.dropLast()) == nil)
            #expect(EpisodeRecord.decode(record + [0]) == nil)
        }
    }

    @Test func readsChannelAndEpisodeFields() throws {
        let feed = try parse(
            rss(
                """
                <item>
                  <title>Ep 1 &#8211; Hello</title><guid isPermaLink="false">abc-1</guid>
                  <pubDate>Tue, 10 Jun 2025 09:41:00 +0000</pubDate><itunes:duration>1:02:03</itunes:duration>
                  <itunes:season>2</itunes:season><itunes:episode>7</itunes:episode>
                  <enclosure url="https://cdn.example.invalid/1.mp3" length="12345" type="audio/mpeg"/>
                  <itunes:image href="https://cdn.example.invalid/1.png"/>
                  <podcast:transcript url="/t/1.vtt" type="text/vtt"/>
                  <description><![CDATA[<p>Hello <b>world</b> &amp; friends</p><ul><li>one</li><li>two</li></ul>]]></description>
                  <link>episodes/1</link>
                </item>
                """, channel: "<itunes:category text=\"Technology\"/><description>Channel notes</description>"))
        #expect(feed.title == "Show & Tell")
        #expect(feed.author == "Ada")
        #expect(feed.summary == "Channel notes")
        #expect(feed.categories == ["Technology"])
        #expect(feed.artwork == "https://feeds.example.invalid/show/art.png")
        let episode = try #require(feed.episodes.first)
        #expect(episode.title == "Ep 1 – Hello")
        #expect(episode.guid == "abc-1")
        #expect(episode.published == Date(timeIntervalSince1970: 1_749_548_460))
        #expect(episode.duration == 3723)
        #expect(episode.season == 2 && episode.episode == 7)
        #expect(episode.enclosureURL == "https://cdn.example.invalid/1.mp3")
        #expect(episode.enclosureLength == 12345)
        #expect(episode.enclosureType == "audio/mpeg")
        #expect(episode.artwork == "https://cdn.example.invalid/1.png")
        #expect(episode.transcript == "https://feeds.example.invalid/t/1.vtt")
        #expect(episode.summary == "Hello world & friends\n\n• one\n• two")
        #expect(episode.link == "https://show.example.invalid/home/episodes/1", "relative to the channel link")
    }

    @Test func escapedHTMLDescriptionsBecomePlainText() throws {
        let feed = try parse(
            rss(
                "<item><title>x</title><description>&lt;p&gt;A &amp;amp; B&lt;br/&gt;C &amp;quot;q&amp;quot;&lt;/p&gt;</description></item>"
            ))
        #expect(feed.episodes.first?.summary == "A & B\nC \"q\"")
    }

    @Test func contentEncodedWinsOverDescription() throws {
        let feed = try parse(
            rss(
                "<item><description>short</description><content:encoded><![CDATA[<p>The full notes</p>]]></content:encoded></item>"
            ))
        #expect(feed.episodes.first?.summary == "The full notes")
    }

    @Test(arguments: [
        ("Tue, 10 Jun 2025 09:41:00 +0000", 1_749_548_460.0),
        ("Tue, 10 Jun 2025 09:41:00 GMT", 1_749_548_460),
        ("10 Jun 2025 04:41:00 EST", 1_749_548_460),
        ("Tue, 10 Jun 2025 09:41 +0000", 1_749_548_460),
        ("Tue, 10 Jun 2025 02:41:00 PDT", 1_749_548_460),
        ("Tuesday, 10 June 2025 11:41:00 +0200", 1_749_548_460),
        ("Tue, 10 Jun 25 09:41:00 GMT", 1_749_548_460),
        ("Tue,10 Jun 2025 09:41:00 Z", 1_749_548_460),
        ("2025-06-10T09:41:00Z", 1_749_548_460),
        ("2025-06-10T11:41:00.000+02:00", 1_749_548_460),
        ("Sun, 1 Mar 2026 00:00:00 -0000", 1_772_323_200),
    ])
    func parsesDateVariants(text: String, seconds: Double) {
        #expect(FeedDates.parse(text) == Date(timeIntervalSince1970: seconds), "\(text)")
    }

    @Test func unreadableDatesAreNil() {
        #expect(FeedDates.parse("") == nil)
        #expect(FeedDates.parse("yesterday") == nil)
        #expect(FeedDates.parse("32 Foo 2025") == nil)
    }

    @Test(arguments: [
        ("3723", 3723.0), ("62:03", 3723), ("1:02:03", 3723), ("01:02:03", 3723), ("3723.5", 3723.5), ("00:45", 45),
    ])
    func parsesDurations(text: String, seconds: Double) {
        #expect(FeedDates.duration(text) == seconds)
    }

    @Test func rejectsBadDurations() {
        for text in ["", "abc", "1:2:3:4", "-5", "1:-2"] { #expect(FeedDates.duration(text) == nil, "\(text)") }
    }

    @Test func episodesWithMissingFieldsAreKept() throws {
        let feed = try parse(rss("<item><title>Only a title</title></item><item><enclosure url=\"x.mp3\"/></item><item></item>"))
        #expect(feed.episodes.count == 3)
        #expect(feed.episodes[0].title == "Only a title")
        #expect(feed.episodes[1].enclosureURL == "https://feeds.example.invalid/show/x.mp3")
        // Episodes without guids still get stable, distinct keys.
        let keys = feed.episodes.map(PodcastsProvider.episodeKey)
        #expect(Set(keys).count == 3)
        #expect(
            keys
                == (try parse(rss("<item><title>Only a title</title></item><item><enclosure url=\"x.mp3\"/></item><item></item>")))
                .episodes.map(PodcastsProvider.episodeKey))
    }

    @Test func hostileGuidsAreHashed() {
        let long = ParsedEpisode(guid: String(repeating: "g", count: 500))
        let control = ParsedEpisode(guid: "a\u{1B}[31mb")
        #expect(PodcastsProvider.episodeKey(long).hasPrefix("h"))
        #expect(PodcastsProvider.episodeKey(control).hasPrefix("h"))
        #expect(PodcastsProvider.episodeKey(ParsedEpisode(guid: "urn:x:1")) == "urn:x:1")
    }

    /// The control-character test reads UTF-8 bytes; it must agree with Unicode's general
    /// category for every scalar up to U+0FFF and a few beyond, alone and between others.
    @Test func controlCharactersAreFoundAsUnicodeDefinesThem() {
        let scalars = (0..<0x1000).compactMap(Unicode.Scalar.init) + ["\u{FEFF}", "\u{1F3A7}", "\u{E0001}", "\u{10FFFF}"]
        for scalar in scalars {
            let control = scalar.properties.generalCategory == .control
            for text in [String(scalar), "é" + String(scalar) + "x", "\u{C2}" + String(scalar), "\u{1F3A7}" + String(scalar)] {
                #expect(
                    PodcastsProvider.hasControlCharacter(text) == control,
                    "U+\(String(scalar.value, radix: 16)) in \(text.debugDescription)")
            }
        }
        #expect(!PodcastsProvider.hasControlCharacter("https://example.com/episodes/42?x=é"))
    }

    @Test func readsAtom() throws {
        let feed = try parse(
            """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom"><title>Atom Show</title><author><name>Bo</name></author>
            <link rel="alternate" href="https://atom.example.invalid/"/><icon>/icon.png</icon>
            <entry><title>First</title><id>urn:1</id><published>2025-06-10T09:41:00Z</published>
            <summary type="html">&lt;p&gt;Hi &amp;amp; bye&lt;/p&gt;</summary>
            <link rel="enclosure" href="https://cdn.example.invalid/a.mp3" length="99" type="audio/mpeg"/>
            <link rel="alternate" href="/e/1"/></entry>
            </feed>
            """)
        #expect(feed.title == "Atom Show")
        #expect(feed.author == "Bo")
        #expect(feed.artwork == "https://feeds.example.invalid/icon.png")
        let entry = try #require(feed.episodes.first)
        #expect(entry.guid == "urn:1")
        #expect(entry.summary == "Hi & bye")
        #expect(entry.enclosureURL == "https://cdn.example.invalid/a.mp3")
        #expect(entry.enclosureLength == 99)
        #expect(entry.link == "https://atom.example.invalid/e/1")
        #expect(entry.published == Date(timeIntervalSince1970: 1_749_548_460))
    }

    @Test func readsDeclaredLegacyEncodings() throws {
        for (encoding, byte) in [("ISO-8859-1", UInt8(0xE9)), ("windows-1252", UInt8(0xE9))] {
            var data = Data("<?xml version=\"1.0\" encoding=\"\(encoding)\"?><rss><channel><title>Caf".utf8)
            data.append(byte)
            data.append(contentsOf: Array("</title><item><title>".utf8))
            // Windows-1252 has curly quotes at 0x93/0x94; ISO-8859-1 does not.
            if encoding == "windows-1252" { data.append(contentsOf: [0x93, 0x51, 0x94]) } else { data.append(0x51) }
            data.append(contentsOf: Array("</title></item></channel></rss>".utf8))
            let feed = try FeedParser.parse(data, url: url)
            #expect(feed.title == "Café", "\(encoding)")
            #expect(feed.episodes.first?.title == (encoding == "windows-1252" ? "“Q”" : "Q"))
        }
    }

    @Test func aFeedCutShortKeepsWhatItHas() throws {
        let feed = try parse("<rss><channel><title>Broken</title><item><title>Whole</title></item><item><title>Cut")
        #expect(feed.title == "Broken")
        #expect(feed.episodes.map(\.title) == ["Whole"], "the episode cut off by the end is left out")
    }

    @Test func documentsThatAreNotFeedsNameTheFeed() {
        for text in ["<html><body>Not a feed</body></html>", "{\"json\": true}", "", "\u{0}\u{1}garbage"] {
            #expect {
                try FeedParser.parse(Data(text.utf8), url: url)
            } throws: { error in
                "\(error)".contains("feeds.example.invalid/show/feed.xml")
            }
        }
    }

    @Test func entityBombsAreRefusedQuickly() {
        var bomb = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
        bomb += "<!ENTITY lol1 \"&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;\">"
        for level in 2...9 { bomb += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">" }
        bomb += "]><rss><channel><title>&lol9;</title></channel></rss>"
        let start = ContinuousClock.now
        let feed = try? FeedParser.parse(Data(bomb.utf8), url: url)
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect((feed?.title?.count ?? 0) < 1_000_000)
    }

    @Test func externalEntitiesAreNotResolved() throws {
        let xml = """
            <?xml version="1.0"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
            <rss><channel><title>t&xxe;</title></channel></rss>
            """
        let feed = try? FeedParser.parse(Data(xml.utf8), url: url)
        #expect(feed?.title?.contains("root:") != true)
    }

    @Test func htmlToText() {
        #expect(HTMLText.plain("<p>One</p><p>Two&nbsp;&hellip;</p>") == "One\n\nTwo …")
        #expect(HTMLText.plain("a &#x1F600; b &#233; &unknown; c") == "a 😀 b é &unknown; c")
        #expect(HTMLText.plain("<script>var x = 1 < 2;</script>text   with   spaces<style>p {}</style>") == "text with spaces")
        #expect(HTMLText.plain("5 < 6 and 7 > 3") == "5 < 6 and 7 > 3")
    }
}

/// Dates and numbers a feed may hold that once crashed the process (a fatal exclusivity
/// violation on a bad date after a good one, an overflow on a long run of digits).
@Suite struct FeedParserHostileValueTests {
    let url = URL(string: "https://feeds.example.invalid/show/feed.xml")!

    func episode(_ inner: String) throws -> ParsedEpisode? {
        let xml =
            "<rss xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"><channel><title>t</title><item><title>e</title>\(inner)</item></channel></rss>"
        return try FeedParser.parse(Data(xml.utf8), url: url).episodes.first
    }

    @Test(arguments: [
        "<pubDate></pubDate>", "<pubDate>not a date</pubDate>", "<pubDate>   </pubDate>",
        "<pubDate>Tue, 10 Jun 2025 09:41:00 +0000</pubDate><pubDate>garbage</pubDate>",
        "<pubDate>Tue, 10 Jun 2025 09:41:00 +0000</pubDate><pubDate></pubDate>",
        "<pubDate>1 Jan 99999999999999999999999</pubDate>", "<pubDate>99999999999:99999999999:9</pubDate>",
        "<pubDate>31 Feb 2025</pubDate>", "<pubDate>10 Jun 2025 25:00:00</pubDate>",
    ])
    func badDatesCostTheDateOnly(inner: String) throws {
        let parsed = try #require(try episode(inner))
        #expect(parsed.title == "e")
        if inner.contains("09:41:00") {
            #expect(parsed.published == Date(timeIntervalSince1970: 1_749_548_460), "a later bad date keeps the good one")
        } else {
            #expect(parsed.published == nil)
        }
    }

    @Test func atomPublishedYesterday() throws {
        let xml = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>a</title>
            <entry><title>x</title><published>yesterday</published></entry>
            <entry><title>y</title><published>2025-06-10T09:41:00Z</published><published></published></entry></feed>
            """
        let feed = try FeedParser.parse(Data(xml.utf8), url: url)
        #expect(feed.episodes.map(\.title) == ["x", "y"])
        #expect(feed.episodes[0].published == nil)
        #expect(feed.episodes[1].published == Date(timeIntervalSince1970: 1_749_548_460))
    }

    @Test(arguments: ["1e300", "inf", "nan", "-1", "99999999999999:00", "1:99999999999999999999:00", "1e400"])
    func absurdDurationsAreNoDuration(text: String) throws {
        #expect(FeedDates.duration(text) == nil, "\(text)")
        #expect(try episode("<itunes:duration>\(text)</itunes:duration>")?.duration == nil)
    }
}

/// What real feeds send that a strict reading refused (issue: real-world data).
@Suite struct FeedParserRealWorldTests {
    let url = URL(string: "https://feeds.example.invalid/show/feed.xml")!

    static let body = """
        <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Café Show</title>
        <itunes:author>Zoë</itunes:author><item><title>Ünïcode “quotes”</title><itunes:duration>10:00</itunes:duration>
        <enclosure url="https://cdn.example.invalid/1.mp3" length="100" type="audio/mpeg"/></item></channel></rss>
        """

    @Test(arguments: ["\n", "\r\n\r\n", "   \t", "\u{FEFF}", "\u{FEFF}\n  "])
    func whitespaceOrABOMBeforeTheDeclarationIsRead(prefix: String) throws {
        let feed = try FeedParser.parse(
            Data((prefix + "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + Self.body).utf8), url: url)
        #expect(feed.title == "Café Show")
        #expect(feed.episodes.first?.duration == 600)
    }

    @Test func latin1WithoutADeclarationIsReadAsWindows1252() throws {
        // The bytes a Windows-1252 editor writes: é = E9, “ ” = 93 94, no declaration, no charset.
        var data = Data("<rss><channel><title>Caf".utf8)
        data.append(0xE9)
        data.append(contentsOf: Array(" Show</title><item><title>".utf8) + [0x93] + Array("Q".utf8) + [0x94])
        data.append(contentsOf: Array("</title></item></channel></rss>".utf8))
        let feed = try FeedParser.parse(data, url: url)
        #expect(feed.title == "Café Show")
        #expect(feed.episodes.first?.title == "“Q”")
        // Valid UTF-8 stays UTF-8 in the same document.
        #expect(try FeedParser.parse(Data(Self.body.utf8), url: url).episodes.first?.title == "Ünïcode “quotes”")
    }

    @Test func theHTTPCharsetAppliesWhenTheDocumentDeclaresNone() throws {
        var data = Data("<rss><channel><title>".utf8)
        data.append(contentsOf: [0xC0, 0xD2])  // "АТ" in KOI8-R... and "ÀÒ" in Latin-1
        data.append(contentsOf: Array("</title></channel></rss>".utf8))
        #expect(try FeedParser.parse(data, url: url, charset: "koi8-r").title == "юр")
        #expect(try FeedParser.parse(data, url: url, charset: "iso-8859-1").title == "ÀÒ")
        // A declaration wins over the HTTP charset.
        let declared = Data("<?xml version=\"1.0\" encoding=\"koi8-r\"?>".utf8) + data
        #expect(try FeedParser.parse(declared, url: url, charset: "iso-8859-1").title == "юр")
    }

    @Test(arguments: ["utf-16le", "utf-16be"])
    func utf16FeedsAreRead(encoding: String) throws {
        let text = "\u{FEFF}<?xml version=\"1.0\" encoding=\"UTF-16\"?>" + Self.body
        let data = text.data(using: encoding == "utf-16le" ? .utf16LittleEndian : .utf16BigEndian)!
        let feed = try FeedParser.parse(data, url: url)
        #expect(feed.title == "Café Show")
        #expect(feed.episodes.first?.title == "Ünïcode “quotes”")
    }

    @Test(arguments: [
        "xmlns:it=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"|it",
        "xmlns:itunes=\"http://www.itunes.com/DTDs/Podcast-1.0.dtd\"|itunes",
        "|itunes",
        "xmlns:ITUNES=\"https://www.itunes.com/dtds/podcast-1.0.dtd\"|ITUNES",
    ])
    func theITunesNamespaceIsKnownByItsURIOrItsUsualPrefix(declaration: String) throws {
        let parts = declaration.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        let (xmlns, p) = (parts[0], parts[1])
        let xml = """
            <rss version="2.0" \(xmlns)><channel><title>T</title><\(p):author>Ada</\(p):author><\(p):image href="https://a.invalid/show.png"/>
            <\(p):category text="Technology"/><item><title>E</title><\(p):duration>1:02:03</\(p):duration>
            <\(p):image href="https://a.invalid/e.png"/><\(p):episode>4</\(p):episode><\(p):summary>Notes</\(p):summary></item></channel></rss>
            """
        let feed = try FeedParser.parse(Data(xml.utf8), url: url)
        #expect(feed.author == "Ada")
        #expect(feed.artwork == "https://a.invalid/show.png")
        #expect(feed.categories == ["Technology"])
        let episode = try #require(feed.episodes.first)
        #expect(episode.duration == 3723)
        #expect(episode.artwork == "https://a.invalid/e.png")
        #expect(episode.episode == 4)
        #expect(episode.summary == "Notes")
    }

    @Test func undeclaredContentAndMediaPrefixesAreRead() throws {
        let xml = """
            <rss version="2.0"><channel><title>T</title><item><title>E</title>
            <content:encoded><![CDATA[<p>Full notes</p>]]></content:encoded>
            <media:content url="https://cdn.invalid/m.mp3" type="audio/mpeg" fileSize="77"/>
            <media:thumbnail url="https://cdn.invalid/t.jpg"/></item></channel></rss>
            """
        let episode = try #require(try FeedParser.parse(Data(xml.utf8), url: url).episodes.first)
        #expect(episode.summary == "Full notes")
        #expect(episode.enclosureURL == "https://cdn.invalid/m.mp3")
        #expect(episode.enclosureLength == 77)
        #expect(episode.artwork == "https://cdn.invalid/t.jpg")
    }

    @Test func anElementOfAnotherNamespaceWithAFamiliarNameIsNotMistaken() throws {
        let xml = """
            <rss version="2.0" xmlns:x="urn:other"><channel><title>T</title><item><title>E</title>
            <x:duration>99</x:duration><x:title>Wrong</x:title></item></channel></rss>
            """
        let episode = try #require(try FeedParser.parse(Data(xml.utf8), url: url).episodes.first)
        #expect(episode.title == "E")
        #expect(episode.duration == nil)
    }

    @Test func entityBombsAreRefusedWithASentence() {
        var bomb = "<?xml version=\"1.0\"?><!DOCTYPE lolz [<!ENTITY lol \"lol\">"
        for level in 1...9 {
            bomb +=
                "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1 == 0 ? "" : String(level - 1));", count: 10)
                + "\">"
        }
        bomb += "]><rss><channel><title>&lol9;</title></channel></rss>"
        #expect {
            try FeedParser.parse(Data(bomb.utf8), url: url)
        } throws: { error in
            let text = "\(error)"
            return text.contains("entity expansion") && text.contains("refused for safety") && !text.contains("error 89")
        }
    }

    @Test func aDoctypeWithoutDeclarationsIsFine() throws {
        let xml = """
            <?xml version="1.0"?><!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://my.netscape.com/publish/formats/rss-0.91.dtd">
            <rss version="0.91"><channel><title>Old&nbsp;Show</title><item><title>A &eacute; B</title></item></channel></rss>
            """
        let feed = try FeedParser.parse(Data(xml.utf8), url: url)
        #expect(feed.title == "Old\u{A0}Show" || feed.title == "Old Show")
        #expect(feed.episodes.first?.title == "A é B")
    }

    /// A feed over the 10 MB that libxml2 refused whole, read in one piece and in chunks of every
    /// kind of size, with the same result.
    @Test func bigFeedsReadTheSameInOnePieceOrInChunks() throws {
        var xml =
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><rss xmlns:itunes=\"http://www.itunes.com/dtds/podcast-1.0.dtd\"><channel><title>Big</title>"
        let notes = String(repeating: "Long show notes with &amp; entities, “quotes” and émojis 🎙. ", count: 40)
        for n in 0..<4000 {
            xml += "<item><title>Episode \(n)</title><guid>g\(n)</guid><pubDate>Tue, 10 Jun 2025 09:41:00 +0000</pubDate>"
            xml += "<itunes:duration>\(n)</itunes:duration><description><![CDATA[<p>\(notes)</p>]]></description>"
            xml += "<enclosure url=\"https://cdn.invalid/\(n).mp3\" length=\"\(n + 1)\" type=\"audio/mpeg\"/></item>"
        }
        xml += "</channel></rss>"
        let data = Data(xml.utf8)
        #expect(data.count > 10_000_000)
        let whole = try FeedParser.parse(data, url: url)
        #expect(whole.episodes.count == 4000)
        #expect(whole.episodes.last?.title == "Episode 3999")
        #expect(whole.episodes[1234].duration == 1234)
        var generator = SystemRandomNumberGenerator()
        for maxChunk in [1, 1 << 20] {
            var episodes: [ParsedEpisode] = []
            let parser = FeedParser(url: url) { episodes.append($0) }
            var offset = 0
            let limit = maxChunk == 1 ? 300_000 : data.count  // byte by byte: the first episodes only
            try data.withUnsafeBytes { raw in
                while offset < limit {
                    let size = min(Int.random(in: 1...maxChunk, using: &generator), data.count - offset)
                    try parser.feed(UnsafeRawBufferPointer(rebasing: raw[offset..<(offset + size)]))
                    offset += size
                }
            }
            if limit == data.count {
                let feed = try parser.finish()
                #expect(feed.title == "Big")
                #expect(episodes == whole.episodes, "chunks of up to \(maxChunk) bytes")
            } else {
                #expect(episodes == Array(whole.episodes.prefix(episodes.count)) && episodes.count > 50)
            }
        }
    }
}
