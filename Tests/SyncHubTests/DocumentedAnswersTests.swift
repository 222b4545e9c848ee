import Foundation
import JSONRPC
import SyncHub
import Testing

/// The answers the client side is tested with (mygpo's documented examples, the gpoddersync
/// app's README and its controller test, in `Tests/Fixtures/Sync/`, sources in their SOURCES.md)
/// are what this server answers: the documented requests taken, the same keys and kinds back.
@Suite struct DocumentedAnswersTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/Sync")

    static func fixture(_ path: String) throws -> JSONValue {
        try JSONValue(parsing: try Data(contentsOf: fixtures.appendingPathComponent(path)))
    }

    /// The keys of an object and, one level down, of its first list's first object.
    static func keys(_ value: JSONValue?) -> Set<String> { Set(value?.objectValue?.keys ?? [:].keys) }

    static func kind(_ value: JSONValue?) -> String {
        switch value {
        case .number?: "number"
        case .string?: "string"
        case .array?: "array"
        case .object?: "object"
        case .bool?: "bool"
        default: "null"
        }
    }

    @Test func gpodderNetsDocumentedExchanges() async throws {
        let house = try await Household()
        let device = try Self.fixture("gpodder/mygpo-docs/devices-POST-update-device.request.json")
        #expect(await house.send("POST", "/api/2/devices/alice/abcdef.json", body: device).status == 200)
        let devices = await house.send("GET", "/api/2/devices/alice.json")
        let documentedDevices = try Self.fixture("gpodder/mygpo-docs/devices-GET-list.response.json")
        #expect(Self.keys(devices.json?.arrayValue?.first) == Self.keys(documentedDevices.arrayValue?.first))
        #expect(devices.json?.arrayValue?.first?["caption"] == "gPodder on my Lappy")

        let upload = try Self.fixture("gpodder/mygpo-docs/subscriptions-POST-api2-upload-changes.request.json")
        let uploaded = await house.send("POST", "/api/2/subscriptions/alice/abcdef.json", body: upload)
        let documentedUpload = try Self.fixture("gpodder/mygpo-docs/subscriptions-POST-api2-upload-changes.response.json")
        #expect(uploaded.status == 200)
        #expect(Self.keys(uploaded.json) == Self.keys(documentedUpload))
        #expect(Self.kind(uploaded.json?["timestamp"]) == Self.kind(documentedUpload["timestamp"]))
        let changes = await house.send("GET", "/api/2/subscriptions/alice/abcdef.json", query: "since=0")
        let documentedChanges = try Self.fixture("gpodder/mygpo-docs/subscriptions-GET-api2-changes-since.response.json")
        #expect(Self.keys(changes.json) == Self.keys(documentedChanges))
        #expect(changes.json?["add"]?.arrayValue?.count == 2)

        let actions = try Self.fixture("gpodder/mygpo-docs/events-POST-episodes-upload.request.json")
        let sent = await house.send("POST", "/api/2/episodes/alice.json", body: actions)
        let documentedSent = try Self.fixture("gpodder/mygpo-docs/events-POST-episodes-upload.response.json")
        #expect(sent.status == 200, "\(sent.text)")
        #expect(Self.keys(sent.json) == Self.keys(documentedSent))
        let listed = await house.send("GET", "/api/2/episodes/alice.json", query: "since=0")
        let documentedList = try Self.fixture("gpodder/mygpo-docs/events-GET-episodes.response.json")
        #expect(Self.keys(listed.json) == Self.keys(documentedList))
        #expect(Self.kind(listed.json?["timestamp"]) == Self.kind(documentedList["timestamp"]))
        // Each action with the documented keys it was sent with, the play's numbers included.
        let play = try #require(listed.json?["actions"]?.arrayValue?.first { $0["action"] == "play" })
        let sentPlay = try #require(actions.arrayValue?.last)
        #expect(Self.keys(play).isSuperset(of: Self.keys(sentPlay)))
        #expect(play["position"] == 120 && play["started"] == 15 && play["total"] == 500)
        let download = try #require(listed.json?["actions"]?.arrayValue?.first { $0["action"] == "download" })
        #expect(download["timestamp"] == "2009-12-12T09:00:00" && download["device"] == "gpodder_abcdef123")

        let sync = try Self.fixture("gpodder/mygpo-docs/sync-POST-sync-devices.request.json")
        let synced = await house.send("POST", "/api/2/sync-devices/alice.json", body: sync)
        let documentedSync = try Self.fixture("gpodder/mygpo-docs/sync-POST-sync-devices.response.json")
        #expect(Self.keys(synced.json) == Self.keys(documentedSync))
        #expect(synced.json?["synchronized"] == [["notebook", "netbook"]])
    }

    @Test func gpoddersyncsDocumentedExchanges() async throws {
        let house = try await Household()
        let base = "/index.php/apps/gpoddersync"
        let change = try Self.fixture("nextcloud/readme-POST-subscription_change-create.request.json")
        #expect(await house.send("POST", base + "/subscription_change/create", body: change).status == 200)
        let subscriptions = await house.send("GET", base + "/subscriptions", query: "since=0")
        let documented = try Self.fixture("nextcloud/readme-GET-subscriptions-since.response.json")
        #expect(Self.keys(subscriptions.json) == Self.keys(documented))
        #expect(Self.kind(subscriptions.json?["timestamp"]) == "number")

        let create = try Self.fixture("nextcloud/readme-POST-episode_action-create.request.trailing-commas-removed.json")
        #expect(await house.send("POST", base + "/episode_action/create", body: create).status == 200)
        let listed = await house.send("GET", base + "/episode_action", query: "since=0")
        let expected = try Self.fixture("nextcloud/test-EpisodeActionControllerTest-list.expected-response.RECONSTRUCTED.json")
        #expect(Self.keys(listed.json) == Self.keys(expected))
        let action = try #require(listed.json?["actions"]?.arrayValue?.first)
        #expect(Self.keys(action) == Self.keys(expected["actions"]?.arrayValue?.first))
        // The app keeps plays only: the DOWNLOAD of the README's request is not there.
        #expect(listed.json?["actions"]?.arrayValue?.count == 1)
        #expect(action["action"] == "PLAY" && action["position"] == 120 && action["guid"] == "s01e20-example-org")
        #expect(action["timestamp"] == "2009-12-12T09:00:00+00:00")
    }
}
