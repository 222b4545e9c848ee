import Foundation
import JSONRPC
import Sandbox
import TestSupport
import Testing

/// Input meant to break the endpoint: each gets a JSON-RPC error, never a crash or a hang.
@Suite struct HostileInputTests {
    func stillServes(_ process: MediahostProcess, sourceLocation: SourceLocation = #_sourceLocation) async {
        process.sendLine(#"{"jsonrpc":"2.0","id":"alive","method":"host.info"}"#)
        // Earlier replies may still be on their way; the process is alive when "alive" is answered.
        while let message = await process.next(timeout: .seconds(20)) {
            if message.value?["id"] == "alive" { return }
        }
        Issue.record("the process stopped serving", sourceLocation: sourceLocation)
    }

    @Test func messagesOver16MiB() async throws {
        let process = try MediahostProcess(["rpc"])
        let padding = String(repeating: "a", count: 16 << 20)
        process.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"host.info","params":{"pad":"\#(padding)"}}"#)
        let reply = await process.next(timeout: .seconds(30))?.value
        #expect(reply?["error"]?["code"] == -32600)
        #expect(reply?["error"]?["message"]?.stringValue?.contains("16 MiB") == true)
        await stillServes(process)
        // The same with Content-Length framing: the body is skipped, not buffered.
        let body = Array(#"{"jsonrpc":"2.0","id":2,"method":"host.info","params":{"pad":"\#(padding)"}}"#.utf8)
        process.send(Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body)
        #expect(await process.next(timeout: .seconds(30))?.value?["error"]?["code"] == -32600)
        process.send(Framing.contentLength.frame(Array(#"{"jsonrpc":"2.0","id":3,"method":"host.info"}"#.utf8)))
        #expect(await process.next(timeout: .seconds(10))?.value?["id"] == 3)
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    @Test func invalidUTF8() async throws {
        let process = try MediahostProcess(["rpc"])
        var bytes = Array(#"{"jsonrpc":"2.0","id":1,"method":"media.search","params":{"query":"x"#.utf8)
        bytes += [0xFF, 0xFE, 0xC0, 0xAF]
        bytes += Array(#""}}"#.utf8) + [0x0A]
        process.send(bytes)
        let reply = await process.next()?.value
        #expect(reply?["error"]?["code"] == -32700)
        #expect(reply?["id"] == .null)
        await stillServes(process)
    }

    @Test func nesting10000Levels() async throws {
        let process = try MediahostProcess(["rpc"])
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        process.sendLine(deep)
        #expect(await process.next()?.value?["error"]?["code"] == -32700)
        let deepParams =
            #"{"jsonrpc":"2.0","id":1,"method":"host.info","params":{"a":"# + String(repeating: "{\"a\":", count: 10_000)
            + "1" + String(repeating: "}", count: 10_001) + "}"
        process.sendLine(deepParams)
        #expect(await process.next()?.value?["error"]?["code"] == -32700)
        await stillServes(process)
    }

    @Test func wrongParamTypes() async throws {
        let process = try MediahostProcess(["rpc"])
        let cases = [
            #"{"jsonrpc":"2.0","id":1,"method":"favorites.list","params":{"limit":"50"}}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"favorites.add","params":{"id":42}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"media.search","params":{"query":["a"]}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"history.clear","params":{"provider":{"x":1}}}"#,
            #"{"jsonrpc":"2.0","id":5,"method":"config.set","params":{"key":true}}"#,
            #"{"jsonrpc":"2.0","id":6,"method":"media.get","params":{"id":"x:y"}}"#,
            #"{"jsonrpc":"2.0","id":7,"method":"favorites.list","params":"nope"}"#,
        ]
        for text in cases { process.sendLine(text) }
        let replies = await process.messages(cases.count)
        #expect(replies.count == cases.count)
        for reply in replies {
            let expected: JSONValue = reply["id"] == 7 ? -32600 : -32602
            #expect(reply["error"]?["code"] == expected, "\(reply)")
        }
        await stillServes(process)
    }

    @Test func tenThousandRandomByteStrings() async throws {
        let process = try MediahostProcess(["rpc"])
        var random = SplitMix64(seed: 0x6D65_6469_6168_6F73)
        var sent = 0
        var batch: [UInt8] = []
        for _ in 0..<10_000 {
            let length = Int.random(in: 1...200, using: &random)
            var line = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }.filter { $0 != 0x0A && $0 != 0x0D }
            // Whitespace-only lines are blank lines, not messages; a leading header name would switch framing.
            if line.allSatisfy({ [0x20, 0x09].contains($0) }) || line.isEmpty { line = [0x7B] }
            if let first = line.first, first == 0x43 || first == 0x63 { line[0] = 0x7B }
            batch += line + [0x0A]
            sent += 1
            if batch.count > 1 << 16 {
                process.send(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        process.send(batch)
        let replies = await process.messages(sent, timeout: .seconds(30))
        #expect(replies.count == sent, "every line gets exactly one reply")
        #expect(replies.allSatisfy { $0["error"]?["code"] == -32700 || $0["error"]?["code"] == -32600 })
        await stillServes(process)
    }

    @Test func tenThousandMutatedRequests() async throws {
        let process = try MediahostProcess(["rpc"])
        var random = SplitMix64(seed: 42)
        let templates = [
            #"{"jsonrpc":"2.0","id":ID,"method":"host.info"}"#,
            #"{"jsonrpc":"2.0","id":ID,"method":"favorites.list","params":{"limit":5}}"#,
            #"{"jsonrpc":"2.0","id":ID,"method":"history.list","params":{}}"#,
            #"{"jsonrpc":"2.0","id":ID,"method":"config.get","params":{"key":"log.level"}}"#,
            #"[{"jsonrpc":"2.0","id":ID,"method":"providers.list"},{"jsonrpc":"2.0","method":"host.info"}]"#,
            #"{"jsonrpc":"2.0","id":ID,"method":"media.get","params":{"id":"podcasts:episode:1"}}"#,
        ]
        let interesting: [UInt8] = Array("{}[]\",:0123456789.-eE\\u nulltruefalse\u{7F}".utf8) + [0x00, 0xC3, 0xFF]
        var expectedIDs = Set<Int>()
        var lineByID: [Int: String] = [:]
        var batch: [UInt8] = []
        for n in 0..<10_000 {
            var bytes = Array(templates[n % templates.count].replacingOccurrences(of: "ID", with: String(1_000_000 + n)).utf8)
            for _ in 0..<Int.random(in: 1...2, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[position] = interesting.randomElement(using: &random)!
                case 1: bytes.remove(at: position)
                case 2: bytes.insert(interesting.randomElement(using: &random)!, at: position)
                default: bytes = Array(bytes.prefix(position + 1))
                }
                if bytes.isEmpty { bytes = [0x7B] }
            }
            bytes = bytes.filter { $0 != 0x0A && $0 != 0x0D }
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { bytes = [0x7B] }
            if bytes.first == 0x43 || bytes.first == 0x63 { bytes[0] = 0x7B }
            // A line that is still a valid request with our id must be answered with that id.
            // Foundation's parser is the oracle, less its leniency for trailing commas (RFC 8259 has none).
            let text = String(decoding: bytes, as: UTF8.self)
            if text.range(of: #",\s*[}\]]"#, options: .regularExpression) == nil,
                let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                let id = object["id"] as? Int, id >= 1_000_000, object["method"] is String,
                object["jsonrpc"] as? String == "2.0"
            {
                expectedIDs.insert(id)
                lineByID[id] = String(decoding: bytes, as: UTF8.self)
            }
            batch += bytes + [0x0A]
            if batch.count > 1 << 16 {
                process.send(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        process.send(batch)
        var answered = Set<Int>()
        var replies = 0
        // Replies come in any order; the stream goes quiet once every request is answered.
        while let message = await process.next(timeout: .seconds(3)) {
            guard let value = message.value else {
                Issue.record("a reply is not JSON")
                break
            }
            replies += 1
            for reply in value.arrayValue ?? [value] {
                #expect(reply["jsonrpc"] == "2.0")
                #expect((reply["result"] == nil) != (reply["error"] == nil), "exactly one of result and error")
                if let id = reply["id"]?.intValue { answered.insert(id) }
            }
        }
        let unanswered = expectedIDs.subtracting(answered).sorted().prefix(5).map { lineByID[$0] ?? "" }
        #expect(unanswered.isEmpty, "unanswered: \(unanswered)")
        #expect(replies <= 10_000, "never more than one reply per message")
        #expect(expectedIDs.count > 1000, "the corpus keeps enough valid requests to mean something")
        #expect(answered.count >= expectedIDs.count)
        await stillServes(process)
    }
}

/// Framing as clients really mix it: each reply in its request's framing, no request lost or
/// answered twice, whatever comes before or after a broken header.
@Suite struct FramingEndToEndTests {
    func request(_ id: Int) -> String { #"{"jsonrpc":"2.0","id":\#(id),"method":"host.info"}"# }

    @Test func repliesFollowEachRequestsFraming() async throws {
        let process = try MediahostProcess(["rpc"])
        var expected: [Int: Framing] = [:]
        for id in 1...500 {
            if id % 2 == 0 {
                process.send(Framing.contentLength.frame(Array(request(id).utf8)))
                expected[id] = .contentLength
            } else {
                process.sendLine(request(id))
                expected[id] = .newline
            }
        }
        var wrong = 0
        var seen = Set<Int>()
        for _ in 1...500 {
            guard let message = await process.next(timeout: .seconds(20)), let id = message.value?["id"]?.intValue else { break }
            seen.insert(id)
            if expected[id] != message.framing { wrong += 1 }
        }
        #expect(seen.count == 500)
        #expect(wrong == 0, "\(wrong) replies in the other framing")
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    @Test func requestsAfterAContentLengthWithoutBodyAreAnsweredAtEOF() async throws {
        let process = try MediahostProcess(["rpc"])
        // The length promises more than ever comes: at EOF the message is reported as cut short
        // and the requests inside it are still answered.
        process.send("Content-Length: 200\r\n\r\n" + request(1) + "\n" + request(2) + "\n")
        process.closeInput()
        let replies = await process.messages(3)
        #expect(replies.contains { $0["error"]?["code"] == -32700 })
        #expect(Set(replies.compactMap { $0["id"]?.intValue }) == [1, 2], "\(replies)")
        #expect(await process.waitForExit() == 0)
    }

    @Test func aHeaderWithoutBlankLineLosesNoRequest() async throws {
        let process = try MediahostProcess(["rpc"])
        process.send("Content-Length: 60\n" + request(1) + "\n" + request(2) + "\n")
        let replies = await process.messages(3)
        #expect(Set(replies.compactMap { $0["id"]?.intValue }) == [1, 2], "\(replies)")
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    @Test func anOverlongHeaderBlockDropsNoFollowingRequest() async throws {
        let process = try MediahostProcess(["rpc"])
        process.send(
            "Content-Length: 5\r\n" + String(repeating: "X-Padding: 0123456789012345678901234567890123456789\r\n", count: 300))
        process.send("\r\nhello")
        process.sendLine(request(7))
        let replies = await process.messages(2)
        #expect(replies.first?["error"]?["code"] == -32700)
        #expect(replies.contains { $0["id"] == 7 && $0["result"] != nil }, "\(replies)")
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    @Test func aNegativeLengthCostsItsBodyOnly() async throws {
        let process = try MediahostProcess(["rpc"])
        process.send("Content-Length: -5\r\n\r\n" + #"{"jsonrpc":"2.0","id":"body","method":"host.info"}"#)
        process.sendLine(request(8))
        let replies = await process.messages(2)
        #expect(replies.first?["error"]?["code"] == -32700)
        #expect(!replies.contains { $0["id"] == "body" }, "the broken message's body must not run: \(replies)")
        #expect(replies.contains { $0["id"] == 8 })
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    @Test func aLastLineWithoutNewlineIsAnswered() async throws {
        let process = try MediahostProcess(["rpc"])
        process.send(request(9))
        process.closeInput()
        #expect(await process.next()?.value?["id"] == 9)
        #expect(await process.waitForExit() == 0)
    }
}
