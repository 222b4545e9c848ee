import Basics
import FoundationEssentials
import HostAPI
import MediaHost
import MediaKit
import MediaStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The player: `player.*`, over mpv's JSON IPC (or any other program as `player.command`, which
/// plays without control), built on the runtime.
public enum PlayerModule: HostModule {
    public static let methods: [any RPCMethod.Type] = [
        PlayerOpen.self, PlayerStatusGet.self, PlayerPause.self, PlayerResume.self, PlayerSeek.self, PlayerStop.self,
        PlayerVolume.self, PlayerSpeed.self, PlayerNext.self, PlayerPrevious.self, PlayerSleep.self, PlayerChapter.self,
        PlayerMark.self,
    ]
    public static let notifications: [any HostNotification.Type] = [PlayerStatus.self, PlayerSkip.self]

    /// An mpv a front end started (the REPL that handed over) is followed from here on; one that
    /// does not answer is reported by player.status, and never delays serving.
    public static func serviceWillStart(_ host: HostRuntime) async {
        Task.detached { _ = try? await host.dispatcher.run(PlayerStatusGet()) }
    }

    /// The queue changed: while mpv plays, it is handed the queue's next items.
    public static func libraryDidChange(_ host: HostRuntime, _ part: MethodEffect.Library) async {
        guard part == .queue, PlayerController.isMPV(host.config.command(HostSettings.playerCommand)) else { return }
        await host.player.queueChanged(force: true)
    }
}

extension PlayerModule {
    /// What mpv plays and was handed to play next (their files stay while it may open them).
    public static func itemsInUse(_ host: HostRuntime) async -> Set<ItemID> {
        guard let player = host.existingComponent(PlayerController.self) else { return [] }
        return await player.handed
    }
}

extension HostRuntime {
    /// The mpv this host plays through.
    public var player: PlayerController { component() }
}

extension PlayerOpen: RPCMethod {
    /// How long a player that exits is taken to have failed to start.
    static let earlyExitWindow: Duration = .seconds(2)

