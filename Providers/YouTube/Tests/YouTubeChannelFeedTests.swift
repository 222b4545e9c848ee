import Foundation
import MediaKit
import TestSupport
import Testing

@testable import YouTube

/// Channels' public Atom feeds, on a real recorded one (Recorded/SOURCES.md).
@Suite struct YouTubeChannelFeedTests {
    static let corpus = Recorded()

    /// A feed of 250,000 entries (real ones hold 15) is read to its first 100 and no further.
    @Test func aFeedOfAQuarterMillionEntriesIsReadToItsCap() throws {
        var feed =
            #"<?xml version="1.0"?><feed xmlns:yt="http://www.youtube.com/xml/schemas/2015" xmlns="http://www.w3.org/2005/Atom"><title>Big</title>"#
        for i in 0..<250_000 {
            feed += "<entry><yt:videoId>v\(i)</yt:videoId><title>t\(i)</title></entry>"
        }
        feed += "</feed>"
        let read = try YouTubeChannelFeed.read(Array(feed.utf8))
        #expect(read.items.count == YouTubeChannelFeed.maxEntries)
        #expect(read.capped)
        #expect(read.items.first?.id.nativeID == "v0")
        #expect(read.items.last?.id.nativeID == "v\(YouTubeChannelFeed.maxEntries - 1)")
    }

    @Test func aRecordedFeedGivesItsVideosWithTheirCounts() throws {
        let feed = try YouTubeChannelFeed.read(Array(Self.corpus.data("feed-UC7vv3cBq14FRXajteZt6FEg.xml")))
        #expect(feed.title == "egucom2014")
        let video = try #require(feed.items.first)
        #expect(feed.items.count == 1)
        #expect(video.id.description == "youtube:video:palm1QdV8ZI")
        #expect(video.title == "[EGU] Erstes Offizielles Intro")
        #expect(video.creator == "egucom2014")
        #expect(video.published == "2017-09-30T18:44:07Z")
        #expect(video.stats == ["views": 71, "likes": 3])
        #expect(video.summary == "Das erste Intro von Eternal GamerZ United!")
        #expect(video.artwork == "https://i1.ytimg.com/vi/palm1QdV8ZI/hqdefault.jpg")
        #expect(video.extra?["channel"] == "youtube:channel:UC7vv3cBq14FRXajteZt6FEg")
    }

    @Test(
        arguments: [
            (
                "https://www.youtube.com/feeds/videos.xml?channel_id=UCYO_jab_esuFRV4b17AJtAw",
                "youtube:channel:UCYO_jab_esuFRV4b17AJtAw"
            ),
            (
                "http://youtube.com/feeds/videos.xml?playlist_id=PL1hlX04-g75DGniSXtYRSlMBaroamq96d",
                "youtube:playlist:PL1hlX04-g75DGniSXtYRSlMBaroamq96d"
            ),
            (
                "https://m.youtube.com/feeds/videos.xml?foo=1&channel_id=UC7vv3cBq14FRXajteZt6FEg",
                "youtube:channel:UC7vv3cBq14FRXajteZt6FEg"
            ),
            // The host in any case (told from the bytes before any URL is parsed).
            (
                "https://WWW.YouTube.COM/feeds/videos.xml?channel_id=UC7vv3cBq14FRXajteZt6FEg",
                "youtube:channel:UC7vv3cBq14FRXajteZt6FEg"
            ),
            ("https://www.youtube.com.evil.example/feeds/videos.xml?channel_id=UCx1", nil),
            ("https://www.youtube.com/feeds/videos.xml?channel_id=UC%20x%26y", nil),
            ("https://www.youtube.com/feeds/other.xml?channel_id=UCx1", nil),
            ("ftp://www.youtube.com/feeds/videos.xml?channel_id=UCx1", nil),
            ("https://feeds.example.org/show.xml", nil),
        ] as [(String, String?)])
    func feedURLsOfYouTubeAreItsChannelsAndPlaylists(url: String, id: String?) {
        #expect(YouTubeChannelFeed.itemID(feed: url)?.description == id)
    }

