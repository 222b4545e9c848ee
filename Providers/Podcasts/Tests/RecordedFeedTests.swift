import Foundation
import MediaKit
import TestSupport
import Testing

@testable import Podcasts

/// The parser on recorded feeds (see Recorded/SOURCES.md), with gPodder's podcastparser as a
/// second opinion: its test data carries its own reading of each feed.
@Suite struct RecordedFeedTests {
    static let corpus = Recorded()
    static let podcastparserFeeds = corpus.files(in: "feeds/podcastparser", suffix: ".rss")

    /// podcastparser's reading, as its JSON has it.
    struct Reading: Decodable {
        struct Episode: Decodable {
            struct Enclosure: Decodable {
                var url: String
                var file_size: Int64?
                var mime_type: String?
            }
            var title: String?
            var guid: String?
            var published: Double?
            var total_time: Double?
            var link: String?
            var enclosures: [Enclosure]?
            var number: Int?
            struct Chapter: Decodable {
                var start: Double
                var title: String
                var href: String?
                var image: String?
            }
            var chapters: [Chapter]?
            var chapters_json_url: String?
        }
        var title: String?
        var episodes: [Episode]?
    }

    @Test func theCorpusIsThere() {
        #expect(Self.podcastparserFeeds.count > 60)
    }

    @Test(arguments: podcastparserFeeds)
    func agreesWithPodcastparser(path: String) throws {
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let expected = try JSONDecoder().decode(Reading.self, from: Self.corpus.data("feeds/podcastparser/\(name).json"))
        let feed = try FeedParser.parse(Self.corpus.data(path), url: URL(string: "file://tests/data/\(name).rss"))
        if let title = feed.title, !title.isEmpty, let theirs = expected.title { #expect(title == theirs, "\(name): feed title") }
        for theirs in expected.episodes ?? [] {
            // The same episode: by title, else by its media file.
            let firstURL = theirs.enclosures?.first?.url
            guard
                let ours = feed.episodes.first(where: {
                    ($0.title ?? "") == (theirs.title ?? "")
                        && (firstURL == nil || $0.enclosureURL == firstURL || theirs.title?.isEmpty == false)
                })
                    ?? feed.episodes.first(where: { $0.enclosureURL != nil && $0.enclosureURL == firstURL })
            else {
                Issue.record("\(name): podcastparser reads episode '\(theirs.title ?? "")' that we do not")
                continue
            }
            if let url = firstURL { #expect(ours.enclosureURL == url, "\(name): enclosure of '\(theirs.title ?? "")'") }
            if let size = theirs.enclosures?.first?.file_size, size > 0 { #expect(ours.enclosureLength == size, "\(name): size") }
            if let seconds = theirs.total_time, seconds > 0 { #expect(ours.duration == seconds, "\(name): duration") }
            if let published = theirs.published, published > 0 {
                #expect(ours.published?.timeIntervalSince1970 == published, "\(name): date")
            }
            if let number = theirs.number { #expect(ours.episode == number, "\(name): episode number") }
            if let link = theirs.chapters_json_url { #expect(ours.chapters == link, "\(name): the chapters file") }
            if let chapters = theirs.chapters {
                // podcastparser drops a start's fraction (01:02:03.400 is 3723); we keep it.
                let read = PodcastsProvider.simpleChapters(ours.simpleChapters).chapters
                #expect(read.map { floor($0.start) } == chapters.map(\.start), "\(name): chapter starts")
                #expect(read.map(\.title) == chapters.map(\.title), "\(name): chapter titles")
                #expect(read.map(\.url) == chapters.map(\.href) && read.map(\.image) == chapters.map(\.image), "\(name): links")
            }
        }
    }

    /// Chapters in real feeds: Podlove chapters with their namespace declared on the element and
    /// character references in titles (Podlovers, from Podlove's metalove), and multi-line
    /// `<podcast:chapters>` under the namespace's GitHub URL (Homegrown Hits, from partytime).
    @Test func chaptersInRealFeeds() throws {
        let podlovers = try FeedParser.parse(
            Self.corpus.data("feeds/chapters/rss-real-podlovers-psc.xml"), url: URL(string: "https://podlovers.org/feed/mp3"))
        let first = try #require(podlovers.episodes.first)
        let chapters = PodcastsProvider.simpleChapters(first.simpleChapters).normalized(duration: first.duration)
        #expect(chapters.chapters.count > 3 && chapters.notes.isEmpty, "\(chapters)")
        #expect(chapters.chapters.first?.start == 0)
        #expect(chapters.chapters.contains { $0.title.contains("ü") }, "\(chapters.chapters.map(\.title))")
        let hits = try FeedParser.parse(
            Self.corpus.data("feeds/chapters/rss-real-homegrown-hits.xml"), url: URL(string: "https://example.com/feed.xml"))
        // Its live item is listed too (marked live), without chapters.
        let recordedHits = hits.episodes.filter { $0.namespace?.live == nil }
        #expect(
            recordedHits.count == 4 && recordedHits.allSatisfy { $0.chapters?.hasPrefix("https://") == true },
            "\(hits.episodes.map(\.chapters))")
        let example = try FeedParser.parse(
            Self.corpus.data("feeds/chapters/pc20-example-feed.xml"), url: URL(string: "https://example.com/feed.xml"))
        #expect(example.episodes.contains { $0.chapters != nil })
    }

    @Test(
        arguments: ["feeds/podcastindex-example.xml", "feeds/wdr-1live-planb-reportage.xml"]
            + corpus.files(in: "feeds/feedkit", suffix: ".xml"))
    func readsOtherRecordedFeeds(path: String) throws {
        let data = try Self.corpus.data(path)
        let feed = try FeedParser.parse(data, url: URL(string: "https://recorded.invalid/feed.xml"))
        let text = String(decoding: data, as: UTF8.self)
        let elements =
            text.components(separatedBy: "<item").count - 1 + text.components(separatedBy: "<entry").count - 1
            + text.components(separatedBy: "<podcast:liveItem").count - 1
        #expect(feed.episodes.count == elements, "\(path): every item, entry or live item is an episode")
        // The samples that carry a title (some show one namespace alone) give it.
        if text.contains("<title") { #expect(feed.title?.isEmpty == false, "\(path)") }
    }

    /// RSS 0.90 (Netscape's RDF: `rdf:RDF` root, items beside the channel, elements in
    /// `http://my.netscape.com/rdf/simple/0.9/`), as heise online served it: every item an entry,
    /// the channel's title read.
    @Test func anRSS090FeedIsReadWhole() throws {
        let feed = try FeedParser.parse(
            Self.corpus.data("feeds/picofeed/heise.rdf"), url: URL(string: "https://www.heise.de/newsticker/heise.rdf"))
        #expect(feed.title == "heise online News")
        #expect(feed.episodes.count == 60)
        let first = try #require(feed.episodes.first)
        #expect(first.title == "Facebook f8: Künstliche Intelligenz räumt den Newsfeed auf")
        #expect(first.link?.hasPrefix("http://www.heise.de/newsticker/meldung/Facebook-f8") == true)
    }

    @Test func hardcoreHistoryFromTheITunesSample() throws {
        let feed = try FeedParser.parse(
            Self.corpus.data("feeds/feedkit/iTunes.xml"), url: URL(string: "https://feeds.feedburner.com/dancarlin/history"))
        #expect(feed.title == "Dan Carlin's Hardcore History")
        #expect(feed.author?.contains("Dan Carlin") == true)
        let episode = try #require(feed.episodes.first)
        #expect(episode.title == "Dan Carlin's Hardcore History", "itunes:title stands in for a missing title")
        #expect((episode.duration ?? 0) > 0)
    }

    @Test func thePodcastIndexExampleInDetail() throws {
        let feed = try FeedParser.parse(
            Self.corpus.data("feeds/podcastindex-example.xml"), url: URL(string: "https://example.com/feed.xml"))
        #expect(feed.title == "Podcasting 2.0 Namespace Example")
        #expect(feed.artwork == "https://example.com/images/pci_avatar-massive.jpg")
        #expect(feed.episodes.filter { $0.namespace?.live == nil }.count == 3)
        #expect(feed.episodes.filter { $0.namespace?.live != nil }.count == 1)
        let first = try #require(feed.episodes.first { $0.namespace?.live == nil })
        #expect(first.enclosureURL?.hasPrefix("https://") == true)
        #expect(first.transcript?.hasPrefix("https://") == true)
        #expect(first.published != nil)
    }

    @Test func theWDRFeedInDetail() throws {
        let feed = try FeedParser.parse(
            Self.corpus.data("feeds/wdr-1live-planb-reportage.xml"), url: URL(string: "http://www.wdr.de/podcast.xml"))
        #expect(feed.title == "1LIVE Plan B Reportage")
        #expect(feed.author == "radio@wdr.de")
        #expect(feed.artwork == "http://www.wdr.de/radio/podcast/img/2012/1LIVE/1live_planb600x600.jpg")
        #expect(feed.summary?.contains("Im Dunkeln hört man besser!") == true)
        #expect(feed.episodes.count == 2)
        let first = try #require(feed.episodes.first)
        #expect(first.title?.hasPrefix("1LIVE - Plan B Reportage: \"1 Beeck, 10 Festivals, 100 Aufgaben\"") == true)
        #expect(first.enclosureLength == 17_567_124)
        #expect(first.published == Date(timeIntervalSince1970: 1_378_245_600))
    }

    /// Transcripts as real feeds offer them: SRT with `language="EN"` (The Mike Neumann Show,
    /// 54 episodes), JSON beside SRT (AntennaPod's test feed), WebVTT (Podlovers); the richest
    /// format in the person's language is chosen.
    @Test func transcriptsInRealFeeds() throws {
        let show = try FeedParser.parse(
            Self.corpus.data("feeds/chapters/rss-real-themnshow.xml"), url: URL(string: "https://example.com/feed.xml"))
        let offered = show.episodes.map(PodcastsProvider.transcripts)
        #expect(offered.filter { !$0.isEmpty }.count >= 54, "\(offered.prefix(2))")
        let subrip = try #require(offered.first { $0.contains { $0.type == "application/x-subrip" } })
        #expect(subrip.allSatisfy { $0.url.hasPrefix("https://") && $0.language == "EN" })
        #expect(PodcastsProvider.choose(subrip, language: "en-US")?.type == "application/x-subrip")
        let antennapod = try FeedParser.parse(
            Self.corpus.data("feeds/chapters/rss-antennapod-transcripts.xml"), url: URL(string: "https://example.com/feed.xml"))
        let both = try #require(antennapod.episodes.first.map(PodcastsProvider.transcripts))
        #expect(both.count == 2)
        #expect(PodcastsProvider.choose(both, language: nil)?.type == "application/json", "JSON says most")
        let podlovers = try FeedParser.parse(
            Self.corpus.data("feeds/chapters/rss-real-podlovers-psc.xml"), url: URL(string: "https://podlovers.org/feed/mp3"))
        #expect(podlovers.episodes.contains { PodcastsProvider.transcripts($0).contains { $0.type == "text/vtt" } })
    }

    @Test func theLanguageAskedForComesBeforeTheFormat() {
        let offers = [
            PodcastsProvider.Offer(url: "https://x/de.json", type: "application/json", language: "de"),
            PodcastsProvider.Offer(url: "https://x/en.srt", type: "application/srt", language: "en-GB"),
            PodcastsProvider.Offer(url: "https://x/en.vtt", type: "text/vtt", language: "en-GB", rel: "captions"),
        ]
        #expect(PodcastsProvider.choose(offers, language: "en_US")?.url == "https://x/en.vtt")
        #expect(PodcastsProvider.choose(offers, language: "de-AT")?.url == "https://x/de.json")
        #expect(PodcastsProvider.choose(offers, language: "fr")?.url == "https://x/de.json", "none in French: the richest")
        #expect(PodcastsProvider.choose([], language: "en") == nil)
    }
}
