import Foundation
import JSONRPC
import MediaHost
import MediaKit
import TestSupport
import Testing
import YouTube

/// `lists.import` of the YouTube subscriptions other apps export: Google Takeout's CSV (its
/// header in the account's language) and older JSON, NewPipe's JSON and FreeTube's `.db` and CSV,
/// from the files those apps and their tests wrote (Tests/MediaHostTests/Recorded/imports,
/// provenance in SOURCES.md; the FreeTube files are constructed from its export code).
@Suite struct SubscriptionImportTests {
    static let recorded = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Recorded/imports")

    static func path(_ file: String) -> String { recorded.appendingPathComponent(file).path }

    /// A channel of a list as the tests compare it.
    struct Channel: Equatable, CustomStringConvertible {
        var id: String
        var title: String
        var description: String { "\(id) \(title)" }
    }

    /// Imports a recorded file (by its path, its format guessed) into a list named after it, and
    /// returns the result and the list's channels, checking each is a YouTube channel as the
    /// provider makes one.
    func imported(
        _ file: String, _ fixture: HostFixture, format: String? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (JSONValue, [Channel]) {
        var params: [String: JSONValue] = ["path": .string(Self.path(file)), "name": .string(file)]
        if let format { params["format"] = .string(format) }
        let result = try await fixture.checked("lists.import", .object(params))
        let found = try await channels(in: file, fixture, sourceLocation: sourceLocation)
        return (result, found)
    }

    func channels(in list: String, _ fixture: HostFixture, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> [Channel]
    {
        let page = try await fixture.checked("lists.items", ["name": .string(list), "limit": 500])
        return (page["items"]?.arrayValue ?? []).map { item in
            let id = item["id"]?.stringValue ?? ""
            let native = String(id.dropFirst("youtube:channel:".count))
            #expect(id.hasPrefix("youtube:channel:UC"), "\(item)", sourceLocation: sourceLocation)
            #expect(item["provider"] == "youtube" && item["kind"] == "channel", sourceLocation: sourceLocation)
            #expect(item["url"]?.stringValue == "https://www.youtube.com/channel/\(native)", sourceLocation: sourceLocation)
            #expect(
                item["feed"]?.stringValue == "https://www.youtube.com/feeds/videos.xml?channel_id=\(native)",
                sourceLocation: sourceLocation)
            return Channel(id: native, title: item["title"]?.stringValue ?? "")
        }
    }

    /// Takeout's CSV is read by column whatever language its header is in: English, Spanish,
    /// German; `http://` addresses, an empty line at the end or no line break at all.
    @Test(arguments: [
        (
            "NewPipeExtractor-youtube_takeout_import_test_1.csv", 5,
            Channel(id: "UC1JTQBa5QxZCpXrFSkMxmPw", title: "Raycevick"),
            Channel(id: "UCsvn_Po0SmunchJYOWpOxMg", title: "videogamedunkey")
        ),
        (
            "NewPipeExtractor-youtube_takeout_import_test_2.csv", 172,
            Channel(id: "UC-UcKEWOSpz0AfY33TrYw3g", title: "Nekojitablog"),
            Channel(id: "UCzXwjTI6c6mVn6oui_p6oiw", title: "SMii7Y")
        ),
        (
            "invidious-imports_spec-de.csv", 13,
            Channel(id: "UC0hHW5Y08ggq-9kbrGgWj0A", title: "Matias Marolla"),
            Channel(id: "UCZ5XnGb-3t7jCkXdawN2tkA", title: "Discord")
        ),
        (
            "NewPipe-SubscriptionImportWorkerTest-subscriptions.csv", 3,
            Channel(id: "UCCj956IF62FbT7Gouszaj9w", title: "BBC"),
            Channel(id: "UCBJycsmduvYEL83R_U4JriQ", title: "Marques Brownlee")
        ),
    ])
    func takeoutCSVInAnyLanguage(file: String, count: Int, first: Channel, last: Channel) async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let (result, channels) = try await imported(file, fixture)
        #expect(result["format"] == "takeout" && result["skipped"] == [])
        #expect(result["added"] == JSONValue(count) && result["present"] == 0)
        #expect(channels.count == count)
        #expect(channels.first == first && channels.last == last, "the header row is no channel, the last row is kept")
        #expect(!channels.contains { $0.title.contains("Channel") || $0.title.contains("canal") || $0.title.contains("Kanal") })
    }

