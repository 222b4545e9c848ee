import Foundation
import JSONRPC
import MediaHost
import MediaKit
import Testing

/// `JSONValueDecoder` and `JSONValueEncoder` (params and notifications without JSON text in
/// between) read and write what JSONDecoder and JSONEncoder do.
@Suite struct JSONValueCoderTests {
    static let item: MediaItem = {
        var item = MediaItem(
            id: ItemID(provider: "podcasts", kind: .episode, nativeID: "1:ep-2"), title: "Ep 2 — “quoted” \\ é 日本",
            subtitle: "Show", summary: "line\nline", url: "https://example.com/a?b=c&d=é", artwork: "https://example.com/x.png",
            published: "2025-10-09T09:00:00Z", duration: 3725.5, creator: "Someone", stats: ["views": 12, "likes": 0],
            enclosure: Enclosure(url: "https://example.com/a.mp3", type: "audio/mpeg", length: 9_007_199_254_740_000),
            entities: [TextEntity(type: .hashtag, start: 0, end: 4, text: "#tag", value: "tag")],
            extra: ["season": "2", "empty": ""])
        item.favorite = true
        item.position = 0.1
        item.played = false
        item.lists = ["Road", "Trip"]
        return item
    }()

    /// Encoded as a value, it is what JSONEncoder's text parses to; decoded from either, the same.
    func roundTrip<T: Codable & Equatable>(_ value: T) throws {
        let viaText = try JSONParser.parse(JSONCoding.bytes(value))
        let direct = try JSONValueEncoder().encode(value)
        #expect(direct == viaText, "\(direct)\n\(viaText)")
        #expect(JSONWriter.bytes(direct) == JSONWriter.bytes(viaText))
        let decoded = try JSONValueDecoder().decode(T.self, from: viaText)
        #expect(decoded == value)
        #expect(decoded == (try JSONDecoder().decode(T.self, from: Data(JSONCoding.bytes(value)))))
    }

    @Test func valuesRoundTripAsJSONEncoderAndDecoderDo() throws {
        try roundTrip(Self.item)
        try roundTrip(Page(items: [Self.item, Self.item.snapshot], next: Cursor("n"), total: 2))
        try roundTrip(DownloadProgress(id: Self.item.id.description, bytes: 10, total: 100, rate: 0.25, eta: nil))
        try roundTrip(DownloadStateChange(id: Self.item.id.description, state: "failed", error: "p"))
        try roundTrip(["a": [1, 2], "b": []] as [String: [Int]])
        try roundTrip([Int64.max, Int64.min, 0])
        try roundTrip([UInt8(255), 0])
        try roundTrip([0.5, -1e-7, 1e300, 3])
        try roundTrip(["nested": ["deeper": ["x"]]] as [String: [String: [String]]])
    }

    @Test func numbersDecodeAsJSONDecoderReadsThem() throws {
        let decoder = JSONValueDecoder()
        #expect(try decoder.decode(Int.self, from: .number("42")) == 42)
        #expect(try decoder.decode(Int.self, from: .number("1e2")) == 100)
        #expect(try decoder.decode(Int.self, from: .number("3.0")) == 3)
        #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: .number("3.5")) }
        #expect(throws: DecodingError.self) { try decoder.decode(UInt8.self, from: .number("256")) }
        #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: .string("4")) }
        #expect(try decoder.decode(Double.self, from: .number("-0.25")) == -0.25)
        #expect(try decoder.decode(Int?.self, from: .null) == nil)
        #expect(try decoder.decode(JSONValue.self, from: ["x": [1, nil]]) == ["x": [1, nil]])
    }

    /// The coding paths of errors are JSONDecoder's, so invalid params are worded as before.
    @Test func errorsCarryTheSamePaths() throws {
        struct Params: Codable, Equatable {
            var name: String
            var items: [Int]
        }
        func describe(_ value: JSONValue) -> (String, String) {
            func text(_ error: any Error) -> String {
                switch error as? DecodingError {
                case .keyNotFound(let key, let context)?:
                    "missing " + (context.codingPath + [key]).map(\.stringValue).joined(separator: ".")
                case .typeMismatch(_, let context)?: "mismatch " + context.codingPath.map(\.stringValue).joined(separator: ".")
                case .valueNotFound(_, let context)?: "null " + context.codingPath.map(\.stringValue).joined(separator: ".")
                default: "other"
                }
            }
            func failure(_ result: Result<Params, any Error>) -> String {
                if case .failure(let error) = result { text(error) } else { "" }
            }
            return (
                failure(Result { try JSONValueDecoder().decode(Params.self, from: value) }),
                failure(Result { try JSONDecoder().decode(Params.self, from: Data(JSONWriter.bytes(value))) })
            )
        }
        for bad: JSONValue in [
            [:], ["name": 5, "items": []], ["name": "x"], ["name": "x", "items": [1, "2"]], ["name": nil, "items": []],
        ] {
            let (direct, viaText) = describe(bad)
            #expect(direct == viaText && direct != "", "\(bad): \(direct) / \(viaText)")
        }
    }
}
