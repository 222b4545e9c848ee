import Foundation
import MediaHTTP
import MediaKit
import Sandbox
import TestSupport
import Testing
import YouTubeSandbox

@testable import YouTube

/// The YouTube provider over libcurl against its sandbox replica.
struct YouTubeFixture {
    let server = SandboxServer(replicas: [YouTubeReplica()])
    let provider: YouTubeProvider

    init(key: String = "test-key") async throws {
        try await server.start()
        provider = try YouTubeProvider(context: server.providerContext("youtube", ["api_key": key]))
    }

    func requests(_ resource: String) -> [Sandbox.TrafficLog.RequestRecord] {
        server.traffic.requests.filter { $0.path == "/youtube/youtube/v3/\(resource)" }
    }
}

@Suite struct YouTubeProviderTests {
    @Test func assignableCategoriesOnly() async throws {
        let f = try await YouTubeFixture()
        defer { f.server.stop() }
        let categories = try await f.provider.categories()
        #expect(categories.contains(MediaCategory(id: "10", name: "Music")))
        #expect(!categories.contains { $0.name == "Short Movies" || $0.name == "Trailers" })
        #expect(f.requests("videoCategories").first?.query?.contains("regionCode=US") == true)
    }

    @Test func mostPopularPagesBothWays() async throws {
        let f = try await YouTubeFixture()
        defer { f.server.stop() }
        let first = try await f.provider.browse(category: "Music", cursor: nil)
        #expect(first.items.count == YouTubeProvider.pageSize)
        #expect(first.prev == nil)
        #expect(first.total == 240)
        let views = first.items.compactMap { $0.stats?["views"] }
        #expect(views == views.sorted(by: >), "most popular first")
        let second = try await f.provider.browse(category: "10", cursor: first.next)
        #expect(Set(second.items.map(\.id)).isDisjoint(with: first.items.map(\.id)))
        #expect(try await f.provider.browse(category: "10", cursor: second.prev) == first)
        let query = try #require(f.requests("videos").first?.query)
        for part in ["chart=mostPopular", "videoCategoryId=10", "maxResults=20", "part=snippet,contentDetails,statistics"] {
            #expect(query.removingPercentEncoding?.contains(part) == true, "\(query)")
        }
    }

