import Foundation
import JSONRPC
import Synchronization
import Testing

/// A handler with a fast method, a slow one and one that ignores cancellation.
final class ScriptedHandler: RPCHandler {
    let log = Mutex<[String]>([])
    func handle(method: String, params: JSONValue?) async -> Result<[UInt8], RPCError> {
        log.withLock { $0.append(method) }
        switch method {
        case "echo": return .success(JSONWriter.bytes(params ?? nil))
        case "slow":
            do { try await Task.sleep(for: .seconds(Double(params?["seconds"]?.doubleValue ?? 2))) } catch {
                return .failure(.requestCancelled)
            }
            return .success(Array("\"slow done\"".utf8))
        case "stubborn":
            // Ignores cancellation; the connection must still answer -32800.
            try? await Task.sleep(for: .seconds(2))
            return .success(Array("1".utf8))
        default: return .failure(.methodNotFound(method))
        }
    }
}

/// Runs an RPCConnection over pipes, as `mediahost rpc` runs over stdio.
final class PipeSession: @unchecked Sendable {
    let toServer = Pipe()
    let fromServer = Pipe()
    let finished: Task<Void, Never>
    let connection: RPCConnection
    private let received = ByteSink()

    init(handler: some RPCHandler, maxConcurrentRequests: Int = 1024) {
        let connection = RPCConnection(
            input: toServer.fileHandleForReading.fileDescriptor, output: fromServer.fileHandleForWriting.fileDescriptor,
            handler: handler, maxConcurrentRequests: maxConcurrentRequests)
        self.connection = connection
        finished = Task.detached { await connection.run() }
        // A thread that reads until the end and keeps the handle till then (a readabilityHandler's
        // dispatch source could outlive the handle closed at deinit and crash libdispatch).
        let reader = fromServer.fileHandleForReading
        let thread = Thread { [received] in
            Descriptor.readToEnd(reader.fileDescriptor) { chunk in received.bytes.withLock { $0.append(contentsOf: chunk) } }
        }
        thread.start()
    }

    func send(_ text: String) { Descriptor.writeAll(toServer.fileHandleForWriting.fileDescriptor, Array(text.utf8)) }
    func close() { try? toServer.fileHandleForWriting.close() }

    func raw() -> [UInt8] { received.bytes.withLock { $0 } }

    /// Lines received so far, parsed.
    func lines() -> [JSONValue] {
        let bytes = received.bytes.withLock { $0 }
        return bytes.split(separator: 0x0A).compactMap { try? JSONParser.parse(Array($0)) }
    }

    func waitForLines(_ count: Int, timeout: Duration = .seconds(30)) async -> [JSONValue] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let lines = lines()
            if lines.count >= count { return lines }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return lines()
    }
}

