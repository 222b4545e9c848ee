import Foundation
import HostAPI
import MediaHost
import MediaKit
import TestSupport
import Testing

/// A show that moved keeps one place in the library: its feed's `podcast:guid` is the same at
/// both addresses. Followed at the new one, it replaces the old; a sync that brings the other
/// device's address replaces it only when that feed is the newer.
@Suite struct MovedShowTests {
    /// Three shows: `old` and `new` are one show (the same guid), `new` with a later episode;
    /// `other` has a guid of its own.
    struct Moved: CompiledProvider {
        static let descriptor = ProviderDescriptor(id: "moved", name: "Moved", kinds: [.podcast], capabilities: [.item])
        init(context: ProviderContext) throws {}
        func item(_ id: ItemID) async throws -> MediaItem {
            var item = MediaItem(id: id, title: "The Show")
            var namespace = PodcastNamespace()
            namespace.guid =
                id.nativeID == "other" ? "917393e3-1b1e-5cef-ace4-edaa54e1f810" : "ead4c236-bf58-58c6-a2c6-a6b28d128cb6"
            item.namespace = namespace
            item.published = id.nativeID == "new" ? "2026-11-20T08:00:00Z" : "2026-01-05T08:00:00Z"
            item.feed = "https://\(id.nativeID).example.com/feed.xml"
            return item
        }
    }

    static func id(_ name: String) throws -> ItemID { try ItemID(parsing: "moved:podcast:\(name)") }

    @Test func followingTheNewAddressReplacesTheOld() async throws {
        let fixture = try HostFixture(more: [.of(Moved.self)])
        let dispatcher = fixture.host.dispatcher
        _ = try await dispatcher.run(FavoritesAdd(id: try Self.id("old")))
        _ = try await dispatcher.run(FavoritesAdd(id: try Self.id("other")))
        let added = try await dispatcher.run(FavoritesAdd(id: try Self.id("new")))
        #expect(added.extra?["replaces"] == "moved:podcast:old", "\(added)")
        let followed = try await dispatcher.run(FavoritesList(provider: "moved")).items.map(\.id.nativeID)
        #expect(Set(followed) == ["new", "other"], "one show at its new address, the other untouched")
        // The answer carries the namespace (the guid) to every front end.
        let json = try await fixture.call("media.get", ["id": "moved:podcast:new"])
        #expect(json["namespace"]?["guid"] == "ead4c236-bf58-58c6-a2c6-a6b28d128cb6", "\(json)")
    }

    @Test func aSyncReplacesOnlyWithTheNewerFeed() async throws {
        let fixture = try HostFixture(more: [.of(Moved.self)])
        let host = fixture.host
        // The desk follows the new address; another device brings the old: both stay.
        _ = try await host.dispatcher.run(FavoritesAdd(id: try Self.id("new")))
        let old = try await host.withProvider("moved") { try await $0.item(try Self.id("old")) }
        try await host.store.addFavorite(old)
        #expect(try await host.replaceMovedShow(by: old, onlyNewer: true) == nil)
        #expect(try await host.store.favorites(provider: "moved").items.count == 2)
        // The other way round: the newer feed takes the old one's place.
        let new = try await host.withProvider("moved") { try await $0.item(try Self.id("new")) }
        let replaced = try await host.replaceMovedShow(by: new, onlyNewer: true)
        #expect(replaced?.id.nativeID == "old")
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
