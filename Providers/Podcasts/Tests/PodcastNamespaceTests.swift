import Foundation
import MediaKit
import TestSupport
import Testing

@testable import Podcasts

/// The Podcasting 2.0 namespace read from real feeds (Recorded/podcast20, sources in its
/// SOURCES.md: the namespace's own example, partytime's, rssreader's and metalove's fixtures),
/// and from hostile ones: each element's absence or malformed value costs nothing but itself.
@Suite struct PodcastNamespaceTests {
    static let corpus = Recorded()

    static func parse(_ name: String) throws -> ParsedFeed {
        try FeedParser.parse(try corpus.data("podcast20/" + name), url: URL(string: "https://example.com/feed.xml"))
    }

    @Test func theNamespacesOwnExampleIsReadWhole() throws {
        let feed = try Self.parse("podcast-namespace-example.xml")
        let show = try #require(feed.namespace)
        #expect(show.guid == "y0ur-gu1d-g035-h3r3")
        #expect(show.license == .init(text: "my-podcast-license-v1", url: "https://example.org/mypodcastlicense/full.pdf"))
        #expect(show.locked == .init(locked: true, owner: "podcastowner@example.com"))
        #expect(show.funding == [.init(text: "Support the show!", url: "https://example.com/donate")])
        #expect(show.location?.name == "Austin, TX" && show.location?.osm == "R113314")
        #expect(show.value?.type == "lightning" && show.value?.recipients.map(\.split) == [99, 1])
        #expect(show.trailers?.first?.title == "Coming April 1st, 2021" && show.trailers?.first?.length == 12_345_678)
        #expect(show.trailers?.first?.published?.hasPrefix("2021-04-01") == true)
        #expect(
            show.podroll?.map(\.feedGuid) == ["917393e3-1b1e-5cef-ace4-edaa54e1f810", "396d9ae0-da7e-5557-b894-b606231fa3ea"])
        // The publisher's remoteItem is not a recommendation.
        #expect(show.podroll?.contains { $0.medium == "publisher" } == false)
        // Artwork by size: a social card and a banner are not the show's picture.
        #expect(show.images?.count == 1 && show.image(forWidth: 600) == "https://example.com/images/show/pci_avatar-massive.png")

        let live = try #require(feed.episodes.first { $0.namespace?.live != nil })
        #expect(live.namespace?.live?.status == "live")
        #expect(live.namespace?.live?.start == "2021-09-26T13:30:00Z" && live.namespace?.live?.end == "2021-09-26T15:30:00Z")
        #expect(live.namespace?.alternateEnclosures?.first?.sources == ["https://example.com/pc20/livestream"])