@Suite struct RPCConnectionTests {
    @Test func slowCallDoesNotDelayFastOne() async {
        let session = PipeSession(handler: ScriptedHandler())
        session.send(#"{"jsonrpc":"2.0","id":1,"method":"slow","params":{"seconds":1}}"# + "\n")
        session.send(#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{"x":1}}"# + "\n")
        let first = await session.waitForLines(1)
        #expect(first.first?["id"] == 2)
        let both = await session.waitForLines(2)
        #expect(both.last?["id"] == 1)
        #expect(both.last?["result"] == "slow done")
        session.close()
        await session.finished.value
    }

    @Test func cancelRequestAnswersRequestCancelled() async {
        let handler = ScriptedHandler()
        let session = PipeSession(handler: handler)
        session.send(#"{"jsonrpc":"2.0","id":"a","method":"slow","params":{"seconds":30}}"# + "\n")
        session.send(#"{"jsonrpc":"2.0","id":"b","method":"stubborn"}"# + "\n")
        // Cancelled once both are running (a cancel of a request not yet read is ignored).
        let deadline = ContinuousClock.now + .seconds(20)
        while handler.log.withLock({ $0.count < 2 }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        session.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"a"}}"# + "\n")
        session.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"b"}}"# + "\n")
        let lines = await session.waitForLines(2, timeout: .seconds(5))
        #expect(lines.count == 2)
        for line in lines { #expect(line["error"]?["code"] == -32800) }
        session.close()
        await session.finished.value
        #expect(session.lines().count == 2, "exactly one answer per request")
    }

    /// MCP's `notifications/cancelled {requestId}` cancels too, and the request is not answered.
    @Test func mcpCancellationCancelsWithoutAnAnswer() async {
        let handler = ScriptedHandler()
        let session = PipeSession(handler: handler)
        session.send(#"{"jsonrpc":"2.0","id":"a","method":"slow","params":{"seconds":30}}"# + "\n")
        let deadline = ContinuousClock.now + .seconds(20)
        while handler.log.withLock({ $0.isEmpty }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        session.send(#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","reason":"x"}}"# + "\n")
        session.send(#"{"jsonrpc":"2.0","id":"b","method":"slow","params":{"seconds":0}}"# + "\n")
        let lines = await session.waitForLines(1, timeout: .seconds(10))
        #expect(lines.first?["id"] == "b", "\(lines)")
        session.close()
        await session.finished.value
        #expect(session.lines().count == 1, "the cancelled request got no answer, and the slow one did not wait 30 s")
    }

    @Test func admissionLimitQueuesButAnswersEverything() async {
        let session = PipeSession(handler: ScriptedHandler(), maxConcurrentRequests: 4)
        for id in 0..<40 { session.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"slow","params":{"seconds":0.05}}"# + "\n") }
        let started = ContinuousClock.now
        let lines = await session.waitForLines(40)
        // 40 requests of 50 ms, at most 4 at a time: at least 10 rounds.
        #expect(ContinuousClock.now - started >= .milliseconds(400))
        #expect(Set(lines.compactMap { $0["id"]?.intValue }) == Set(0..<40))
        session.close()
        await session.finished.value
    }

    @Test func eofWaitsForRequestsInFlight() async {
        let session = PipeSession(handler: ScriptedHandler())
        session.send(#"{"jsonrpc":"2.0","id":7,"method":"slow","params":{"seconds":0.5}}"# + "\n")
        session.close()
        await session.finished.value
        let lines = await session.waitForLines(1, timeout: .seconds(2))
        #expect(lines.first?["id"] == 7)
        #expect(lines.first?["result"] == "slow done")
    }

    @Test func notificationsAreNeverAnswered() async {
        let handler = ScriptedHandler()
        let session = PipeSession(handler: handler)
        session.send(#"{"jsonrpc":"2.0","method":"echo","params":[1]}"# + "\n")
        session.send(#"{"jsonrpc":"2.0","method":"$/setTrace","params":{}}"# + "\n")
        session.send(#"{"jsonrpc":"2.0","id":1,"method":"echo"}"# + "\n")
        let lines = await session.waitForLines(1)
        session.close()
        await session.finished.value
        #expect(lines.count == 1 && lines[0]["id"] == 1)
        #expect(handler.log.withLock { $0 }.filter { $0 == "echo" }.count == 2)
    }

    /// A notification made before the client said anything (a download resumed at start) waits
    /// for the client's first message and goes out in its framing, before the reply.
    @Test func nothingIsSentBeforeTheClientsFirstMessage() async {
        let session = PipeSession(handler: ScriptedHandler())
        session.connection.notify(method: "downloads.state", params: ["id": "x", "state": "running"])
        try? await Task.sleep(for: .milliseconds(200))
        #expect(session.raw().isEmpty, "nothing before the client's first message")
        let body = #"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}"#
        session.send("Content-Length: \(body.utf8.count)\r\n\r\n" + body)
        let reply = #"{"jsonrpc":"2.0","id":1,"result":{"a":1}}"#
        let notification = #"{"jsonrpc":"2.0","method":"downloads.state","params":{"id":"x","state":"running"}}"#
        let expected =
            "Content-Length: \(notification.utf8.count)\r\n\r\n" + notification + "Content-Length: \(reply.utf8.count)\r\n\r\n"
            + reply
        let deadline = ContinuousClock.now + .seconds(30)
        while session.raw().count < expected.utf8.count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        #expect(String(decoding: session.raw(), as: UTF8.self) == expected)
        session.close()
        await session.finished.value
    }

    @Test func repliesMirrorContentLengthFraming() async {
        let session = PipeSession(handler: ScriptedHandler())
        let body = #"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":"é"}}"#
        session.send("Content-Length: \(body.utf8.count)\r\n\r\n" + body)
        try? await Task.sleep(for: .milliseconds(300))
        session.close()
        await session.finished.value
        try? await Task.sleep(for: .milliseconds(50))
        let text = String(decoding: session.raw(), as: UTF8.self)
        let reply = #"{"jsonrpc":"2.0","id":1,"result":{"a":"é"}}"#
        #expect(text == "Content-Length: \(reply.utf8.count)\r\n\r\n" + reply)
    }
}

final class ByteSink: Sendable {
    let bytes = Mutex<[UInt8]>([])
}