    public func run(on host: HostRuntime) async throws -> Response {
        let (played, chosen, page, rest) = try await host.whatToPlay(id)
        let (target, local) = try await host.playTarget(played, page: page)
        var note = chosen
        // Another format than the feed's own file (player.format): said, with its bitrate.
        if !local, let item = try? await host.itemOrSnapshot(played), let format = host.preferredFormat(of: item),
            format.sources.first == target
        {
            let rate = format.bitrate.map { " at \(Int(($0 / 1000).rounded())) kb/s" } ?? ""
            note = [chosen, "the \(format.type) file\(rate)"].compactMap { $0 }.joined(separator: ", ")
        }
        let words = host.config.command(HostSettings.playerCommand)
        guard let program = words.first, let executable = Path.findProgram(program) else {
            throw HostError.player(
                "the player '\(words.first ?? "")' was not found; install it or set player.command (e.g. `config player.command vlc`)"
            )
        }
        let command = words + [target]
        if soundbite != nil, !PlayerController.isMPV(words) {
            throw HostError.invalidArgument(
                "a soundbite plays in mpv only (player.command is '\(words.joined(separator: " "))'); `config player.command mpv`"
            )
        }
        if PlayerController.isMPV(words) {
            // A soundbite needs the item: a provider that cannot say is said, not taken for none.
            let item = soundbite != nil ? try await host.itemOrSnapshot(played) : try? await host.itemOrSnapshot(played)
            let record = try await host.playback(of: played, item: item)
            var start = start
            var clip: PlayerStatus.Clip?
            if let soundbite {
                guard chapter == nil, self.start == nil else {
                    throw HostError.invalidArgument("a soundbite has its own start: ask for it without start or chapter")
                }
                let bites = item?.namespace?.soundbites ?? []
                guard (1...max(1, bites.count)).contains(soundbite), !bites.isEmpty else {
                    // Said by its title: an episode's id means nothing to a person.
                    let name = item.map { "'\(DisplayText.cut(DisplayText.clean($0.title), to: 60))'" } ?? played.description
                    throw HostError.invalidArgument(
                        bites.isEmpty
                            ? "\(name) has no soundbites (`show` lists what it has)"
                            : bites.count == 1
                                ? "\(name) has 1 soundbite: ask for 1"
                                : "\(name) has \(bites.count) soundbites; ask for 1-\(bites.count)")
                }
                // As a plugin may give it: a stretch inside the episode, or nothing to play.
                let bite = bites[soundbite - 1]
                let end = min(bite.start + bite.duration, item?.duration ?? .infinity)
                guard bite.start.isFinite, bite.duration.isFinite, bite.start >= 0, end > bite.start else {
                    throw HostError.invalidArgument("soundbite \(soundbite) is not a stretch of the episode (its feed's times)")
                }
                clip = PlayerStatus.Clip(start: bite.start, end: end)
                start = bite.start
            }
            if let chapter {
                let contents = try await host.dispatcher.run(MediaChapters(id: played)).contents
                guard (1...max(1, contents.count)).contains(chapter), !contents.isEmpty else {
                    throw HostError.invalidArgument(
                        contents.isEmpty
                            ? "\(played) has no chapters"
                            : "\(played) has \(contents.count) chapters; ask for 1-\(contents.count)")
                }
                start = contents[chapter - 1].start
            }
            let resume = start ?? record.flatMap { $0.played ? nil : $0.position }
            let known = item?.title
            let title = known ?? played.description
            // While something plays, it goes into the queue (the store's, which every front end
            // sees and which outlives the player), and mpv is handed it when it is next.
            if now != true, start == nil, chapter == nil, clip == nil, await host.player.playsNow() {
                let count = try await host.store.enqueue([item ?? MediaItem(id: played, title: title)] + rest)
                await host.player.queueChanged(force: true)
                let pid = await host.player.pid
                return Response(
                    id: id, command: command, target: target, local: local, pid: Int(pid ?? 0),
                    played: played == id ? nil : played,
                    note: note, title: known, queued: true, queueLength: count, filled: rest.isEmpty ? nil : rest.count)
            }
            let queued = try await host.player.play(
                PlayerStatus.Entry(
                    id: played, title: title, target: target, local: local, clip: clip,
                    source: local || item?.enclosure?.url == target ? nil : item?.enclosure?.url),
                now: now ?? false || clip != nil,
                resume: resume, command: words, executable: executable)
            // What plays is no longer up next, and mpv is handed the queue's items after it
            // (`play --now` replaces mpv's playlist). A soundbite leaves its episode where it is.
            if !queued, clip == nil {
                do {
                    try await host.store.dequeue([played])
                } catch {
                    host.logger.warning("\(played) plays but stays in the queue: \(error)")
                }
            }
            // A show, channel or playlist: the rest of it follows, in its order.
            var filled: Int?
            if !rest.isEmpty {
                do {
                    try await host.store.enqueue(rest)
                    filled = rest.count
                } catch {
                    host.logger.warning("the rest of \(id) was not queued: \(error)")
                }
            }
            if !queued || filled != nil { await host.player.queueChanged(force: true) }
            let pid = await host.player.pid
            return Response(
                id: id, command: command, target: target, local: local, pid: Int(pid ?? 0),
                played: played == id ? nil : played, note: note, title: known, queued: queued ? true : nil,
                resumedAt: !queued && ((resume ?? 0) > 1 || clip != nil && (resume ?? 0) > 0) ? resume : nil, filled: filled)
        }
        let player = try PlayerProcess.spawn(executable, arguments: Array(command.dropFirst()))
        if let failure = await player.earlyFailure(within: Self.earlyExitWindow) {
            throw HostError.player("\(program) \(failure) (\(URLRedaction.redact(target)))")
        }
        let title = played == id && note == nil ? nil : (try? await host.itemOrSnapshot(played))?.title
        return Response(
            id: id, command: command, target: target, local: local, pid: Int(player.pid), played: played == id ? nil : played,
            note: note, title: title)
    }
}

