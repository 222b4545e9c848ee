import Foundation
import JSONRPC
import MediaHost
import MediaKit
import TestSupport
import Testing

/// Lists through the dispatcher: the methods, export and import round trips, and the OPML files
/// real podcast apps write (Tests/MediaHostTests/Recorded/opml, provenance in SOURCES.md).
@Suite struct ListTests {
    static let recorded = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Recorded/opml")

    /// Imports a recorded file into a list and returns the list's items (title, feed URL).
    func imported(_ file: String, _ fixture: HostFixture) async throws -> (JSONValue, [(title: String, feed: String)]) {
        let result = try await fixture.checked(
            "lists.import", ["path": .string(Self.recorded.appendingPathComponent(file).path), "name": .string(file)])
        let page = try await fixture.checked("lists.items", ["name": .string(file), "limit": 500])
        let items = (page["items"]?.arrayValue ?? []).map {
            ($0["title"]?.stringValue ?? "", $0["feed"]?.stringValue ?? "")
        }
        for item in page["items"]?.arrayValue ?? [] {
            #expect(item["id"]?.stringValue?.hasPrefix("feeds:podcast:feed-") == true)
            #expect(item["lists"]?.arrayValue?.contains(.string(file)) == true)
        }
        return (result, items)
    }

    @Test func pocketCastsExportWithItsRawAmpersand() async throws {
        let fixture = try HostFixture()
        let (result, items) = try await imported("pocketcasts.opml", fixture)
        #expect(result["added"] == 4 && result["format"] == "opml")
        #expect(
            items.map(\.feed) == [
                "https://feeds.simplecast.com/1", "https://feeds.megaphone.fm/1", "https://feeds.acast.com/public/shows/1",
                "https://feeds.acast.com/public/shows/2?key1=value1&key2=value2",
            ])
        // No title in the file: the feed's host stands in until the feed is read.
        #expect(items.map(\.title) == ["feeds.simplecast.com", "Title 1", "feeds.acast.com", "Title 2"])
    }

    /// Thousands of outlines are made into items on both cores: the list keeps the file's order,
    /// and what is left out is reported in the file's order too.
    @Test func aLargeOPMLKeepsItsOrderAndItsSkips() async throws {
        let fixture = try HostFixture()
        let count = 3000
        func url(_ n: Int) -> String {
            n % 700 == 3
                ? "https://feeds.example.com/\(n)/" + String(repeating: "x", count: 800) : "https://feeds.example.com/\(n).xml"
        }
        var opml = #"<?xml version="1.0"?><opml version="2.0"><head><title>Big</title></head><body>"#
        for n in 0..<count { opml += #"<outline type="rss" text="Show \#(n)" xmlUrl="\#(url(n))"/>"# }
        opml += "</body></opml>"
        let result = try await fixture.checked("lists.import", ["text": .string(opml), "format": "opml"])
        let skipped = (0..<count).filter { $0 % 700 == 3 }
        #expect(result["added"] == JSONValue(count - skipped.count))
        let reasons = result["skipped"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(reasons.count == skipped.count)
        for (reason, n) in zip(reasons, skipped) {
            #expect(reason.contains("feeds.example.com/\(n)/") && reason.hasSuffix("too long"), "\(reason)")
        }
        var titles: [String] = []
        var cursor: JSONValue = nil
        repeat {
            let page = try await fixture.checked("lists.items", ["name": "Big", "limit": 500, "cursor": cursor])
            titles += (page["items"]?.arrayValue ?? []).compactMap { $0["title"]?.stringValue }
            cursor = page["next"] ?? nil
        } while cursor != nil
        #expect(titles == (0..<count).filter { $0 % 700 != 3 }.map { "Show \($0)" })
    }

    @Test func overcastExportInItsFolder() async throws {
        let fixture = try HostFixture()
        let (result, items) = try await imported("overcast.opml", fixture)
        #expect(result["added"] == 7)
        #expect(items[2] == ("Great & Terrible", "https://www.arolivieri.com/gt-episodes?format=RSS"))
        #expect(items[4].feed == "https://feeds.soundcloud.com/users/soundcloud:users:6683161/sounds.rss")
        #expect(items[5].title == "Open Minds … from Creative Commons")
    }

    @Test func gPodderExportInUTF8AndLatin1() async throws {
        let fixture = try HostFixture()
        let (_, utf8) = try await imported("gpodder.opml", fixture)
        let (_, latin1) = try await imported("gpodder-latin1.opml", fixture)
        #expect(utf8.count == 7)
        // gPodder writes the show in `title` and its description in `text`.
        #expect(utf8[0] == ("Deutsch: Chaos Computer Club", "http://chaosradio.ccc.de/chaosradio-latest.rss"))
        #expect(utf8[3].title == "Deutsch: The Mindful Sessions - Für mehr Achtsamkeit & Soulpower")
        #expect(utf8[5].feed == "https://audiothek.ardmediathek.de/programsets/55477882/synd_rss?offset=0&limit=12")
        #expect(latin1.map(\.title) == utf8.map(\.title), "the same titles from the Latin-1 file")
        #expect(latin1.map(\.feed) == utf8.map(\.feed))
    }

    @Test func antennaPodExportPrefersTitleOverText() async throws {
        let fixture = try HostFixture()
        let (result, items) = try await imported("antennapod.opml", fixture)
        #expect(result["name"] == "antennapod.opml")
        #expect(items.map(\.title) == ["title yyy", "title xxx", "title zzz"])
    }

    @Test func quirksOfOtherWritersAndHostileEntries() async throws {
        let fixture = try HostFixture()
        let text = """
            <?xml version="1.0"?>
            <opml version="2.0"><head><title>Mixed bag</title></head><body>
              <outline text="Folder"><outline text="Inner">
                <outline type="link" text="Linked" url="https://example.com/link.xml"/>
              </outline></outline>
              <outline type="RSS" title="Upper" xmlUrl="https://example.com/upper.xml"/>
              <outline type="rss" title="Dup" xmlUrl="https://example.com/upper.xml"/>
              <outline type="rss" title="Local file" xmlUrl="file:///etc/passwd"/>
              <outline type="rss" title="Script" xmlUrl="javascript:alert(1)"/>
              <outline type="rss" title="\u{1B}[31mEvil\u{1B}[0m" xmlUrl="https://example.com/evil.xml"/>
              <outline type="song" title="Not a feed" url="https://example.com/song.mp3"/>
              <outline text="no url"/>
            </body></opml>
            """
        let result = try await fixture.checked("lists.import", ["text": .string(text)])
        #expect(result["name"] == "Mixed bag", "the OPML's title names the list")
        #expect(result["added"] == 3)
        #expect(result["skipped"]?.arrayValue?.count == 2, "file: and javascript: are refused: \(result)")
        let items = try await fixture.call("lists.items", ["name": "Mixed bag"])["items"]?.arrayValue ?? []
        #expect(items.map { $0["title"]?.stringValue ?? "" }.prefix(2) == ["Linked", "Upper"])
        #expect(items.allSatisfy { !($0["title"]?.stringValue ?? "").contains("\u{1B}") }, "no escape sequence kept")
        #expect(items.first?["feed"] == "https://example.com/link.xml")
        // An entity bomb is refused as a whole.
        let bomb = """
            <?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>
            <opml><body><outline title="&lol2;" xmlUrl="https://example.com/a.xml"/></body></opml>
            """
        let refused = await fixture.error("lists.import", ["text": .string(bomb), "name": "bomb"])
        #expect(refused?.code == RPCError.invalidParamsCode && refused?.message.contains("entities") == true)
    }

    @Test func listsKeepOrderSnapshotsAndNames() async throws {
        let fixture = try HostFixture()
        let made = try await fixture.checked("lists.create", ["name": "Road trip"])
        #expect(made["name"] == "Road trip" && made["count"] == 0)
        #expect(await fixture.error("lists.create", ["name": "road TRIP"])?.message.contains("already exists") == true)
        #expect(await fixture.error("lists.create", ["name": "favorites"])?.message.contains("built-in") == true)
        #expect(await fixture.error("lists.create", ["name": "  "]) != nil)
        for n in [3, 1, 2] {
            let added = try await fixture.checked("lists.add", ["name": "Road trip", "id": .string("catalog:video:v\(n)")])
            #expect(added["added"] == true && added["item"]?["lists"] == ["Road trip"])
        }
        let again = try await fixture.checked("lists.add", ["name": "Road trip", "id": "catalog:video:v3"])
        #expect(again["added"] == false)
        func order() async throws -> [String] {
            (try await fixture.checked("lists.items", ["name": "Road trip"])["items"]?.arrayValue ?? []).compactMap {
                $0["id"]?.stringValue
            }
        }
        #expect(try await order() == ["catalog:video:v3", "catalog:video:v1", "catalog:video:v2"])
        _ = try await fixture.checked("lists.move", ["name": "Road trip", "id": "catalog:video:v2", "to": 0])
        #expect(try await order() == ["catalog:video:v2", "catalog:video:v3", "catalog:video:v1"])
        _ = try await fixture.checked("lists.remove", ["name": "Road trip", "id": "catalog:video:v3"])
        #expect(try await order() == ["catalog:video:v2", "catalog:video:v1"])
        // Items everywhere say which lists hold them.
        let item = try await fixture.call("media.get", ["id": "catalog:video:v1"])
        #expect(item["lists"] == ["Road trip"])
        // Offline (the provider failing), the list still lists from its snapshots.
        fixture.control.failure = .network("offline")
        #expect(try await order() == ["catalog:video:v2", "catalog:video:v1"])
        fixture.control.failure = nil
        let renamed = try await fixture.checked("lists.rename", ["name": "Road trip", "to": "Summer"])
        #expect(renamed["name"] == "Summer" && renamed["count"] == 2)
        #expect(await fixture.error("lists.items", ["name": "Road trip"])?.message.contains("no list 'Road trip'") == true)
        let deleted = try await fixture.checked("lists.delete", ["name": "Summer"])
        #expect(deleted["deleted"] == true)
        let lists = try await fixture.checked("lists.list")
        #expect(lists.arrayValue?.isEmpty == true)
        #expect(try await fixture.call("media.get", ["id": "catalog:video:v1"])["lists"] == nil)
    }

    /// The JSON export is written without JSONEncoder, and must be what it writes: the same
    /// document, pretty-printed with keys sorted, empty or not, whatever the names hold.
    @Test(arguments: [0, 1, 3]) func jsonExportIsJSONEncodersDocument(count: Int) throws {
        struct Document: Encodable {
            var format = "mediahost-list"
            var version = 1
            var name: String
            var items: [MediaItem]
        }
        let items = (0..<count).map { n in
            var item = MediaItem(
                id: ItemID(provider: "podcasts", kind: .podcast, nativeID: "n\(n)"), title: "Show \"\(n)\" / [a, b]: {}")
            item.feed = "https://example.com/\(n)/feed.xml"
            item.extra = n == 1 ? [:] : ["lang": "en"]
            item.entities = n == 2 ? [] : nil
            item.duration = n == 0 ? 12.5 : nil
            return item
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        for name in ["Mine", "a/b \"c\" \\ \u{1}", ""] {
            let expected = String(decoding: try encoder.encode(Document(name: name, items: items)), as: UTF8.self) + "\n"
            #expect(try ListWriter.json(name: name, items: items) == expected)
        }
    }

    /// A list from OPML whose outlines link a `tag:` URI and a web page, exported as JSON and
    /// imported back elsewhere, exports byte for byte the same: one rule for links on every
    /// import (the `tag:` link was kept from OPML and dropped from JSON).
    @Test func exportImportExportIsByteIdentical() async throws {
        let opml = """
            <?xml version="1.0"?><opml version="2.0"><head><title>t</title></head><body>
            <outline type="rss" text="Tag Feed" xmlUrl="https://feeds.example/tag.xml" htmlUrl="tag:example.com,2005:feed"/>
            <outline type="rss" text="Web Feed" xmlUrl="https://feeds.example/web.xml" htmlUrl="https://example.com/"/>
            <outline type="rss" text="Script" xmlUrl="https://feeds.example/js.xml" htmlUrl="javascript:alert(1)"/>
            </body></opml>
            """
        let first = try HostFixture()
        _ = try await first.checked("lists.import", ["text": .string(opml), "format": "opml", "name": "subs"])
        let exported = try await first.checked("lists.export", ["name": "subs", "format": "json"])
        let text = try #require(exported["text"]?.stringValue)
        #expect(!text.contains("tag:example.com") && !text.contains("javascript:") && text.contains("https://example.com/"))
        let second = try HostFixture()
        _ = try await second.checked("lists.import", ["text": .string(text), "name": "subs"])
        let again = try await second.checked("lists.export", ["name": "subs", "format": "json"])
        #expect(again["text"]?.stringValue == text)
    }

    @Test func jsonRoundTripsExactlyAndOPMLAndM3UExport() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.call("lists.create", ["name": "Mine"])
        for n in 1...3 { _ = try await fixture.call("lists.add", ["name": "Mine", "id": .string("catalog:video:v\(n)")]) }
        let file = fixture.directory + "/mine.json"
        let written = try await fixture.checked("lists.export", ["name": "Mine", "format": "json", "path": .string(file)])
        #expect(written["count"] == 3 && written["path"]?.stringValue == file)
        let back = try await fixture.checked("lists.import", ["path": .string(file), "name": "Copy"])
        #expect(back["added"] == 3 && back["format"] == "json")
        let original = try await fixture.call("lists.items", ["name": "Mine"])["items"]?.arrayValue ?? []
        let copy = try await fixture.call("lists.items", ["name": "Copy"])["items"]?.arrayValue ?? []
        func stripped(_ items: [JSONValue]) -> [JSONValue] {
            items.map { item in
                guard case .object(var fields) = item else { return item }
                fields["lists"] = nil
                return .object(fields)
            }
        }
        #expect(stripped(copy) == stripped(original), "the same items, snapshots and order")
        // Exporting the copy gives the same bytes but its name.
        let again = try await fixture.call("lists.export", ["name": "Copy", "format": "json"])
        let first = try String(contentsOfFile: file, encoding: .utf8)
        #expect(again["text"]?.stringValue == first.replacingOccurrences(of: "\"name\" : \"Mine\"", with: "\"name\" : \"Copy\""))

        // M3U: what a player can play (the catalog's videos have no media URL: their pages).
        let m3u = try await fixture.checked("lists.export", ["name": "Mine", "format": "m3u"])
        let lines = m3u["text"]?.stringValue?.split(separator: "\n").map(String.init) ?? []
        #expect(lines.first == "#EXTM3U")
        #expect(lines.contains("https://catalog.invalid/v1"))
        #expect(lines.contains { $0.hasPrefix("#EXTINF:") })

        // OPML: only podcasts; an imported OPML exports the same feeds, and reads back the same.
        let none = try await fixture.call("lists.export", ["name": "Mine", "format": "opml"])
        #expect(none["count"] == 0)
        _ = try await fixture.call(
            "lists.import",
            ["path": .string(Self.recorded.appendingPathComponent("overcast.opml").path), "name": "Overcast"])
        let opml = try await fixture.checked("lists.export", ["name": "Overcast", "format": "opml"])
        #expect(opml["count"] == 7)
        let text = try #require(opml["text"]?.stringValue)
        #expect(text.contains("<opml version=\"2.0\">") && text.contains("Great &amp; Terrible"))
        let reread = try await fixture.call("lists.import", ["text": .string(text), "name": "Reread"])
        #expect(reread["added"] == 7)
        let feeds = { (name: String) async throws -> [String] in
            (try await fixture.call("lists.items", ["name": .string(name)])["items"]?.arrayValue ?? []).compactMap {
                $0["feed"]?.stringValue
            }
        }
        #expect(try await feeds("Reread") == feeds("Overcast"))
        // Importing the same file again adds nothing.
        let twice = try await fixture.call("lists.import", ["text": .string(text), "name": "Reread"])
        #expect(twice["added"] == 0 && twice["present"] == 7)
        #expect(await fixture.error("lists.import", ["text": "#EXTM3U\n", "name": "x"])?.message.contains("M3U") == true)
        // The other names of the params work too: list and file.
        let viaFile = try await fixture.checked(
            "lists.import",
            ["file": .string(Self.recorded.appendingPathComponent("antennapod.opml").path), "list": "Aliased"])
        #expect(viaFile["name"] == "Aliased" && viaFile["added"] == 3)
        let exported = try await fixture.checked(
            "lists.export", ["list": "Aliased", "format": "opml", "file": .string(fixture.directory + "/a.opml")])
        #expect(exported["count"] == 3 && exported["path"]?.stringValue == fixture.directory + "/a.opml")
        #expect(
            await fixture.error("lists.import", ["text": "{\"format\":\"other\",\"version\":1,\"name\":\"x\",\"items\":[]}"])
                != nil)
    }
}
