import Foundation
import MediaKit
import Testing

@testable import MediaStore

/// What a refresh keeps: which episodes arrive (the newest only at a show's first read; then
/// those not known), the inbox and its seen marks, and a feed's failures.
@Suite struct RefreshStoreTests {
    let directory = NSTemporaryDirectory() + "mediahost-refresh-" + UUID().uuidString
    let show = ItemID(provider: "podcasts", kind: .podcast, nativeID: "1")

    func episode(_ n: Int, day: Int? = nil) -> MediaItem {
        var item = MediaItem(id: ItemID(provider: "podcasts", kind: .episode, nativeID: "1:e\(n)"), title: "Episode \(n)")
        if let day { item.published = String(format: "2026-11-%02dT10:00:00Z", day) }
        return item
    }

    func followed(_ store: MediaStore) async throws {
        try await store.addFavorite(MediaItem(id: show, title: "The Show"))
    }

    @Test func theFirstReadLearnsAShowAndItsNewestArrives() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        try await followed(store)
        // Listed oldest first on purpose: the newest is chosen by date, not by place.
        let page = [episode(1, day: 1), episode(3, day: 3), episode(2, day: 2)]
        #expect(try await store.arrivals(of: show, in: page).map(\.title) == ["Episode 3"])
        #expect(try await store.inbox().total == 0, "asking is not keeping")
        let arrived = try await store.recordRefresh(of: show, episodes: page)
        #expect(arrived.map(\.title) == ["Episode 3"])
        #expect(try await store.inbox().items.map(\.title) == ["Episode 3"])

        // The next read: what is not known arrives, in any number; what is known never again.
        let next = [episode(5, day: 5), episode(4, day: 4)] + page
        #expect(try await store.recordRefresh(of: show, episodes: next).map(\.title) == ["Episode 5", "Episode 4"])
        #expect(try await store.recordRefresh(of: show, episodes: next) == [])
        #expect(try await store.inbox().items.map(\.title) == ["Episode 5", "Episode 4", "Episode 3"])

        // Seen: by id, or all; an id not in the inbox counts nothing.
        #expect(try await store.markSeen([episode(4).id, episode(9).id]) == 1)
        #expect(try await store.inbox().items.map(\.title) == ["Episode 5", "Episode 3"])
        #expect(try await store.markAllSeen() == 2)
        #expect(try await store.inbox().total == 0)
    }

    @Test func whatWasPlayedElsewhereIsKnownNotNew() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        try await followed(store)
        try await store.recordRefresh(of: show, episodes: [episode(1, day: 1)])
        _ = try await store.markAllSeen()
        let arrived = try await store.recordRefresh(
            of: show, episodes: [episode(3, day: 3), episode(2, day: 2), episode(1, day: 1)], seen: [episode(3).id])
        #expect(arrived.map(\.title) == ["Episode 2"])
        #expect(try await store.inbox().items.map(\.title) == ["Episode 2"])
        // Nor does it arrive later.
        #expect(try await store.recordRefresh(of: show, episodes: [episode(3, day: 3)]) == [])
    }

    /// Undated episodes come after dated ones; the same id twice in a page arrives once; a show
    /// no longer followed leaves the inbox.
    @Test func theInboxOrdersAndForgets() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        try await followed(store)
        try await store.recordRefresh(of: show, episodes: [episode(1, day: 1)])
        let arrived = try await store.recordRefresh(
            of: show, episodes: [episode(7), episode(6, day: 6), episode(6, day: 6), episode(1, day: 1)])
        #expect(arrived.map(\.title) == ["Episode 7", "Episode 6"])
        #expect(try await store.inbox().items.map(\.title) == ["Episode 6", "Episode 1", "Episode 7"])
        #expect(try await store.inbox(limit: 1, offset: 1).items.map(\.title) == ["Episode 1"])
        _ = try await store.removeFavorite(show)
        #expect(try await store.inbox().total == 0)
    }

    @Test func aFailureCountsAndASuccessClearsIt() async throws {
        let store = try MediaStore(path: directory + "/db.sqlite")
        let monday = Date(timeIntervalSince1970: 1_790_000_000)
        try await store.recordRefreshFailure(of: show, "HTTP 500", at: monday)
        try await store.recordRefreshFailure(of: show, "timed out", at: monday.addingTimeInterval(3600))
        var state = try #require(try await store.feedStates()[show])
        #expect(state.failures == 2 && state.failingSince == monday && state.lastError == "timed out")
        #expect(state.lastSuccess == nil)
        #expect(try await store.lastRefresh() == monday.addingTimeInterval(3600))
        // A show that never worked is learned at its first success: its newest only.
        let arrived = try await store.recordRefresh(
            of: show, episodes: [episode(2, day: 2), episode(1, day: 1)], at: monday.addingTimeInterval(7200))
        #expect(arrived.map(\.title) == ["Episode 2"])
        state = try #require(try await store.feedStates([show])[show])
        #expect(state.failures == 0 && state.failingSince == nil && state.lastError == nil)
        #expect(state.lastSuccess == monday.addingTimeInterval(7200))
    }
}