/// A player started in its own session with no terminal, so it outlives us and never writes
/// into the REPL or the RPC stream. Its stderr is read (the last line kept) until it exits;
/// it is a `ChildProcess`, reaped when it exits and signalled only through its pidfd.
final class PlayerProcess: Sendable {
    let process: ChildProcess
    var pid: pid_t { process.pid }
    /// The last line it wrote to stderr.
    private let lastLine = Mutex("")

    private init(process: ChildProcess) { self.process = process }

    static func spawn(_ executable: String, arguments: [String]) throws -> PlayerProcess {
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable, arguments: arguments, standardInput: .null, standardOutput: .null, standardError: .pipe,
                grouping: .session)
        } catch {
            throw HostError.player("cannot start \(executable): \(error)")
        }
        guard let readEnd = child.standardError else { preconditionFailure("the player's stderr was asked for") }
        let process = PlayerProcess(process: child)
        detachThread { process.drain(readEnd) }
        return process
    }

    /// Sends `signal` while it runs (never to a process that took its pid after it ended).
    func terminate(signal: Int32 = SIGTERM) { process.terminate(signal: signal) }

    /// Reads stderr to its end (so the player never blocks on a full pipe), keeping the last
    /// non-empty line.
    private func drain(_ fd: Int32) {
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var tail: [UInt8] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            tail += buffer[0..<n]
            if tail.count > 8192 { tail.removeFirst(tail.count - 8192) }
            let text = String(decoding: tail, as: UTF8.self)
            if let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).last(where: { !$0.allSatisfy(\.isWhitespace) })
            {
                lastLine.withLock { $0 = DisplayText.clean(String(line.suffix(300))) }
            }
        }
    }

    /// Why the player stopped within `window`, or nil when it is still running (or exited
    /// cleanly, as players that hand over to another process do).
    func earlyFailure(within window: Duration) async -> String? {
        let deadline = ContinuousClock.now + window
        while ContinuousClock.now < deadline {
            if process.ending != nil {
                // Give the stderr reader a moment to see the last line.
                try? await Task.sleep(for: .milliseconds(50))
                let failure = failure()
                return failure?.isEmpty == true ? nil : failure
            }
            try? await Task.sleep(for: .milliseconds(25))
        }
        return nil
    }

    /// "; its last words: …" when it wrote anything to stderr, else "".
    var lastWords: String {
        let line = lastLine.withLock { $0 }
        return line.isEmpty ? "" : "; its last words: \(line)"
    }

    /// How it ended when it has: "" for a clean exit, else the status or signal and its last
    /// line; nil while it runs.
    func failure() -> String? {
        let line = lastLine.withLock { $0 }
        guard let ending = process.ending else { return nil }
        let said = line.isEmpty ? "" : ": " + line
        switch ending {
        case .signalled(let signal): return "was killed by signal \(signal) at once\(said)"
        case .exited(let code): return code == 0 ? "" : "exited at once with status \(code)\(said)"
        }
    }
}

