import Basics
import FoundationEssentials
import Glibc
import JSONRPC
import MediaHost

/// One connection to mpv's JSON IPC (`--input-ipc-server`): commands carry a `request_id` and
/// are answered by `{request_id, error, data}`; everything else mpv writes is an event
/// (`property-change`, `start-file`, `end-file`...). Every command has a deadline: an mpv that
/// is stopped (`kill -STOP`) or stuck fails the command instead of holding whoever asked.
final class MPVConnection: Sendable {
    private let peer: RPCPeer

    /// How long a command may take: mpv answers in milliseconds when it runs at all, but was
    /// seen taking seconds while it opened a stream on a machine busy with other work.
    static let commandTimeout: Duration = .seconds(10)

    static let wire = RPCPeer.Wire(
        request: { id, arguments in ["command": arguments, "request_id": JSONValue(id)] },
        answers: { message in message["event"] == nil ? message["request_id"]?.intValue : nil },
        outcome: { message in
            let error = message["error"]?.stringValue ?? "success"
            return error == "success" ? .success(message["data"] ?? .null) : .failure(HostError.player("mpv: \(error)"))
        })

    /// Connects to the socket at `path`; nil when no mpv answers there.
    init?(path: String, onEvent: @escaping @Sendable (JSONValue) -> Void, onClose: @escaping @Sendable () -> Void) {
        guard let fd = UnixSocket(path: path).connect() else { return nil }
        // mpv's lines are small; one that is not is not mpv.
        peer = RPCPeer(
            input: fd, output: fd, wire: Self.wire, maxMessageSize: 1 << 20, maxPendingOutput: 1 << 20, name: "mpv",
            gone: { _ in HostError.player("the player has stopped") }, onMessage: onEvent, onEnd: { _ in onClose() })
    }

    /// Runs an mpv command (`["set_property", "pause", true]`) and returns its `data`.
    /// - Throws: `HostError.player` with mpv's error, when mpv has gone, or when it does not
    ///   answer in time (`MPVNotAnswering`).
    @discardableResult
    func command(_ arguments: [JSONValue], timeout: Duration = commandTimeout) async throws -> JSONValue {
        do {
            return try await peer.request(.array(arguments), timeout: timeout)
        } catch is RPCPeer.Timeout {
            throw MPVNotAnswering()
        }
    }

    /// Sends a command without waiting for its answer.
    func send(_ arguments: [JSONValue]) {
        peer.send(["command": .array(arguments)])
    }

    /// Closes the connection (mpv keeps running).
    func close() { peer.close() }
}

/// mpv took longer than `MPVConnection.commandTimeout` to answer: it is stopped or stuck.
struct MPVNotAnswering: Error {}