    @Test func everyCutOfTheFeedReadsWithoutCrashing() throws {
        let bytes = Array(try Self.corpus.data("feed-UC7vv3cBq14FRXajteZt6FEg.xml"))
        for end in stride(from: 0, to: bytes.count, by: 37) {
            let feed = try? YouTubeChannelFeed.read(Array(bytes[0..<end]))
            // An entry is only taken whole.
            #expect(feed?.items.allSatisfy { $0.id.nativeID == "palm1QdV8ZI" } ?? true)
        }
    }

    static func provider(http: RecordedHTTPClient, programs: RecordedPrograms) throws -> YouTubeProvider {
        try YouTubeProvider(
            context: ProviderContext(config: ProviderConfig([:]), http: http, logger: Logger(label: "test"), programs: programs))
    }

    /// Without a key a channel opens on its feed: one small request, no yt-dlp; the next page is
    /// yt-dlp's, from the entry after the feed's last.
    @Test func withoutAKeyAChannelOpensOnItsFeed() async throws {
        let feed = try Self.corpus.data("feed-UC7vv3cBq14FRXajteZt6FEg.xml")
        let http = RecordedHTTPClient { request in
            request.url.path == "/feeds/videos.xml" && request.url.query == "channel_id=UC7vv3cBq14FRXajteZt6FEg"
                ? (200, ["content-type": "application/atom+xml"], feed) : nil
        }
        let programs = RecordedPrograms(stdout: try Self.corpus.data("ytdlp/channel-UCbdVsLFphtk2UWuJC-gcXoQ.json"))
        let provider = try Self.provider(http: http, programs: programs)
        let id = ItemID(provider: "youtube", kind: .channel, nativeID: "UC7vv3cBq14FRXajteZt6FEg")
        let first = try await provider.children(of: id, cursor: nil)
        #expect(first.items.map(\.id.nativeID) == ["palm1QdV8ZI"])
        #expect(programs.calls.withLock { $0.isEmpty })
        #expect(http.urls.first?.host == "www.youtube.com")
        let next = try #require(first.next)
        _ = try await provider.children(of: id, cursor: next)
        let arguments = programs.last
        #expect(arguments[try #require(arguments.firstIndex(of: "--playlist-items")) + 1] == "2:21")
    }

    @Test func withoutAKeyAChannelIsNamedByItsFeed() async throws {
        let feed = try Self.corpus.data("feed-UC7vv3cBq14FRXajteZt6FEg.xml")
        let programs = RecordedPrograms(stdout: Data())
        let provider = try Self.provider(
            http: RecordedHTTPClient { _ in (200, ["content-type": "application/atom+xml"], feed) }, programs: programs)
        let channel = try await provider.item(ItemID(provider: "youtube", kind: .channel, nativeID: "UC7vv3cBq14FRXajteZt6FEg"))
        #expect(channel.title == "egucom2014")
        #expect(channel.url == "https://www.youtube.com/channel/UC7vv3cBq14FRXajteZt6FEg")
        #expect(programs.calls.withLock { $0.isEmpty })
    }

    /// A feed fetched again carries the validators of the copy kept; a 304 reads that copy.
    @Test func aFeedThatDidNotChangeIsAnsweredFromTheCopyKept() async throws {
        let feed = try Self.corpus.data("feed-UC7vv3cBq14FRXajteZt6FEg.xml")
        let http = RecordedHTTPClient { request in
            request.headers["If-None-Match"] == "\"v1\""
                ? (304, ["etag": "\"v1\""], Data()) : (200, ["content-type": "application/atom+xml", "etag": "\"v1\""], feed)
        }
        let provider = try Self.provider(http: http, programs: RecordedPrograms(stdout: Data()))
        let id = ItemID(provider: "youtube", kind: .channel, nativeID: "UC7vv3cBq14FRXajteZt6FEg")
        let first = try await provider.children(of: id, cursor: nil)
        let again = try await provider.children(of: id, cursor: nil)
        #expect(first.items.map(\.id) == again.items.map(\.id) && again.items.count == 1)
        let asked = http.asked.withLock { $0 }
        #expect(asked.count == 2)
        #expect(asked.last?.headers["If-None-Match"] == "\"v1\"")
    }