extension HostRuntime {
    /// What playing `id` means: itself when it is media (or downloaded), else a movie's first
    /// trailer, a show's newest episode, a channel's newest video, a playlist's first.
    /// - Returns: the item to play, what it is in words when it is another, and the page the
    ///   item gave for it (played when that item cannot be asked for).
    /// - Returns: what plays, what was chosen in words, the page it plays from, and (for a show,
    ///   channel or playlist) the rest of what was listed that was not played, in its order, to
    ///   queue after it.
    func whatToPlay(_ id: ItemID) async throws -> (ItemID, String?, String?, [MediaItem]) {
        if let download = try await store.download(id), download.state == .completed { return (id, nil, nil, []) }
        let item = try await itemOrSnapshot(id)
        if item.enclosure != nil || [.video, .episode, .post].contains(id.kind) { return (id, nil, nil, []) }
        if let plays = item.plays { return (plays.id, plays.label ?? "what it plays", plays.url, []) }
        // Not a container: what a download would fetch plays (playTarget asks for it).
        guard [.podcast, .channel, .playlist].contains(id.kind) else { return (id, nil, nil, []) }
        // The newest by date (children may come in any order); undated ones count as oldest.
        // A provider that lists oldest first has its newest on its last page: pages that go
        // forward in time are followed, a few at most.
        var page = try await withProvider(id.provider) { try await $0.children(of: id, cursor: nil) }
        var listed = page.items
        var followed = 0
        while id.kind != .playlist, let next = page.next, followed < Self.pagesFollowedForNewest,
            Self.goesForwardInTime(page.items)
        {
            let current = page
            page = try await withProvider(id.provider) { try await $0.children(of: id, cursor: next) }
            followed += 1
            // A cursor that leads back to the page it came from ends it.
            if page.items.map(\.id) == current.items.map(\.id) { break }
            listed += page.items
        }
        let playable = listed.filter { $0.enclosure != nil || $0.kind == .video }
        let newest = playable.enumerated().max { a, b in
            let (da, db) = (a.element.published.flatMap(ISODate.parse), b.element.published.flatMap(ISODate.parse))
            switch (da, db) {
            case (let x?, let y?): return x < y || (x == y && a.offset > b.offset)
            case (nil, _?): return true
            case (_?, nil): return false
            case (nil, nil): return a.offset > b.offset
            }
        }
        guard let first = newest?.element else {
            throw ProviderFailure(provider: id.provider, error: .notFound("\(item.title) has nothing to play yet"))
        }
        let note =
            switch id.kind {
            case .podcast: "the newest episode"
            case .channel: "the newest video"
            default: "the first video"
            }
        // The rest in the listing's order (a playlist's, a feed's), what was played left out.
        let played = try await store.playbacks(for: playable.map(\.id)).filter { $0.value.played }
        let rest = playable.filter { $0.id != first.id && played[$0.id] == nil }.prefix(Self.queuedWithAShow)
        return (first.id, note, nil, Array(rest))
    }

    /// Items of a show, channel or playlist queued at most when it is played.
    static let queuedWithAShow = 50

    /// Pages read at most after the first to find a show's newest episode.
    static let pagesFollowedForNewest = 20

    /// Whether the dated items of a page run from older to newer (a provider listing oldest first).
    static func goesForwardInTime(_ items: [MediaItem]) -> Bool {
        let dates = items.compactMap { $0.published.flatMap(ISODate.parse) }
        guard let first = dates.first, let last = dates.last, dates.count > 1 else { return false }
        return first < last
    }

    /// Of an episode offered in several formats, the one `player.format` and `player.bitrate`
    /// ask for, when it is not the feed's own file.
    func preferredFormat(of item: MediaItem) -> PodcastNamespace.AlternateEnclosure? {
        let kind = config.string(HostSettings.playerFormat)
        guard kind != "feed", let namespace = item.namespace else { return nil }
        let kbps = config.integer(HostSettings.playerBitrate)
        return namespace.alternate(kind: kind, maxBitrate: kbps > 0 ? Double(kbps) * 1000 : nil, enclosure: item.enclosure)
    }

