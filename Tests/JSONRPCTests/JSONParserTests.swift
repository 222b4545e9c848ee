import Foundation
import JSONRPC
import Testing

@Suite struct JSONParserTests {
    func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    @Test func parsesEveryType() throws {
        let value = try parse(#" {"a": [1, -2.5e3, true, false, null, "x\n\u00e9\ud83d\ude00"], "b": {}} "#)
        #expect(value["a"] == [.number("1"), .number("-2.5e3"), true, false, nil, .string("x\né😀")])
        #expect(value["b"] == .object([:]))
    }

    @Test func keepsNumberLiterals() throws {
        #expect(try parse("12345678901234567890123") == .number("12345678901234567890123"))
        #expect(try parse("1.50") == .number("1.50"))
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "+1", ".5", "1e", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"",
        "\"a\u{01}b\"", "[1 2]", "{\"a\" 1}", "{1:2}", "1 2", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "NaN",
    ])
    func rejectsInvalidJSON(text: String) {
        #expect(throws: JSONParseError.self) { try parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22],
        ] {
            #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes) }
        }
    }

    @Test func refusesDeepNestingWithoutCrashing() throws {
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        #expect(throws: JSONParseError.self) { try parse(deep) }
        let deepObject = String(repeating: "{\"a\":", count: 10_000) + "1" + String(repeating: "}", count: 10_000)
        #expect(throws: JSONParseError.self) { try parse(deepObject) }
        let ok = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect(try parse(ok).arrayValue != nil)
    }

    @Test func writerEscapesAndRoundTrips() throws {
        let value: JSONValue = ["s": "quote\" back\\ nl\n tab\t bell\u{07} é 😀", "n": .number("-0.5"), "a": [nil, true]]
        let text = value.jsonString
        #expect(!text.contains("\n"))
        #expect(text.contains("\\u0007"))
        #expect(try parse(text) == value)
        let foundation = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        #expect(foundation?["s"] as? String == "quote\" back\\ nl\n tab\t bell\u{07} é 😀")
    }

    @Test func prettyPrinting() throws {
        let value: JSONValue = ["b": [1, ["c": nil]], "a": [], "e": [:]]
        let text = JSONWriter.pretty(value)
        #expect(text == "{\n  \"a\": [],\n  \"b\": [\n    1,\n    {\n      \"c\": null\n    }\n  ],\n  \"e\": {}\n}")
        #expect(try JSONValue(parsing: text) == value)
    }

    @Test func writerSortsKeys() {
        #expect(JSONValue.object(["b": 1, "a": 2]).jsonString == #"{"a":2,"b":1}"#)
    }
}

@Suite struct MessageSplitterTests {
    func events(_ chunks: [String], max: Int = 1 << 20) -> [MessageSplitter.Event] {
        var splitter = MessageSplitter(maxMessageSize: max)
        var events: [MessageSplitter.Event] = []
        for chunk in chunks {
            splitter.append(Array(chunk.utf8))
            while let event = splitter.next() { events.append(event) }
        }
        return events
    }

    func message(_ text: String, _ framing: Framing) -> MessageSplitter.Event { .message(Array(text.utf8), framing) }