    /// A 2025 channel feed mixing Shorts in (tyamahori/higuma-notify's fixture, Recorded/SOURCES.md):
    /// kept, marked, and linked as YouTube links them.
    @Test func shortsInAChannelFeedAreKeptAndMarked() throws {
        let feed = try YouTubeChannelFeed.read(Array(Self.corpus.data("feed-channel-shorts.xml")))
        #expect(feed.items.count == 15)
        let shorts = feed.items.filter(\.isShort)
        #expect(shorts.count == 10)
        #expect(shorts.allSatisfy { $0.url?.hasPrefix("https://www.youtube.com/shorts/") == true })
        #expect(feed.items.filter { !$0.isShort }.allSatisfy { $0.url?.contains("/watch?v=") == true })
        let plain = try YouTubeChannelFeed.read(Array(Self.corpus.data("feed-channel-2025.xml")))
        #expect(plain.items.count == 15 && !plain.items.contains(where: \.isShort))
    }

    /// A followed playlist opens on its Atom feed (`playlist_id=`), one small request, as a
    /// channel does (sidekids/sidetube's recorded playlist feed).
    @Test func withoutAKeyAPlaylistOpensOnItsFeed() async throws {
        let feed = try Self.corpus.data("feed-playlist-PL.xml")
        let http = RecordedHTTPClient { request in
            request.url.path == "/feeds/videos.xml" && request.url.query == "playlist_id=PLav47HAVZMjnTFVZL-aImCQIC0uLZtNCz"
                ? (200, ["content-type": "application/atom+xml"], feed) : nil
        }
        let programs = RecordedPrograms(stdout: Data())
        let provider = try Self.provider(http: http, programs: programs)
        let id = ItemID(provider: "youtube", kind: .playlist, nativeID: "PLav47HAVZMjnTFVZL-aImCQIC0uLZtNCz")
        let page = try await provider.children(of: id, cursor: nil)
        #expect(page.items.count == 4)
        #expect(page.items.first?.id.nativeID == "u9lj-c29dxI")
        #expect(programs.calls.withLock { $0.isEmpty }, "no yt-dlp")
        let playlist = try await provider.item(id)
        #expect(playlist.kind == .playlist && playlist.feed?.contains("playlist_id=") == true)
    }

    /// The feed fails and yt-dlp fails too, or lists nothing: an error with both reasons, never
    /// an empty page a person takes for "nothing new".
    @Test func aFeedThatFailsAndAYTDLPThatFailsSayBoth() async throws {
        let id = ItemID(provider: "youtube", kind: .channel, nativeID: "UCbdVsLFphtk2UWuJC-gcXoQ")
        let failing = RecordedPrograms { _ in
            ProgramOutput(
                status: 1, stdout: [], stderr: Array("ERROR: [youtube] x: Sign in to confirm you\u{2019}re not a bot".utf8))
        }
        let provider = try Self.provider(http: RecordedHTTPClient { _ in (500, [:], Data("oops".utf8)) }, programs: failing)
        await #expect {
            try await provider.children(of: id, cursor: nil)
        } throws: { error in
            guard case .unauthorized(let message) = error as? ProviderError else { return false }
            return message.contains("its feed failed") && message.contains("HTTP 500") && message.contains("cookies_from_browser")
        }
        let empty = RecordedPrograms(stdout: Data(#"{"_type":"playlist","playlist_count":3,"entries":[]}"#.utf8))
        let quiet = try Self.provider(http: RecordedHTTPClient { _ in nil }, programs: empty)
        await #expect {
            try await quiet.children(of: id, cursor: nil)
        } throws: { error in
            "\(error)".contains("yt-dlp listed no videos")
        }
    }

    @Test func aFeedThatFailsLeavesTheListingToYTDLP() async throws {
        let programs = RecordedPrograms(stdout: try Self.corpus.data("ytdlp/channel-UCbdVsLFphtk2UWuJC-gcXoQ.json"))
        let provider = try Self.provider(http: RecordedHTTPClient { _ in nil }, programs: programs)
        let page = try await provider.children(
            of: ItemID(provider: "youtube", kind: .channel, nativeID: "UCbdVsLFphtk2UWuJC-gcXoQ"), cursor: nil)
        #expect(page.items.count == 2)
        #expect(programs.calls.withLock { $0.count } == 1)
    }
}
