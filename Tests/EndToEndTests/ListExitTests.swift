import Basics
import Foundation
import JSONRPC
import MediaHTTP
import MediaHost
import MediaKit
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What comes into the host from elsewhere (an imported or received list, a plugin, a server)
/// and what leaves it (exports, share payloads, error messages), through the built binary.
@Suite struct ListExitTests {
    static func call(_ method: String, _ params: String, dataDir: String, environment: [String: String] = [:]) async throws
        -> (status: Int32, value: JSONValue?, stderr: String)
    {
        let result = try await runMediahost(["call", method, params], dataDir: dataDir, environment: environment)
        let text = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return (result.status, text.isEmpty ? nil : try? JSONValue(parsing: text), result.stderr)
    }

    /// A mediahost list whose items carry a number no `Int` holds, a line break that would add
    /// an M3U entry, and links no one should open: import and export work, and the export has
    /// one entry per playable item and only web links.
    @Test func aHostileListNeitherCrashesNorInjectsAnExport() async throws {
        let dataDir = try makeTemporaryDirectory()
        let items: [JSONValue] = [
            [
                "id": "podcasts:episode:1:huge", "provider": "podcasts", "kind": "episode", "title": "Huge",
                "duration": .number("1e40"), "enclosure": ["url": "https://example.com/huge.mp3", "length": 5],
            ],
            [
                "id": "podcasts:episode:1:inject", "provider": "podcasts", "kind": "episode",
                "title": "Inject\n#EXTINF:0,title injected",
                "enclosure": ["url": "https://example.com/a.mp3\n#EXTINF:0,injected\nfile:///etc/passwd"],
            ],
            [
                "id": "podcasts:episode:1:links", "provider": "podcasts", "kind": "episode", "title": "Links",
                "url": "javascript:alert(1)", "enclosure": ["url": "file:///etc/shadow"],
            ],
            [
                "id": "podcasts:episode:1:good", "provider": "podcasts", "kind": "episode", "title": "Good\u{1B}[31m\u{07}",
                "duration": .number("12.6"), "enclosure": ["url": "https://example.com/good.mp3"],
            ],
        ]
        let document: JSONValue = ["format": "mediahost-list", "version": 1, "name": "Hostile", "items": .array(items)]
        let text = JSONValue.string(document.jsonString).jsonString
        let imported = try await Self.call("lists.import", #"{"text":\#(text),"format":"json"}"#, dataDir: dataDir)
        #expect(imported.status == 0, "\(imported.stderr)")

        let exported = try await Self.call("lists.export", #"{"name":"Hostile","format":"m3u"}"#, dataDir: dataDir)
        try #require(exported.status == 0, "export must not crash: \(exported.stderr)")
        let m3u = try #require(exported.value?["text"]?.stringValue)
        let lines = m3u.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(
            lines == [
                "#EXTM3U", "#EXTINF:-1,Huge", "https://example.com/huge.mp3", "#EXTINF:13,Good[31m",
                "https://example.com/good.mp3", "",
            ], "\(m3u)")
        #expect(exported.value?["count"] == 2)

        let listed = try await Self.call("lists.items", #"{"name":"Hostile"}"#, dataDir: dataDir)
        let byID = Dictionary(
            (listed.value?["items"]?.arrayValue ?? []).map { ($0["id"]?.stringValue ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byID["podcasts:episode:1:huge"]?["duration"] == nil, "a duration no one believes is dropped")
        #expect(byID["podcasts:episode:1:links"]?["url"] == nil && byID["podcasts:episode:1:links"]?["enclosure"] == nil)
        #expect(byID["podcasts:episode:1:inject"]?["enclosure"] == nil)
        #expect(byID["podcasts:episode:1:good"]?["title"] == "Good[31m", "control characters are dropped at the door")

        // OPML whose feed URL carries a line break, ESC and BEL: refused and reported, not stored.
        let opml = """
            <opml version="2.0"><body>
            <outline type="rss" text="Bad" xmlUrl="http://example.com/a&#10;b&#27;[31m&#7;"/>
            <outline type="rss" text="Fine" xmlUrl="http://example.com/fine.xml"/>
            </body></opml>
            """
        let fromOPML = try await Self.call(
            "lists.import", #"{"text":\#(JSONValue.string(opml).jsonString),"format":"opml","name":"Feeds"}"#, dataDir: dataDir)
        #expect(fromOPML.value?["added"] == 1, "\(String(describing: fromOPML.value)) \(fromOPML.stderr)")
        #expect(fromOPML.value?["skipped"]?.arrayValue?.count == 1)
        let feeds = try await Self.call("lists.items", #"{"name":"Feeds"}"#, dataDir: dataDir)
        #expect(!(feeds.value?.jsonString ?? "").contains("\\u001b") && !(feeds.value?.jsonString ?? "").contains("\\n"))
    }

    /// An OPML file of 16 MB with 200,000 feeds is refused while it is read, at the first feed
    /// past what a list holds, not after each was made an item.
    @Test func anOversizedOPMLIsRefusedAtTheFirstFeedTooMany() async throws {
        let dataDir = try makeTemporaryDirectory()
        var text = #"<?xml version="1.0"?><opml version="2.0"><head><title>Big</title></head><body>"# + "\n"
        var n = 0
        while text.utf8.count < 16_000_000 {
            text += #"<outline type="rss" text="Show \#(n)" xmlUrl="http://example.com/f\#(n).xml"/>"# + "\n"
            n += 1
        }
        text += "</body></opml>\n"
        let file = dataDir + "/big.opml"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await Self.call("lists.import", #"{"path":"\#(file)"}"#, dataDir: dataDir)
        #expect(result.status == 1)
        #expect(result.stderr.contains("more than 10000 feeds"), "\(result.stderr)")
        #expect(try await Self.call("lists.list", "{}", dataDir: dataDir).value?.arrayValue?.count ?? 0 <= 1, "no list made")
    }

    /// One data dir, however it is written: with a trailing slash, through `.` or a symbolic
    /// link, it is the same service.
    @Test func aDataDirHasOneServiceHoweverItIsSpelled() async throws {
        let dataDir = try makeTemporaryDirectory()
        let service = try MediahostProcess(["serve"], dataDir: dataDir)
        defer { service.process.terminate() }
        try await ServiceTests.waitForService(dataDir)
        let link = try makeTemporaryDirectory() + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dataDir)
        let servicePID = service.process.processIdentifier
        for spelling in [dataDir + "/", dataDir + "/./", link, link + "/"] {
            let info = try await runMediahost(["call", "host.info"], dataDir: spelling)
            let pid = try JSONValue(parsing: info.stdout)["pid"]?.intValue
            #expect(pid == Int(servicePID), "\(spelling) is answered by the service: \(info.stdout)\(info.stderr)")
            let second = try await runMediahost(["serve"], dataDir: spelling)
            #expect(second.status != 0 && second.stderr.contains("already runs"), "\(spelling): \(second.stderr)")
        }
    }

    /// A plugin's secret setting is in its item URLs (it needs it to play them): what leaves the
    /// host (the RPC answer, an exported file, what a share serves) carries it masked.
    @Test func aPluginSecretLeavesNeitherInExportsNorInShares() async throws {
        let dataDir = try makeTemporaryDirectory()
        let token = "plug-SECRET/K+q=0123456789"
        try PluginTests.addPlugin(
            "tokened", to: dataDir,
            script: PluginTests.answering(
                before: "TOKEN=$(cat token)",
                #"""
                *provider.item*) printf '{"jsonrpc":"2.0","id":%s,"result":{"id":"tokened:movie:1","provider":"tokened","kind":"movie","title":"One","url":"https://example.com/one?token=%s"}}\n' "$id" "$TOKEN" ;;
                """#),
            extra: "[[config]]\nname = \"token\"\nsummary = \"its token\"\nsecret = true\n")
        try token.write(toFile: dataDir + "/plugins/tokened/token", atomically: true, encoding: .utf8)
        let environment = ["MEDIAHOST_TOKENED_TOKEN": token]
        #expect(try await Self.call("lists.create", #"{"name":"Mine"}"#, dataDir: dataDir).status == 0)
        let added = try await Self.call(
            "lists.add", #"{"name":"Mine","id":"tokened:movie:1"}"#, dataDir: dataDir, environment: environment)
        #expect(added.status == 0, "\(added.stderr)")
        let file = dataDir + "/export.json"
        let exported = try await Self.call(
            "lists.export", #"{"name":"Mine","format":"json","path":"\#(file)"}"#, dataDir: dataDir, environment: environment)
        #expect(exported.status == 0, "\(exported.stderr)")
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(written.contains("token=***") && !written.contains("SECRET"), "\(written)")

        let process = try MediahostProcess(["--no-service", "rpc"], dataDir: dataDir, environment: environment)
        defer { process.process.terminate() }
        process.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"share.start","params":{"name":"Mine","minutes":5}}"#)
        let offer = try #require(await process.messages(1).first?["result"], "\(process.errors)")
        let code = try #require(offer["code"]?.stringValue, "\(offer)")
        let port = try #require(offer["port"]?.intValue, "\(offer)")
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/list?code=\(code)"))
        let served = String(decoding: try await MediaHTTPClient().send(HTTPRequest(url: url)).body, as: UTF8.self)
        #expect(served.contains("token=***") && !served.contains("SECRET"), "\(served)")
        process.closeInput()
    }

    /// A server that echoes a key back in the standard percent-encoding (upper or lower case):
    /// the error names the key masked.
    @Test func aPercentEncodedEchoOfAKeyIsMasked() async throws {
        let server = try HostileServer { _, connection in
            let body = #"{"status_message":"Invalid API key: pat-held.out%2FK%2Bq%3D7 (or pat-held.out%2fK%2bq%3d7)"}"#
            connection.respond(status: 401, reason: "Unauthorized", body: Array(body.utf8))
        }
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        let result = try await runMediahost(
            ["call", "media.search", #"{"provider":"tmdb","query":"heat"}"#], dataDir: dataDir,
            environment: ["TMDB_API_KEY": "pat-held.out/K+q=7", "MEDIAHOST_TMDB_BASE_URL": server.baseURL])
        #expect(result.status == 1)
        #expect(result.stderr.contains("Invalid API key: *** (or ***)"), "\(result.stderr)")
        #expect(!result.stderr.contains("pat-held"))
    }

    /// A feed that fails with a reason in its body: the error says it.
    @Test func aFeedErrorKeepsTheServersReason() async throws {
        let server = try SlowServerTests.directory { connection in
            let body =
                "<html><head><title>500</title></head><body><h1>Feed generator crashed: \u{1B}[2Jdisk quota</h1></body></html>"
            connection.respond(
                status: 500, reason: "Internal Server Error", headers: ["Content-Type": "text/html"], body: Array(body.utf8))
        }
        defer { server.stop() }
        let dataDir = try makeTemporaryDirectory()
        let result = try await runMediahost(
            ["call", "media.children", #"{"id":"podcasts:podcast:42"}"#], dataDir: dataDir,
            environment: SlowServerTests.environment(server))
        #expect(result.status == 1)
        #expect(result.stderr.contains("Feed generator crashed: [2Jdisk quota"), "\(result.stderr)")
        #expect(!result.stderr.contains("\u{1B}") && !result.stderr.contains("no reason given"))
    }
}