        let third = try #require(feed.episodes.first { $0.namespace?.seasonName != nil })
        let episode = try #require(third.namespace)
        #expect(episode.seasonName == "Podcasting 2.0" && third.season == 1 && third.episode == 3)
        #expect(episode.soundbites == [.init(start: 33.833, duration: 60)])
        #expect(episode.people?.map(\.name) == ["Adam Curry", "Dave Jones", "Becky Smith"])
        #expect(episode.people?.map(\.role) == ["host", "guest", "cover art designer"])
        #expect(episode.people?.last?.group == "visuals" && episode.people?.first?.group == "cast")
        #expect(episode.location?.name == "Birmingham Civil Rights Museum")
        let alternates = try #require(episode.alternateEnclosures)
        #expect(alternates.first?.isDefault == true && alternates.first?.sources.count == 2)
        // player.format and player.bitrate: the feed's own audio file plays unless a limit is
        // asked; video when asked; only http(s) sources (never ipfs:).
        let own = Enclosure(url: try #require(third.enclosureURL), type: third.enclosureType)
        #expect(episode.alternate(kind: "audio", maxBitrate: nil, enclosure: own) == nil)
        #expect(
            episode.alternate(kind: "audio", maxBitrate: 100_000, enclosure: own)?.sources == [
                "https://example.com/file-high-03.opus"
            ])
        #expect(episode.alternate(kind: "audio", maxBitrate: 200_000, enclosure: own)?.bitrate == 160_000)
        #expect(episode.alternate(kind: "audio", maxBitrate: 8000, enclosure: own)?.title == "Low bandwidth")
        #expect(
            episode.alternate(kind: "video", maxBitrate: nil, enclosure: own)?.sources == [
                "https://example.com/file-720.mp4"
            ])
        // A video episode offering audio: the best audio when audio is asked.
        let video = Enclosure(url: "https://example.com/file-720.mp4", type: "video/mp4")
        #expect(episode.alternate(kind: "audio", maxBitrate: nil, enclosure: video)?.bitrate == 160_000)
        #expect(episode.alternate(kind: "video", maxBitrate: nil, enclosure: video) == nil)
    }

    /// Where a feed says it lives: `itunes:new-feed-url` (podcastparser's fixture, Podnews) and
    /// Atom's self link. A show's `extra.movedTo` is either, when it is not the address read.
    @Test func aFeedSaysWhereItLives() throws {
        let moved = try FeedParser.parse(
            try Self.corpus.data("feeds/podcastparser/new_feed_url.rss"), url: URL(string: "https://old.example.com/feed"))
        #expect(moved.newFeedURL == "http://newlocation.com/example.rss" && moved.selfURL == nil)
        let podnews = try Self.parse("rssreader-podnews-daily.xml")
        #expect(podnews.newFeedURL == "https://podnews.net/rss" && podnews.selfURL == "https://podnews.net/rss")
        #expect(SyncKeys.sameFeed("https://podnews.net/rss", "http://PODNEWS.net/rss/"))
        #expect(!SyncKeys.sameFeed("https://podnews.net/rss", "https://podnews.net/RSS"))
    }

    /// Every file of the corpus, and every element across it (the table in SOURCES.md).
    @Test func everyElementIsReadFromARealFeed() throws {
        var seen = Set<String>()
        for name in Self.corpus.files(in: "podcast20", suffix: ".xml") {
            let feed = try FeedParser.parse(try Self.corpus.data(name), url: URL(string: "https://example.com/feed.xml"))
            #expect(!feed.episodes.isEmpty, "\(name)")
            let spaces = [feed.namespace].compactMap { $0 } + feed.episodes.compactMap(\.namespace)
            for space in spaces {
                if space.guid != nil { seen.insert("guid") }
                if space.people?.isEmpty == false { seen.insert("person") }
                if space.seasonName != nil { seen.insert("season") }
                if space.funding?.isEmpty == false { seen.insert("funding") }
                if space.podroll?.isEmpty == false { seen.insert("podroll") }
                if space.soundbites?.isEmpty == false { seen.insert("soundbite") }
                if space.live != nil { seen.insert("liveItem") }
                if space.trailers?.isEmpty == false { seen.insert("trailer") }
                if space.alternateEnclosures?.isEmpty == false { seen.insert("alternateEnclosure") }
                if space.images?.isEmpty == false { seen.insert("images") }
                if space.locked != nil { seen.insert("locked") }
                if space.license != nil { seen.insert("license") }
                if space.location != nil { seen.insert("location") }
                if space.value?.recipients.isEmpty == false { seen.insert("value") }
            }
        }
        let all: Set<String> = [
            "guid", "person", "season", "funding", "podroll", "soundbite", "liveItem", "trailer", "alternateEnclosure", "images",
            "locked", "license", "location", "value",
        ]
        #expect(all.subtracting(seen).isEmpty, "never read: \(all.subtracting(seen).sorted())")
        // Feeds declaring the namespace by its old GitHub address are read too.
        let old = try Self.parse("partytime-themnshow-sovereignfeeds.xml")
        #expect(old.namespace?.guid != nil && old.episodes.contains { $0.namespace?.people?.isEmpty == false })
    }

    /// Live items as feeds write them: an offset without a colon, a space before it.
    @Test func liveItemsWithOddTimes() throws {
        let feed = try Self.parse("partytime-homegrown-hits-music.xml")
        let live = try #require(feed.episodes.first { $0.namespace?.live != nil }?.namespace?.live)
        #expect(["pending", "live", "ended"].contains(live.status))
        let ended = try Self.parse("partytime-podverse-test-feed-liveitems.xml").episodes.compactMap(\.namespace?.live)
        #expect(ended.count == 4, "\(ended)")
    }

    static func hostile(_ channel: String, item: String) throws -> ParsedFeed {
        let xml = """
            <?xml version="1.0"?><rss version="2.0" xmlns:podcast="https://podcastindex.org/namespace/1.0"
            xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>Hostile</title>\(channel)
            <item><title>One</title><guid>one</guid><itunes:duration>600</itunes:duration>
            <enclosure url="https://example.com/1.mp3" type="audio/mpeg" length="1"/>\(item)</item>
            </channel></rss>
            """
        return try FeedParser.parse(Data(xml.utf8), url: URL(string: "https://example.com/feed.xml"))
    }

    @Test func hostileValuesCostOnlyThemselves() throws {
        let people = String(repeating: #"<podcast:person role="guest">Someone</podcast:person>"#, count: 10_000)
        let feed = try Self.hostile(
            #"""
            <podcast:guid></podcast:guid><podcast:locked>maybe</podcast:locked><podcast:funding>no url</podcast:funding>
            <podcast:podroll><podcast:remoteItem feedUrl="https://x.example/f"/></podcast:podroll>
            <podcast:value type="lightning" method="keysend"><podcast:valueRecipient type="node" address="" split="5"/>
            <podcast:valueRecipient type="node" address="abc" split="-3"/><podcast:valueRecipient type="node" address="abc" split="7"/></podcast:value>
            <podcast:liveItem status="live" start="2026-01-02T10:00:00Z" end="2026-01-02T09:00:00Z"><title>Backwards</title><guid>l</guid></podcast:liveItem>
            <podcast:liveItem status="exploded"><title>No such state</title><guid>x</guid></podcast:liveItem>
            """#,
            item: #"""
                <podcast:person role="host">   </podcast:person><podcast:person>Ada</podcast:person>\#(people)
                <podcast:season>-1</podcast:season><podcast:episode display="Bonus">x</podcast:episode>
                <podcast:soundbite startTime="30" duration="60">Good bit</podcast:soundbite>
                <podcast:soundbite startTime="590" duration="60">Runs past the end</podcast:soundbite>
                <podcast:soundbite startTime="900" duration="10">Past the end</podcast:soundbite>
                <podcast:soundbite startTime="nan" duration="10">Not a time</podcast:soundbite>
                <podcast:soundbite startTime="5" duration="-1">Negative</podcast:soundbite>
                <podcast:alternateEnclosure type="video/mp4"></podcast:alternateEnclosure>
                <podcast:images srcset="not a url, https://example.com/a.jpg 300w, https://example.com/b.jpg 1200w"/>
                """#)
        #expect(feed.title == "Hostile" && feed.episodes.count == 3)
        // Nothing of what was malformed, and what was well formed all there.
        #expect(feed.namespace?.guid == nil && feed.namespace?.locked == nil && feed.namespace?.funding == nil)
        #expect(feed.namespace?.podroll == nil)
        #expect(feed.namespace?.value?.recipients.map(\.split) == [7])
        let one = try #require(feed.episodes.first { $0.guid == "one" }?.namespace)
        #expect(one.people?.first?.name == "Ada" && one.people?.count == 100, "a hostile feed's 10,000 people cost 100")
        #expect(one.episodeDisplay == "Bonus")
        #expect(
            one.soundbites == [
                .init(start: 30, duration: 60, title: "Good bit"), .init(start: 590, duration: 10, title: "Runs past the end"),
            ])
        #expect(one.alternateEnclosures == nil)
        #expect(
            one.image(forWidth: 600) == "https://example.com/b.jpg" && one.image(forWidth: 200) == "https://example.com/a.jpg")
        #expect(feed.episodes.first { $0.guid == "one" }?.season == nil)
        let backwards = try #require(feed.episodes.first { $0.guid == "l" }?.namespace?.live)
        #expect(backwards.start == "2026-01-02T10:00:00Z" && backwards.end == nil, "an end before its start is no end")
        #expect(feed.episodes.first { $0.guid == "x" }?.namespace == nil)
    }

    /// Kept in the cache's record and given back as it was read.
    @Test func theCacheKeepsAnEpisodesNamespace() throws {
        let feed = try Self.parse("podcast-namespace-example.xml")
        for episode in feed.episodes {
            #expect(EpisodeRecord.decode(EpisodeRecord.encode(episode)) == episode)
        }
    }
}