    /// The file or URL to hand the player for a media item: the download when complete, else
    /// the media URL, a post's first audio or video, or the page (which mpv resolves for YouTube).
    func playTarget(_ id: ItemID, page: String? = nil) async throws -> (String, Bool) {
        if let download = try await store.download(id), download.state == .completed,
            FileManager.default.fileExists(atPath: download.path)
        {
            return (download.path, true)
        }
        let item: MediaItem
        do {
            item = try await itemOrSnapshot(id)
        } catch {
            // What another item plays (a movie's trailer), its provider not configured here:
            // the page the linking item gave for it still plays.
            if let page { return (page, false) }
            throw error
        }
        if let url = item.enclosure?.url { return (preferredFormat(of: item)?.sources.first ?? url, false) }
        if id.kind == .post {
            // Its video or audio before its images (a post may show pictures beside a clip).
            let media = item.entities?.filter { $0.type == .media } ?? []
            let playable = media.first { $0.text.hasPrefix("[video]") || $0.text.hasPrefix("[audio]") } ?? media.first
            guard let media = playable?.value else {
                throw ProviderFailure(
                    provider: id.provider, error: .notFound("this post has no audio or video; `show` lists its links"))
            }
            return (media, false)
        }
        // A video's stream, as the provider finds its downloads (mpv's own yt-dlp would need the
        // network and the real site); its page when the provider has none or cannot say.
        if id.kind == .video {
            do {
                if let source = try await withProvider(id.provider, { try await $0.streamSource(for: id) }) {
                    return (source.url.absoluteString, false)
                }
            } catch {
                logger.notice("\(id): no stream found (\(error)); the player is given its page")
            }
            if let url = item.url { return (url, false) }
        }
        // No stream: what a download would fetch (a plugin's item may have only that).
        if let source = try? await withProvider(id.provider, { try await $0.downloadSource(for: id) }) {
            return (source.url.absoluteString, false)
        }
        // A page plays where the player resolves it (mpv and YouTube); a movie's page does not.
        guard let url = item.url, id.kind != .movie else {
            throw ProviderFailure(
                provider: id.provider,
                error: .notFound(
                    "\(item.title) has nothing to play: \(id.provider) gives no media file, trailer or download for it"))
        }
        return (url, false)
    }
}

// MARK: Control (mpv)

extension HostRuntime {
    /// The player, when `player.command` is mpv (which the host controls).
    /// - Throws: `HostError.player` saying how to get control.
    func controlledPlayer() throws -> PlayerController {
        let words = config.command(HostSettings.playerCommand)
        guard PlayerController.isMPV(words) else {
            throw HostError.player(
                "the player '\(words.first ?? "")' (player.command) cannot be paused or sought from here; install mpv and run `config player.command mpv` to control playback"
            )
        }
        return player
    }
}

extension PlayerStatusGet: RPCMethod {
    public func run(on host: HostRuntime) async throws -> PlayerStatus {
        let controllable = PlayerController.isMPV(host.config.command(HostSettings.playerCommand))
        return await host.player.status(controllable: controllable)
    }
}

extension PlayerPause: RPCMethod {
    public func run(on host: HostRuntime) async throws -> PlayerStatus {
        try await host.controlledPlayer().pause(true)
        return await host.player.status(controllable: true)
    }
}

extension PlayerResume: RPCMethod {
    public func run(on host: HostRuntime) async throws -> PlayerStatus {
        try await host.controlledPlayer().pause(false)
        return await host.player.status(controllable: true)
    }
}

extension PlayerSeek: RPCMethod {
    public func run(on host: HostRuntime) async throws -> PlayerStatus {
        guard seconds.isFinite, relative == true || seconds >= 0 else {
            throw HostError.invalidArgument("seconds must be a number (0 or more unless relative)")
        }
        try await host.controlledPlayer().seek(seconds, relative: relative ?? false)
        return await host.player.status(controllable: true)
    }
}

extension PlayerStop: RPCMethod {
    public func run(on host: HostRuntime) async throws -> PlayerStatus {
        try await host.controlledPlayer().stop()
        return await host.player.status(controllable: true)
    }
}

extension PlayerVolume: RPCMethod {
    public func run(on host: HostRuntime) async throws -> PlayerStatus {
        guard level.isFinite, (0...130).contains(level) else { throw HostError.invalidArgument("level must be 0-130") }
        try await host.controlledPlayer().setVolume(level)
        return await host.player.status(controllable: true)
    }
}

extension PlayerSpeed: RPCMethod {
    public func run(on host: HostRuntime) async throws -> PlayerStatus {
        guard rate.isFinite, (0.25...4).contains(rate) else { throw HostError.invalidArgument("rate must be 0.25-4") }
        try await host.controlledPlayer().setSpeed(rate)
        return await host.player.status(controllable: true)
    }
}

