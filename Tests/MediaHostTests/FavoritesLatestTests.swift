import Foundation
import JSONRPC
import MediaHost
import MediaKit
import TestSupport
import Testing

/// `favorites.latest`: what is new from followed favorites, across providers.
@Suite struct FavoritesLatestTests {
    @Test func followedFavoritesGiveTheirNewestItemsMergedNewestFirst() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c1"])
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c2"])
        // A video is watched, not followed: it adds nothing.
        _ = try await fixture.checked("favorites.add", ["id": "catalog:video:v3"])
        let latest = try await fixture.checked("favorites.latest")
        #expect(latest["followed"] == 2)
        let items = latest["items"]?.arrayValue ?? []
        let ids = items.compactMap { $0["id"]?.stringValue }
        #expect(ids.contains("catalog:video:v0") && ids.contains("catalog:video:v1"))
        let dates = items.compactMap { $0["published"]?.stringValue }
        #expect(dates.count == items.count && dates == dates.sorted(by: >), "\(dates)")
        #expect(latest["errors"] == nil)

        // What was played is marked, and left out on request.
        let first = try #require(ids.first)
        try await fixture.host.store.markPlayed([try ItemID(parsing: first)], played: true)
        let marked = try await fixture.checked("favorites.latest")
        #expect(marked["items"]?.arrayValue?.first?["played"] == true)
        let unplayed = try await fixture.checked("favorites.latest", ["unplayed": true, "limit": 3])
        let unplayedIDs = unplayed["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        #expect(!unplayedIDs.contains(first) && unplayedIDs.count == 3)
    }

    /// One favorite that cannot be read costs its own items only, and says why.
    @Test func aFailingFavoriteIsReportedBesideTheOthers() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c1"])
        // A channel the provider no longer lists children for (kept from before).
        try await fixture.host.store.addFavorite(
            MediaItem(id: ItemID(provider: "catalog", kind: .channel, nativeID: "c9"), title: "Gone"))
        let latest = try await fixture.checked("favorites.latest")
        #expect(latest["followed"] == 2)
        #expect((latest["items"]?.arrayValue?.count ?? 0) > 0)
        let errors = latest["errors"]?.arrayValue ?? []
        #expect(errors.count == 1)
        #expect(errors.first?["id"] == "catalog:channel:c9")

        fixture.control.failure = .network("the catalog is down")
        let down = try await fixture.checked("favorites.latest")
        #expect(down["items"] == [])
        #expect(down["errors"]?.arrayValue?.count == 2)
        #expect(down["errors"]?.arrayValue?.first?["message"]?.stringValue?.contains("the catalog is down") == true)
    }

    @Test func badParamsAreRefused() async throws {
        let fixture = try HostFixture()
        #expect(await fixture.error("favorites.latest", ["limit": 0])?.code == RPCError.invalidParamsCode)
        #expect(await fixture.error("favorites.latest", ["provider": "nosuch"]) != nil)
        let empty = try await fixture.checked("favorites.latest")
        #expect(empty["followed"] == 0 && empty["items"] == [])
    }
}
