import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaHost
import MediaKit

/// The player as the desktop sees it: while this process plays (the service, or a REPL without
/// one), an MPRIS2 player on the session bus, `org.mpris.MediaPlayer2.mediahost`, so the
/// keyboard's media keys, `playerctl` and the desktop's player widget show and control it.
///
/// It follows `player.state` and acts through the player's methods, as any client does: it
/// knows the player only by the API's types (HostAPI), never the module that plays.
/// It joins the bus the first time something plays here, and stays while the process runs;
/// without a session bus (or sd-bus) nothing changes but one debug line.
public actor MediaKeys: HostComponent {
    private weak var host: HostRuntime?
    private let logger: Logger
    private var player: MPRISPlayer?
    private var joined = false
    private var subscription: Int?
    /// What was last told to the bus, and when, to see a seek.
    private var last: (state: MPRISPlayer.State, at: ContinuousClock.Instant)?
    private var status: PlayerStatus?
    /// Details of the item playing (artist, album, art), fetched once per item.
    private var details: [ItemID: Details] = [:]
    private var fetching: Set<ItemID> = []

    struct Details: Sendable {
        var artist = ""
        var album = ""
        var artURL = ""
    }

    public init(host: HostRuntime) {
        self.host = host
        logger = host.logger
    }

    /// Follows what plays in this process; joins the bus when something does.
    func follow() {
        guard subscription == nil, let host else { return }
        guard host.config.string(HostSettings.mediaKeys) == "on" else {
            logger.debug("media keys: off (desktop.media_keys)")
            return
        }
        let (statuses, continuation) = AsyncStream.makeStream(of: PlayerStatus.self, bufferingPolicy: .bufferingNewest(8))
        let logger = logger
        subscription = host.events.subscribe { event in
            guard event.method == PlayerStatus.method else { return }
            guard let status = event.payload(PlayerStatus.self) else {
                logger.warning("media keys: a player.state they cannot read: \(event.params.jsonString)")
                return
            }
            continuation.yield(status)
        }
        Task { [weak self] in
            for await status in statuses {
                guard let self else { return }
                await self.show(status)
            }
        }
    }

    private func show(_ status: PlayerStatus) async {
        self.status = status
        if player == nil, !joined, status.state != .stopped { join() }
        guard let player else { return }
        var state = MPRISPlayer.State()
        state.playback = MPRISPlayer.State.Playback(rawValue: status.state.rawValue.capitalized) ?? .stopped
        if let item = status.item {
            state.trackID = Self.trackPath(item)
            state.title = item.title
            state.url = item.local ? URL(fileURLWithPath: item.target).absoluteString : item.target
            if let id = item.id {
                if let known = details[id] {
                    state.artist = known.artist
                    state.album = known.album
                    state.artURL = known.artURL
                } else {
                    fetchDetails(id)
                }
            }
            state.length = status.duration
            state.position = status.position ?? 0
            state.canPlay = true
            state.canPause = true
            state.canSeek = status.duration != nil
            state.canGoPrevious = true
            state.canGoNext = !status.queue.isEmpty
        }
        state.volume = status.volume.map { $0 / 100 }
        let now = ContinuousClock.now
        if let last, last.state.trackID == state.trackID, state.trackID != nil {
            // Where it would be had it played on: a position elsewhere is a seek.
            let elapsed = last.state.playback == .playing ? (now - last.at) / .seconds(1) : 0
            if abs(state.position - (last.state.position + elapsed)) > 1.5 { player.seeked(to: state.position) }
        }
        last = (state, now)
        player.update(state)
    }

    private func join() {
        joined = true
        do {
            let player = try MPRISPlayer(name: "org.mpris.MediaPlayer2.mediahost", identity: "mediahost")
            self.player = player
            logger.info("media keys: \(player.name) on the session bus")
            Task { [weak self] in
                for await command in player.commands {
                    guard let self else { return }
                    await self.perform(command)
                }
            }
        } catch {
            logger.debug("media keys: not on the session bus: \(error)")
        }
    }

    /// A media key or a widget's button: the player's method for it.
    private func perform(_ command: MPRISPlayer.Command) async {
        guard let host else { return }
        let state = status?.state ?? .stopped
        let call: (any APIMethod)?
        switch command {
        case .playPause where state == .playing, .pause where state == .playing:
            call = PlayerPause()
        case .playPause where state == .paused, .play where state == .paused:
            call = PlayerResume()
        case .playPause, .play, .pause,
            .stop where state == .stopped, .next where state == .stopped,
            .previous where state == .stopped, .seek where state == .stopped:
            call = nil
        case .stop: call = PlayerStop()
        case .next: call = PlayerNext()
        // The item played before (what plays goes back to the front of the queue); with none,
        // back to the start, as players do.
        case .previous: call = PlayerPrevious()
        case .seek(let seconds): call = PlayerSeek(seconds: seconds, relative: true)
        case .setPosition(let track, let seconds):
            // The spec: ignored when the track is no longer the one playing.
            // And, as the spec says too, when the position is past the track's length.
            let current = status?.item.map(Self.trackPath)
            let length = status?.duration ?? 0
            call =
                current == track && seconds >= 0 && seconds <= length
                ? PlayerSeek(seconds: seconds) : nil
        case .volume(let level): call = PlayerVolume(level: min(130, max(0, level * 100)))
        }
        guard let call else {
            logger.debug("media keys: \(command) with the player \(state.rawValue)")
            return
        }
        do throws(RPCError) {
            try await Self.send(call, to: LocalConnection(host: host))
        } catch {
            logger.warning("media keys: \(command): \(error.message)")
        }
    }

    private static func send<M: APIMethod>(_ request: M, to connection: any HostConnection) async throws(RPCError) {
        _ = try await connection.run(request)
    }

    /// The artist (channel, show, author), album (show) and picture of the item playing, looked
    /// up once (the artwork cache keeps the picture).
    private func fetchDetails(_ id: ItemID) {
        guard let host, !fetching.contains(id) else { return }
        fetching.insert(id)
        let logger = logger
        Task { [weak self] in
            var found = Details()
            do {
                let item = try await host.dispatcher.run(MediaGet(id: id))
                found.artist = item.creator ?? item.subtitle ?? ""
                found.album = item.subtitle ?? ""
            } catch {
                logger.debug("media keys: no details for \(id): \(error)")
            }
            do {
                let artwork = try await host.dispatcher.run(MediaArtwork(id: id))
                found.artURL = URL(fileURLWithPath: artwork.path).absoluteString
            } catch {
                logger.debug("media keys: no picture for \(id): \(error)")
            }
            await self?.found(found, for: id)
        }
    }

    private func found(_ found: Details, for id: ItemID) async {
        details[id] = found
        if let status { await show(status) }
    }

    /// The track's object path: its item id (or file) as hex, which D-Bus paths allow.
    static func trackPath(_ item: PlayerStatus.Entry) -> String {
        let name = item.id?.description ?? item.target
        let hex = name.utf8.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }
        return "/org/mediahost/track/" + hex.joined()
    }
}