    @Test func videosParseEveryField() async throws {
        let f = try await YouTubeFixture()
        defer { f.server.stop() }
        let video = try #require(try await f.provider.browse(category: "28", cursor: nil).items.first)
        #expect(video.kind == .video)
        #expect(video.url == "https://www.youtube.com/watch?v=\(video.id.nativeID)")
        #expect(video.duration != nil)
        #expect(video.stats?["views"] != nil && video.stats?["likes"] != nil && video.stats?["comments"] != nil)
        // The replica's thumbnails are on the sandbox's stand-in for i.ytimg.com.
        #expect(
            video.artwork?.hasPrefix(f.server.baseURL(for: "youtube")! + "/files/i.ytimg.com/vi/\(video.id.nativeID)/") == true)
        #expect(video.extra?["channel"]?.hasPrefix("youtube:channel:UC") == true)
        #expect(video.published != nil && video.subtitle != nil)
        var again = try await f.provider.item(video.id)
        // Details name the category, keeping its id.
        #expect(again.extra?["category"] == "Science & Technology")
        #expect(again.extra?["categoryId"] == "28")
        again.extra?["category"] = "28"
        again.extra?["categoryId"] = nil
        #expect(again == video)
    }

    @Test(arguments: [
        ("PT1H2M3S", 3723.0), ("PT4M", 240), ("PT30S", 30), ("P1DT2H", 93_600), ("P0D", 0), ("PT1.5S", 1.5), ("P1W", 604_800),
    ])
    func parsesISO8601Durations(text: String, seconds: Double) {
        #expect(ISO8601Duration.seconds(text) == seconds)
    }

    @Test func rejectsBadDurations() {
        for text in ["", "1H", "PT", "PTXM", "PT5X", "P1H"] { #expect(ISO8601Duration.seconds(text) == nil, "\(text)") }
    }

    @Test func searchCompletesVideosWithOneBatchedCall() async throws {
        let f = try await YouTubeFixture()
        defer { f.server.stop() }
        let page = try await f.provider.search(SearchQuery(text: "swift concurrency"))
        #expect(page.items.count == YouTubeProvider.pageSize)
        #expect(page.items.allSatisfy { $0.kind == .video && $0.duration != nil && $0.stats?["views"] != nil })
        #expect(f.requests("search").count == 1)
        let batches = f.requests("videos")
        #expect(batches.count == 1, "one videos.list for the whole page")
        let ids = batches.first?.query?.removingPercentEncoding?.components(separatedBy: "id=").last?.split(separator: "&").first
        #expect(ids?.split(separator: ",").count == YouTubeProvider.pageSize)
        let next = try await f.provider.search(SearchQuery(text: "swift concurrency", cursor: page.next))
        #expect(Set(next.items.map(\.id)).isDisjoint(with: page.items.map(\.id)))
        #expect(next.prev != nil)
    }

    @Test func searchesChannelsAndPlaylists() async throws {
        let f = try await YouTubeFixture()
        defer { f.server.stop() }
        let channels = try await f.provider.search(SearchQuery(text: "swift", kind: .channel))
        #expect(channels.items.map(\.title) == ["Swift Academy"])
        #expect(channels.items.first?.url?.hasPrefix("https://www.youtube.com/channel/UC") == true)
        #expect(f.requests("videos").isEmpty, "no video details for channel results")
        let playlists = try await f.provider.search(SearchQuery(text: "kitchen", kind: .playlist))
        #expect(playlists.items.count == 2 && playlists.items.allSatisfy { $0.kind == .playlist })
        await #expect(throws: ProviderError.self) { try await f.provider.search(SearchQuery(text: "x", kind: .movie)) }
    }

    @Test func channelDetailsAndUploadsAndPlaylists() async throws {
        let f = try await YouTubeFixture()
        defer { f.server.stop() }
        let channel = try #require(try await f.provider.search(SearchQuery(text: "academy", kind: .channel)).items.first)
        let details = try await f.provider.item(channel.id)
        #expect(details.stats?["subscribers"] != nil && details.stats?["videos"] != nil)
        #expect(details.extra?["uploads"]?.hasPrefix("youtube:playlist:UU") == true)
        let uploads = try await f.provider.children(of: channel.id, cursor: nil)
        #expect(uploads.items.count == YouTubeProvider.pageSize)
        #expect(uploads.items.allSatisfy { $0.subtitle == "Swift Academy" && $0.duration != nil })
        #expect(uploads.total == details.stats?["videos"])
        let more = try await f.provider.children(of: channel.id, cursor: uploads.next)
        #expect(more.prev != nil)
        let playlist = try #require(try await f.provider.search(SearchQuery(text: "academy", kind: .playlist)).items.first)
        #expect(try await !f.provider.children(of: playlist.id, cursor: nil).items.isEmpty)
    }

    @Test func errorsAreTypedAndNeverShowTheKey() async throws {
        let quota = try await YouTubeFixture(key: "quota-key")
        defer { quota.server.stop() }
        // search costs 100 units: 100 of them use up the 10,000-unit day.
        for _ in 0..<100 { _ = try await quota.provider.search(SearchQuery(text: "x", kind: .channel)) }
        await #expect(throws: ProviderError.self) {
            do { _ = try await quota.provider.search(SearchQuery(text: "x", kind: .channel)) } catch {
                guard case .quotaExceeded = error as? ProviderError else { throw TestFailure() }
                throw error
            }
        }
        let bad = try await YouTubeFixture(key: "bad-SECRET-key")
        defer { bad.server.stop() }
        do {
            _ = try await bad.provider.categories()
            Issue.record("an invalid key was accepted")
        } catch let error as ProviderError {
            guard case .unauthorized(let message) = error else { Issue.record("\(error)"); return }
            #expect(message.contains("YOUTUBE_API_KEY"))
            #expect(!message.contains("SECRET"))
        }
        let f = try await YouTubeFixture()
        defer { f.server.stop() }
        await #expect(throws: ProviderError.notFound("no YouTube video nope1234567")) {
            try await f.provider.item(ItemID(provider: "youtube", kind: .video, nativeID: "nope1234567"))
        }
        do {
            _ = try await f.provider.children(of: ItemID(provider: "youtube", kind: .playlist, nativeID: "PLnope"), cursor: nil)
            Issue.record("a missing playlist was found")
        } catch let error as ProviderError {
            guard case .notFound = error else { Issue.record("\(error)"); return }
        }
        f.server.faults.add(FaultRule(path: "/youtube/youtube/v3/videoCategories", status: 429, retryAfter: 7, times: 1))
        await #expect(throws: ProviderError.rateLimited(retryAfter: 7)) { try await f.provider.categories() }
        f.server.faults.add(FaultRule(path: "/youtube/youtube/v3/videoCategories", status: 503, times: 1))
        do { _ = try await f.provider.categories() } catch let error as ProviderError {
            guard case .upstream(503, _) = error else { Issue.record("\(error)"); return }
        }
    }
}

struct TestFailure: Error {}