extension PlayerChapter: RPCMethod {
    public func run(on host: HostRuntime) async throws -> PlayerStatus {
        let step: ChapterStep
        switch to.lowercased() {
        case "next": step = .next
        case "previous", "prev": step = .previous
        default:
            guard let index = Int(to), index >= 1 else {
                throw HostError.invalidArgument("to is next, previous or a chapter's number (1 first)")
            }
            step = .index(index)
        }
        try await host.controlledPlayer().chapter(step)
        return await host.player.status(controllable: true)
    }
}

extension PlayerNext: RPCMethod {
    public func run(on host: HostRuntime) async throws -> PlayerStatus {
        // Nothing plays: the queue's first item starts (it leaves the queue as it does).
        if PlayerController.isMPV(host.config.command(HostSettings.playerCommand)), await !host.player.playsNow(),
            let first = try await host.store.queue(limit: 1).items.first
        {
            _ = try await host.dispatcher.run(PlayerOpen(id: first.id, now: true))
            return await host.player.status(controllable: true)
        }
        try await host.controlledPlayer().next()
        return await host.player.status(controllable: true)
    }
}

extension PlayerPrevious: RPCMethod {
    public func run(on host: HostRuntime) async throws -> PlayerStatus {
        let player = try host.controlledPlayer()
        guard await player.playsNow() else { throw HostError.player("nothing is playing (`play <n>` starts something)") }
        guard let before = await player.backToPrevious(), let id = before.id else {
            try await player.seek(0, relative: false)
            return await player.status(controllable: true)
        }
        // A soundbite that played is not queued back: its episode was not asked for.
        let left = await player.playing.flatMap { $0.clip == nil ? $0.id : nil }
        _ = try await host.dispatcher.run(PlayerOpen(id: id, now: true))
        // What played is next again: at the front of the queue (once the other plays, so it is
        // not taken for what plays and off the queue), and taken up where it was left.
        if let left {
            try await host.store.enqueue([try await host.itemOrSnapshot(left)], next: true)
            await player.queueChanged(force: true)
        }
        return await player.status(controllable: true)
    }
}

extension PlayerSleep: RPCMethod {
    public func run(on host: HostRuntime) async throws -> PlayerStatus {
        let timer: PlayerController.SleepTimer
        switch (minutes, at, off) {
        case (nil, nil, true?): timer = .off
        case (let minutes?, nil, nil):
            guard minutes.isFinite, minutes > 0, minutes <= 24 * 60 else {
                throw HostError.invalidArgument("minutes must be more than 0 and at most 1440 (a day)")
            }
            timer = .after(minutes * 60)
        case (nil, "end"?, nil): timer = .end
        case (nil, "chapter"?, nil): timer = .chapter
        default:
            throw HostError.invalidArgument("give one of minutes, at (end or chapter) or off: true")
        }
        // A one-shot call ends with its process: the timer would be gone with it.
        if timer != .off, !host.inSession {
            throw HostError.player(
                "a sleep timer needs a mediahost that stays running, and this one ends with its command: "
                    + "set it in the REPL, or through the background service (`mediahost serve`; `call` then uses it)")
        }
        let player = try host.controlledPlayer()
        try await player.setSleep(timer)
        return await player.status(controllable: true)
    }
}

extension PlayerMark: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        guard !ids.isEmpty, ids.count <= 10_000 else { throw HostError.invalidArgument("ids must list 1 to 10000 items") }
        if let position {
            guard !played, ids.count == 1, let id = ids.first else {
                throw HostError.invalidArgument(
                    "position is where one item not played yet was left: give one id and played false")
            }
            guard position.isFinite, position >= 0, position < 1_000_000 else {
                throw HostError.invalidArgument("position is seconds from 0")
            }
            if let duration, !(duration.isFinite && duration > 0 && duration < 1_000_000) {
                throw HostError.invalidArgument("duration is seconds, more than 0")
            }
            try await host.store.savePlayback(PlaybackRecord(id: id, position: position, duration: duration, played: false))
            return Response(ids: ids, played: false)
        }
        if duration != nil { throw HostError.invalidArgument("duration goes with position") }
        try await host.store.markPlayed(ids, played: played)
        return Response(ids: ids, played: played)
    }
}
