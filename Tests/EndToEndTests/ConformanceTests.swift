import Foundation
import JSONRPC
import TestSupport
import Testing

/// The JSON-RPC 2.0 specification's examples (section 7), against the real `mediahost rpc`
/// process, in both framings. The spec's methods (subtract, sum, ...) do not exist here, so
/// they answer -32601; our own methods stand in where the spec expects a result.
@Suite struct ConformanceTests {
    static let framings: [Framing] = [.newline, .contentLength]

    func frame(_ text: String, _ framing: Framing) -> [UInt8] { framing.frame(Array(text.utf8)) }

    /// Sends one message and returns the replies it caused (none for notifications), checking
    /// that replies use the client's framing.
    func exchange(_ process: MediahostProcess, _ text: String, _ framing: Framing, expect count: Int) async throws -> [JSONValue]
    {
        process.send(frame(text, framing))
        // A sentinel request proves that nothing else was sent in between.
        process.send(frame(#"{"jsonrpc":"2.0","id":"sentinel","method":"host.info"}"#, framing))
        // Replies may arrive in any order: collect until the sentinel and `count` replies are in,
        // then listen a little longer for anything extra.
        var replies: [JSONValue] = []
        var sentinelSeen = false
        var quiet: Duration = .seconds(30)
        while let message = await process.next(timeout: quiet) {
            #expect(message.framing == framing)
            guard let value = message.value else {
                Issue.record("reply is not JSON: \(String(decoding: message.raw, as: UTF8.self))")
                break
            }
            if value["id"] == "sentinel" { sentinelSeen = true } else { replies.append(value) }
            if sentinelSeen && replies.count >= count { quiet = .milliseconds(50) }
        }
        #expect(sentinelSeen, "no answer to the sentinel after \(text): \(process.errors)")
        // What follows indexes the replies: one missing must fail this test, not crash the run.
        try #require(replies.count == count, "\(text) -> \(replies)")
        return replies
    }

    @Test(arguments: framings)
    func specificationExamples(framing: Framing) async throws {
        let process = try MediahostProcess(["rpc"])
        defer { process.closeInput() }

        // rpc call with positional parameters: our methods take named params.
        var r = try await exchange(process, #"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#, framing, expect: 1)
        #expect(r[0] == ["jsonrpc": "2.0", "id": 1, "error": r[0]["error"]!])
        #expect(r[0]["error"]?["code"] == -32601)
        r = try await exchange(process, #"{"jsonrpc":"2.0","method":"host.info","params":[42,23],"id":2}"#, framing, expect: 1)
        #expect(r[0]["error"]?["code"] == -32602)
        #expect(r[0]["id"] == 2)

        // rpc call with named parameters.
        r = try await exchange(
            process, #"{"jsonrpc":"2.0","method":"config.get","params":{"key":"log.level"},"id":3}"#, framing, expect: 1)
        #expect(r[0]["result"]?.arrayValue?.first?["key"] == "log.level")
        #expect(r[0]["id"] == 3)
        #expect(r[0]["error"] == nil)

        // `"params": null` is no params, as LSP servers take it (Emacs's jsonrpc.el sends it on
        // calls without params); other non-structured params stay invalid.
        r = try await exchange(
            process, #"{"jsonrpc":"2.0","method":"providers.list","params":null,"id":"eglot"}"#, framing, expect: 1)
        #expect(r[0]["result"]?.arrayValue?.isEmpty == false, "\(r)")
        r = try await exchange(process, #"{"jsonrpc":"2.0","method":"host.info","params":"x","id":"str"}"#, framing, expect: 1)
        #expect(r[0]["error"]?["code"] == -32600)

        // Ids of every allowed type are echoed exactly.
        r = try await exchange(process, #"{"jsonrpc":"2.0","method":"host.info","id":"abc"}"#, framing, expect: 1)
        #expect(r[0]["id"] == "abc")
        r = try await exchange(process, #"{"jsonrpc":"2.0","method":"host.info","id":12345678901234567890}"#, framing, expect: 1)
        #expect(r[0]["id"] == .number("12345678901234567890"))
        r = try await exchange(process, #"{"jsonrpc":"2.0","method":"host.info","id":null}"#, framing, expect: 1)
        #expect(r[0]["id"] == .null)
        #expect(r[0]["result"] != nil)

        // Notifications.
        _ = try await exchange(process, #"{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}"#, framing, expect: 0)
        _ = try await exchange(process, #"{"jsonrpc":"2.0","method":"foobar"}"#, framing, expect: 0)
        _ = try await exchange(process, #"{"jsonrpc":"2.0","method":"host.info"}"#, framing, expect: 0)

        // rpc call of non-existent method.
        r = try await exchange(process, #"{"jsonrpc":"2.0","method":"foobar","id":"1"}"#, framing, expect: 1)
        #expect(r[0]["error"]?["code"] == -32601)
        #expect(r[0]["id"] == "1")

        // rpc call with invalid JSON.
        r = try await exchange(process, #"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#, framing, expect: 1)
        #expect(r[0]["error"]?["code"] == -32700)
        #expect(r[0]["id"] == .null)

        // rpc call with invalid Request object.
        r = try await exchange(process, #"{"jsonrpc":"2.0","method":1,"params":"bar"}"#, framing, expect: 1)
        #expect(r[0]["error"]?["code"] == -32600)
        #expect(r[0]["id"] == .null)
        r = try await exchange(process, #"{"jsonrpc":"1.0","method":"host.info","id":9}"#, framing, expect: 1)
        #expect(r[0]["error"]?["code"] == -32600)
        #expect(r[0]["id"] == 9)
        r = try await exchange(process, #"{"jsonrpc":"2.0","method":"host.info","id":{"a":1}}"#, framing, expect: 1)
        #expect(r[0]["error"]?["code"] == -32600)
        #expect(r[0]["id"] == .null)

        // rpc call Batch, invalid JSON.
        r = try await exchange(
            process, #"[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method""#, framing, expect: 1
        )
        #expect(r[0]["error"]?["code"] == -32700)

        // rpc call with an empty Array: one error object, never an empty array.
        r = try await exchange(process, "[]", framing, expect: 1)
        #expect(r[0]["error"]?["code"] == -32600)
        #expect(r[0]["id"] == .null)

        // rpc call with an invalid Batch (but not empty).
        r = try await exchange(process, "[1]", framing, expect: 1)
        #expect(r[0].arrayValue?.count == 1)
        #expect(r[0].arrayValue?.first?["error"]?["code"] == -32600)

        // rpc call with invalid Batch.
        r = try await exchange(process, "[1,2,3]", framing, expect: 1)
        #expect(r[0].arrayValue?.count == 3)
        #expect(r[0].arrayValue?.allSatisfy { $0["error"]?["code"] == -32600 && $0["id"] == .null } == true)

        // rpc call Batch: results, errors and notifications mixed.
        r = try await exchange(
            process,
            """
            [{"jsonrpc":"2.0","method":"host.info","id":"1"},
             {"jsonrpc":"2.0","method":"notify_hello","params":[7]},
             {"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":"2"},
             {"foo":"boo"},
             {"jsonrpc":"2.0","method":"foo.get","params":{"name":"myself"},"id":"5"},
             {"jsonrpc":"2.0","method":"get_data","id":"9"}]
            """.replacingOccurrences(of: "\n", with: ""), framing, expect: 1)
        let batch = r[0].arrayValue ?? []
        #expect(batch.count == 5)
        let byID = Dictionary(batch.map { ($0["id"]?.jsonString ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byID["\"1\""]?["result"]?["name"] == "mediahost")
        #expect(byID["\"2\""]?["error"]?["code"] == -32601)
        #expect(byID["null"]?["error"]?["code"] == -32600)
        #expect(byID["\"5\""]?["error"]?["code"] == -32601)
        #expect(byID["\"9\""]?["error"]?["code"] == -32601)

        // rpc call Batch (all notifications): nothing at all.
        _ = try await exchange(
            process,
            #"[{"jsonrpc":"2.0","method":"notify_sum","params":[1,2,4]},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]"#,
            framing, expect: 0)

        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    @Test func cancelRequestForAnUnknownIDIsHarmless() async throws {
        let process = try MediahostProcess(["rpc"])
        process.sendLine(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":42}}"#)
        process.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"host.info"}"#)
        let replies = await process.messages(1)
        #expect(replies.first?["id"] == 1)
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    @Test func eofAnswersEverythingThenExitsZero() async throws {
        let process = try MediahostProcess(["rpc"])
        for id in 1...200 { process.sendLine(#"{"jsonrpc":"2.0","id":\#(id),"method":"favorites.list"}"#) }
        process.closeInput()
        let replies = await process.messages(200)
        #expect(Set(replies.compactMap { $0["id"]?.intValue }) == Set(1...200))
        #expect(replies.allSatisfy { $0["result"]?["items"] == [] })
        #expect(await process.next(timeout: .milliseconds(300)) == nil, "exactly one reply per request")
        #expect(await process.waitForExit() == 0)
    }
}