    @Test func splitsLines() {
        #expect(
            events(["{\"a\":1}\n{\"b\"", ":2}\r\n\n  \n[3]\n"]) == [
                message("{\"a\":1}", .newline), message("{\"b\":2}", .newline), message("[3]", .newline),
            ])
    }

    @Test func readsContentLengthFramesSplitAnywhere() {
        let body = #"{"jsonrpc":"2.0","id":1,"method":"host.info"}"#
        let framed =
            "Content-Length: \(body.utf8.count)\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n\(body)"
        let whole = framed + framed
        for cut in [1, 5, 16, 20, framed.count - 3, framed.count + 7] {
            let a = String(whole.prefix(cut))
            let b = String(whole.dropFirst(cut))
            #expect(events([a, b]) == [message(body, .contentLength), message(body, .contentLength)], "cut at \(cut)")
        }
    }

    @Test func headerNamesAreCaseInsensitiveAndMixedFramingWorks() {
        #expect(events(["content-length: 2\r\n\r\n{}", "[1]\n"]) == [message("{}", .contentLength), message("[1]", .newline)])
    }

    @Test func bodyMayContainNewlines() {
        let body = "{\n\"a\": 1\n}"
        #expect(events(["Content-Length: \(body.utf8.count)\r\n\r\n\(body)"]) == [message(body, .contentLength)])
    }

    @Test func oversizeLinesAreSkippedOnce() {
        let big = String(repeating: "x", count: 3000)
        #expect(
            events([big.prefix(1500) + "", big.suffix(1500) + "\n{}\n"], max: 1000) == [
                .tooLarge(.newline), message("{}", .newline),
            ])
    }

    @Test func oversizeContentLengthIsSkipped() {
        let big = String(repeating: "x", count: 3000)
        #expect(
            events(["Content-Length: 3000\r\n\r\n" + big + "Content-Length: 2\r\n\r\n{}"], max: 1000) == [
                .tooLarge(.contentLength), message("{}", .contentLength),
            ])
    }

    @Test func aBadLengthCostsItsBodyNotTheNextMessage() {
        // The body of a message whose length is unreadable belongs to it: skipped, not run.
        #expect(
            events(["Content-Length: -5\r\n\r\n{\"a\":\"}\"}", "\n[2]\n"]) == [
                .badHeader("invalid Content-Length '-5'"), message("[2]", .newline),
            ])
        #expect(events(["Content-Length: abc\r\n\r\n{}\n"]) == [.badHeader("invalid Content-Length 'abc'")])
        // A broken header followed at once by a good framed message keeps the good one.
        #expect(
            events(["Content-Type: x\r\n\r\nContent-Length: 2\r\n\r\n{}"]) == [
                .badHeader("missing Content-Length"), message("{}", .contentLength),
            ])
    }

    @Test func aHeaderWithoutItsBlankLineGivesBackTheLinesAfterIt() {
        #expect(
            events(["Content-Length: 60\n{\"a\":1}\n{\"b\":2}\n"]) == [
                .badHeader("a Content-Length header must be followed by a blank line, then the message"),
                message("{\"a\":1}", .newline), message("{\"b\":2}", .newline),
            ])
    }

    @Test func anOverlongHeaderBlockDropsNoFollowingLine() {
        let block =
            "Content-Length: 5\r\n"
            + String(repeating: "X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", count: 200)
        let result = events([block, "\r\nhello", "{\"after\":1}\n"])
        #expect(result.first == .badHeader("header block larger than 8 KiB"))
        #expect(result.last == message("{\"after\":1}", .newline))
    }

    @Test func aHugeMessageDoesNotStayReserved() {
        var splitter = MessageSplitter()
        splitter.append(Array(("{\"pad\":\"" + String(repeating: "x", count: 8 << 20) + "\"}\n").utf8))
        while splitter.next() != nil {}
        #expect(splitter.reservedBytes > 8 << 20)
        splitter.append(Array("[1]\n".utf8))
        #expect(splitter.next() == message("[1]", .newline))
        #expect(splitter.reservedBytes < 1 << 20)
    }

    @Test func theEndOfInputLosesNoRequest() {
        var splitter = MessageSplitter()
        splitter.append(Array("{\"a\":1}\n{\"last\":true}".utf8))
        var events: [MessageSplitter.Event] = []
        while let event = splitter.next() { events.append(event) }
        events += splitter.finish()
        #expect(events == [message("{\"a\":1}", .newline), message("{\"last\":true}", .newline)])

        var cut = MessageSplitter()
        cut.append(Array("Content-Length: 60\r\n\r\n{\"x\":1}\n{\"y\":2}\n".utf8))
        var after: [MessageSplitter.Event] = []
        while let event = cut.next() { after.append(event) }
        #expect(after.isEmpty, "60 bytes have not arrived yet")
        after += cut.finish()
        #expect(
            after == [
                .badHeader("the input ended inside a Content-Length message"), message("{\"x\":1}", .newline),
                message("{\"y\":2}", .newline),
            ])
    }
}
