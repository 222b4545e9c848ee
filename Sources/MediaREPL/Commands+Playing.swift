import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit

extension CommandSpec {
    /// Downloads, the player and artwork.
    static let playing: [CommandSpec] = [
        CommandSpec(
            "download", aliases: ["dl"], usage: "download <n|id>...", method: DownloadsStart.method,
            summary: "download items' media (episodes, videos)"
        ) { line, repl throws(CommandError) in
            let ids = try repl.items(line.words)
            return .call(.each(ids, { DownloadsStart(id: $0) }) { repl, download in repl.present(download: download) })
        },
        CommandSpec(
            "downloads", usage: "downloads", method: DownloadsList.method, summary: "downloads with state, size, progress"
        ) { _, _ in .call(.run(DownloadsList()) { repl, downloads in repl.present(downloads: downloads) }) },
        CommandSpec(
            "pause", usage: "pause <n|id>...", method: DownloadsPause.method, summary: "pause downloads (each keeps what it has)"
        ) { line, repl throws(CommandError) in
            let ids = try repl.items(line.words)
            for id in ids { repl.board.expect(id.description, "paused") }
            return .call(.each(ids, { DownloadsPause(id: $0) }) { repl, download in repl.present(download: download) })
        },
        CommandSpec(
            "resume", usage: "resume <n|id>...", method: DownloadsResume.method,
            summary: "continue paused or failed downloads"
        ) { line, repl throws(CommandError) in
            let ids = try repl.items(line.words)
            return .call(.each(ids, { DownloadsResume(id: $0) }) { repl, download in repl.present(download: download) })
        },
        CommandSpec(
            "cancel", usage: "cancel <n|id>...", method: DownloadsCancel.method,
            summary: "stop downloads and delete their partial files"
        ) { line, repl throws(CommandError) in
            let ids = try repl.items(line.words)
            for id in ids { repl.board.expect(id.description, "cancelled") }
            return .call(.each(ids, { DownloadsCancel(id: $0) }) { repl, download in repl.present(download: download) })
        },
        CommandSpec(
            "remove", aliases: ["rm"], usage: "remove <n|id>... [--keep-file | from <list>]", method: DownloadsRemove.method,
            summary: "forget a download and delete its file (--keep-file keeps it); `from <list>` takes it out of a list",
            arguments: [[], [.words(["from"])]], options: [.flag("--keep-file")]
        ) { line, repl throws(CommandError) in
            let words = line.words
            if words.count == 3, words[1] == "from", !line.has("--keep-file") {
                let id = try repl.item(words[0])
                return .call(
                    .run(ListsRemove(name: words[2], id: id)) { repl, result in
                        repl.display(
                            result.removed ? "took \(result.id) out of \(result.name)" : "\(result.id) was not in \(result.name)")
                    })
            }
            let keepFile = line.has("--keep-file")
            guard !words.contains("from") else { throw CommandError.usage }
            let ids = try repl.items(words)
            for id in ids { repl.board.expect(id.description, "removed") }
            return .call(
                .each(ids, { DownloadsRemove(id: $0, keepFile: keepFile) }) { repl, result in
                    let name = repl.board.title(for: result.id.description).map { Renderer.clean($0) } ?? result.id.description
                    repl.display(
                        result.removed
                            ? "removed the download of \(name)" + (keepFile ? " (the file stays)" : " and its file")
                            : "\(name) has no download")
                })
        },
        CommandSpec(
            "play", usage: "play <n|id>... [--now] [--chapter K] [--soundbite K]", method: PlayerOpen.method,
            summary:
                "play in the configured player (the download if any, else the stream; a movie's trailer, a show's newest episode); with mpv it resumes where it was left, and queues while something plays unless --now; several rows play in turn; --chapter K starts at chapter K; --soundbite K plays just the episode's soundbite K (`show` lists them)",
            options: [.flag("--now"), .value("--chapter", .words([])), .value("--soundbite", .words([]))]
        ) { line, repl throws(CommandError) in
            let now = line.has("--now")
            let ids = try repl.items(line.words)
            guard ids.count == 1 else {
                // Several: the first as asked, the others queued after it.
                for option in ["--chapter", "--soundbite"] where line.options[option] != nil {
                    throw .invalid("\(option) goes with one item")
                }
                return .call(
                    Call(method: PlayerOpen.method) { repl throws(RPCError) in
                        for (index, id) in ids.enumerated() {
                            let result = try await repl.dispatch(PlayerOpen(id: id, now: index == 0 && now ? true : nil))
                            try repl.printJSON(PlayerOpen.self, result)
                            repl.present(opened: result, reason: "where it was left")
                        }
                    })
            }
            let word = line.words[0]
            let id = ids[0]
            // A passage `transcript search` found plays from where it was said.
            var start: Double?
            if let n = Int(word), case .hit(let hit)? = repl.listing.row(n) { start = hit.start }
            var chapter: Int?
            if let text = line.options["--chapter"] {
                guard let number = Int(text), number >= 1 else { throw .invalid("--chapter takes a chapter's number (1 first)") }
                chapter = number
            }
            var soundbite: Int?
            if let text = line.options["--soundbite"] {
                guard let number = Int(text), number >= 1 else {
                    throw .invalid("--soundbite takes a soundbite's number (1 first, as `show` lists them)")
                }
                guard chapter == nil else { throw .invalid("--soundbite has its own start: drop --chapter") }
                soundbite = number
                start = nil
            }
            let reason =
                soundbite.map { "soundbite \($0) alone" } ?? start.map { _ in "where it was said" } ?? chapter.map {
                    "chapter \($0)"
                }
                ?? "where it was left"
            let request = PlayerOpen(
                id: id, now: now || chapter != nil || start != nil || soundbite != nil ? true : nil, start: start,
                chapter: chapter,
                soundbite: soundbite)
            return .call(.run(request) { repl, result in repl.present(opened: result, reason: reason) })
        },
        .plain(
            "player", summary: "what plays and what is queued; its subcommands control it (mpv)",
            subcommands: REPL.playerSubcommands, PlayerStatusGet()
        ) { repl, status in repl.present(player: status) },
        CommandSpec(
            "toggle", usage: "toggle", method: PlayerPause.method,
            summary: "pause or resume what plays (`player pause`, `player resume`)"
        ) { line, _ throws(CommandError) in
            guard line.words.isEmpty else { throw CommandError.usage }
            return .call(
                Call(method: PlayerPause.method) { repl throws(RPCError) in
                    let status = try await repl.dispatch(PlayerStatusGet())
                    let changed =
                        status.state == .paused
                        ? try await repl.dispatch(PlayerResume()) : try await repl.dispatch(PlayerPause())
                    try repl.printJSON(PlayerPause.self, changed)
                    repl.present(player: changed)
                })
        },
        CommandSpec(
            "seek", usage: "seek <+s|-s|mm:ss|s>", method: PlayerSeek.method,
            summary: "jump in what plays: +30 forward, -10 back, 12:30 or 750 to that point"
        ) { line, _ throws(CommandError) in try REPL.seekCall(line) },
        .plain(
            "stop", summary: "stop playing (the position and the queue are kept)", PlayerStop()
        ) { repl, status in repl.present(stopped: status) },
        .plain(
            "skip", summary: "play the queue's next item (stops when nothing is queued)", PlayerNext()
        ) { repl, status in repl.present(player: status) },
        CommandSpec(
            "sleep", usage: "sleep <30m|1h|90s|end|chapter|off>", method: PlayerSleep.method,
            summary: "pause later, fading out: after a while, at the end of this, or of its chapter",
            arguments: [[.words(["end", "chapter", "off"])]]
        ) { line, _ throws(CommandError) in
            let word = try line.single().lowercased()
            let request: PlayerSleep
            switch word {
            case "end", "chapter": request = PlayerSleep(at: word)
            case "off": request = PlayerSleep(off: true)
            default:
                guard let minutes = REPL.minutes(word) else {
                    throw CommandError.invalid("sleep takes a time (30m, 1h, 90s, or minutes), end, chapter or off")
                }
                request = PlayerSleep(minutes: minutes)
            }
            return .call(
                .run(request) { repl, status in
                    repl.display(status.sleep.map(REPL.sleepLine) ?? "sleep: off")
                })
        },
        CommandSpec(
            "volume", aliases: ["vol"], usage: "volume <0-100>", method: PlayerVolume.method, summary: "the player's volume"
        ) { line, _ throws(CommandError) in try REPL.volumeCall(line) },
        CommandSpec(
            "speed", usage: "speed <0.25-4>", method: PlayerSpeed.method,
            summary: "how fast what plays goes (mpv keeps the pitch; a show's speed rule applies again at its next episode)"
        ) { line, _ throws(CommandError) in
            guard let text = try? line.single() else { throw CommandError.usage }
            guard let rate = Double(text.hasSuffix("x") ? String(text.dropLast()) : text), (0.25...4).contains(rate) else {
                throw CommandError.invalid("the speed is a number from 0.25 to 4 (1 as recorded)")
            }
            return .call(.run(PlayerSpeed(rate: rate)) { repl, status in repl.present(player: status) })
        },
        CommandSpec(
            "played", usage: "played <n|id>...", method: PlayerMark.method, summary: "mark items played"
        ) { line, repl throws(CommandError) in try REPL.markCall(line, repl: repl, played: true) },
        CommandSpec(
            "unplayed", usage: "unplayed <n|id>...", method: PlayerMark.method,
            summary: "mark items not played (forgets where they were left)"
        ) { line, repl throws(CommandError) in try REPL.markCall(line, repl: repl, played: false) },
        CommandSpec(
            "chapters", usage: "chapters <n|id>", method: MediaChapters.method,
            summary: "an item's chapters: time and title (`play <n> --chapter K` starts at one, `chapter next` moves on)"
        ) { line, repl throws(CommandError) in
            let id = try repl.item(try line.single())
            return .call(.run(MediaChapters(id: id)) { repl, result in await repl.present(chapters: result) })
        },
        CommandSpec(
            "transcript", usage: "transcript <n|id> [--follow] | transcript search <words>", method: MediaTranscript.method,
            summary:
                "what was said in an episode, with times and speakers (--follow: each line as it plays); `transcript search` finds words in every transcript read so far (`play n` starts there)",
            arguments: [[.words(["search"])]], options: [.flag("--follow")]
        ) { line, repl throws(CommandError) in
            let words = line.words
            if words.first == "search" {
                let text = words.dropFirst().joined(separator: " ")
                guard !text.isEmpty else { throw .invalid("transcript search takes the words to find") }
                return .call(
                    Call(method: TranscriptsSearch.method) { repl throws(RPCError) in
                        let result = try await repl.dispatch(TranscriptsSearch(text: text))
                        try repl.printJSON(TranscriptsSearch.self, result)
                        repl.present(hits: result, query: text)
                    })
            }
            let id = try repl.item(try line.single())
            if line.has("--follow") {
                return .call(
                    .run(MediaTranscript(id: id)) { repl, result in
                        repl.board.follow(result.id, cues: result.cues)
                        repl.display(
                            result.timed
                                ? "following its \(result.cues.count) lines as it plays (`play` it if it does not)"
                                : "this transcript has no times to follow; `transcript \(result.id)` shows it whole")
                    })
            }
            return .call(
                Call(method: MediaTranscript.method) { repl throws(RPCError) in
                    let result: MediaTranscript.Response
                    do throws(RPCError) {
                        result = try await repl.dispatch(MediaTranscript(id: id))
                    } catch  where ["notFound", "unsupported"].contains(error.data?["kind"]?.stringValue ?? "") {
                        // A plain fact, not a failure: most episodes have none.
                        let name = repl.listing.title(of: id).map { Renderer.clean($0) } ?? id.description
                        repl.display("no transcript for \(name)")
                        return
                    }
                    try repl.printJSON(MediaTranscript.self, result)
                    await repl.present(transcript: result)
                })
        },
        CommandSpec(
            "chapter", usage: "chapter <next|prev|K>", method: PlayerChapter.method,
            summary: "move between the chapters of what plays: next, prev (this one's start when a few seconds in), or K",
            arguments: [[.words(["next", "prev"])]]
        ) { line, _ throws(CommandError) in
            let to = try line.single()
            guard ["next", "prev", "previous"].contains(to.lowercased()) || (Int(to) ?? 0) >= 1 else {
                throw .invalid("chapter takes next, prev or a chapter's number (1 first)")
            }
            return .call(.run(PlayerChapter(to: to)) { repl, status in repl.present(player: status) })
        },
        CommandSpec(
            "artwork", aliases: ["art"], usage: "artwork <n|id>", method: MediaArtwork.method,
            summary: "an item's image as a local file (cached), drawn large where the terminal draws pictures"
        ) { line, repl throws(CommandError) in
            let id = try repl.item(try line.single())
            return .call(
                .run(MediaArtwork(id: id)) { repl, result in
                    let path = repl.renderer.fit == nil ? result.path : Renderer.home(result.path)
                    repl.display(path + repl.renderer.dim(result.cached ? "  (cached)" : ""))
                    await repl.drawLarge(result)
                })
        },
    ]
}

extension REPL {
    /// "30m", "1h", "90s", "1h30m" or a number of minutes, in minutes.
    static func minutes(_ text: String) -> Double? {
        if let plain = Double(text) { return plain > 0 ? plain : nil }
        var total = 0.0
        var number = ""
        for character in text {
            if character.isNumber || character == "." {
                number.append(character)
                continue
            }
            guard let value = Double(number) else { return nil }
            switch character {
            case "h": total += value * 60
            case "m": total += value
            case "s": total += value / 60
            default: return nil
            }
            number = ""
        }
        guard number.isEmpty, total > 0 else { return nil }
        return total
    }
}
