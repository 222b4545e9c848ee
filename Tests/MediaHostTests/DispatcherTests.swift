import Foundation
import JSONRPC
import MediaHost
import MediaKit
import Synchronization
import TestSupport
import Testing

@Suite struct SpecTests {
    /// rpc-spec.json describes every method of the runtime with what it does (`x-effect`, which
    /// MCP's tool hints come from) as the method says (`MethodEffect`, which `library.changed`
    /// comes from). Each module's tests check its methods; EndToEndTests that the spec names
    /// nothing a build does not serve.
    @Test func theSpecDescribesEveryRuntimeMethodAsItIs() throws {
        #expect(try specDisagreements(Dispatcher.runtimeMethods) == [])
        let names = Dispatcher.runtimeMethods.map { $0.method }
        #expect(Set(names).count == names.count)
    }

    /// Every method and notification of rpc-spec.json is named in the README ("player.open|seek"
    /// names two), so the documented surface is the served one.
    @Test func theReadmeNamesEveryMethodAndNotification() throws {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../README.md").standardized.path
        let text = try String(contentsOfFile: readme, encoding: .utf8)
        var named = Set<String>()
        for match in text.matches(of: /`([a-z]+)\.([a-zA-Z|]+)`/) {
            for part in match.2.split(separator: "|") { named.insert("\(match.1).\(part)") }
        }
        let spec = try RPCDiscover.spec.get()
        let served = (spec["methods"]?.arrayValue ?? []) + (spec["x-notifications"]?.arrayValue ?? [])
        let missing = served.compactMap { $0["name"]?.stringValue }.filter { !named.contains($0) }
        #expect(missing.isEmpty, "not in the README: \(missing)")
    }

    @Test func specIsOpenRPCWithSchemasAndExamples() throws {
        let spec = try RPCDiscover.spec.get()
        #expect(spec["openrpc"]?.stringValue?.hasPrefix("1.3") == true)
        let validator = SchemaValidator(document: spec)
        for method in spec["methods"]?.arrayValue ?? [] {
            let name = method["name"]?.stringValue ?? "?"
            #expect(method["result"]?["schema"] != nil, "\(name) has no result schema")
            #expect(method["params"]?.arrayValue != nil, "\(name) has no params list")
            // Every example's result conforms to the method's own result schema.
            for example in method["examples"]?.arrayValue ?? [] where name != "rpc.discover" {
                let value = try #require(example["result"]?["value"])
                let errors = validator.validate(value, against: method["result"]!["schema"]!)
                #expect(errors.isEmpty, "\(name) example: \(errors)")
            }
            let examples = method["examples"]?.arrayValue ?? []
            #expect(!examples.isEmpty, "\(name) has no example")
        }
        // Every $ref resolves.
        let text = spec.jsonString
        for match in text.matches(of: /"\$ref":"#\/components\/(schemas|errors)\/(\w+)"/) {
            #expect(spec["components"]?[String(match.1)]?[String(match.2)] != nil, "dangling \(match.0)")
        }
    }

