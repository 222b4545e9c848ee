import CDBus
import MediaKit
import Synchronization

/// An MPRIS2 player on the session bus (CDBus: sd-bus on a thread of its own). Commands from the
/// bus arrive in `commands`, in order.
final class MPRISPlayer: Sendable {
    /// A method called on the player, or its Volume set.
    enum Command: Equatable, Sendable {
        case playPause, play, pause, stop, next, previous
        /// By this many seconds (negative: back).
        case seek(Double)
        /// To this many seconds in, if the track is still `track`.
        case setPosition(track: String, seconds: Double)
        /// 0.0-1.0 (and above, up to the player's most).
        case volume(Double)
    }

    /// What the player's properties say.
    struct State: Equatable, Sendable {
        enum Playback: String, Sendable { case playing = "Playing", paused = "Paused", stopped = "Stopped" }
        var playback: Playback = .stopped
        var trackID: String?
        var title = ""
        var artist = ""
        var album = ""
        var artURL = ""
        var url = ""
        /// Seconds; nil when not known.
        var length: Double?
        var position: Double = 0
        /// 0.0-1.0; nil when not known.
        var volume: Double?
        var canGoNext = false
        var canGoPrevious = false
        var canSeek = false
        var canPlay = false
        var canPause = false
    }

    /// The bus name taken (`org.mpris.MediaPlayer2.mediahost`, or `….instance<pid>` when that was
    /// taken by another process).
    let name: String
    let commands: AsyncStream<Command>
    private let handle: Mutex<OpaquePointer?>
    private let sink: Unmanaged<CommandSink>

    /// Connects and serves; throws with the reason when there is no session bus or no sd-bus.
    init(name: String, identity: String) throws(SessionBusError) {
        let (commands, continuation) = AsyncStream.makeStream(of: Command.self)
        let sink = Unmanaged.passRetained(CommandSink(continuation))
        var taken = [CChar](repeating: 0, count: 256)
        var error = [CChar](repeating: 0, count: 256)
        let callback: mh_mpris_command = { context, command, offset, number, text in
            guard let context, let command else { return }
            let sink = Unmanaged<CommandSink>.fromOpaque(context).takeUnretainedValue()
            sink.received(String(cString: command), offset: offset, number: number, text: text.map { String(cString: $0) } ?? "")
        }
        guard
            let player = mh_mpris_start(
                name, identity, callback, sink.toOpaque(), &taken, taken.count, &error, error.count)
        else {
            sink.release()
            throw SessionBusError(reason: String(nulTerminated: error))
        }
        self.name = String(nulTerminated: taken)
        self.commands = commands
        self.sink = sink
        handle = Mutex(player)
    }

    func update(_ state: State) {
        handle.withLock { player in
            guard let player else { return }
            state.trackID.withOptionalCString { track in
                var raw = mh_mpris_state()
                raw.length_us = state.length.map { Self.microseconds($0) } ?? 0
                raw.position_us = Self.microseconds(state.position)
                raw.volume = state.volume ?? -1
                raw.can_go_next = state.canGoNext ? 1 : 0
                raw.can_go_previous = state.canGoPrevious ? 1 : 0
                raw.can_seek = state.canSeek ? 1 : 0
                raw.can_play = state.canPlay ? 1 : 0
                raw.can_pause = state.canPause ? 1 : 0
                raw.track_id = track
                state.playback.rawValue.withCString {
                    raw.status = $0
                    state.title.withCString {
                        raw.title = $0
                        state.artist.withCString {
                            raw.artist = $0
                            state.album.withCString {
                                raw.album = $0
                                state.artURL.withCString {
                                    raw.art_url = $0
                                    state.url.withCString {
                                        raw.url = $0
                                        mh_mpris_update(player, &raw)
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Says that the position jumped (a seek).
    func seeked(to seconds: Double) {
        handle.withLock { player in
            if let player { mh_mpris_seeked(player, Self.microseconds(seconds)) }
        }
    }

    /// Leaves the bus.
    func stop() {
        handle.withLock { player in
            if let player { mh_mpris_stop(player) }
            player = nil
        }
        sink.takeUnretainedValue().finish()
    }

    deinit {
        stop()
        sink.release()
    }

    static func microseconds(_ seconds: Double) -> Int64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return seconds >= 9e12 ? Int64(9e18) : Int64(seconds * 1_000_000)
    }
}

/// Where the bus's thread hands commands on.
private final class CommandSink: Sendable {
    private let continuation: AsyncStream<MPRISPlayer.Command>.Continuation

    init(_ continuation: AsyncStream<MPRISPlayer.Command>.Continuation) { self.continuation = continuation }

    func received(_ command: String, offset: Int64, number: Double, text: String) {
        let seconds = Double(offset) / 1_000_000
        let parsed: MPRISPlayer.Command? =
            switch command {
            case "PlayPause": .playPause
            case "Play": .play
            case "Pause": .pause
            case "Stop": .stop
            case "Next": .next
            case "Previous": .previous
            case "Seek": .seek(seconds)
            case "SetPosition": .setPosition(track: text, seconds: seconds)
            case "Volume": number.isFinite ? .volume(number) : nil
            default: nil
            }
        if let parsed { continuation.yield(parsed) }
    }

    func finish() { continuation.finish() }
}

/// Why the session bus cannot be used here.
struct SessionBusError: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}

/// Sends a desktop notification (org.freedesktop.Notifications) on a connection of its own.
func desktopNotify(summary: String, body: String, icon: String = "") throws(SessionBusError) {
    var error = [CChar](repeating: 0, count: 256)
    let summary = NotificationText.plain(summary, limit: NotificationText.summaryLimit)
    let body = NotificationText.plain(body, limit: NotificationText.bodyLimit)
    guard mh_dbus_notify("mediahost", summary, body, icon, &error, error.count) == 0 else {
        throw SessionBusError(reason: String(nulTerminated: error))
    }
}

extension Optional where Wrapped == String {
    fileprivate func withOptionalCString<R>(_ body: (UnsafePointer<CChar>?) -> R) -> R {
        switch self {
        case .some(let text): text.withCString { body($0) }
        case .none: body(nil)
        }
    }
}

/// Text from feeds and servers as a notification shows it: notification servers read the body
/// as markup (a feed's `<a href="file:///etc/passwd">` or `<img src=…>` would be a link or a
/// picture), and a terminal's escapes or a 97 KB title are no notification.
enum NotificationText {
    static let summaryLimit = 120
    static let bodyLimit = 600

    /// Control characters gone (line breaks kept), markup escaped, at most `limit` characters.
    static func plain(_ text: String, limit: Int) -> String {
        let cleaned = DisplayText.clean(text, keepNewlines: true)
        let short = cleaned.count > limit ? DisplayText.cut(cleaned, to: limit) : cleaned
        var escaped = ""
        escaped.reserveCapacity(short.utf8.count)
        for character in short {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
