import Basics
import FoundationEssentials
import JSONRPC
import MediaHost
import MediaKit
import MediaStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The one mpv a data dir plays through, driven over its JSON IPC.
///
/// mpv runs in its own session (it outlives a REPL that quits) and listens on a socket beside
/// the service's, so every host process of the data dir (the service, a REPL, an editor's
/// `mediahost rpc`, a `mediahost call`) controls the same playback: each connects to that mpv
/// rather than starting a second. The queue is mpv's own playlist, so mpv plays it through and
/// quits at its end (`--idle=once`) even when no host process is left; `player.json` says
/// which item each file is, changed under a file lock by whichever process acts. One process,
/// the holder of `player.owner`'s lock, saves the position every few seconds, marks items that
/// end played and starts each at its kept position; when it exits, the next process to hear
/// from mpv takes over. Every process saves the position when it pauses, skips or stops.
public actor PlayerController: HostComponent {
    public typealias Entry = PlayerStatus.Entry

    private let store: MediaStore
    private let events: EventHub
    private let logger: Logger
    /// mpv's IPC socket.
    let socketPath: String
    private let shared: SharedPlayerState

    private var connection: MPVConnection?
    private var owner = false
    private var position: Double?
    private var duration: Double?
    private var paused = false
    private var volume: Double?
    /// mpv's speed, as it reports it.
    private var speed: Double?
    private var lastSaved = ContinuousClock.now
    /// Where this stretch of playback began: the start of the file, or where it resumed (told
    /// to a sync server as `started`).
    private var stretchStart: Double?
    private var lastNotified = ContinuousClock.now
    private var lastStatus: PlayerStatus?
    /// Why mpv could not play what it was given, for the one status that says so.
    private var failure: String?
    /// The chapter playing: its title, and the file it is of.
    private var chapter: (path: String, title: String)?
    /// The errors mpv logged for the file playing (it is asked for its errors over IPC): a
    /// failed file's own reason ("http: HTTP error 404 Not Found") beside mpv's short one.
    private var loggedErrors: [(prefix: String, text: String)] = []
    private var lastOwnershipTry = ContinuousClock.now
    /// mpv's process id.
    private(set) var pid: Int32?
    /// The mpv this process started (signalled through its pidfd, never by a pid another
    /// process may have taken since); nil for one another process started.
    private var process: PlayerProcess?
    /// Since when mpv has not answered (stopped with SIGSTOP, or stuck): while this is recent,
    /// calls are answered from what is known instead of waiting for it again.
    private var unresponsiveSince: ContinuousClock.Instant?

    /// The logged error that says why a file failed: the first of its own (an HTTP status, a
    /// format), not "Failed to open <url>" nor the ytdl hook mpv tries last on any URL; that
    /// hook's when there is nothing else (a page it could not read).
    static func reason(in errors: [(prefix: String, text: String)]) -> String? {
        let own = errors.first { $0.prefix != "ytdl_hook" && !$0.text.hasPrefix("Failed to open") }
        if let own { return own.text }
        return errors.last { $0.prefix == "ytdl_hook" }.map { "[ytdl_hook] " + $0.text }
    }

    /// What a person reads when mpv cannot play an item: mpv's reason, what it logged, and
    /// what to do where that is known.
    static func failureMessage(title: String?, why: String, logged: String?) -> String {
        let all = (why + " " + (logged ?? "")).lowercased()
        let what = "mpv could not play \(title ?? "it")"
        if all.contains("audio output") || all.contains("audio device") || all.contains("audio driver") {
            return what
                + ": no sound device answers (start PulseAudio or PipeWire, or play silently: `config player.command \"mpv --ao=null\"`)"
        }
        var message = what + ": " + why
        if let logged, !logged.isEmpty, !logged.lowercased().contains(why.lowercased()) { message += " (\(logged))" }
        if all.contains("ytdl") || all.contains("youtube") {
            message += "; mpv reads pages through yt-dlp: `mediahost doctor` checks it"
        } else if all.contains("unrecognized file format") || all.contains("failed to open") {
            message += "; the file may be gone or not media: `show` the item for its links"
        }
        return message
    }

    /// Whether the connected mpv's `loadfile` takes an index before its options, once known.
    private var indexedLoadfile: Bool?

    /// How long an mpv that did not answer is taken to be stuck before it is asked again.
    static let stuckRetry: Duration = .seconds(10)
    /// How long a new mpv may take to open its control socket: a tenth of a second usually, far
    /// more on a machine busy with other work; one that fails exits, and is reported at once.
    static let startTimeout: Duration = .seconds(30)

    /// How often the position is saved while playing.
    static let saveInterval: Duration = .seconds(5)
    /// Position-only notifications at most this often.
    static let notifyInterval: Duration = .seconds(1)

    /// An item's chapters (the table of contents), which mpv is given as each file loads.
    typealias ChapterSource = @Sendable (ItemID) async -> [Chapter]
    private let chapterSource: ChapterSource?
    /// An item's segments to skip or mute while it plays (SponsorBlock's, for YouTube videos).
    typealias SegmentSource = @Sendable (ItemID) async -> [MediaSegment]
    private let segmentSource: SegmentSource?
    /// The playback settings of the show an item is of (speed, skips, loudness), when it is of a
    /// followed show.
    typealias PlaybackSource = @Sendable (ItemID) async -> ShowPlayback?
    private let playbackSource: PlaybackSource?
    /// The show settings of the file playing, and whether its outro was skipped this time.
    private var showPlayback: (path: String, settings: ShowPlayback, outroDone: Bool)?
    /// The speed and filters mpv was last given, and which mpv (a new one starts with none).
    private var appliedPlayback = ShowPlayback()
    private var appliedOn: MPVConnection?
    /// Where an item's media is (its download, else its stream), for the queue's next item.
    typealias TargetSource = @Sendable (ItemID) async throws -> (target: String, local: Bool)
    private let targetSource: TargetSource?
    /// Listens for changes of the queue, once connected.
    private var queueSubscription: Int?
    /// Whether mpv's next file is being made the queue's first item, and whether the queue
    /// changed meanwhile (then it is done again).
    private var planningNext = false
    private var queueChangedAgain = false
    private var planWaiters: [CheckedContinuation<Void, Never>] = []
    /// The next item started goes back to one played before: what it replaces is not remembered
    /// as played before it (Previous, Previous walks back).
    private var goingBack = false
    /// The sleep timer, while one is set.
    private var sleep: PlayerStatus.Sleep?
    /// Waits for a timer's time; cancelled when the timer is changed or turned off.
    private var sleepTask: Task<Void, Never>?
    /// Whether the volume is being lowered before a timer pauses.
    private var fading = false
    /// The segments of the file playing, and which of them were acted on this time it plays.
    private var segments: (path: String, id: ItemID, list: [MediaSegment], done: Set<Int>, muted: Int?)?

    public init(host: HostRuntime) {
        let logger = host.logger
        self.init(
            store: host.store, events: host.events, logger: host.logger,
            socketPath: host.paths.playerSocket(environment: host.environment),
            statePath: host.paths.dataDir + "/run/player.json",
            chapters: { [weak host] id in
                guard let host else { return [] }
                do {
                    return try await host.dispatcher.run(MediaChapters(id: id)).contents
                } catch {
                    logger.info("no chapters for mpv: \(id): \(error)")
                    return []
                }
            },
            segments: { [weak host] id in
                guard let host, host.hasSegments(id) else { return [] }
                do {
                    return try await host.dispatcher.run(MediaSegments(id: id)).segments.filter {
                        $0.action == "skip" || $0.action == "mute"
                    }
                } catch {
                    logger.info("no SponsorBlock segments for \(id): \(error)")
                    return []
                }
            },
            targets: { [weak host] id in
                guard let host else { throw CancellationError() }
                return try await host.playTarget(id)
            },
            playback: { [weak host] id in await host?.showPlayback(of: id) })
    }

    init(
        store: MediaStore, events: EventHub, logger: Logger, socketPath: String, statePath: String,
        chapters: ChapterSource? = nil, segments: SegmentSource? = nil, targets: TargetSource? = nil,
        playback: PlaybackSource? = nil
    ) {
        self.store = store
        self.events = events
        self.logger = logger
        self.socketPath = socketPath
        shared = SharedPlayerState(path: statePath)
        chapterSource = chapters
        segmentSource = segments
        targetSource = targets
        playbackSource = playback
    }

    deinit {
        if let queueSubscription { events.unsubscribe(queueSubscription) }
    }

    /// Whether `command` (player.command's words) names mpv, which this controls.
    public static func isMPV(_ command: [String]) -> Bool { PlayerStatus.isMPV(command) }

    private var current: Entry? { shared.read().current }

    // MARK: Playing

    /// Plays `entry` now (`now`, or when nothing plays) or after what is queued.
    /// - Parameters:
    ///   - command: player.command's words (mpv and its options).
    ///   - resume: seconds to start at.
    /// - Returns: whether it was queued rather than started.
    func play(_ entry: Entry, now: Bool, resume: Double?, command: [String], executable: String) async throws -> Bool {
        try await ensureRunning(command: command, executable: executable)
        guard let connection else { throw HostError.player("the player has stopped") }
        let (replaced, queue) = shared.update { state -> (Entry??, [Entry]) in
            if !now, state.current != nil {
                state.queue.append(entry)
                return (.none, state.queue)
            }
            defer {
                if goingBack {
                    goingBack = false
                } else {
                    state.leave()
                }
                state.current = entry
                // mpv starts it where asked itself (the load's `start` option): nothing to seek.
                state.startAt = 0
                state.requested = Date().timeIntervalSince1970
            }
            return (.some(state.current), state.queue)
        }
        guard case .some(let previous) = replaced else {
            try await load(entry.target, "append", start: resume, end: entry.clip?.end, on: connection)
            publish(force: true)
            return true
        }
        await save(previous, finished: false)
        position = nil
        duration = nil
        // `replace` empties mpv's playlist: what was queued goes back after the new item.
        try await load(entry.target, "replace", start: resume, end: entry.clip?.end, on: connection)
        for queued in queue { try await load(queued.target, "append", start: nil, end: queued.clip?.end, on: connection) }
        _ = try? await ask(connection, ["set_property", "pause", false])
        if let resume, resume > 1 { position = resume }
        publish(force: true)
        return false
    }

    /// `loadfile` with mpv's own `start` option when a start is given: mpv opens the file there,
    /// so no process has to be around to seek once it has loaded (a one-shot `mediahost call`
    /// exits at once; on a loaded machine the file may take seconds to open). mpv 0.38 put an
    /// index before the options. A clip ends at `end` (mpv's `end` option): mpv goes on to what
    /// comes next there.
    private func load(_ target: String, _ mode: String, start: Double?, end: Double? = nil, on connection: MPVConnection)
        async throws
    {
        var command: [JSONValue] = ["loadfile", .string(target), .string(mode)]
        var options: [String] = []
        // 5 ms on: mpv lands on the sample before the time asked (29.99997 for 30), which reads
        // as the chapter before when the start is a chapter's.
        // A resume within the first second starts at 0; a clip starts where it starts.
        if let start, start > 1 || (end != nil && start > 0) {
            options.append("start=\(String(printf: "%.3f", start + 0.005))")
        }
        if let end { options.append("end=\(String(printf: "%.3f", end))") }
        if !options.isEmpty {
            if try await takesIndexBeforeOptions(connection) { command.append(-1) }
            command.append(.string(options.joined(separator: ",")))
        }
        try await ask(connection, command)
    }

    /// Whether this mpv's `loadfile` takes an index before its options (0.38 and later).
    private func takesIndexBeforeOptions(_ connection: MPVConnection) async throws -> Bool {
        if let known = indexedLoadfile { return known }
        let version = try await ask(connection, ["get_property", "mpv-version"]).stringValue ?? ""
        let numbers =
            version.split(whereSeparator: { !$0.isNumber && $0 != "." }).first?.split(separator: ".")
            .compactMap { Int($0) } ?? []
        let indexed = numbers.count >= 2 && (numbers[0] > 0 || numbers[1] >= 38)
        indexedLoadfile = indexed
        return indexed
    }

    /// The status, asking mpv when this process has not heard from it yet.
    ///
    /// mpv is asked (a millisecond when it runs) with a short deadline, so one that is stopped
    /// or stuck is reported as such, from what was last known, within `probeTimeout` rather
    /// than a command's whole deadline (a status of a hung mpv once took 10 s).
    func status(controllable: Bool) async -> PlayerStatus {
        if controllable, connection == nil { await adopt(timeout: Self.probeTimeout) }
        if let connection {
            do {
                _ = try await connection.command(["get_property", "pid"], timeout: Self.probeTimeout)
            } catch is MPVNotAnswering {
                // Said in this answer only: a machine busy for a moment must not have the
                // connection given up (a command that waits its whole deadline does that).
                var status = makeStatus(controllable: controllable)
                status.problem = stuckMessage
                return status
            } catch {}
        }
        return makeStatus(controllable: controllable)
    }

    /// How long a status waits for mpv before saying it does not answer.
    static let probeTimeout: Duration = .seconds(2)

    func pause(_ pause: Bool) async throws {
        let connection = try await controlled()
        try await ask(connection, ["set_property", "pause", .bool(pause)])
        paused = pause
        await save(current, finished: false)
        if !pause { stretchStart = position }
        publish(force: true)
    }

    func seek(_ seconds: Double, relative: Bool) async throws {
        let connection = try await controlled()
        // Right after `play`, mpv may still be opening the file (a stream takes a request or
        // two) and refuses to seek: wait until it plays, as long as a start may take.
        var playing = (try? await ask(connection, ["get_property", "time-pos"]))?.doubleValue
        let opening = ContinuousClock.now + Self.startTimeout
        while playing == nil, current != nil, ContinuousClock.now < opening {
            try await Task.sleep(for: .milliseconds(100))
            playing = (try? await ask(connection, ["get_property", "time-pos"]))?.doubleValue
        }
        guard playing != nil else {
            throw HostError.player(
                current.map { "mpv has not opened \($0.title) yet; try again in a moment" } ?? "nothing is playing to seek in")
        }
        let before = playing ?? position ?? 0
        // Past the end is the end: mpv is never asked for a time it cannot have.
        let end = duration.flatMap { $0 > 0 ? $0 : nil }
        if !relative, let end, seconds > end {
            throw HostError.invalidArgument(
                "\(ChapterList.clock(seconds)) is past the end of \(current?.title ?? "what plays") (\(ChapterList.clock(end)))")
        }
        let seconds = relative ? max(-before, min(seconds, (end ?? ChapterList.longestMedia) - before)) : seconds
        try await ask(connection, ["seek", JSONValue(seconds), .string(relative ? "relative" : "absolute")])
        // mpv answers the command before the seek is done (a stream needs a new range request):
        // the answer says where playback is once it got there, or after 2 s where it is then.
        let target = max(0, relative ? before + seconds : seconds)
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            if let time = (try? await ask(connection, ["get_property", "time-pos"]))?.doubleValue { position = time }
            if abs((position ?? 0) - target) < 1 || ContinuousClock.now >= deadline { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        publish(force: true, jumped: true)
    }

    func setSpeed(_ rate: Double) async throws {
        let connection = try await controlled()
        try await ask(connection, ["set_property", "speed", JSONValue(rate)])
        speed = rate
        publish(force: true)
    }

    func setVolume(_ level: Double) async throws {
        let connection = try await controlled()
        try await ask(connection, ["set_property", "volume", JSONValue(level)])
        volume = level
        publish(force: true)
    }

    /// Skips to what is queued next (the current item keeps its position); stops at the end.
    func next() async throws {
        let connection = try await controlled()
        await save(current, finished: false)
        guard let next = shared.read().queue.first else {
            try await stop()
            return
        }
        position = nil
        duration = nil
        try await ask(connection, ["playlist-next", "force"])
        // What plays is the next entry from here on, before mpv's events say so.
        await came(to: next.target)
        publish(force: true)
    }

    /// The item's chapters, as mpv's own (its keys and OSD move between them), once they are
    /// known: fetched beside the playback, and set only if the same file still plays. A file
    /// whose chapters mpv read itself (ID3, yt-dlp's) keeps them when the host has none.
    private func giveChapters(of id: ItemID, for path: String, to connection: MPVConnection) {
        guard let chapterSource else { return }
        Task {
            let chapters = await chapterSource(id)
            guard !chapters.isEmpty else { return }
            await self.setChapters(chapters, for: path, on: connection)
        }
    }

    private func setChapters(_ chapters: [Chapter], for path: String, on connection: MPVConnection) async {
        guard connection === self.connection, current?.target == path else { return }
        // Only those within the file mpv plays (a feed's chapter at 1e15 s is none of its).
        let end = duration.flatMap { $0 > 0 ? $0 : nil } ?? ChapterList.longestMedia
        let list = JSONValue.array(
            chapters.filter { $0.start.isFinite && $0.start >= 0 && $0.start < end }.map {
                .object(["title": .string($0.title), "time": JSONValue($0.start)])
            })
        do {
            _ = try await ask(connection, ["set_property", "chapter-list", list])
            logger.debug("mpv has \(chapters.count) chapters of \(id(of: path))")
        } catch {
            logger.info("mpv did not take the chapters: \(error)")
        }
    }

    /// Looks up the item's segments beside the playback; none are acted on until they are known.
    private func findSegments(of id: ItemID, for path: String) {
        segments = nil
        guard let segmentSource else { return }
        Task {
            let list = await segmentSource(id)
            guard !list.isEmpty else { return }
            self.setSegments(list, id: id, for: path)
        }
    }

    private func setSegments(_ list: [MediaSegment], id: ItemID, for path: String) {
        guard current?.target == path else { return }
        segments = (path, id, list, [], nil)
        logger.debug("\(list.count) segments to skip or mute in \(id)")
    }

    /// The show's playback settings, as the file starts: its speed (mpv keeps the pitch) and
    /// loudness filters always (1 and none for what is of no followed show, so one show's speed
    /// never carries over to the next file), and its intro skipped when it starts at the start.
    private func applyShowPlayback(of id: ItemID, for path: String, startingAt start: Double, on connection: MPVConnection) {
        showPlayback = nil
        guard let playbackSource else { return }
        Task {
            let settings = await playbackSource(id) ?? ShowPlayback()
            guard connection === self.connection, current?.target == path else { return }
            showPlayback = (path, settings, false)
            do {
                // mpv keeps speed and filters from file to file: they are set when they change,
                // never at every file, and a new mpv starts as built in (one who uses no show
                // settings never has mpv told anything).
                if connection !== appliedOn {
                    appliedPlayback = ShowPlayback()
                    appliedOn = connection
                }
                let sound = (speed: settings.speed, filter: settings.audioFilter)
                if sound.speed != appliedPlayback.speed || sound.filter != appliedPlayback.audioFilter {
                    appliedPlayback = settings
                    _ = try await ask(connection, ["set_property", "speed", JSONValue(sound.speed)])
                    _ = try? await ask(connection, ["af", "remove", .string(ShowPlayback.filterLabel)])
                    if let filter = sound.filter { _ = try await ask(connection, ["af", "add", .string(filter)]) }
                }
                if settings.skipIntro > 0, start <= 1, current?.clip == nil, (position ?? 0) < settings.skipIntro - 0.3 {
                    let to = min(settings.skipIntro, max(0, (duration ?? .infinity) - 1))
                    _ = try await ask(connection, ["seek", JSONValue(to), "absolute"])
                    self.position = to
                    logger.info("skipped the first \(Int(to)) s of \(id) (skip_intro)")
                    events.publish(HostEvent(PlayerSkip(id: id, category: "intro", action: "skipped", start: 0, end: to)))
                }
                if settings != ShowPlayback() { logger.debug("\(id) plays with its show's settings: \(settings)") }
            } catch {
                logger.warning("mpv did not take the show's settings for \(id): \(error)")
            }
        }
    }

    /// The show's last seconds skipped (`skip_outro`): the file is ended, once each time it plays.
    private func passOutro(at position: Double) async {
        guard var known = showPlayback, known.path == current?.target, current?.clip == nil, !known.outroDone,
            known.settings.skipOutro > 0,
            let duration, duration > known.settings.skipOutro, let connection, let id = current?.id
        else { return }
        let start = duration - known.settings.skipOutro
        guard position >= start, position < duration - 0.5 else { return }
        known.outroDone = true
        showPlayback = known
        do {
            _ = try await ask(connection, ["seek", JSONValue(100), "absolute-percent"])
            logger.info("skipped the last \(Int(known.settings.skipOutro)) s of \(id) (skip_outro)")
            events.publish(HostEvent(PlayerSkip(id: id, category: "outro", action: "skipped", start: start, end: duration)))
        } catch {
            logger.warning("could not skip the outro of \(id): \(error)")
        }
    }

    /// Within a segment to skip: a seek to its end, once each time the file plays (seeking back
    /// into it plays it). Within one to mute: muted until it ends or playback leaves it.
    private func passSegments(at position: Double) async {
        guard var known = segments, known.path == current?.target, let connection else { return }
        if let muted = known.muted {
            let segment = known.list[muted]
            if position < segment.start - 0.5 || position >= segment.end {
                _ = try? await ask(connection, ["set_property", "mute", false])
                known.muted = nil
                segments = known
            }
        }
        guard
            let index = known.list.indices.first(where: { index in
                let segment = known.list[index]
                return !known.done.contains(index) && position >= segment.start && position < segment.end - 0.3
                    && position - segment.start < 1.5
            })
        else { return }
        let segment = known.list[index]
        known.done.insert(index)
        segments = known
        do {
            if segment.action == "skip" {
                // To its end, never past the file's (a server's 1e300 would end playback).
                let to = min(segment.end, duration ?? ChapterList.longestMedia)
                try await ask(connection, ["seek", JSONValue(to), "absolute"])
                self.position = to
            } else {
                try await ask(connection, ["set_property", "mute", true])
                segments?.muted = index
            }
            logger.info(
                "\(segment.action == "skip" ? "skipped" : "muted") \(segment.category) \(segment.start)-\(segment.end) of \(known.id)"
            )
            events.publish(
                HostEvent(
                    PlayerSkip(
                        id: known.id, category: segment.category, action: segment.action == "skip" ? "skipped" : "muted",
                        start: segment.start, end: segment.end)))
        } catch {
            logger.warning("could not \(segment.action) \(segment.category) at \(segment.start): \(error)")
        }
    }

    private func id(of path: String) -> String { current?.id?.description ?? URLRedaction.redact(path) }

    /// Moves to the next or previous chapter (the previous one's start, or this one's when more
    /// than a few seconds in, as mpv's keys do), or to chapter `index` (1 first).
    func chapter(_ step: ChapterStep) async throws {
        let connection = try await controlled()
        let count = (try? await ask(connection, ["get_property", "chapters"]))?.intValue ?? 0
        let title = current?.title ?? "what plays"
        guard count > 0 else { throw HostError.player("\(title) has no chapters (`chapters` says where they would come from)") }
        let now = (try? await ask(connection, ["get_property", "chapter"]))?.intValue ?? -1
        switch step {
        case .next:
            guard now + 1 < count else {
                throw HostError.player("this is the last chapter of \(title) (`next` plays what is queued)")
            }
            try await ask(connection, ["add", "chapter", 1])
        case .previous:
            try await ask(connection, ["add", "chapter", -1])
        case .index(let index):
            guard (1...count).contains(index) else {
                throw HostError.invalidArgument("\(title) has \(count) chapter\(count == 1 ? "" : "s"); ask for 1-\(count)")
            }
            try await ask(connection, ["set_property", "chapter", JSONValue(index - 1)])
        }
        // As a seek: the answer says where playback is once it got there.
        let deadline = ContinuousClock.now + .seconds(2)
        let before = position
        while ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
            if let time = (try? await ask(connection, ["get_property", "time-pos"]))?.doubleValue {
                position = time
                if before.map({ abs($0 - time) > 0.5 }) ?? true { break }
            }
        }
        publish(force: true, jumped: true)
    }

    /// Stops playing and forgets the queue; the position is kept. Returns once mpv has gone, so
    /// that a `play` right after starts a new one; an mpv that does not answer is killed.
    func stop() async throws {
        if connection == nil, !isStuck { await adopt() }
        let pid = shared.read().pid ?? self.pid
        await save(current, finished: false)
        if unresponsiveSince == nil {
            let connection = try await controlled()
            shared.update { $0 = SharedPlayerState.State() }
            connection.send(["quit"])
            let deadline = ContinuousClock.now + .seconds(3)
            while self.connection === connection || isRunning(pid), ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        if let own = process, own.pid == pid {
            own.terminate(signal: SIGKILL)
        } else if let pid, Self.isRunning(pid) {
            kill(pid, SIGKILL)
        }
        connection?.close()
        forget()
    }

    private static func isRunning(_ pid: Int32) -> Bool { kill(pid, 0) == 0 }

    /// Whether mpv `pid` runs: the one started here is asked (its pid may be another's once it
    /// was reaped), another process's by its pid.
    private func isRunning(_ pid: Int32?) -> Bool {
        guard let pid else { return false }
        if let own = process, own.pid == pid { return own.process.isRunning }
        return Self.isRunning(pid)
    }

    /// Forgets the mpv this process knew (it is gone, or was killed).
    private func forget() {
        sleepTask?.cancel()
        sleepTask = nil
        sleep = nil
        connection = nil
        unresponsiveSince = nil
        shared.update { $0 = SharedPlayerState.State() }
        if owner { shared.releaseOwnership() }
        owner = false
        position = nil
        duration = nil
        paused = false
        publish(force: true)
    }

    /// Saves where playback is (the host closing).
    public func hostWillStop() async { await saveNow() }

    public func saveNow() async {
        if connection != nil { await save(current, finished: false) }
    }

    // MARK: mpv

    /// Runs an mpv command; an mpv that does not answer in time is marked unresponsive (so the
    /// next calls do not wait for it too) and the error says what to do.
    @discardableResult
    private func ask(
        _ connection: MPVConnection, _ arguments: [JSONValue], timeout: Duration = MPVConnection.commandTimeout
    ) async throws -> JSONValue {
        do {
            let answer = try await connection.command(arguments, timeout: timeout)
            unresponsiveSince = nil
            return answer
        } catch is MPVNotAnswering {
            logger.debug("mpv did not answer \(DisplayText.cut(JSONValue.array(arguments).jsonString, to: 200))")
            if self.connection === connection {
                unresponsiveSince = .now
                self.connection = nil
                connection.close()
                publish(force: true)
            }
            throw HostError.player(stuckMessage)
        }
    }

    private var stuckMessage: String {
        let pid = shared.read().pid ?? pid
        return "mpv\(pid.map { " (pid \($0))" } ?? "") does not answer: it is stopped or stuck; `stop` (player.stop) ends it"
    }

    /// Whether mpv did not answer a moment ago (then it is not asked again yet).
    private var isStuck: Bool {
        guard let since = unresponsiveSince else { return false }
        return ContinuousClock.now - since < Self.stuckRetry
    }

    /// The connection when something plays under control.
    private func controlled() async throws -> MPVConnection {
        if isStuck { throw HostError.player(stuckMessage) }
        if connection == nil { await adopt() }
        if isStuck { throw HostError.player(stuckMessage) }
        guard let connection, current != nil else {
            throw HostError.player("nothing is playing (`play <n>` starts something)")
        }
        return connection
    }

    /// Connects to the mpv this data dir plays through, starting it when none runs.
    private func ensureRunning(command: [String], executable: String) async throws {
        if isStuck { throw HostError.player(stuckMessage) }
        if connection != nil { return }
        if await adopt() { return }
        if isStuck { throw HostError.player(stuckMessage) }
        // Only this user may reach the player: the socket's folder is theirs alone.
        let folder = Path.directory(of: socketPath)
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        chmod(folder, 0o700)
        Self.removeStaleSockets(of: socketPath)
        // Whatever a dead mpv was playing is over.
        shared.update { $0 = SharedPlayerState.State() }
        // Each mpv listens on a socket of its own, which the data dir's socket path links to: an
        // mpv still quitting removes its own socket as it exits, never the new one's.
        let ownSocket = socketPath + ".\(UInt32.random(in: 1...UInt32.max))"
        let arguments = Array(command.dropFirst()) + ["--idle=once", "--no-terminal", "--input-ipc-server=\(ownSocket)"]
        let process = try PlayerProcess.spawn(executable, arguments: arguments)
        let deadline = ContinuousClock.now + Self.startTimeout
        while ContinuousClock.now < deadline {
            if let failure = process.failure() {
                throw HostError.player("mpv \(failure.isEmpty ? "exited at once" : failure)")
            }
            if UnixSocket(path: ownSocket).isServing {
                chmod(ownSocket, 0o600)
                Self.link(socketPath, to: ownSocket)
                if connect() {
                    pid = process.pid
                    self.process = process
                    shared.update { $0.pid = process.pid }
                    return
                }
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let how = Self.describe(process.pid) + process.lastWords
        process.terminate()
        throw HostError.player(
            "mpv (\(how)) did not open its control socket \(ownSocket) within \(Int(Self.startTimeout.components.seconds)) s")
    }

    /// "pid 123, state S, waiting in do_wait": what a process that does not answer is doing.
    static func describe(_ pid: Int32) -> String {
        var text = "pid \(pid)"
        if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        {
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if let state = fields.first { text += ", state \(state)" }
        }
        if let wchan = try? String(contentsOfFile: "/proc/\(pid)/wchan", encoding: .utf8), !wchan.isEmpty, wchan != "0" {
            text += ", waiting in \(wchan)"
        }
        return text
    }

    /// Points `path` at `target`, replacing what was there in one step.
    private static func link(_ path: String, to target: String) {
        let temporary = path + ".link"
        unlink(temporary)
        guard symlink(Path.name(of: target), temporary) == 0 else { return }
        rename(temporary, path)
    }

    /// The sockets of mpvs that are gone (killed ones leave theirs).
    private static func removeStaleSockets(of path: String) {
        let folder = Path.directory(of: path)
        let prefix = Path.name(of: path) + "."
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix(prefix) {
            let candidate = folder + "/" + name
            if name.hasSuffix(".link") || !UnixSocket(path: candidate).isServing { unlink(candidate) }
        }
    }

    /// Connects to an mpv that a host process started (this one, or another, or one that quit).
    /// - Returns: whether one answered.
    @discardableResult
    private func adopt(timeout: Duration = MPVConnection.commandTimeout) async -> Bool {
        guard connection == nil else { return true }
        guard !isStuck else { return false }
        guard connect(), let connection else {
            // No mpv: nothing plays, whatever the file says.
            if shared.read().current != nil { shared.update { $0 = SharedPlayerState.State() } }
            return false
        }
        do {
            pid = try await ask(connection, ["get_property", "pid"], timeout: timeout).intValue.map(Int32.init)
        } catch {
            return false
        }
        let path = (try? await ask(connection, ["get_property", "path"]))?.stringValue
        if let path {
            if shared.read().current?.target != path { await came(to: path) }
        } else {
            // Idle: nothing plays, unless another process has just asked it to load something.
            shared.update { state in
                if !state.isLoading { state = SharedPlayerState.State(pid: state.pid) }
            }
        }
        position = (try? await ask(connection, ["get_property", "time-pos"]))?.doubleValue
        duration = (try? await ask(connection, ["get_property", "duration"]))?.doubleValue
        paused = (try? await ask(connection, ["get_property", "pause"]))?.boolValue ?? false
        volume = (try? await ask(connection, ["get_property", "volume"]))?.doubleValue
        return true
    }

    /// Opens the IPC connection and observes what the status shows.
    private func connect() -> Bool {
        let (stream, continuation) = AsyncStream<JSONValue?>.makeStream()
        guard
            let connection = MPVConnection(
                path: socketPath, onEvent: { continuation.yield($0) },
                onClose: {
                    continuation.yield(nil)
                    continuation.finish()
                })
        else { return false }
        self.connection = connection
        indexedLoadfile = nil
        owner = shared.takeOwnership()
        Task { [weak self] in
            for await event in stream {
                guard let self else { return }
                if let event { await self.handle(event) } else { await self.closed(connection) }
            }
        }
        for (index, property) in ["time-pos", "duration", "pause", "volume", "chapter", "speed"].enumerated() {
            connection.send(["observe_property", JSONValue(index + 1), .string(property)])
        }
        // Warnings too: mpv logs an HTTP error (404) as one, before the error that ends the file.
        connection.send(["request_log_messages", "warn"])
        // The queue changed (by any client of this process): mpv's next file follows it.
        if queueSubscription == nil {
            queueSubscription = events.subscribe { [weak self] event in
                guard event.payload(LibraryChange.self)?.what == LibraryChange.queue else { return }
                Task { await self?.queueChanged() }
            }
        }
        return true
    }

    // MARK: The sleep timer

    enum SleepTimer: Equatable {
        case after(Double)
        case end
        case chapter
        case off
    }

    /// Over how many seconds the volume goes down before a timer pauses.
    static let fadeSeconds = 8.0

    /// Sets the sleep timer (or turns it off). `end` and `chapter` are positions in what plays:
    /// the end, or the next chapter's start (the end when it is in its last chapter).
    func setSleep(_ timer: SleepTimer) async throws {
        let connection = try await controlled()
        sleepTask?.cancel()
        sleepTask = nil
        sleep = nil
        switch timer {
        case .off: break
        case .after(let seconds):
            sleep = PlayerStatus.Sleep(at: "time", deadline: ISODate.string(from: Date().addingTimeInterval(seconds)))
            sleepTask = Task { [weak self] in
                try? await Task.sleep(for: .seconds(max(0, seconds - Self.fadeSeconds)))
                guard !Task.isCancelled else { return }
                await self?.fadeOutAndPause(over: min(Self.fadeSeconds, seconds))
            }
        case .end:
            guard let duration, duration > 0 else {
                throw HostError.player("the length of what plays is not known yet; try again in a moment")
            }
            sleep = PlayerStatus.Sleep(at: "end", position: duration)
        case .chapter:
            guard let duration, duration > 0 else {
                throw HostError.player("the length of what plays is not known yet; try again in a moment")
            }
            let starts = ((try? await ask(connection, ["get_property", "chapter-list"]))?.arrayValue ?? [])
                .compactMap { $0["time"]?.doubleValue }
            let at = position ?? 0
            sleep = PlayerStatus.Sleep(at: "chapter", position: starts.filter { $0 > at + 0.5 }.min() ?? duration)
        }
        publish(force: true)
    }

    /// At each position: a timer set to a position starts to fade out in time to pause there.
    private func sleepReached(at position: Double) {
        guard let pauseAt = sleepPosition, !fading else { return }
        guard position >= pauseAt - Self.fadeSeconds else { return }
        Task { await self.fadeOutAndPause(over: max(0, pauseAt - position)) }
    }

    /// Where a timer set to a position pauses: a little before the end, so mpv does not go on
    /// to the next item first.
    private var sleepPosition: Double? {
        guard let target = sleep?.position else { return nil }
        return sleep?.at == "end" ? target - 0.8 : target
    }

    /// Lowers the volume to nothing over `over` seconds (or until the timer's position is
    /// reached), pauses, keeps the position and puts the volume back; the timer is then done.
    /// Turning the timer off meanwhile stops the fade.
    private func fadeOutAndPause(over seconds: Double) async {
        guard !fading, sleep != nil, let connection else { return }
        fading = true
        defer { fading = false }
        let original = volume ?? 100
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            guard sleep != nil else {
                _ = try? await ask(connection, ["set_property", "volume", JSONValue(original)])
                return
            }
            if let pauseAt = sleepPosition, let position, position >= pauseAt { break }
            let left = (deadline - ContinuousClock.now) / .seconds(seconds == 0 ? 1 : seconds)
            _ = try? await ask(connection, ["set_property", "volume", JSONValue(original * max(0, min(1, left)))])
            try? await Task.sleep(for: .milliseconds(200))
        }
        do {
            try await ask(connection, ["set_property", "pause", true])
            paused = true
        } catch {
            logger.warning("sleep timer: mpv did not pause: \(error)")
        }
        await save(current, finished: false)
        _ = try? await ask(connection, ["set_property", "volume", JSONValue(original)])
        volume = original
        logger.info("sleep timer: paused \(current?.title ?? "what played")")
        sleep = nil
        sleepTask = nil
        publish(force: true)
    }

    // MARK: The queue

    /// Takes the latest item played before off that list, and has the next `play` not remember
    /// what it replaces (going back, not forward).
    func backToPrevious() -> Entry? {
        let last = shared.update { state -> Entry? in state.previous?.popLast() }
        goingBack = last != nil
        return last
    }

    /// The item playing.
    var playing: Entry? { current }

    /// The item playing and those handed to mpv to play next.
    var handed: Set<ItemID> {
        let state = shared.read()
        return Set(([state.current] + state.queue.map(Optional.some)).compactMap { $0?.id })
    }

    /// Whether something plays now (mpv is asked when this process has not heard from it).
    func playsNow() async -> Bool {
        if connection == nil, !isStuck { await adopt() }
        return connection != nil && current != nil
    }

    /// Makes mpv's next file the queue's first item. The queue ("up next") is the store's; mpv
    /// is handed one item ahead, so it plays on when no host process is left, and the next
    /// process to hear from it takes the item off the queue. Done by the process that owns the
    /// playback (it acts on mpv's events), or by the one that was asked (`force`).
    func queueChanged(force: Bool = false) async {
        guard force || owner else { return }
        if planningNext {
            queueChangedAgain = true
            // The one that asked waits for the round that takes its change in (a `call` would
            // otherwise exit before mpv is told).
            if force { await withCheckedContinuation { planWaiters.append($0) } }
            return
        }
        planningNext = true
        repeat {
            queueChangedAgain = false
            await planNext()
        } while queueChangedAgain
        planningNext = false
        for waiter in planWaiters { waiter.resume() }
        planWaiters = []
    }

    /// How many of the queue's items mpv is handed ahead: it plays them on by itself when no
    /// host process is left (each is a request to its provider, or a yt-dlp run, to find).
    static let handedAhead = 5

    private func planNext() async {
        if connection == nil, !isStuck { await adopt() }
        guard let connection, let playing = current else { return }
        var ahead: [MediaItem]
        do {
            ahead = try await store.queue(limit: Self.handedAhead + 1).items
            // What plays is up next no more (mpv came to it while no host process ran). A
            // soundbite leaves its episode in the queue.
            if let id = playing.id, playing.clip == nil, ahead.contains(where: { $0.id == id }) {
                try await store.dequeue([id])
                ahead.removeAll { $0.id == id }
            }
            ahead = Array(ahead.prefix(Self.handedAhead))
        } catch {
            logger.warning("the queue cannot be read: \(error)")
            return
        }
        let planned = shared.read().queue
        if planned.map(\.id) == ahead.map(\.id) { return }
        var entries: [Entry] = []
        for item in ahead {
            guard let targetSource else { break }
            do {
                let (target, local) = try await targetSource(item.id)
                let source = item.enclosure?.url
                entries.append(
                    Entry(
                        id: item.id, title: item.title, target: target, local: local,
                        source: local || source == target ? nil : source))
            } catch {
                logger.notice("the queue's \(item.id) cannot be played now: \(error)")
            }
        }
        var given: [Entry] = []
        do {
            // Everything after what plays goes: the queue's items are what follows.
            try await ask(connection, ["playlist-clear"])
            for entry in entries {
                try await load(entry.target, "append", start: nil, on: connection)
                given.append(entry)
            }
        } catch {
            logger.notice("mpv was not given the queue's items: \(error)")
        }
        shared.update { $0.queue = given }
        publish(force: true)
    }

    private func handle(_ event: JSONValue) async {
        // The owner gone (its process quit), this one carries on; at a file's start and end (what
        // only the owner acts on) without waiting for the next second.
        let kind = event["event"]?.stringValue ?? ""
        if !owner,
            ContinuousClock.now - lastOwnershipTry >= .seconds(1) || ["start-file", "file-loaded", "end-file"].contains(kind)
        {
            lastOwnershipTry = ContinuousClock.now
            owner = shared.takeOwnership()
        }
        if event["event"]?.stringValue != "property-change" {
            logger.debug("mpv event: \(DisplayText.cut(event.jsonString, to: 300))")
        }
        switch event["event"]?.stringValue {
        case "property-change":
            let data = event["data"]
            switch event["name"]?.stringValue {
            case "time-pos":
                position = data?.doubleValue
                if stretchStart == nil { stretchStart = position }
                if let position { sleepReached(at: position) }
                if owner, let position {
                    await passSegments(at: position)
                    await passOutro(at: position)
                }
                if owner, !paused, ContinuousClock.now - lastSaved >= Self.saveInterval {
                    await save(current, finished: false)
                }
                publish(force: false)
            case "duration":
                duration = data?.doubleValue
                publish(force: true)
            case "pause":
                paused = data?.boolValue ?? false
                publish(force: true)
            case "volume":
                volume = data?.doubleValue
                publish(force: true)
            case "speed":
                speed = data?.doubleValue
                publish(force: true)
            case "chapter":
                // Its title from the list mpv has (the host's, or the file's own).
                let path = current?.target
                guard let number = data?.intValue, number >= 0, let path, let connection else {
                    chapter = nil
                    return publish(force: true)
                }
                let title = (try? await ask(connection, ["get_property", .string("chapter-list/\(number)/title")]))?.stringValue
                chapter = title.flatMap { $0.isEmpty ? nil : (path, DisplayText.clean($0)) }
                publish(force: true)
            default: break
            }
        case "log-message":
            if ["warn", "error", "fatal"].contains(event["level"]?.stringValue ?? ""),
                let text = event["text"]?.stringValue, loggedErrors.count < 20
            {
                let line = DisplayText.cut(DisplayText.clean(text.trimming(.whitespacesAndNewlines)), to: 200)
                if !line.isEmpty { loggedErrors.append((event["prefix"]?.stringValue ?? "", line)) }
            }
        case "start-file":
            loggedErrors = []
        case "file-loaded":
            guard let connection, let path = (try? await ask(connection, ["get_property", "path"]))?.stringValue else {
                return
            }
            let (entry, start) = await came(to: path)
            // Each item starts where it was left: as asked by `play`, else as kept.
            if owner, let entry {
                var at = start
                if at == nil, let id = entry.id, let record = await resumePoint(id, entry), !record.played {
                    at = record.position
                }
                if let at, at > 1 { _ = try? await ask(connection, ["seek", JSONValue(at), "absolute"]) }
                // Else where mpv starts (a `play` resuming starts it there): its first position.
                stretchStart = at.flatMap { $0 > 1 ? $0 : nil }
                if let id = entry.id {
                    giveChapters(of: id, for: path, to: connection)
                    findSegments(of: id, for: path)
                    applyShowPlayback(of: id, for: path, startingAt: at ?? 0, on: connection)
                }
            }
            publish(force: true)
        case "end-file":
            // "stop" and "redirect": replaced or stopped by a command, which did what follows.
            guard owner else { return }
            switch event["reason"]?.stringValue {
            case "eof":
                await save(current, finished: true)
                // A soundbite is over: the file mpv opens next is something else, even when it is
                // its whole episode (the same file, queued).
                if current?.clip != nil {
                    shared.update { state in
                        state.leave()
                        state.current = nil
                    }
                }
            case "error":
                let why = event["file_error"]?.stringValue ?? "cannot play it"
                let said = Self.reason(in: loggedErrors).map { URLRedaction.redact($0) }
                logger.notice(
                    "mpv could not play \(URLRedaction.redact(current?.target ?? "")): \(why)\(said.map { " (\($0))" } ?? "")")
                // Said once, with the item, to whoever watches: the stop that follows is no news.
                failure = Self.failureMessage(title: current?.title, why: why, logged: said)
                publish(force: true)
                failure = nil
                loggedErrors = []
            default: break
            }
        default: break
        }
    }

    /// Where a queued item is taken up: where it was left here or, when newer, where another
    /// device left it (the sync server told, by its media URL: the stream mpv plays, or the
    /// download's source). Nil when nothing is known or the store cannot say (it starts at 0).
    private func resumePoint(_ id: ItemID, _ entry: Entry) async -> PlaybackRecord? {
        let kept = try? await store.playback(id)
        // A video streams from a URL of the moment: it is known by its page.
        let url = entry.local ? (try? await store.download(id))?.url : SyncKeys.episodeURL(of: id) ?? entry.source ?? entry.target
        guard let url, let told = (try? await store.remoteEpisodes(urls: [url]))?[url],
            told.at > kept?.updatedAt ?? .distantPast, let remote = told.playback(for: id)
        else { return kept }
        return remote
    }

    /// Makes the item whose file mpv now plays the current one: the queue up to it is dropped
    /// (mpv played or skipped it). Every process does it (the same change); only the owner
    /// takes the start position.
    /// - Returns: the current item, and where `play` asked it to start.
    private func syncCurrent(path: String) -> (Entry?, Double?, consumed: [ItemID]) {
        let owner = owner
        let (entry, start, consumed) = shared.update { state -> (Entry?, Double?, [ItemID]) in
            if state.current?.target != path {
                var consumed: [ItemID] = []
                state.leave()
                if let index = state.queue.firstIndex(where: { $0.target == path }) {
                    state.current = state.queue[index]
                    consumed = state.queue[...index].compactMap(\.id)
                    state.queue.removeFirst(index + 1)
                } else {
                    state.current = Entry(
                        id: nil, title: Path.name(of: path), target: path, local: !path.contains("://"))
                }
                state.startAt = nil
                return (state.current, nil, consumed)
            }
            guard owner else { return (state.current, nil, []) }
            defer { state.startAt = nil }
            return (state.current, state.startAt, [])
        }
        return (entry, start, consumed)
    }

    /// mpv plays `path`: what it came to (and what it passed over) is up next no more, so it
    /// leaves the store's queue, and mpv is handed what now comes after.
    @discardableResult
    private func came(to path: String) async -> (Entry?, Double?) {
        // A timer set to a position in what played is for it alone.
        if sleep?.position != nil, shared.read().current?.target != path { sleep = nil }
        let (entry, start, consumed) = syncCurrent(path: path)
        if !consumed.isEmpty {
            await leftTheQueue(consumed)
            if planningNext { queueChangedAgain = true } else { await queueChanged(force: true) }
        }
        return (entry, start)
    }

    /// Takes items mpv has come to out of the store's queue.
    private func leftTheQueue(_ ids: [ItemID]) async {
        do {
            try await store.dequeue(ids)
        } catch {
            logger.warning("\(ids.map(\.description).joined(separator: ", ")) played but stay in the queue: \(error)")
        }
    }

    /// mpv went away (quit, `q` in its window, killed): what was playing keeps its position.
    private func closed(_ gone: MPVConnection) async {
        guard connection === gone else { return }
        sleepTask?.cancel()
        sleepTask = nil
        sleep = nil
        if owner { await save(current, finished: false) }
        connection = nil
        if owner { shared.update { $0 = SharedPlayerState.State() } }
        shared.releaseOwnership()
        owner = false
        position = nil
        duration = nil
        paused = false
        publish(force: true)
    }

    /// Keeps where `entry` was left, or that it was played to its end. A clip (a soundbite)
    /// changes neither: hearing one is not listening to the episode.
    private func save(_ entry: Entry?, finished: Bool) async {
        lastSaved = ContinuousClock.now
        guard let entry, let id = entry.id, entry.clip == nil, let position = position ?? (finished ? 0 : nil) else { return }
        let played = finished || PlaybackRecord.isFinished(position: position, duration: duration)
        do {
            try await store.savePlayback(
                PlaybackRecord(
                    id: id, position: played ? 0 : position, duration: duration, played: played,
                    started: stretchStart.map { min($0, position) }))
        } catch {
            logger.warning("cannot save where \(id) was left: \(error)")
        }
    }

    // MARK: Status

    private func makeStatus(controllable: Bool) -> PlayerStatus {
        let stuck = controllable && isStuck
        let state = connection == nil && !stuck ? SharedPlayerState.State() : shared.read()
        let current = state.current
        return PlayerStatus(
            state: current == nil ? .stopped : paused ? .paused : .playing, item: current,
            position: current == nil ? nil : position, duration: current == nil ? nil : duration,
            paused: current != nil && paused, volume: volume, speed: current == nil ? nil : speed, queue: state.queue,
            player: controllable ? "mpv" : nil,
            chapter: chapter.flatMap { $0.path == current?.target ? $0.title : nil }, problem: stuck ? stuckMessage : failure,
            sleep: current == nil ? nil : sleep)
    }

    /// Sends `player.state`: at once for changes, at most once a second for the position alone.
    /// A change that leaves what a client shows as it was (mpv reports duration, pause and
    /// volume one by one as a file loads) is not sent again: a file's start was seven
    /// `playing` in a row.
    /// A seek (`jumped`) is sent at once even when only the position changed: a client that
    /// shows where playback is (the media keys' Position, an editor) would be a second behind.
    private func publish(force: Bool, jumped: Bool = false) {
        let now = ContinuousClock.now
        let due = now - lastNotified >= Self.notifyInterval
        guard force || due else { return }
        let status = makeStatus(controllable: true)
        var unmoved = status
        unmoved.position = lastStatus?.position
        if unmoved == lastStatus, !jumped, !due || status == lastStatus { return }
        lastNotified = now
        lastStatus = status
        events.publish(HostEvent(status))
    }
}

/// `player.json`: what plays and what is queued, shared by every host process of a data dir and
/// changed under a lock; and `player.owner`, whose lock marks the process that acts on mpv's
/// events.
final class SharedPlayerState: Sendable {
    struct State: Codable, Equatable {
        var current: PlayerStatus.Entry?
        var queue: [PlayerStatus.Entry] = []
        /// Where `current` starts, as `play` asked, until the owner has sought there.
        var startAt: Double?
        /// When `play` handed `current` to mpv (seconds since 1970): until mpv has loaded it, an
        /// idle mpv does not mean that nothing plays.
        var requested: Double?
        /// mpv's process id, for stopping one that does not answer.
        var pid: Int32?
        /// What played before `current`, the latest last (`player.previous` goes back to it).
        var previous: [PlayerStatus.Entry]?

        /// `current` is left for another: it goes on the list of what played before.
        mutating func leave() {
            guard let current else { return }
            var before = previous ?? []
            before.removeAll { $0.target == current.target }
            before.append(current)
            previous = Array(before.suffix(SharedPlayerState.remembered))
        }

        init(current: PlayerStatus.Entry? = nil, queue: [PlayerStatus.Entry] = [], pid: Int32? = nil) {
            self.current = current
            self.queue = queue
            self.pid = pid
        }

        /// Whether `play` asked for `current` a moment ago (mpv may not have opened it yet).
        var isLoading: Bool {
            guard current != nil, let requested else { return false }
            return Date().timeIntervalSince1970 - requested < 10
        }
    }

    /// How many items played before are remembered.
    static let remembered = 20

    let path: String
    private let ownerFD = Mutex<Int32>(-1)

    init(path: String) { self.path = path }

    func read() -> State {
        withLock { read(locked: ()) }
    }

    /// Reads, changes and writes the state under the lock.
    @discardableResult
    func update<T>(_ change: (inout State) -> T) -> T {
        withLock {
            var state = read(locked: ())
            let before = state
            let result = change(&state)
            if state != before, let data = try? JSONEncoder().encode(state) {
                let temporary = path + ".tmp"
                let fd = open(temporary, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
                if fd >= 0 {
                    _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    close(fd)
                    rename(temporary, path)
                }
            }
            return result
        }
    }

    /// Takes `player.owner`'s lock unless another process holds it.
    /// - Returns: whether this process is the owner.
    func takeOwnership() -> Bool {
        ownerFD.withLock { fd in
            if fd >= 0 { return true }
            var opened = open(path + ".owner", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            if opened < 0, errno == ENOENT {
                // The folder is made by whoever starts mpv first: this process may be first.
                try? FileManager.default.createDirectory(
                    atPath: Path.directory(of: path), withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
                opened = open(path + ".owner", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
            }
            guard opened >= 0 else { return false }
            guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
                close(opened)
                return false
            }
            fd = opened
            return true
        }
    }

    func releaseOwnership() {
        ownerFD.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    private func read(locked: Void) -> State {
        guard let data = FileManager.default.contents(atPath: path) else { return State() }
        return (try? JSONDecoder().decode(State.self, from: data)) ?? State()
    }

    private func withLock<T>(_ body: () -> T) -> T {
        let folder = Path.directory(of: path)
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let fd = open(path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if fd >= 0 { flock(fd, LOCK_EX) }
        defer { if fd >= 0 { close(fd) } }
        return body()
    }
}

extension HostPaths {
    /// mpv's control socket (`player.*`), beside the background service's (`mpv-<hash>.sock`).
    public func playerSocket(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let service = serviceSocket(environment: environment)
        let folder = Path.directory(of: service)
        let name = Path.name(of: service)
        return folder + "/" + (name.hasPrefix("rpc") ? "mpv" + name.dropFirst(3) : "mpv.sock")
    }
}

/// Where `player.chapter` goes.
enum ChapterStep: Equatable, Sendable {
    case next, previous
    /// 1 first.
    case index(Int)
}
