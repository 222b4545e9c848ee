import Basics
import Dispatch
import FoundationEssentials
import HostAPI
import HostWebLink
import HummingbirdWebSocket
import JSONRPC
import Logging
import NIOWebSocket
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One page's JSON-RPC session over its WebSocket: a connection to the service's socket, as
/// any front end's (every notification, cancellation, batches, the service's bounds on a client
/// that does not read), relayed to and from the WebSocket, one JSON text per message.
///
/// What a browser may call is checked here, before the host sees it: none of the desk's own
/// methods (`deskOnly`), and only those that change nothing for a read-only device.
struct WebBridge {
    let remote: WebRemote
    let device: WebDevice

    /// Methods a browser never calls, whatever its access: pairing itself, settings (one of
    /// them names the program `play` runs), logins, offering lists to the network, and files
    /// read or written by path on the desk.
    static let deskOnly: Set<String> = [
        "web.status", "web.pair", "web.link", "web.devices", "web.revoke", "config.set", "auth.login", "auth.logout",
        "sync.login", "sync.logout", "share.start", "share.stop", "share.receive", "lists.import", "lists.export",
    ]
    /// The error a refused method answers.
    static let refusedCode = -32040
    /// The largest message a page may send.
    static let maxMessage = 1 << 20
    /// The bridge's own answers (refusals) a page may leave unread.
    static let maxOwnReplies = 256

    /// Why `method` is refused to this device, if it is.
    func refusal(_ method: String, params: JSONValue? = nil) -> String? {
        // A method's name is said back at most 64 characters long: a refusal is no echo chamber.
        let named = method.count > 64 ? String(method.prefix(64)) + "…" : method
        if Self.deskOnly.contains(method) || method.hasPrefix("web.") {
            return "\(named) is done at the desk, not from a browser"
        }
        // Listing the inbox and leaving it as it is changes nothing.
        if method == NewList.method, params?["keep"] == true { return nil }
        if device.access == .read, method != RPCConnection.cancelMethod {
            guard let effect = remote.effects[method] else { return nil }  // unknown: the host says so
            if effect.access != .reads {
                return "this browser (\(device.name)) is paired read-only; pair it again with full access to use \(named)"
            }
        }
        return nil
    }

    /// What goes on to the host for one message from the page: the request (or batch) written
    /// again as one line, and the answers to what was refused or unreadable, sent back at once.
    /// For a batch, `replies` are its refused elements' answers: they join the host's answer
    /// to the rest (`Relay.merge`), so the batch is answered with one array.
    func screen(_ text: String) -> (forward: [UInt8]?, replies: [JSONValue], batch: Bool) {
        let value: JSONValue
        do {
            value = try JSONParser.parse(Array(text.utf8))
        } catch {
            return (nil, [Self.error(id: .null, code: RPCError.parseErrorCode, message: "\(error)")], false)
        }
        func check(_ message: JSONValue) -> JSONValue? {
            guard let method = message["method"]?.stringValue, let why = refusal(method, params: message["params"]) else {
                return nil
            }
            guard let id = message["id"] else { return .null }  // a notification: no answer
            return Self.error(id: id, code: Self.refusedCode, message: why)
        }
        switch value {
        case .array(let elements):
            guard !elements.isEmpty else {
                return (nil, [Self.error(id: .null, code: RPCError.invalidRequestCode, message: "empty batch")], false)
            }
            var kept: [JSONValue] = []
            var replies: [JSONValue] = []
            for element in elements {
                if let refused = check(element) {
                    if refused != .null { replies.append(refused) }
                } else {
                    kept.append(element)
                }
            }
            return (kept.isEmpty ? nil : JSONWriter.bytes(.array(kept)), replies, true)
        default:
            if let refused = check(value) { return (nil, refused == .null ? [] : [refused], false) }
            // Written again: a text with a raw newline between its tokens would be two lines.
            return (JSONWriter.bytes(value), [], false)
        }
    }

    static func error(id: JSONValue, code: Int, message: String) -> JSONValue {
        ["jsonrpc": "2.0", "id": id, "error": ["code": JSONValue(code), "message": .string(message)]]
    }

