import Foundation
import MediaKit
import Testing

/// Query values leave as RFC 3986 asks of data: every reserved character encoded, so a server
/// reads back exactly what was meant.
@Suite struct QueryEncodingTests {
    /// A real Bluesky feed cursor (ATProtoKit#256, bluesky/cursors.md in the YouTube and Bluesky
    /// corpora' sources): sent with its '+' as is, the AppView read a space and answered 502.
    static let blueskyCursor =
        "aa2oIhbr37fPkWmjpYxJmfkKHYQkBNAz3gaNiP6rXRI+at://did:plc:vusyljxzvgwmsuzgzhd7jssf/app.bsky.feed.post/3mobmgfkzcj27"

    @Test func realCursorsAndSearchesRoundTrip() throws {
        let base = try #require(URL(string: "https://public.api.bsky.app"))
        for value in [
            Self.blueskyCursor, "1684670516000::bafyreidq3ilwslmlx72jf5vrk367xcc63s6lrhzlyup2bi3zwcvso6w2vi",
            "2025-05-22T03:45:30.576Z", "c++", "a&b=c", "50% off", "#swift @alice", "naïve café 日本 👩‍💻", "a+b c",
        ] {
            let url = try #require(base.endpoint("xrpc/app.bsky.feed.getFeed", query: ["cursor": value, "q": value]))
            let query = try #require(url.query(percentEncoded: true))
            // Nothing but unreserved characters, '%', '=' and '&' between the pairs.
            let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%=&")
            #expect(query.allSatisfy(allowed.contains), "\(query)")
            // What a server reads back (form decoding takes '+' for a space, so none is sent).
            let pairs = query.split(separator: "&").map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
            for pair in pairs {
                let decoded = try #require(pair.last?.replacingOccurrences(of: "+", with: " ").removingPercentEncoding)
                #expect(decoded == value)
            }
        }
    }

    @Test func everyReservedCharacterIsEncoded() {
        let reserved = ":/?#[]@!$&'()*+,;="
        let encoded = QueryEncoding.encode(reserved)
        #expect(encoded == "%3A%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D")
        #expect(QueryEncoding.encode("AZaz09-._~") == "AZaz09-._~")
        #expect(QueryEncoding.encode("é") == "%C3%A9", "letters beyond ASCII are bytes, not left as they are")
        #expect(QueryEncoding.encode(" ") == "%20")
    }

    @Test func namesValuesAndOrderAreKept() throws {
        let base = try #require(URL(string: "https://api.example/v1/"))
        let url = try #require(
            base.endpoint("search", query: ["q": "c++", "a": "1"], extra: [URLQueryItem(name: "key", value: "k/+=")]))
        #expect(url.absoluteString == "https://api.example/v1/search?a=1&q=c%2B%2B&key=k%2F%2B%3D")
        #expect(base.endpoint("plain")?.absoluteString == "https://api.example/v1/plain")
    }
}