    @Test func notificationsAreTheSpecsAndConformToIt() throws {
        let spec = try RPCDiscover.spec.get()
        let listed = try #require(spec["x-notifications"]?.arrayValue)
        let names = Set(listed.compactMap { $0["name"]?.stringValue })
        #expect(HostRuntime.runtimeNotifications.filter { !names.contains($0.method) }.isEmpty)
        let validator = SchemaValidator(document: spec)
        let events: [HostEvent] = [
            HostEvent(DownloadProgress(id: "catalog:video:v1", bytes: 10, rate: 0)),
            HostEvent(DownloadProgress(id: "catalog:video:v1", bytes: 10, total: 100, rate: 5, eta: 18)),
            HostEvent(DownloadStateChange(id: "catalog:video:v1", state: "queued")),
            HostEvent(DownloadStateChange(id: "catalog:video:v1", state: "completed", path: "/d/v1.mp4")),
            HostEvent(DownloadStateChange(id: "catalog:video:v1", state: "failed", error: "HTTP 404")),
            HostEvent(AuthPrompt(provider: "youtube", url: "https://example.com/device", code: "ABCD-EFGH", expiresIn: 1800)),
        ]
        for event in events {
            let schema = try #require(listed.first { $0["name"]?.stringValue == event.method }?["params"])
            let errors = validator.validate(event.params, against: schema)
            #expect(errors.isEmpty, "\(event.method): \(errors)")
        }
        // Sent to one client rather than through the hub, but described the same way.
        let item = MediaItem(id: ItemID(provider: "catalog", kind: .video, nativeID: "v1"), title: "One")
        for part in [
            SearchResults(request: 7, query: "swift", provider: "catalog", items: [item]),
            SearchResults(
                request: "a", query: "swift", provider: "tmdb", items: [],
                error: MediaSearch.Failure(provider: "tmdb", code: -32002, message: "no API key")),
        ] {
            let schema = try #require(listed.first { $0["name"]?.stringValue == SearchResults.method }?["params"])
            let errors = validator.validate(try JSONCoding.value(part), against: schema)
            #expect(errors.isEmpty, "\(SearchResults.method): \(errors)")
        }
        // Optional fields are left out, not sent as null.
        #expect(
            HostEvent(DownloadStateChange(id: "a:b:c", state: "queued")).params == [
                "id": "a:b:c", "state": "queued",
            ])
    }

    @Test func discoverReturnsTheSpec() async throws {
        let fixture = try HostFixture()
        let result = try await fixture.call("rpc.discover")
        #expect(result == (try RPCDiscover.spec.get()))
    }
}

@Suite struct DispatcherTests {
    @Test func hostInfoNamesProvidersMethodsAndFiles() async throws {
        let fixture = try HostFixture()
        let info = try await fixture.checked("host.info")
        #expect(info["providers"] == ["catalog", "broken", "locked", "feeds"])
        #expect(info["database"]?.stringValue == fixture.directory + "/data/mediahost.sqlite")
        // The methods this host serves: the runtime's alone (it has no modules).
        #expect(info["methods"]?.arrayValue?.compactMap(\.stringValue) == Dispatcher.runtimeMethods.map { $0.method })
    }

    @Test func hostInfoIsWrittenAsJSONEncoderWouldWriteIt() async throws {
        let fixture = try HostFixture()
        let info = try await fixture.host.dispatcher.run(HostInfo())
        #expect(try HostInfo.encode(info) == JSONCoding.bytes(info))
    }

    @Test func providersListSaysWhatIsMissing() async throws {
        let fixture = try HostFixture()
        let providers = try await fixture.checked("providers.list").arrayValue ?? []
        let locked = try #require(providers.first { $0["id"] == "locked" })
        #expect(locked["configured"] == false)
        #expect(locked["configure"]?.stringValue?.contains("LOCKED_API_KEY") == true)
        #expect(providers.first { $0["id"] == "catalog" }?["configured"] == true)
        let configured = try HostFixture(environment: ["LOCKED_API_KEY": "k-12345"])
        #expect(try await configured.call("providers.list").arrayValue?.first { $0["id"] == "locked" }?["configured"] == true)
    }

    @Test func unconfiguredProviderSaysHowToConfigureIt() async throws {
        let fixture = try HostFixture()
        let error = try #require(await fixture.error("media.search", ["provider": "locked", "query": "x"]))
        #expect(error.code == -32009)
        #expect(error.message.contains("LOCKED_API_KEY"))
        #expect(error.data?["provider"] == "locked")
    }

    @Test func unknownMethodAndProvider() async throws {
        let fixture = try HostFixture()
        #expect(await fixture.error("media.nope")?.code == -32601)
        let error = try #require(await fixture.error("providers.categories", ["provider": "nope"]))
        #expect(error.code == -32010)
        #expect(error.message.contains("catalog, broken, locked"))
        // Favorites of a provider no one knows: named as such, not an empty list.
        let favorites = try #require(await fixture.error("favorites.list", ["provider": "nosuch"]))
        #expect(favorites.code == -32010 && favorites.message.contains("unknown provider 'nosuch'"))
        #expect(try await fixture.call("favorites.list", ["provider": "catalog"])["items"] == [])
    }

