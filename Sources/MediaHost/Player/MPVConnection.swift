import Foundation
import JSONRPC

/// One connection to mpv's JSON IPC (`--input-ipc-server`): commands carry a `request_id` and
/// are answered by `{request_id, error, data}`; everything else mpv writes is an event
/// (`property-change`, `start-file`, `end-file`...).
final class MPVConnection: Sendable {
    private let connection: JSONLineConnection

    static let wire = JSONLineConnection.Wire(
        request: { id, arguments in ["command": arguments, "request_id": JSONValue(id)] },
        answers: { message in message["event"] == nil ? message["request_id"]?.intValue : nil },
        outcome: { message in
            let error = message["error"]?.stringValue ?? "success"
            return error == "success" ? .success(message["data"] ?? .null) : .failure(HostError.player("mpv: \(error)"))
        },
        gone: { HostError.player("the player has stopped") })

    /// Connects to the socket at `path`; nil when no mpv answers there.
    init?(path: String, onEvent: @escaping @Sendable (JSONValue) -> Void, onClose: @escaping @Sendable () -> Void) {
        guard let fd = ServiceSocket(path: path).connect() else { return nil }
        // mpv's lines are small; one that is not is not mpv.
        connection = JSONLineConnection(fd: fd, wire: Self.wire, maxLine: 1 << 20, onEvent: onEvent, onClose: onClose)
    }

    /// Runs an mpv command (`["set_property", "pause", true]`) and returns its `data`.
    /// - Throws: `HostError.player` with mpv's error, or when mpv has gone.
    @discardableResult
    func command(_ arguments: [JSONValue]) async throws -> JSONValue {
        try await connection.request(.array(arguments))
    }

    /// Sends a command without waiting for its answer.
    func send(_ arguments: [JSONValue]) {
        connection.send(["command": .array(arguments)])
    }

    /// Closes the connection (mpv keeps running).
    func close() { connection.close() }
}
