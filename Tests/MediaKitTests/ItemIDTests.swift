import Foundation
import MediaKit
import Testing

@Suite struct ItemIDTests {
    @Test func parsesThreeParts() throws {
        let id = try ItemID(parsing: "youtube:video:dQw4w9WgXcQ")
        #expect(id.provider == "youtube")
        #expect(id.kind == .video)
        #expect(id.nativeID == "dQw4w9WgXcQ")
        #expect(id.description == "youtube:video:dQw4w9WgXcQ")
    }

    @Test func nativeIDMayContainColons() throws {
        let id = try ItemID(parsing: "podcasts:episode:1200361736:urn:uuid:42")
        #expect(id.nativeID == "1200361736:urn:uuid:42")
        #expect(id.description == "podcasts:episode:1200361736:urn:uuid:42")
    }

    @Test(arguments: [
        ("", ItemIDError.malformed("")),
        ("youtube", .malformed("youtube")),
        ("youtube:video", .malformed("youtube:video")),
        ("youtube:video:", .malformed("youtube:video:")),
        ("YouTube:video:x", .badProvider("YouTube")),
        (":video:x", .badProvider("")),
        ("youtube:clip:x", .badKind("clip")),
        ("youtube::x", .badKind("")),
        ("caf\u{e9}:video:x", .badProvider("caf\u{e9}")),
        ("youtube:vid\u{e9}o:x", .badKind("vid\u{e9}o")),
        ("\u{1F600}:video:x", .badProvider("\u{1F600}")),
        ("youtube:video:a\u{1B}[31m", .controlCharacters),
        ("youtube:video:a\nb", .controlCharacters),
    ])
    func rejectsMalformed(text: String, expected: ItemIDError) {
        #expect(throws: expected) { try ItemID(parsing: text) }
    }

    @Test func rejectsOverlongIDs() {
        #expect(throws: ItemIDError.tooLong) { try ItemID(parsing: "a:video:" + String(repeating: "x", count: 2000)) }
    }

    @Test func errorMessagesSayWhatIDsLookLike() {
        #expect(ItemIDError.malformed("x").description.contains("provider:kind:native-id"))
        #expect(ItemIDError.badKind("clip").description.contains("video, channel"))
    }

    @Test func codesAsAString() throws {
        let id = ItemID(provider: "tmdb", kind: .movie, nativeID: "550")
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == #"["tmdb:movie:550"]"#)
        #expect(try JSONDecoder().decode([ItemID].self, from: data) == [id])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([ItemID].self, from: Data(#"["nope"]"#.utf8)) }
    }

    @Test func containerKinds() {
        #expect(MediaKind.channel.isContainer && MediaKind.podcast.isContainer && MediaKind.user.isContainer)
        #expect(!MediaKind.video.isContainer && !MediaKind.episode.isContainer && !MediaKind.post.isContainer)
    }
}

@Suite struct MediaItemCodingTests {
    @Test func roundTripsEveryField() throws {
        var item = MediaItem(
            id: ItemID(provider: "mastodon", kind: .post, nativeID: "1"), title: "Hello #swift", subtitle: "@a",
            summary: "Hello #swift", url: "https://x.invalid/1", artwork: "https://x.invalid/a.png",
            published: "2026-11-21T10:00:00Z", duration: 12.5, creator: "A", stats: ["likes": 3],
            enclosure: Enclosure(url: "https://x.invalid/a.mp3", type: "audio/mpeg", length: 1234),
            entities: [TextEntity(type: .hashtag, start: 6, end: 12, text: "#swift", value: "swift")], extra: ["lang": "en"])
        item.favorite = true
        item.download = DownloadInfo(state: "completed", path: "/tmp/a.mp3", bytes: 1234, total: 1234)
        let decoded = try JSONDecoder().decode(MediaItem.self, from: JSONEncoder().encode(item))
        #expect(decoded == item)
    }