    /// The runtime names no provider: the channels go to the provider that knows a YouTube
    /// channel's feed as one of its channels, and without one the import says so.
    @Test func withoutAProviderOfYouTubesChannelsTheImportSaysWhy() async throws {
        let fixture = try HostFixture()
        let error = try #require(
            await fixture.error(
                "lists.import",
                ["path": .string(Self.path("NewPipe-SubscriptionImportWorkerTest-subscriptions.csv")), "name": "Subs"]))
        #expect(error.message.contains("no provider here has YouTube's channels"), "\(error.message)")
        #expect(error.message.contains("3 channels have nowhere to go"), "\(error.message)")
        #expect(await fixture.error("lists.items", ["name": "Subs"]) != nil, "no list was made")

        // The provider that would know them cannot be started: that is said, with its reason.
        let misconfigured = try HostFixture(
            environment: ["MEDIAHOST_YOUTUBE_BACKEND": "api"], more: [.of(YouTubeProvider.self)])
        let why = try #require(
            await misconfigured.error(
                "lists.import",
                ["path": .string(Self.path("NewPipe-SubscriptionImportWorkerTest-subscriptions.csv")), "name": "Subs"]))
        #expect(why.message.contains("youtube cannot be started") && why.message.contains("no key is set"), "\(why.message)")
    }

    @Test func spanishTakeoutKeepsItsNamesAsWritten() async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let (_, channels) = try await imported("NewPipeExtractor-youtube_takeout_import_test_2.csv", fixture)
        // "CRD Сreative" begins its second word with a Cyrillic С.
        #expect(channels[2] == Channel(id: "UC-uZVnE4p_52zXbH34S4pcA", title: "CRD \u{0421}reative"))
        #expect(Set(channels.map(\.id)).count == 172)
    }

    /// What CSV writers do besides: CRLF, quoted titles with commas and quotes, a byte order mark,
    /// an address without the id column, blank lines at the end, a row that names no channel.
    @Test func takeoutCSVQuotingLineEndsAndBadRows() async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let text =
            "\u{FEFF}ID del canal,URL del canal,Título del canal\r\n"
            + "UC1JTQBa5QxZCpXrFSkMxmPw,https://www.youtube.com/channel/UC1JTQBa5QxZCpXrFSkMxmPw,\"Raycevick, \"\"the\"\" one\"\r\n"
            + ",http://youtube.com/channel/UC3ltptWa0xfrDweghW94Acg,Karl Jobst\r\n"
            + "not a channel,https://example.com/x,Someone\r\n"
            + "UC9PBzalIcEQCsiIkq36PyUA,http://www.youtube.com/channel/UC9PBzalIcEQCsiIkq36PyUA,\"Digital\r\nFoundry\"\r\n"
            + "UC1JTQBa5QxZCpXrFSkMxmPw,http://www.youtube.com/channel/UC1JTQBa5QxZCpXrFSkMxmPw,Raycevick again\r\n"
            + "\r\n\r\n"
        for format in ["takeout", nil] as [String?] {
            let name = "subs \(format ?? "guessed")"
            var params: [String: JSONValue] = ["text": .string(text), "name": .string(name)]
            if let format { params["format"] = .string(format) }
            let result = try await fixture.checked("lists.import", .object(params))
            #expect(result["format"] == "takeout" && result["added"] == 3, "\(result)")
            #expect(
                result["skipped"] == ["line 4 (not a channel,https://example.com/x,Someone): no YouTube channel id (UC…) in it"])
            let channels = try await channels(in: name, fixture)
            #expect(
                channels == [
                    Channel(id: "UC1JTQBa5QxZCpXrFSkMxmPw", title: "Raycevick, \"the\" one"),
                    Channel(id: "UC3ltptWa0xfrDweghW94Acg", title: "Karl Jobst"),
                    // A line break in a title is a space, as in every imported title.
                    Channel(id: "UC9PBzalIcEQCsiIkq36PyUA", title: "Digital Foundry"),
                ])
        }
        // LF alone, no line break at the end, and no header: the first row names a channel, so it is read.
        let bare = "UC1JTQBa5QxZCpXrFSkMxmPw,http://www.youtube.com/channel/UC1JTQBa5QxZCpXrFSkMxmPw,Raycevick"
        let headerless = try await fixture.checked("lists.import", ["text": .string(bare), "name": "bare"])
        #expect(headerless["format"] == "takeout" && headerless["added"] == 1)
    }

    /// Takeout before 2021: API subscription objects; a channel listed four times is one, under
    /// its first title.
    @Test func takeoutJSONOfBefore2021() async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let (result, channels) = try await imported("NewPipeExtractor-youtube_takeout_import_test.json", fixture)
        #expect(result["format"] == "takeout" && result["added"] == 4 && result["skipped"] == [])
        #expect(
            channels == [
                Channel(id: "UCfIXdjDQH9Fau7y99_Orpjw", title: "Gorillaz"), Channel(id: "UCAuUUnT6oDeKwE6v1NGQxug", title: "TED"),
                Channel(id: "UCEOXxzW2vU0P-0THehuIIeg", title: "Captain Disillusion"),
                Channel(id: "UCsXVk37bltHxD1rDPwtNM8Q", title: "Kurzgesagt – In a Nutshell"),
            ])
        let items = try await fixture.call("lists.items", ["name": "NewPipeExtractor-youtube_takeout_import_test.json"])
        #expect(
            items["items"]?.arrayValue?.first?["artwork"]
                == "https://yt3.ggpht.com/-UXcxdSDLo08/AAAAAAAAAAI/AAAAAAAAAAA/FP5NbxM7TzU/s800-c-k-no-mo-rj-c0xffffff/photo.jpg")
    }

    /// What NewPipeExtractor's test refuses as a Takeout is refused here too, saying what was expected.
    @Test(arguments: [
        ("gibberish", "its first row has 1 column, not three"), ("", "the file is empty"),
        (#"{"a":"b"}"#, "it is a JSON object"), ("[{}]", "its one entry has no channel at snippet.resourceId.channelId"),
        (#"["", 5]"#, "none of its 2 entries has"), (#"[{"snippet":{"title":"name"}}]"#, "its one entry has"),
        (#"[{"snippet":{"resourceId":{"channelId":"gibberish"}}}]"#, "its one entry has"),
        ("<xml><notvalid></notvalid></xml>", "it is XML"), ("[", "it is not JSON"),
    ])
    func takeoutRefusesWhatIsNotOne(text: String, problem: String) async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let error = try #require(await fixture.error("lists.import", ["text": .string(text), "format": "takeout"]))
        #expect(error.code == RPCError.invalidParamsCode)
        #expect(error.message.contains("this is not Google Takeout's YouTube subscriptions (\(problem)"), "\(error.message)")
        #expect(error.message.contains("give subscriptions.csv"), "it says what to give")
        #expect(try await fixture.call("lists.list") == [], "no list is made")
        // `[]` is an export of no subscriptions.
        #expect(try await fixture.checked("lists.import", ["text": "[]", "format": "takeout"])["added"] == 0)
    }

    @Test func newPipeExport() async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let (result, channels) = try await imported("NewPipe-import_export_test.json", fixture)
        #expect(result["format"] == "newpipe" && result["added"] == 5 && result["skipped"] == [])
        #expect(
            channels == [
                Channel(id: "UCsXVk37bltHxD1rDPwtNM8Q", title: "Kurzgesagt – In a Nutshell"),
                Channel(id: "UCEOXxzW2vU0P-0THehuIIeg", title: "CaptainDisillusion"),
                Channel(id: "UCAuUUnT6oDeKwE6v1NGQxug", title: "TED"), Channel(id: "UCfIXdjDQH9Fau7y99_Orpjw", title: "Gorillaz"),
                Channel(id: "UCJ0-OtVpF0wOKEqT2Z1HEtA", title: "ElectroBOOM"),
            ])
        let (empty, none) = try await imported("NewPipe-ImportExportJsonHelperTest-empty.json", fixture)
        #expect(empty["format"] == "newpipe" && empty["added"] == 0 && empty["skipped"] == [] && none.isEmpty)
    }

    /// Channels of NewPipe's other services are skipped with the service's name; a YouTube entry
    /// whose address has no channel id is skipped saying how to add it.
    @Test func newPipeSkipsOtherServicesSayingWhich() async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        var document = try JSONParser.parse(
            Array(try Data(contentsOf: Self.recorded.appendingPathComponent("NewPipe-import_export_test.json"))))
        guard case .object(var fields) = document, var subscriptions = fields["subscriptions"]?.arrayValue else {
            Issue.record("the recorded file is no NewPipe export")
            return
        }
        subscriptions += [
            ["service_id": 1, "url": "https://soundcloud.com/someartist", "name": "Some Artist"],
            ["service_id": 2, "url": "https://media.ccc.de/c/37c3", "name": "37C3"],
            ["service_id": 3, "url": "https://framatube.org/video-channels/joinpeertube", "name": "PeerTube"],
            ["service_id": 4, "url": "https://someband.bandcamp.com", "name": "Some Band"],
            ["service_id": 9, "url": "https://example.com/c", "name": "Elsewhere"],
            ["service_id": 0, "url": "https://www.youtube.com/user/somebody", "name": "Old address"],
        ]
        fields["subscriptions"] = .array(subscriptions)
        document = .object(fields)
        let result = try await fixture.checked("lists.import", ["text": .string(document.jsonString), "name": "np"])
        #expect(result["format"] == "newpipe" && result["added"] == 5)
        #expect(
            result["skipped"]?.arrayValue?.compactMap(\.stringValue)
                == [
                    "Some Artist (https://soundcloud.com/someartist): a SoundCloud channel; only YouTube channels are imported",
                    "37C3 (https://media.ccc.de/c/37c3): a media.ccc.de channel; only YouTube channels are imported",
                    "PeerTube (https://framatube.org/video-channels/joinpeertube): a PeerTube channel; only YouTube channels are imported",
                    "Some Band (https://someband.bandcamp.com): a Bandcamp channel; only YouTube channels are imported",
                    "Elsewhere (https://example.com/c): a channel of NewPipe's service 9; only YouTube channels are imported",
                    "Old address (https://www.youtube.com/user/somebody): not a YouTube channel address "
                        + "(https://www.youtube.com/channel/UC…); find the channel with search and add it",
                ])
    }

    /// NewPipe's own test's invalid sources, and an object without its list.
    @Test(arguments: [
        ("{}", "it has no \"subscriptions\" list"), ("", "the file is empty"), ("  \n", "the file is empty"),
        ("gibberish", "it is not JSON"), ("[]", "it is not a JSON object"),
    ])
    func newPipeRefusesWhatIsNotItsExport(text: String, problem: String) async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let error = try #require(await fixture.error("lists.import", ["text": .string(text), "format": "newpipe"]))
        #expect(error.code == RPCError.invalidParamsCode)
        #expect(
            error.message.hasPrefix("Invalid params: this is not NewPipe's subscriptions export (\(problem)"), "\(error.message)")
        #expect(error.message.contains(#"expected JSON like {"app_version":…,"subscriptions":[{"service_id":0"#))
        #expect(error.message.contains("export it again from NewPipe"))
    }

    /// FreeTube's profiles export: every profile's channels once, the main profile's first.
    @Test func freeTubeProfiles() async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let (result, channels) = try await imported("CONSTRUCTED-freetube-subscriptions-2026-11-26.db", fixture)
        let expected = [
            Channel(id: "UCsXVk37bltHxD1rDPwtNM8Q", title: "Kurzgesagt – In a Nutshell"),
            Channel(id: "UCEOXxzW2vU0P-0THehuIIeg", title: "Captain Disillusion"),
            Channel(id: "UCAuUUnT6oDeKwE6v1NGQxug", title: "TED \"Talks\", official"),
        ]
        #expect(result["format"] == "freetube" && result["added"] == 3 && result["skipped"] == [])
        #expect(channels == expected)
        let items = try await fixture.call("lists.items", ["name": "CONSTRUCTED-freetube-subscriptions-2026-11-26.db"])
        let artwork = (items["items"]?.arrayValue ?? []).map { $0["artwork"]?.stringValue }
        #expect(artwork.count == 3 && artwork[0]?.hasPrefix("https://yt3.ggpht.com/-UwENvFjc4vI/") == true)
        #expect(artwork.count == 3 && artwork[2] == nil, "its thumbnail is null")

        // A channel only in another profile is imported too; a profile listed before the main one
        // does not put its channels first; a line that is no profile, and a bad id, are said.
        let file = try String(contentsOfFile: Self.path("CONSTRUCTED-freetube-subscriptions-2026-11-26.db"), encoding: .utf8)
        let lines = file.split(separator: "\n")
        let extra =
            ##"{"name":"Music","bgColor":"#FF0000","textColor":"#FFFFFF","subscriptions":[{"id":"UCfIXdjDQH9Fau7y99_Orpjw","name":"Gorillaz","thumbnail":null},{"id":"gibberish","name":"Broken","thumbnail":null}],"_id":"Zx1"}"##
        let text = [String(lines[1]), extra, "not json", String(lines[0]), ""].joined(separator: "\n")
        let union = try await fixture.checked("lists.import", ["text": .string(text), "name": "union"])
        #expect(union["format"] == "freetube" && union["added"] == 4)
        #expect(
            union["skipped"] == ["line 3: not a JSON object", "Broken: its id (gibberish) is not a YouTube channel id"])
        #expect(
            try await self.channels(in: "union", fixture) == expected + [
                Channel(id: "UCfIXdjDQH9Fau7y99_Orpjw", title: "Gorillaz")
            ])
    }

    @Test func freeTubeOldFormatCSVAndNewPipeExports() async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let (old, oldChannels) = try await imported("CONSTRUCTED-freetube-OLD-format-subscriptions.db", fixture)
        #expect(old["format"] == "freetube" && old["added"] == 2)
        #expect(
            oldChannels == [
                Channel(id: "UCsXVk37bltHxD1rDPwtNM8Q", title: "Kurzgesagt – In a Nutshell"),
                Channel(id: "UCEOXxzW2vU0P-0THehuIIeg", title: "Captain Disillusion"),
            ])
        let three = [
            Channel(id: "UCsXVk37bltHxD1rDPwtNM8Q", title: "Kurzgesagt – In a Nutshell"),
            Channel(id: "UCEOXxzW2vU0P-0THehuIIeg", title: "Captain Disillusion"),
            Channel(id: "UCAuUUnT6oDeKwE6v1NGQxug", title: "TED \"Talks\", official"),
        ]
        // Its CSV (another header, every name quoted, an extra empty line) is Takeout's table.
        let csv = "CONSTRUCTED-freetube-export-youtube-subscriptions-2026-11-26.csv"
        let (guessed, csvChannels) = try await imported(csv, fixture)
        #expect(guessed["format"] == "takeout" && guessed["added"] == 3 && guessed["skipped"] == [])
        #expect(csvChannels == three)
        let named = try await fixture.checked(
            "lists.import", ["path": .string(Self.path(csv)), "format": "freetube", "name": "named"])
        #expect(named["format"] == "freetube" && named["added"] == 3)
        #expect(try await channels(in: "named", fixture) == three)
        // Its NewPipe export is NewPipe's.
        let (newPipe, newPipeChannels) = try await imported(
            "CONSTRUCTED-freetube-export-newpipe-subscriptions-2026-11-26.json", fixture)
        #expect(newPipe["format"] == "newpipe" && newPipeChannels == three)
    }

    @Test(arguments: [
        ("", "the file is empty"), ("gibberish", "it is neither JSON nor a CSV of channels"),
        (#"{"a":"b"}"#, "no line of it is a profile or a channel"),
    ])
    func freeTubeRefusesWhatIsNotItsExport(text: String, problem: String) async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let error = try #require(await fixture.error("lists.import", ["text": .string(text), "format": "freetube"]))
        #expect(error.code == RPCError.invalidParamsCode)
        #expect(
            error.message.hasPrefix("Invalid params: this is not a FreeTube subscriptions export (\(problem))"),
            "\(error.message)")
        #expect(error.message.contains("Export Subscriptions"), "it says where FreeTube writes one")
    }

    /// Into the favorites and into a named list; the same file again adds nothing and says so.
    @Test func intoFavoritesAndAListTwice() async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let file = Self.path("invidious-imports_spec-de.csv")
        let first = try await fixture.checked("lists.import", ["path": .string(file), "name": "favorites"])
        #expect(first["name"] == "favorites" && first["format"] == "takeout" && first["added"] == 13 && first["present"] == 0)
        let favorites = try await fixture.checked("favorites.list", ["limit": 100])
        let items = favorites["items"]?.arrayValue ?? []
        #expect(items.count == 13)
        #expect(items.allSatisfy { $0["favorite"] == true && $0["kind"] == "channel" })
        #expect(items.contains { $0["title"] == "Tom Scott" })
        let again = try await fixture.checked("lists.import", ["path": .string(file), "name": "favorites"])
        #expect(again["added"] == 0 && again["present"] == 13)
        // Another export naming some of the same channels: those are present, the rest added.
        let newPipe = try await fixture.checked(
            "lists.import",
            [
                "text":
                    #"{"app_version":"0.27.0","app_version_int":1000,"subscriptions":[{"service_id":0,"url":"https://www.youtube.com/channel/UCBa659QWEk1AI4Tg--mrJ2A","name":"Tom Scott"},{"service_id":0,"url":"https://www.youtube.com/channel/UCJ0-OtVpF0wOKEqT2Z1HEtA","name":"ElectroBOOM"}]}"#,
                "name": "favorites",
            ])
        #expect(newPipe["format"] == "newpipe" && newPipe["added"] == 1 && newPipe["present"] == 1)

        let list = try await fixture.checked("lists.import", ["path": .string(file), "name": "YouTube"])
        #expect(list["name"] == "YouTube" && list["added"] == 13 && list["present"] == 0)
        let twice = try await fixture.checked("lists.import", ["path": .string(file), "name": "YouTube"])
        #expect(twice["added"] == 0 && twice["present"] == 13)
        #expect(try await fixture.checked("lists.list").arrayValue?.first?["count"] == 13)
        // With no name, the list is "imported", as for any file without a name of its own.
        let unnamed = try await fixture.checked("lists.import", ["path": .string(file)])
        #expect(unnamed["name"] == "imported" && unnamed["added"] == 13)
    }

    /// Every file's format is told from its text alone (no name to go by) as from its name.
    @Test(arguments: [
        ("NewPipeExtractor-youtube_takeout_import_test_1.csv", "takeout"),
        ("NewPipeExtractor-youtube_takeout_import_test_2.csv", "takeout"), ("invidious-imports_spec-de.csv", "takeout"),
        ("NewPipeExtractor-youtube_takeout_import_test.json", "takeout"), ("NewPipe-import_export_test.json", "newpipe"),
        ("NewPipe-ImportExportJsonHelperTest-empty.json", "newpipe"),
        ("CONSTRUCTED-freetube-subscriptions-2026-11-26.db", "freetube"),
        ("CONSTRUCTED-freetube-OLD-format-subscriptions.db", "freetube"),
        ("CONSTRUCTED-freetube-export-youtube-subscriptions-2026-11-26.csv", "takeout"),
        ("CONSTRUCTED-freetube-export-newpipe-subscriptions-2026-11-26.json", "newpipe"),
    ])
    func formatToldByContent(file: String, format: String) async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let text = try String(contentsOfFile: Self.path(file), encoding: .utf8)
        let byText = try await fixture.checked("lists.import", ["text": .string(text), "name": "by text"])
        let byName = try await fixture.checked("lists.import", ["path": .string(Self.path(file)), "name": "by name"])
        #expect(byText["format"] == JSONValue.string(format) && byName["format"] == JSONValue.string(format))
        #expect(byText["added"] == byName["added"])
    }

    /// A text that is none of the formats says which there are; export writes none of the new ones.
    @Test func unknownTextNamesTheFormatsAndExportIsUnchanged() async throws {
        let fixture = try HostFixture(more: [.of(YouTubeProvider.self)])
        let error = try #require(await fixture.error("lists.import", ["text": "just some words"]))
        #expect(error.message == "Invalid params: cannot tell the format: give format (opml, json, takeout, newpipe or freetube)")
        _ = try await fixture.checked("lists.create", ["name": "x"])
        let export = try #require(await fixture.error("lists.export", ["name": "x", "format": "takeout"]))
        #expect(export.code == RPCError.invalidParamsCode)
    }
}