    /// Serves the page until either side ends.
    func run(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        guard let pageEnd = remote.service.connect() else {
            try? await outbound.close(.unexpectedServerError, reason: "the service does not answer")
            return
        }
        // The host's lines to the page, by a thread of its own: it waits for the page's socket
        // to take each (a page that does not read holds this thread, then the host's bounded
        // queue, never more memory).
        let relay = Relay(fd: pageEnd)
        let toPage = Task.detached {
            var open = true
            for await line in relay.lines() where open {
                do {
                    try await outbound.write(.text(line))
                } catch {
                    // The page is gone: what the host still says is read and dropped, so its
                    // connection can finish.
                    open = false
                }
            }
        }
        // The page's requests to the service, by a writer thread of its own: no task waits for
        // the service to read. While 1 MiB waits (the service reads no more from a page that
        // does not read its answers), the page is read no further: its own socket slows it.
        let toService = OutputQueue(fd: pageEnd, limit: 8 << 20, name: "web-to-service")
        do {
            reading: for try await message in inbound.messages(maxSize: Self.maxMessage) {
                guard case .text(let text) = message else {
                    relay.send(Self.error(id: .null, code: RPCError.invalidRequestCode, message: "send JSON text, not binary"))
                    continue
                }
                // Unpaired meanwhile: nothing more of it goes on, whatever its client does.
                guard remote.devices.device(id: device.id) != nil else { break }
                let (forward, replies, batch) = screen(text)
                if batch, !replies.isEmpty {
                    // The host answers the rest as an array, which the refusals join: when
                    // every element left is a request it answers by its own id, so that the
                    // array is known; else the refusals go as an array of their own.
                    let rest = forward.flatMap { try? JSONParser.parse($0) }?.arrayValue ?? []
                    let asking = rest.compactMap { $0["id"] }
                    let known =
                        !asking.isEmpty
                        && rest.allSatisfy { element in
                            element["method"]?.stringValue != nil
                                && (element["id"].map { $0.stringValue != nil || $0.intValue != nil } ?? true)
                        }
                    if known { relay.merge(replies, into: Set(asking)) } else { relay.send(.array(replies)) }
                } else {
                    for reply in replies { relay.send(reply) }
                }
                // A page that has the bridge answer it (refusals) without reading them is cut off.
                guard relay.waiting < Self.maxOwnReplies else { break }
                guard let forward else { continue }
                while toService.backlog > 1 << 20 {
                    guard toService.failed == nil else { break reading }
                    try await Task.sleep(for: .milliseconds(20))
                }
                guard toService.enqueue(forward + [0x0A], whenFull: .accept) else { break }
            }
        } catch {
            // Too large, or the page went: the socket is closed below either way.
            try? await outbound.close(.messageTooLarge, reason: "messages are at most \(Self.maxMessage >> 20) MiB")
        }
        // The service ends this connection at its EOF, once what it was doing is answered; the
        // relay then reads its EOF in turn.
        await toService.finish(within: .seconds(5))
        shutdown(pageEnd, Int32(SHUT_WR))
        await toPage.value
        close(pageEnd)
    }
}

/// Reads the host's lines from the page's end of the socket pair, and adds the bridge's own
/// answers (refusals) between them.
final class Relay: Sendable {
    let fd: Int32
    /// Lines, each with whether it came from the host (and took a place of `room`).
    private let continuation: AsyncStream<(String, Bool)>.Continuation
    private let stream: AsyncStream<(String, Bool)>

    init(fd: Int32) {
        self.fd = fd
        // The reading thread waits for each line to be taken (`bufferingNewest` would drop
        // answers): a semaphore per line keeps at most a few waiting here.
        (stream, continuation) = AsyncStream<(String, Bool)>.makeStream(bufferingPolicy: .unbounded)
        let continuation = continuation
        let room = DispatchSemaphore(value: 16)
        self.room = room
        detachThread(name: "web-relay") {
            // The host's newline framing, split as every connection of the project splits it.
            var splitter = MessageSplitter(maxMessageSize: 64 << 20)
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { break }
                chunk.withUnsafeBytes { splitter.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                while let event = splitter.next() {
                    guard case .message(let bytes, _) = event else { continue }
                    room.wait()
                    continuation.yield((String(decoding: bytes, as: UTF8.self), true))
                }
            }
            continuation.finish()
        }
    }
    private let room: DispatchSemaphore

    func lines() -> AsyncMapSequence<AsyncStream<(String, Bool)>, String> {
        let room = room
        return stream.map { [self] line, fromHost in
            guard fromHost else {
                own.withLock { $0 -= 1 }
                return line
            }
            room.signal()
            return merged(line)
        }
    }

    /// Answers of a batch's refused elements, waiting for the host's answer to the rest (the
    /// array whose ids are `ids`).
    private let merging = Mutex<[Set<JSONValue>: [JSONValue]]>([:])

    func merge(_ replies: [JSONValue], into ids: Set<JSONValue>) {
        merging.withLock { $0[ids, default: []] += replies }
    }

    /// `line` with the refused answers of its batch, if it is the host's answer to one.
    fileprivate func merged(_ line: String) -> String {
        guard line.hasPrefix("["), merging.withLock({ !$0.isEmpty }),
            let answers = (try? JSONParser.parse(Array(line.utf8)))?.arrayValue
        else { return line }
        let ids = Set(answers.compactMap { $0["id"] })
        guard let refused = merging.withLock({ $0.removeValue(forKey: ids) }) else { return line }
        return String(decoding: JSONWriter.bytes(.array(answers + refused)), as: UTF8.self)
    }

    /// The bridge's own answers not yet taken by the page.
    private let own = Mutex(0)
    var waiting: Int { own.withLock { $0 } }

    func send(_ message: JSONValue) {
        own.withLock { $0 += 1 }
        continuation.yield((String(decoding: JSONWriter.bytes(message), as: UTF8.self), false))
    }

}