    @Test func minimalJSONDecodes() throws {
        let json = #"{"id":"catalog:video:v1","provider":"catalog","kind":"video","title":"T"}"#
        let item = try JSONDecoder().decode(MediaItem.self, from: Data(json.utf8))
        #expect(item.title == "T" && item.subtitle == nil && item.favorite == nil)
    }

    @Test func providerErrorsSayWhatHappened() {
        #expect(ProviderError.rateLimited(retryAfter: 2.2).message.contains("3 s"))
        #expect(ProviderError.upstream(status: 503, message: "busy").message == "the service answered HTTP 503: busy")
        // A body that only repeats the status is not said twice.
        func upstream(_ body: String) -> String {
            ProviderError.upstream(
                HTTPResponse(status: 500, headers: [:], body: Data(body.utf8), url: URL(string: "https://x.invalid")!)
            ).message
        }
        #expect(upstream("HTTP 500") == "the service answered HTTP 500: no reason given")
        #expect(upstream("500 Internal Server Error") == "the service answered HTTP 500: Internal Server Error")
        #expect(upstream("<h1>HTTP 500: database down</h1>") == "the service answered HTTP 500: database down")
        #expect(upstream("busy") == "the service answered HTTP 500: busy")
        #expect(ProviderError.quotaExceeded("x").kind == "quotaExceeded")
    }

    /// Any service's error statuses, as every JSON provider gets them unless it says otherwise.
    @Test func errorStatusesMeanTheSameFromEveryService() {
        func error(_ status: Int, _ body: String = "", headers: [String: String] = [:], reset: Double? = nil) -> ProviderError {
            ProviderError.from(
                HTTPResponse(status: status, headers: headers, body: Data(body.utf8), url: URL(string: "https://x.invalid")!),
                reset: reset)
        }
        #expect(error(429, reset: 30) == .rateLimited(retryAfter: 30))
        // The service's own Retry-After comes before a reset the provider read elsewhere.
        #expect(error(429, headers: ["retry-after": "5"], reset: 30) == .rateLimited(retryAfter: 5))
        #expect(error(401, #"{"error":"The access token is invalid"}"#) == .unauthorized("The access token is invalid"))
        #expect(error(403) == .unauthorized("no reason given"))
        #expect(error(404, #"{"error":"Record not found"}"#) == .notFound("Record not found"))
        #expect(error(502, "502 Bad Gateway") == .upstream(status: 502, message: "Bad Gateway"))
    }

    @Test func descriptorEnvironmentNames() {
        let d = ProviderDescriptor(id: "podcasts", name: "P", kinds: [.podcast], capabilities: [])
        #expect(d.environmentName(for: "base_url") == "MEDIAHOST_PODCASTS_BASE_URL")
        #expect(ProviderDescriptor.isValidID("you-tube_2"))
        #expect(!ProviderDescriptor.isValidID("You"))
        #expect(!ProviderDescriptor.isValidID("a b"))
    }

    @Test func endpointsSortTheirQueryAndKeepCredentialsLast() throws {
        let base = try #require(URL(string: "http://h/x"))
        #expect(
            base.endpoint("a/b", query: ["z": "1", "a": "#tag @u"], extra: [URLQueryItem(name: "key", value: "k")])?
                .absoluteString
                == "http://h/x/a/b?a=%23tag%20%40u&z=1&key=k")
        #expect(base.endpoint("a")?.absoluteString == "http://h/x/a")
    }
}

@Suite struct MemoTests {
    @Test func keepsValuesByKeyUntilTheyExpire() {
        let start = Date(timeIntervalSince1970: 1_000_000)
        let memo = Memo<[Int]>(lifetime: 600)
        #expect(memo.value("a", now: start) == nil)
        memo.keep([1], "a", now: start)
        memo.keep([2], "b", now: start)
        #expect(memo.value("a", now: start.addingTimeInterval(599)) == [1])
        #expect(memo.value("b", now: start) == [2])
        #expect(memo.value("a", now: start.addingTimeInterval(600)) == nil)
        let forever = Memo<String>()
        forever.keep("x")
        #expect(forever.value(now: .distantFuture) == "x")
    }
}