    static let badParams: [(String, String, String)] = [
        ("providers.categories", "{}", "missing provider"),
        ("providers.categories", #"{"provider":5}"#, "provider must be a string"),
        ("favorites.list", #"{"limit":"ten"}"#, "limit must be a number"),
        ("favorites.list", #"{"limit":0}"#, "limit must be between 1 and 500"),
        ("media.get", #"{"id":"not-an-id"}"#, "provider:kind:native-id"),
        ("media.get", #"{"id":["x"]}"#, "id must be a string"),
        ("media.search", #"{"query":"   "}"#, "query is empty"),
        ("media.search", #"{"query":"x","kind":"clip"}"#, "kind"),
        ("host.info", "[1,2]", "params must be an object"),
        ("favorites.list", #"{"cursor":"bogus"}"#, "cursor"),
        ("lists.create", #"{"name":"\u0007bell"}"#, "no control characters"),
        ("lists.create", #"{"name":"\#(String(repeating: "x", count: 101))"}"#, "1 to 100 characters"),
        ("lists.add", #"{"name":"nowhere","id":"catalog:video:v1"}"#, "no list 'nowhere'"),
        ("lists.import", #"{"name":"x"}"#, "give the file to import"),
        ("lists.import", #"{"path":"/nonexistent/file.opml"}"#, "no such file"),
        ("lists.export", #"{"format":"opml"}"#, "name"),
        ("lists.export", #"{"name":"favorites","format":"pdf"}"#, "format"),
    ]

    @Test(arguments: badParams)
    func badParamsAreInvalidParams(method: String, params: String, needle: String) async throws {
        let fixture = try HostFixture()
        let error = try #require(await fixture.error(method, try JSONValue(parsing: params)))
        #expect(error.code == -32602)
        #expect(error.message.contains(needle), "\(error.message)")
    }

    @Test func categoriesAndBrowsePagingBothWays() async throws {
        let fixture = try HostFixture()
        let categories = try await fixture.checked("providers.categories", ["provider": "catalog"])
        #expect(categories.arrayValue?.map { $0["name"] } == ["Music", "Science & Tech"])
        let first = try await fixture.checked("media.browse", ["provider": "catalog", "category": "music"])
        #expect(first["items"]?.arrayValue?.count == 20)
        #expect(first["prev"] == nil)
        let next = try #require(first["next"])
        let second = try await fixture.checked("media.browse", ["provider": "catalog", "category": "music", "cursor": next])
        #expect(second["items"]?.arrayValue?.first?["title"] != first["items"]?.arrayValue?.first?["title"])
        let back = try await fixture.checked(
            "media.browse", ["provider": "catalog", "category": "music", "cursor": second["prev"]!])
        #expect(back == first)
        #expect(second["items"]?.arrayValue?.allSatisfy { $0["favorite"] == false } == true)
    }

    @Test func searchOneProviderIsRecordedInHistory() async throws {
        let fixture = try HostFixture()
        let result = try await fixture.checked("media.search", ["provider": "catalog", "query": "  swift ", "kind": "video"])
        #expect(result["items"]?.arrayValue?.count == 20)
        #expect(result["items"]?.arrayValue?.allSatisfy { $0["kind"] == "video" } == true)
        #expect(result["errors"] == nil)
        _ = try await fixture.checked(
            "media.search", ["provider": "catalog", "query": "swift", "kind": "video", "cursor": result["next"]!])
        let history = try await fixture.checked("history.list")
        let records = history.arrayValue ?? []
        #expect(records.count == 1, "paging with a cursor is not a new search")
        #expect(records.first?["query"] == "swift")
        #expect(records.first?["provider"] == "catalog")
        #expect(records.first?["kind"] == "video")
    }

    @Test func searchAcrossProvidersKeepsPartialResults() async throws {
        let fixture = try HostFixture()
        let result = try await fixture.checked("media.search", ["query": "rust"])
        let items = result["items"]?.arrayValue ?? []
        #expect(items.count == 20)
        #expect(items.allSatisfy { $0["provider"] == "catalog" })
        let errors = result["errors"]?.arrayValue ?? []
        #expect(errors.count == 1)
        #expect(errors.first?["provider"] == "broken")
        #expect(errors.first?["code"] == JSONValue(-32008))
        // The combined cursor pages on.
        let next = try #require(result["next"])
        let page2 = try await fixture.checked("media.search", ["query": "rust", "cursor": next])
        #expect(page2["items"]?.arrayValue?.count == 4)
        #expect(page2["items"]?.arrayValue?.first?["title"] != items.first?["title"])
        #expect(try await fixture.call("history.list").arrayValue?.count == 1)
    }

    @Test func providerErrorsMapToTypedRPCErrors() async throws {
        let fixture = try HostFixture()
        let limited = try #require(await fixture.error("media.get", ["id": "broken:video:1"]))
        #expect(limited.code == -32004)
        #expect(limited.data?["retryAfter"] == 30)
        #expect(limited.data?["provider"] == "broken")
        let missing = try #require(await fixture.error("media.get", ["id": "catalog:video:v999"]))
        #expect(missing.code == -32002)
        let unsupported = try #require(await fixture.error("media.children", ["id": "catalog:video:v1"]))
        #expect(unsupported.code == -32001)
        let notCategories = try #require(await fixture.error("providers.categories", ["provider": "broken"]))
        #expect(notCategories.code == -32001)
        #expect(notCategories.message.contains("Always Failing has no categories"))
    }

    @Test func favoritesSnapshotWorksOfflineAndFillsFavoriteEverywhere() async throws {
        let fixture = try HostFixture()
        let added = try await fixture.checked("favorites.add", ["id": "catalog:channel:c2"])
        #expect(added["favorite"] == true)
        #expect(added["title"] == "Channel 2")
        let search = try await fixture.call("media.search", ["provider": "catalog", "query": "channel"])
        let flags = search["items"]?.arrayValue?.map { ($0["id"]?.stringValue ?? "", $0["favorite"]) } ?? []
        #expect(flags.contains { $0.0 == "catalog:channel:c2" && $0.1 == true })
        #expect(flags.filter { $0.1 == true }.count == 1)

        fixture.control.failure = .network("offline")
        let list = try await fixture.checked("favorites.list", ["provider": "catalog"])
        #expect(list["items"]?.arrayValue?.map { $0["title"] } == ["Channel 2"])
        #expect(await fixture.error("media.get", ["id": "catalog:channel:c2"])?.code == -32008)

        let removed = try await fixture.checked("favorites.remove", ["id": "catalog:channel:c2"])
        #expect(removed == ["id": "catalog:channel:c2", "removed": true])
        #expect(try await fixture.checked("favorites.remove", ["id": "catalog:channel:c2"])["removed"] == false)
        #expect(try await fixture.call("favorites.list")["items"] == [])
    }

    @Test func childrenOfAChannel() async throws {
        let fixture = try HostFixture()
        let page = try await fixture.checked("media.children", ["id": "catalog:channel:c1"])
        #expect(page["total"] == 24)
        #expect(page["items"]?.arrayValue?.first?["id"] == "catalog:video:v0")
    }

    @Test func searchesThatCannotRunAreNotRemembered() async throws {
        let fixture = try HostFixture()
        #expect(await fixture.error("media.search", ["provider": "nope", "query": "x"])?.code == -32010)
        #expect(await fixture.error("media.search", ["provider": "locked", "query": "x"])?.code == -32009)
        #expect(try await fixture.call("history.list") == [])
    }

    @Test func onlySearchesThatRanAreRemembered() async throws {
        let fixture = try HostFixture()
        // Every provider failed: not remembered.
        fixture.control.failure = .network("offline")
        let failed = try await fixture.call("media.search", ["query": "everywhere"])
        #expect(failed["errors"]?.arrayValue?.count == 2)
        #expect(await fixture.error("media.search", ["provider": "catalog", "query": "one"])?.code == -32008)
        #expect(try await fixture.call("history.list") == [])
        // Cancelled while it ran: not remembered.
        fixture.control.failure = nil
        fixture.control.delay = .seconds(5)
        let task = Task {
            try await fixture.host.dispatcher.call("media.search", params: ["provider": "catalog", "query": "slow"])
        }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        _ = await task.result
        fixture.control.delay = .zero
        #expect(try await fixture.call("history.list") == [])
        // A partial answer across providers counts.
        _ = try await fixture.call("media.search", ["query": "partial"])
        #expect(try await fixture.call("history.list").arrayValue?.map { $0["query"] } == ["partial"])
    }

    @Test func historyClearByProvider() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.call("media.search", ["provider": "catalog", "query": "a"])
        _ = try await fixture.call("media.search", ["query": "b"])
        #expect(try await fixture.checked("history.list", ["provider": "catalog"]).arrayValue?.count == 1)
        #expect(try await fixture.checked("history.clear", ["provider": "catalog"]) == ["cleared": 1])
        #expect(try await fixture.call("history.list").arrayValue?.map { $0["query"] } == ["b"])
        #expect(await fixture.error("history.list", ["limit": 101])?.code == -32602)
    }

    /// Every client hears what changed in the library, from the store's writes: a list by the
    /// name it was called with, and nothing for a call that failed, that only reads, or for a
    /// search keeping itself in the history (each search would tell every client).
    @Test func changesToTheLibraryAreTold() async throws {
        let fixture = try HostFixture()
        let heard = Mutex<[LibraryChange]>([])
        let token = fixture.host.events.subscribe { event in
            if let change = event.payload(LibraryChange.self) { heard.withLock { $0.append(change) } }
        }
        defer { fixture.host.events.unsubscribe(token) }
        _ = try await fixture.call("lists.create", ["name": "Later"])
        _ = try await fixture.call("lists.rename", ["name": "Later", "to": "Soon"])
        _ = try await fixture.call("lists.items", ["name": "Soon"])
        _ = try await fixture.call("media.search", ["provider": "catalog", "query": "a"])
        #expect(await fixture.error("lists.rename", ["name": "Never made", "to": "X"]) != nil)
        _ = try await fixture.call("favorites.add", ["id": "catalog:video:v3"])
        _ = try await fixture.call("history.clear")
        #expect(
            heard.withLock { $0 } == [
                LibraryChange(what: "lists", list: "Later"), LibraryChange(what: "lists", list: "Later"),
                LibraryChange(what: "favorites"), LibraryChange(what: "history"),
            ])
    }

    @Test func cancellationReachesTheProvider() async throws {
        let fixture = try HostFixture()
        fixture.control.delay = .seconds(30)
        let task = Task { await fixture.error("providers.categories", ["provider": "catalog"]) }
        try await Task.sleep(for: .milliseconds(100))
        let started = ContinuousClock.now
        task.cancel()
        let error = await task.value
        #expect(error?.code == -32800)
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}

/// The typed in-process entry point gives what the JSON one gives, errors included.
@Suite struct TypedDispatchTests {
    @Test func runAndCallAgree() async throws {
        let fixture = try HostFixture()
        let dispatcher = fixture.host.dispatcher
        let typed = try await dispatcher.run(MediaSearch(query: "swift", provider: "catalog"))
        let json = try await fixture.call(
            "media.search", ["provider": "catalog", "query": "swift"], as: MediaSearch.Response.self)
        #expect(typed == json)
        let added = try await dispatcher.run(FavoritesAdd(id: try ItemID(parsing: "catalog:video:v3")))
        #expect(added.favorite == true)
        let listed = try await dispatcher.run(FavoritesList(provider: "catalog"))
        #expect(listed.items.map(\.id) == [added.id])
        let unknown = try ItemID(parsing: "nope:video:1")
        do {
            _ = try await dispatcher.run(MediaGet(id: unknown))
            Issue.record("an unknown provider is an error")
        } catch {
            let viaJSON = await fixture.error("media.get", ["id": "nope:video:1"])
            #expect(error.code == viaJSON?.code)
            #expect(error.message == viaJSON?.message)
        }
        do {
            _ = try await dispatcher.run(FavoritesList(limit: 10_000))
            Issue.record("limits are checked on the typed path too")
        } catch {
            #expect(error.code == -32602)
        }
    }
}
