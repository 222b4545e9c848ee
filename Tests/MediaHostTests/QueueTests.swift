import Foundation
import JSONRPC
import MediaHost
import MediaKit
import Synchronization
import TestSupport
import Testing

/// The queue ("up next") through the dispatcher: order, an item once, moving, removing, paging,
/// what every client hears, bad input, and a queue that outlives the host that made it.
@Suite struct QueueTests {
    func ids(_ fixture: HostFixture) async throws -> [String] {
        let page = try await fixture.checked("queue.list", ["limit": 500])
        return (page["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    }

    @Test func itemsKeepTheirOrderAndAreQueuedOnce() async throws {
        let fixture = try HostFixture()
        #expect(try await ids(fixture) == [])
        let added = try await fixture.checked(
            "queue.add", ["ids": ["catalog:video:v1", "catalog:video:v2", "catalog:video:v3"]])
        #expect(added["count"] == 3)
        #expect(added["added"]?.arrayValue?.first?["title"]?.stringValue?.isEmpty == false)
        // Next: first; an item queued already moves instead of being there twice.
        _ = try await fixture.checked("queue.add", ["ids": ["catalog:video:v4", "catalog:video:v3"], "next": true])
        #expect(try await ids(fixture) == ["catalog:video:v4", "catalog:video:v3", "catalog:video:v1", "catalog:video:v2"])
        _ = try await fixture.checked("queue.add", ["ids": ["catalog:video:v4"]])
        #expect(try await ids(fixture) == ["catalog:video:v3", "catalog:video:v1", "catalog:video:v2", "catalog:video:v4"])
        // The same id twice in one call is queued once.
        let twice = try await fixture.checked("queue.add", ["ids": ["catalog:video:v5", "catalog:video:v5"]])
        #expect(twice["count"] == 5)
    }

    @Test func movingAndRemovingCountFromOne() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.call("queue.add", ["ids": ["catalog:video:v1", "catalog:video:v2", "catalog:video:v3"]])
        _ = try await fixture.checked("queue.move", ["from": 3, "to": 1])
        #expect(try await ids(fixture) == ["catalog:video:v3", "catalog:video:v1", "catalog:video:v2"])
        // Past the end: last.
        _ = try await fixture.checked("queue.move", ["from": 1, "to": 99])
        #expect(try await ids(fixture) == ["catalog:video:v1", "catalog:video:v2", "catalog:video:v3"])
        let removed = try await fixture.checked("queue.remove", ["ids": ["catalog:video:v2", "catalog:video:v9"]])
        #expect(removed["removed"] == 1 && removed["count"] == 2)
        #expect(try await ids(fixture) == ["catalog:video:v1", "catalog:video:v3"])
        // Positions stay whole after a removal: the last is 2.
        _ = try await fixture.checked("queue.move", ["from": 2, "to": 1])
        #expect(try await ids(fixture) == ["catalog:video:v3", "catalog:video:v1"])
        let cleared = try await fixture.checked("queue.clear")
        #expect(cleared["removed"] == 2)
        #expect(try await ids(fixture) == [])
    }

    /// A list is queued in its order (as the list keeps its items: no network), first with next.
    @Test func aListIsQueuedInItsOrder() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.call("lists.create", ["name": "Road trip"])
        for n in [3, 1, 2] {
            _ = try await fixture.call("lists.add", ["name": "Road trip", "id": .string("catalog:video:v\(n)")])
        }
        _ = try await fixture.call("queue.add", ["ids": ["catalog:video:v9"]])
        let queued = try await fixture.checked("queue.add", ["list": "road trip", "next": true])
        #expect(queued["count"] == 4)
        #expect(try await ids(fixture) == ["catalog:video:v3", "catalog:video:v1", "catalog:video:v2", "catalog:video:v9"])
        _ = try await fixture.call("favorites.add", ["id": "catalog:video:v7"])
        _ = try await fixture.checked("queue.add", ["list": "favorites"])
        #expect(try await ids(fixture).last == "catalog:video:v7")
        _ = try await fixture.call("lists.create", ["name": "Empty"])
        #expect(await fixture.error("queue.add", ["list": "Empty"])?.message.contains("is empty") == true)
        #expect(await fixture.error("queue.add", ["list": "Nowhere"])?.message.contains("there is no list 'Nowhere'") == true)
        #expect(await fixture.error("queue.add", ["list": "Road trip", "ids": ["catalog:video:v1"]])?.code == -32602)
        #expect(await fixture.error("queue.add", [:])?.code == -32602)
    }

    @Test func badPositionsAndEmptyCallsSayWhatIsWrong() async throws {
        let fixture = try HostFixture()
        let empty = await fixture.error("queue.move", ["from": 1, "to": 2])
        #expect(empty?.code == -32602 && empty?.message.contains("the queue is empty") == true)
        _ = try await fixture.call("queue.add", ["ids": ["catalog:video:v1"]])
        let past = await fixture.error("queue.move", ["from": 5, "to": 1])
        #expect(past?.message.contains("no item 5 in the queue (it has 1)") == true, "\(String(describing: past))")
        #expect(await fixture.error("queue.move", ["from": 0, "to": 1])?.code == -32602)
        #expect(await fixture.error("queue.move", ["from": -9_223_372_036_854_775_808, "to": 1])?.code == -32602)
        // Past the end, however far: last.
        _ = try await fixture.checked("queue.move", ["from": 1, "to": 9_223_372_036_854_775_807])
        let tooMany = JSONValue.array((0...10_000).map { .string("catalog:video:v\($0)") })
        #expect(await fixture.error("queue.add", ["ids": tooMany])?.message.contains("at most 10000") == true)
        #expect(await fixture.error("queue.add", ["ids": []])?.code == -32602)
        #expect(await fixture.error("queue.add", ["ids": ["not an id"]])?.code == -32602)
        // An item no provider has is not queued, and the queue is as it was.
        #expect(await fixture.error("queue.add", ["ids": ["nowhere:video:1"]]) != nil)
        #expect(try await ids(fixture) == ["catalog:video:v1"])
    }

    /// Pages follow each other and never lead back to the page they came from.
    @Test func pagesFollowEachOther() async throws {
        let fixture = try HostFixture()
        let all = (1...7).map { JSONValue.string("catalog:video:v\($0)") }
        _ = try await fixture.call("queue.add", ["ids": .array(all)])
        var seen: [String] = []
        var cursor: JSONValue? = nil
        var pages = 0
        repeat {
            var params: [String: JSONValue] = ["limit": 3]
            if let cursor { params["cursor"] = cursor }
            let page = try await fixture.checked("queue.list", .object(params))
            #expect(page["total"] == 7)
            seen += (page["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
            #expect(page["next"] != cursor || page["next"] == nil)
            cursor = page["next"]
            pages += 1
        } while cursor != nil && pages < 10
        #expect(seen == all.compactMap(\.stringValue) && pages == 3)
    }

    /// Every client hears a change of the queue once per call; reading it is not a change.
    @Test func changesToTheQueueAreTold() async throws {
        let fixture = try HostFixture()
        let heard = Mutex<[LibraryChange]>([])
        let token = fixture.host.events.subscribe { event in
            if let change = event.payload(LibraryChange.self) { heard.withLock { $0.append(change) } }
        }
        defer { fixture.host.events.unsubscribe(token) }
        _ = try await fixture.call("queue.add", ["ids": ["catalog:video:v1", "catalog:video:v2"]])
        _ = try await fixture.call("queue.list")
        _ = try await fixture.call("queue.move", ["from": 2, "to": 1])
        #expect(await fixture.error("queue.move", ["from": 9, "to": 1]) != nil)
        _ = try await fixture.call("queue.remove", ["ids": ["catalog:video:v1"]])
        _ = try await fixture.call("queue.clear")
        #expect(heard.withLock { $0 } == Array(repeating: LibraryChange(what: "queue"), count: 4))
    }

    /// The queue is the store's: a host started again on the same data dir (the service after a
    /// restart, another front end) has it, in order, and offline (from what was kept).
    @Test func theQueueOutlivesTheHost() async throws {
        let directory: String
        do {
            let fixture = try HostFixture()
            directory = fixture.directory
            _ = try await fixture.call("queue.add", ["ids": ["catalog:video:v2", "catalog:video:v1"]])
            _ = try await fixture.call("queue.add", ["ids": ["catalog:video:v3"], "next": true])
        }
        let again = try HostRuntime(
            paths: HostPaths(
                configFile: directory + "/config.toml", dataDir: directory + "/data", cacheDir: directory + "/cache"),
            providers: [], http: NoNetwork())
        let page = try JSONParser.parse(try await again.dispatcher.call("queue.list"))
        #expect(
            (page["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue } == [
                "catalog:video:v3", "catalog:video:v2", "catalog:video:v1",
            ])
        #expect(page["items"]?.arrayValue?.first?["title"]?.stringValue?.isEmpty == false)
    }
}
