import Foundation
import JSONRPC
import MediaHost
import MediaKit
import MediaStore
import Synchronization
import TestSupport
import Testing

@testable import HostSync

/// The sync client on real recorded answers: gpodder.net's and a self-hosted mygpo's (quoted in
/// AntennaPod's issues), the API documentation's examples, mygpoclient's canned valid and
/// invalid answers, and Nextcloud gpoddersync's README and test bodies (Tests/Fixtures/Sync,
/// SOURCES.md there says where each came from).
@Suite struct SyncServerTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Sync")

    static func fixture(_ path: String) throws -> String {
        try String(contentsOf: fixtures.appendingPathComponent(path), encoding: .utf8)
    }

    /// A server that answers every GET of episode actions with `body`.
    static func server(_ dialect: SyncAccount.Dialect, answering body: String, status: Int = 200) -> (
        SyncServer, RecordedHTTPClient
    ) {
        let http = RecordedHTTPClient { _ in (status, ["content-type": "application/json"], Data(body.utf8)) }
        let account = SyncAccount(
            dialect: dialect, server: URL(string: "https://sync.example")!, username: "alice", password: "pw-123456",
            device: "desk")
        return (SyncServer(account: account, http: http), http)
    }

    @Test func gpodderNetsOwnAnswerWithMinusOnesForUnknownNumbers() async throws {
        let (server, http) = Self.server(
            .gpodder,
            answering: try Self.fixture(
                "gpodder/live-recorded/gpodder.net-GET-episodes-2021-09-02.AntennaPod-issue-5380.response.json"))
        let (actions, skipped, cursor, more) = try await server.actions(since: 0)
        #expect(skipped == 0 && !more)
        #expect(cursor == 1_630_591_132)
        let action = try #require(actions.first)
        #expect(action.podcast == "https://fokcast.libsyn.com/rss")
        #expect(action.episode == "https://traffic.libsyn.com/secure/fokcast/321.mp3?dest-id=230581")
        #expect(action.device == "test2")
        #expect(action.action == "play")
        #expect(action.at == ISODate.parse("2021-09-02T13:58:23Z"))
        // -1 is AntennaPod's "unknown": no position, so no place to resume.
        #expect(action.position == nil && action.started == nil && action.total == nil)
        // Basic auth on the request, the user in the path, `since` asked.
        let request = try #require(http.asked.withLock { $0.first })
        #expect(request.url.absoluteString == "https://sync.example/api/2/episodes/alice.json?since=0")
        #expect(request.headers["Authorization"] == "Basic " + Data("alice:pw-123456".utf8).base64EncodedString())
    }

    @Test func aSelfHostedMygpoPlayToTheEnd() async throws {
        let (server, _) = Self.server(
            .gpodder,
            answering: try Self.fixture(
                "gpodder/live-recorded/self-hosted-mygpo-GET-episodes-2021-01-24.AntennaPod-issue-4459.response.last-element-only.json"
            ))
        let action = try #require(try await server.actions(since: 0).actions.first)
        #expect(action.started == 7312 && action.position == 7312 && action.total == 7312)
        let remote = RemoteEpisodeFixture.remote(action)
        let record = try #require(remote.playback(for: ItemID(provider: "podcasts", kind: .episode, nativeID: "1:x")))
        #expect(record.played)
    }

    /// mygpoclient's own test answers: a complete list reads; actions without an action or
    /// with a timestamp that is none are passed over and counted, not stored.
    @Test func mygpoclientsCannedAnswers() async throws {
        let valid = try Self.fixture("gpodder/mygpoclient-api_test/test_downloadEpisodeActions_returnsActionList.response.json")
        // Its podcasts are "a" and "x": no URLs, so nothing is kept of them.
        let (server, _) = Self.server(.gpodder, answering: valid)
        let read = try await server.actions(since: 0)
        #expect(read.actions.isEmpty && read.skipped == 2)

        let incomplete = try Self.fixture(
            "gpodder/mygpoclient-api_test/test_downloadEpisodeActions_raisesInvalidResponse_onIncompleteActions.response.json")
        #expect(try await Self.server(.gpodder, answering: incomplete).0.actions(since: 0).skipped == 2)

        for name in ["onInvalidTimestamp", "onMissingTimestamp", "onMissingActions"] {
            let body = try Self.fixture(
                "gpodder/mygpoclient-api_test/test_downloadEpisodeActions_raisesInvalidResponse_\(name).response.json")
            await #expect(throws: ProviderFailure.self, "\(name)") {
                _ = try await Self.server(.gpodder, answering: body).0.actions(since: 0)
            }
        }
    }

    @Test func subscriptionChangesAsDocumented() async throws {
        let documented = try Self.fixture("gpodder/mygpo-docs/subscriptions-GET-api2-changes-since.response.json")
        let none = try await Self.server(.gpodder, answering: documented).0.subscriptionChanges(device: "phone", since: 0)
        #expect(none.add.isEmpty && none.remove.isEmpty && none.timestamp == 12347)
        let body = try Self.fixture(
            "gpodder/mygpoclient-api_test/test_pullSubscriptions_returnsChangesListAndTimestamp.response.json")
        let (server, http) = Self.server(.gpodder, answering: body)
        let changes = try await server.subscriptionChanges(device: "phone", since: 12)
        #expect(changes.add == ["http://example.com/test.rss", "http://feeds.example.org/1/feed.atom"])
        #expect(changes.remove == ["http://example.co.uk/episodes.xml", "http://pod.cast/test.xml"])
        #expect(changes.timestamp == 1_262_103_016)
        #expect(http.urls.first?.absoluteString == "https://sync.example/api/2/subscriptions/alice/phone.json?since=12")
        for name in ["onMissingTimestamp", "onInvalidTimestamp"] {
            let bad = try Self.fixture(
                "gpodder/mygpoclient-api_test/test_pullSubscriptions_raisesInvalidResponse_\(name).response.json")
            await #expect(throws: ProviderFailure.self, "\(name)") {
                _ = try await Self.server(.gpodder, answering: bad).0.subscriptionChanges(device: "phone", since: 0)
            }
        }
    }

    /// Nextcloud writes actions upper-cased, and its README's example is kept as published
    /// apart from its trailing commas; since 3.11 times carry +00:00.
    @Test func nextcloudsActions() async throws {
        let body = try Self.fixture("nextcloud/readme-GET-episode_action-since.response.trailing-commas-removed.json")
        let (server, http) = Self.server(.nextcloud, answering: body)
        let read = try await server.actions(since: 5)
        #expect(read.skipped == 0)
        let first = try #require(read.actions.first)
        #expect(first.action == "play" && first.guid == "s01e20-example-org")
        #expect(first.position == 120 && first.started == 15 && first.total == 500)
        #expect(http.urls.first?.absoluteString == "https://sync.example/index.php/apps/gpoddersync/episode_action?since=5")

        #expect(SyncServer.date("2021-10-06T11:49:23+00:00") == ISODate.parse("2021-10-06T11:49:23Z"))
        #expect(SyncServer.date("2021-10-06T13:49:23+02:00") == ISODate.parse("2021-10-06T11:49:23Z"))
        #expect(SyncServer.date("2021-10-06T11:49:23.123000") != nil)
        #expect(SyncServer.date("2021-10-06T11:49:23Z") == ISODate.parse("2021-10-06T11:49:23Z"))
        for bad in ["yesterday", "", "2021-10-06", "1999-01-01T00:00:00", "2999-01-01T00:00:00"] {
            #expect(SyncServer.date(bad) == nil, "\(bad)")
        }
        #expect(SyncServer.naive(ISODate.parse("2021-10-06T11:49:23Z")!) == "2021-10-06T11:49:23")
    }

    /// The answers each status gets: what to do, never the password.
    @Test func failuresSayWhatToDo() async throws {
        let cases: [(Int, String)] = [
            (401, "refused alice's password"), (429, "rate"), (500, "500"), (404, "no gpoddersync app"),
        ]
        for (status, words) in cases {
            let (server, _) = Self.server(.nextcloud, answering: #"{"message":"pw-123456"}"#, status: status)
            do {
                _ = try await server.actions(since: 0)
                Issue.record("\(status) did not fail")
            } catch {
                let text = (error as? ProviderFailure)?.error.message ?? "\(error)"
                #expect(!text.contains("pw-123456"))
                #expect(text.contains(words), "\(status): \(text)")
            }
        }
    }

    /// A server echoing the password in an error, in each form it travels in (itself, the Basic
    /// header's base64, JSON-escaped, percent-encoded): none reaches the message.
    @Test func theEchoedPasswordIsMaskedInEveryForm() async throws {
        let password = #"pa"ss/wörd 1"#
        let basic = Data("alice:\(password)".utf8).base64EncodedString()
        let json = String(decoding: JSONWriter.bytes(.string(password)).dropFirst().dropLast(), as: UTF8.self)
        let percent = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let body = #"{"error":"bad request from Basic \#(basic) \#(json) \#(percent)"}"#
        for status in [400, 500] {
            let http = RecordedHTTPClient { _ in (status, ["content-type": "application/json"], Data(body.utf8)) }
            let account = SyncAccount(
                dialect: .gpodder, server: URL(string: "https://sync.example")!, username: "alice", password: password,
                device: "desk")
            do {
                _ = try await SyncServer(account: account, http: http).actions(since: 0)
                Issue.record("\(status) did not fail")
            } catch {
                let text = (error as? ProviderFailure)?.error.message ?? "\(error)"
                for form in [password, basic, json, percent] { #expect(!text.contains(form), "\(status): \(form) in \(text)") }
            }
        }
    }

    /// A server whose every page has a full page of new actions, each later than the last, is
    /// read for `maxPages` pages in a round, which says so; the next round reads on from there.
    @Test func aServerThatNeverEndsItsPagesIsReadForARoundsWorth() async throws {
        let pages = Mutex(0)
        let http = RecordedHTTPClient { request in
            let page = pages.withLock { count in
                count += 1
                return count
            }
            let actions = (0..<SyncServer.pageSize).map { index in
                #"{"podcast":"https://x.example/feed","episode":"https://x.example/\#(page)-\#(index).mp3","action":"play","timestamp":"2025-01-01T00:00:00","position":10}"#
            }
            let body = #"{"actions":[\#(actions.joined(separator: ","))],"timestamp":\#(1_700_000_000 + page)}"#
            return (200, ["content-type": "application/json"], Data(body.utf8))
        }
        let account = SyncAccount(
            dialect: .gpodder, server: URL(string: "https://sync.example")!, username: "alice", password: "pw-123456",
            device: "desk")
        let read = try await SyncServer(account: account, http: http).actions(since: 0)
        #expect(read.more && pages.withLock { $0 } == SyncServer.maxPages)
        #expect(read.actions.count == SyncServer.maxPages * SyncServer.pageSize)
        #expect(read.cursor == Int64(1_700_000_000 + SyncServer.maxPages))
    }

    /// `update_urls` from a hostile server: only URLs sent are renamed, each once, to a feed's
    /// URL of at most 4 KB (not javascript:, file: or 1 MB); and the store never gives two shows
    /// one sync URL (A→B then B→A, or onto a URL another show has).
    @Test func renamesAreTakenOnlyWhereTheyMakeSense() async throws {
        let a = "http://feeds.example/a.xml", b = "http://feeds.example/b.xml"
        let huge = "http://feeds.example/" + String(repeating: "x", count: 1 << 20)
        let answer = JSONValue.object([
            "timestamp": 1,
            "update_urls": .array(
                [
                    [a, b], [b, a], [a, huge], [a, "javascript:alert(1)"], ["http://not.sent/x", b], [b, "file:///etc/passwd"],
                ].map {
                    .array($0.map(JSONValue.string))
                }),
        ])
        let (server, _) = Self.server(.gpodder, answering: answer.jsonString)
        let renamed = try await server.uploadSubscriptions(add: [a, b], remove: [])
        #expect(renamed.map { "\($0.old) \($0.new)" } == ["\(a) \(b)", "\(b) \(a)"], "\(renamed)")

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("renames-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let store = try MediaStore(path: folder + "/db.sqlite")
        func show(_ url: String, _ n: Int) -> MediaItem {
            var item = MediaItem(id: ItemID.feed(url, provider: "podcasts")!, title: "Show \(n)")
            item.feed = url
            return item
        }
        try await store.addFavorites([show(a, 1), show(b, 2)])
        try await store.renameSyncURLs(renamed)
        let followed = try await store.followedSyncURLs()
        #expect(followed.count == 2 && Set(followed.keys) == [a, b], "two shows never share one URL: \(followed)")
    }

    @Test func subscriptionURLsOfYouTubeAndPodcasts() {
        let channel = MediaItem(id: ItemID(provider: "youtube", kind: .channel, nativeID: "UCabc_-1"), title: "C")
        let url = SyncKeys.subscriptionURL(of: channel)
        #expect(url == "https://www.youtube.com/feeds/videos.xml?channel_id=UCabc_-1")
        #expect(SyncKeys.followedID(forSubscription: url!) == channel.id)
        #expect(SyncKeys.followedID(forSubscription: "https://www.youtube.com/feeds/videos.xml?channel_id=a/../b") == nil)
        #expect(SyncKeys.followedID(forSubscription: "file:///etc/passwd") == nil)
        #expect(SyncKeys.followedID(forSubscription: "http://example.com/feed.rss")?.kind == .podcast)
        var video = MediaItem(id: ItemID(provider: "youtube", kind: .video, nativeID: "dQw4w9WgXcQ"), title: "V")
        #expect(SyncKeys.episodeURL(of: video) == "https://www.youtube.com/watch?v=dQw4w9WgXcQ")
        #expect(SyncKeys.podcastURL(of: video) == nil)
        video.extra = ["channel": "youtube:channel:UCabc_-1"]
        #expect(SyncKeys.podcastURL(of: video) == url)
        var movie = MediaItem(id: ItemID(provider: "tmdb", kind: .movie, nativeID: "550"), title: "M")
        movie.feed = "http://example.com/x"
        #expect(SyncKeys.subscriptionURL(of: movie) == nil)
    }
}

enum RemoteEpisodeFixture {
    static func remote(_ action: EpisodeAction) -> RemoteEpisode {
        RemoteEpisode(
            episode: action.episode, podcast: action.podcast, guid: action.guid, action: action.action,
            position: action.position.map(Double.init), started: action.started.map(Double.init),
            total: action.total.map(Double.init), at: action.at, device: action.device)
    }
}

extension SyncServerTests {
    /// mygpo keeps a play only with started and total together (else it drops it, answering
    /// 200): a mark as played (no stretch) goes with started at the position.
    @Test func aPlayCarriesStartedAndTotalTogether() async throws {
        let (server, http) = Self.server(.gpodder, answering: #"{"timestamp": 1, "update_urls": []}"#)
        let at = try #require(ISODate.parse("2026-01-02T03:04:05Z"))
        let played = EpisodeAction(
            podcast: "https://e.example/feed", episode: "https://e.example/1.mp3", guid: "g", action: "play", at: at,
            started: nil, position: 3600, total: 3600, device: nil)
        var unknownLength = played
        unknownLength.total = nil
        unknownLength.started = 10
        try await server.upload([played, unknownLength]) { _ in }
        let body = try #require(http.asked.withLock { $0.first?.body })
        let sent = try #require(try JSONValue(parsing: String(decoding: body, as: UTF8.self)).arrayValue)
        #expect(sent[0]["started"]?.intValue == 3600 && sent[0]["total"]?.intValue == 3600)
        #expect(sent[0]["timestamp"]?.stringValue == "2026-01-02T03:04:05" && sent[0]["device"]?.stringValue == "desk")
        #expect(sent[1]["started"] == nil && sent[1]["total"] == nil && sent[1]["position"]?.intValue == 3600)
    }
}

extension SyncServerTests {
    /// One action a server will never take (a 400 for it alone) does not hold the others back:
    /// the chunk goes again one by one and only that one is refused. A 500 is no refusal: the
    /// whole upload fails and waits (an outage must not drop what waits).
    @Test func anActionTheServerRefusesDoesNotHoldTheOthersBack() async throws {
        let http = RecordedHTTPClient { request in
            let body = String(decoding: request.body ?? Data(), as: UTF8.self)
            return body.contains("bad.mp3") ? (400, [:], Data("episode too long".utf8)) : (200, [:], Data("{}".utf8))
        }
        let account = SyncAccount(
            dialect: .nextcloud, server: URL(string: "https://sync.example")!, username: "alice", password: "pw-123456",
            device: "desk")
        let server = SyncServer(account: account, http: http)
        let at = try #require(ISODate.parse("2026-01-02T03:04:05Z"))
        let actions = ["a", "bad", "c"].map { name in
            EpisodeAction(
                podcast: "https://e.example/feed", episode: "https://e.example/\(name).mp3", guid: nil, action: "play", at: at,
                started: nil, position: 10, total: nil, device: nil)
        }
        var sent: [Int] = []
        var refused: [(Int, String)] = []
        try await server.upload(actions) { range in
            sent += Array(range)
        } refused: { index, why in
            refused.append((index, why))
        }
        #expect(sent == [0, 2])
        #expect(refused.map(\.0) == [1] && refused.first?.1.contains("400") == true)
        #expect(http.asked.withLock { $0.count } == 4, "the chunk, then each of its three")

        let outage = SyncServer(account: account, http: RecordedHTTPClient { _ in (500, [:], Data()) })
        await #expect(throws: ProviderFailure.self) { try await outage.upload(actions) { _ in } }
    }
}

@Suite struct SyncStateTests {
    /// The last round's figures kept by another version (or edited by hand) are said to be
    /// unreadable, not taken for "no round yet"; a good report reads back whole.
    @Test func anUnreadableReportIsSaidNotDropped() async throws {
        let fixture = try HostFixture(modules: [SyncModule.self])
        try await fixture.host.store.setSyncValues(["lastReport": #"{"server": 3"#])
        let broken = try await fixture.call("sync.status")
        #expect(broken["lastReport"] == nil)
        let problem = try #require(broken["lastReportError"]?.stringValue)
        #expect(problem.contains("cannot be read") && problem.contains("next round writes them again"))

        let report = SyncReport(
            server: "https://gpodder.example", dialect: .gpodder, device: "here", followed: 1, unfollowed: 0,
            subscriptionsSent: 0, renamed: 0, actionsReceived: 2, actionsNewer: 1, actionsSent: 0, skipped: [], queued: 0,
            seconds: 0.5)
        try await fixture.host.store.setSyncValues([
            "lastReport": String(decoding: try JSONEncoder().encode(report), as: UTF8.self)
        ])
        let good = try await fixture.call("sync.status")
        #expect(good["lastReport"]?["server"] == "https://gpodder.example")
        #expect(good["lastReportError"] == nil)
    }
}
