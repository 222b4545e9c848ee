import Foundation
import HostAPI
import MediaHost
import MediaKit
import MediaStore
import TestSupport
import Testing

/// A show that moved keeps one place in the library: the same `podcast:guid` at both addresses,
/// and the old address's feed says where it went (`extra.movedTo`). A feed that only copies a
/// show's guid replaces nothing.
@Suite struct MovedShowTests {
    /// `old` moved to `new` (its feed says so); `copy` has their guid and nothing else; `other`
    /// a guid of its own.
    struct Moved: CompiledProvider {
        static let descriptor = ProviderDescriptor(id: "moved", name: "Moved", kinds: [.podcast], capabilities: [.item])
        init(context: ProviderContext) throws {}
        func item(_ id: ItemID) async throws -> MediaItem {
            var item = MediaItem(id: id, title: "The Show")
            var namespace = PodcastNamespace()
            namespace.guid =
                id.nativeID == "other" ? "917393e3-1b1e-5cef-ace4-edaa54e1f810" : "ead4c236-bf58-58c6-a2c6-a6b28d128cb6"
            item.namespace = namespace
            item.feed = "https://\(id.nativeID).example.com/feed.xml"
            if id.nativeID == "old" { item.extra = ["movedTo": "http://NEW.example.com/feed.xml/"] }
            return item
        }
    }

    static func id(_ name: String) throws -> ItemID { try ItemID(parsing: "moved:podcast:\(name)") }

    @Test func followingTheNewAddressReplacesTheOld() async throws {
        let fixture = try HostFixture(more: [.of(Moved.self)])
        let dispatcher = fixture.host.dispatcher
        _ = try await dispatcher.run(FavoritesAdd(id: try Self.id("old")))
        _ = try await dispatcher.run(FavoritesAdd(id: try Self.id("other")))
        _ = try await dispatcher.run(RulesSet(show: try Self.id("old"), key: "keep_downloads", value: "3"))
        // A feed with the same guid that the old feed does not name: nothing replaced.
        let copy = try await dispatcher.run(FavoritesAdd(id: try Self.id("copy")))
        #expect(copy.extra?["replaces"] == nil, "\(copy)")
        #expect(
            Set(try await dispatcher.run(FavoritesList(provider: "moved")).items.map(\.id.nativeID)) == ["old", "other", "copy"])
        // Episodes of the old address left halfway and played; one already kept at the new.
        let store = fixture.host.store
        try await store.savePlayback(
            PlaybackRecord(id: try ItemID(parsing: "moved:episode:old:e1"), position: 754, duration: 3600, played: false))
        try await store.savePlayback(
            PlaybackRecord(id: try ItemID(parsing: "moved:episode:old:e2"), position: 0, duration: 3600, played: true))
        try await store.savePlayback(
            PlaybackRecord(id: try ItemID(parsing: "moved:episode:old:e3"), position: 10, duration: 3600, played: false))
        try await store.savePlayback(
            PlaybackRecord(id: try ItemID(parsing: "moved:episode:new:e3"), position: 99, duration: 3600, played: false))
        try await store.savePlayback(
            PlaybackRecord(id: try ItemID(parsing: "moved:episode:older:e1"), position: 5, duration: 3600, played: false))
        // The address the old feed names: it takes the old one's place, with its rules.
        let added = try await dispatcher.run(FavoritesAdd(id: try Self.id("new")))
        #expect(added.extra?["replaces"] == "moved:podcast:old", "\(added)")
        let followed = try await dispatcher.run(FavoritesList(provider: "moved")).items.map(\.id.nativeID)
        #expect(Set(followed) == ["new", "other", "copy"], "one show at its new address, the others untouched")
        // And with where its episodes were left (what the new address had already stays).
        #expect(try await store.playback(try ItemID(parsing: "moved:episode:new:e1"))?.position == 754)
        #expect(try await store.playback(try ItemID(parsing: "moved:episode:new:e2"))?.played == true)
        #expect(try await store.playback(try ItemID(parsing: "moved:episode:new:e3"))?.position == 99)
        #expect(try await store.playback(try ItemID(parsing: "moved:episode:older:e1"))?.position == 5, "another show's")
        let rules = try await fixture.host.store.showSettings(of: "moved:podcast:new").own
        #expect(rules["keep_downloads"] == "3", "\(rules)")
        #expect(try await fixture.host.store.showSettings(of: "moved:podcast:old").own.isEmpty)
        // The answer carries the namespace (the guid) to every front end.
        let json = try await fixture.call("media.get", ["id": "moved:podcast:new"])
        #expect(json["namespace"]?["guid"] == "ead4c236-bf58-58c6-a2c6-a6b28d128cb6", "\(json)")
    }

    /// A sync's show (read after the round) replaces only what it proves moved, and only while
    /// it is still followed.
    @Test func aSyncsShowReplacesOnlyWhatMovedAndWhileFollowed() async throws {
        let fixture = try HostFixture(more: [.of(Moved.self)])
        let host = fixture.host
        _ = try await host.dispatcher.run(FavoritesAdd(id: try Self.id("old")))
        let new = try await host.withProvider("moved") { try await $0.item(try Self.id("new")) }
        #expect(try await host.replaceMovedShow(by: new) == nil, "not followed (unfollowed since): nothing changes")
        try await host.store.addFavorite(new)
        #expect(try await host.replaceMovedShow(by: new)?.id.nativeID == "old")
        #expect(try await host.store.favorites(provider: "moved").items.map(\.id.nativeID) == ["new"])
    }

    /// A show with live items in every state, and an episode that is none.
    struct Lives: CompiledProvider {
        static let descriptor = ProviderDescriptor(
            id: "lives", name: "Lives", kinds: [.podcast, .episode], capabilities: [.item, .children])
        init(context: ProviderContext) throws {}
        func item(_ id: ItemID) async throws -> MediaItem { MediaItem(id: id, title: "Live Show") }
        func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
            let states: [(String, String?, String)] = [
                ("ended", "ended", "2026-01-05T20:00:00Z"), ("later", "pending", "2027-02-01T20:00:00Z"),
                ("plain", nil, "2026-11-28T08:00:00Z"), ("now", "live", "2026-11-29T20:00:00Z"),
                ("sooner", "pending", "2027-01-01T20:00:00Z"), ("earlier", "ended", "2025-06-01T20:00:00Z"),
            ]
            return Page(
                items: states.map { name, status, start in
                    var item = MediaItem(id: ItemID(provider: "lives", kind: .episode, nativeID: name), title: name)
                    item.published = start
                    if let status {
                        var namespace = PodcastNamespace()
                        namespace.live = .init(status: status, start: start)
                        item.namespace = namespace
                    }
                    return item
                })
        }
    }

    /// `latest --live`: the live streams alone, live now first, then upcoming soonest first,
    /// then ended latest first.
    @Test func liveStreamsAreListedLiveUpcomingEnded() async throws {
        let fixture = try HostFixture(more: [.of(Lives.self)])
        _ = try await fixture.host.dispatcher.run(FavoritesAdd(id: try ItemID(parsing: "lives:podcast:show")))
        let lives = try await fixture.host.dispatcher.run(FavoritesLatest(live: true))
        #expect(lives.items.map(\.id.nativeID) == ["now", "sooner", "later", "ended", "earlier"])
        let all = try await fixture.host.dispatcher.run(FavoritesLatest())
        #expect(all.items.count == 6 && all.items.first?.id.nativeID == "later", "without --live: newest first, as before")
    }
}
