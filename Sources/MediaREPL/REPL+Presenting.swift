import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit

/// How the REPL shows what each call answered, and which listing its rows then refer to.
extension REPL {
    // MARK: Presenting responses (and remembering listings)

    /// Makes `new` the listing rows refer to, and shows it.
    func show(_ new: Listing, _ text: String) {
        listing = new
        display(text)
    }

    func present(page: Page, request: PagedRequest, pictures: Bool = false) {
        // Nothing to number: say why, and keep the last listing's rows (`fav 2` still means
        // what it meant before).
        if page.items.isEmpty, page.prev == nil, let reason = Self.emptyReason(request) {
            return display(renderer.dim("(\(reason))"))
        }
        // A search across providers shows each provider's items under its name.
        var grouped = false
        if case .search(let search) = request, search.provider == nil { grouped = true }
        show(
            .items(page.items, paging: Paging(request: request, next: page.next, prev: page.prev)),
            renderer.items(page, grouped: grouped))
        if pictures || listingPictures { presentThumbnails(page.items, from: 1) }
    }

    /// What is new from the followed favorites: rows like any listing's, then what could not be read.
    func present(latest: FavoritesLatest.Response, pictures: Bool = false, live: Bool = false) {
        guard latest.followed > 0 else {
            return display(
                renderer.dim("(no followed favorites: `fav <n>` on a show, channel or person follows it)"))
        }
        let from = "\(latest.followed) followed favorite\(latest.followed == 1 ? "" : "s")"
        var text =
            latest.items.isEmpty
            ? renderer.dim(live ? "(no live streams from \(from))" : "(nothing new from \(from))")
            : renderer.items(Page(items: latest.items), followed: true)
        for failure in latest.errors ?? [] {
            text += "\n" + renderer.dim("  \(failure.id): \(Renderer.clean(failure.message))")
        }
        show(.items(latest.items, paging: nil), text)
        if pictures || listingPictures { presentThumbnails(latest.items, from: 1) }
    }

    /// What `rules unset` left: the value that applies now and where it comes from.
    func present(unset key: String?, show: ItemID?, rules: ShowRules) {
        let title = Renderer.clean(rules.title)
        if let key, let rule = rules.rules.first(where: { $0.key == key.lowercased() }) {
            let from = rule.from == "default" ? "every show's" : "built in"
            display("\(title): \(rule.key) \(rule.value.isEmpty ? "(none)" : rule.value) (\(from))")
        } else {
            display(
                show == nil ? "every show: the built-in rules apply again" : "\(title): no rules of its own; every show's apply")
        }
    }

    /// Under a followed show's details: its rules that are not built in.
    func presentOwnRules(of item: MediaItem) async {
        guard item.favorite == true, item.id.kind.isContainer else { return }
        do {
            let rules = try await dispatch(RulesList(show: item.id))
            let set = (rules.items.first?.rules ?? []).filter { $0.from != "built-in" }.map { rule in
                "\(rule.key) \(rule.value)\(rule.from == "default" ? " (default)" : "")"
            }
            display(
                renderer.dim(
                    set.isEmpty
                        ? "rules: none of its own (`rules set <n> <key> <value>`)" : "rules: " + set.joined(separator: ", ")))
        } catch {
            display(renderer.dim("rules: cannot be read: \(error.message)"))
        }
    }

    /// The inbox: its items as rows, or why it is empty and what to do.
    func present(new: NewList.Response, pictures: Bool = false) {
        guard !new.items.isEmpty else {
            let why =
                new.refreshed.map { "(nothing new since you looked; refreshed \(Self.when($0)); `refresh` reads now)" }
                ?? "(nothing refreshed yet: `fav` a show to follow it, then `refresh`)"
            return display(renderer.dim(why))
        }
        var text = renderer.items(Page(items: new.items), followed: true)
        if new.total > new.items.count {
            text += "\n" + renderer.dim("(\(new.total - new.items.count) more: `new` again)")
        }
        show(.items(new.items, paging: nil), text)
        if pictures || listingPictures { presentThumbnails(new.items, from: 1) }
    }

    /// An ISO 8601 time as "14:05" today, else "2026-11-28 14:05" (UTC, as stored).
    static func when(_ iso: String) -> String {
        let day = iso.prefix(10)
        let time = iso.dropFirst(11).prefix(5)
        guard !time.isEmpty else { return String(day) }
        return day == ISODate.string(from: Date()).prefix(10) ? "at \(time) UTC" : "\(day) \(time) UTC"
    }

    /// Why a first page is empty, in the terms of what was asked.
    static func emptyReason(_ request: PagedRequest) -> String? {
        switch request {
        case .browse(let browse):
            return "nothing in \(browse.provider)'s '\(browse.category)' now; `categories \(browse.provider)` lists them"
        case .search(let search):
            return "nothing found for '\(search.query)'" + (search.provider.map { " in \($0)" } ?? "")
        case .children(let children):
            switch children.id.kind {
            case .post: return "no replies yet"
            case .podcast: return "no episodes yet"
            case .channel: return "no videos yet"
            case .playlist: return "the playlist is empty"
            case .movie: return "no similar movies are known"
            default: return "nothing inside"
            }
        case .queue: return "the queue is empty; `queue add <n>` queues rows of a listing"
        case .favorites, .list:
            return nil
        }
    }

    func present(categories: [MediaCategory], of provider: String) {
        categoryCache.set(provider, categories)
        show(.categories(provider: provider, categories), renderer.categories(categories))
    }

    func present(providers: [ProvidersList.ProviderInfo]) {
        show(.providers(providers), renderer.providers(providers))
    }

    func present(searches: [SearchRecord]) {
        show(.searches(searches), renderer.history(searches))
    }

    /// An item's details; with `rows`, its linked items and a post's sections too, numbered as
    /// the new listing.
    func present(detail item: MediaItem, rows: Bool = true, reveal: Bool = false, picture: Bool = false) {
        // Linked items (trailers, a channel) and a post's hashtags, users, links and media become
        // rows: `open <n>` follows them, `play <n>`, `show <n>` and `fav <n>` take the linked items.
        let links = rows ? Renderer.links(of: item) : []
        let entities = rows ? Renderer.sectionRows(item.entities ?? []) : []
        let parent = listing.base
        let compose = { (renderer: Renderer) -> String in
            var text = renderer.detail(item, reveal: reveal)
            if !links.isEmpty || !entities.isEmpty {
                text += "\n\n" + renderer.rows(links: links, entities: entities, from: parent.count + 1)
            }
            return text
        }
        if !links.isEmpty || !entities.isEmpty {
            listing = .details(
                parent: parent, provider: item.provider,
                links.map { .link(label: $0.label, $0.id) } + entities.map { .entity($0) })
        }
        if picture, presentWithPicture(detail: item, reveal: reveal, text: compose) { return }
        display(compose(renderer))
    }

    func present(lists: [ListInfo]) {
        guard !lists.isEmpty else {
            display(renderer.dim("(no lists: `list new <name>` makes one, `add <n> to <name>` fills it)"))
            return
        }
        display(
            lists.map { "  " + Renderer.clean($0.name) + renderer.dim("  \($0.count) item\($0.count == 1 ? "" : "s")") }
                .joined(separator: "\n"))
    }

    func present(download: Download) {
        board.setTitle(download.title, for: download.id.description)
        display(renderer.downloadLine(download))
    }

    func present(downloads: [Download]) {
        for row in downloads { board.setTitle(row.title, for: row.id.description) }
        show(.downloads(downloads), renderer.downloads(downloads))
    }

    func present(player status: PlayerStatus) {
        board.receive(status)
        guard status.state != .stopped, let item = status.item else {
            display(
                status.player == nil
                    ? "not playing (player.command is not mpv: `play` hands items over and forgets them)" : "not playing")
            return
        }
        // What plays, by its title (and chapter), where it is; the line above the prompt says
        // the same on a terminal, where this is the answer to the command typed.
        var lines = [ProgressBoard.nowPlaying(status, width: renderer.width)]
        if item.id == nil { lines.append(renderer.dim("  " + Renderer.home(item.target))) }
        for (index, entry) in status.queue.enumerated() {
            lines.append("  \(index + 1). next: \(Renderer.clean(entry.title))")
        }
        if let sleep = status.sleep { lines.append("  " + Self.sleepLine(sleep)) }
        if let speed = status.speed, abs(speed - 1) > 0.001 { lines.append("  speed: \(String(printf: "%g", speed))×") }
        display(lines.joined(separator: "\n"))
    }

    /// The sleep timer in words: "pauses at 23:30", "pauses at the end of this", …
    static func sleepLine(_ sleep: PlayerStatus.Sleep) -> String {
        switch sleep.at {
        case "end": return "sleep: pauses at the end of this"
        case "chapter":
            return "sleep: pauses at the end of this chapter" + (sleep.position.map { " (\(Renderer.duration($0)))" } ?? "")
        default:
            guard let deadline = sleep.deadline.flatMap(ISODate.parse) else { return "sleep: set" }
            let left = max(0, deadline.timeIntervalSinceNow)
            return "sleep: pauses in \(Renderer.duration(left.rounded()))"
        }
    }

    /// A line a chapter: its number, start and title (one kept out of the table of contents,
    /// a picture change, dim and unnumbered); where they came from and what was not usable below.
    func present(chapters result: MediaChapters.Response) async {
        guard !result.chapters.isEmpty else {
            let why = result.notes.map { ": " + $0.joined(separator: "; ") } ?? ""
            display("no chapters: the service, a downloaded file and the description have none" + why)
            return
        }
        // A chapter at 2:30.5 is at 2:30, as players show it (not rounded to the next second).
        let times = result.chapters.map { Renderer.duration($0.start.rounded(.down)) }
        let timeWidth = times.map(\.count).max() ?? 4
        let contents = result.chapters.filter(\.toc).count
        let numberWidth = String(contents).count
        var number = 0
        var lines: [String] = []
        for (chapter, time) in zip(result.chapters, times) {
            let padded = String(repeating: " ", count: timeWidth - time.count) + time
            let title = Renderer.clean(chapter.title)
            if chapter.toc {
                number += 1
                let label = String(repeating: " ", count: numberWidth - String(number).count) + String(number)
                let prefix = "\(label)  \(padded)  "
                lines.append(prefix + Renderer.fit(title, max(10, renderer.width - Renderer.columns(prefix))))
            } else {
                let prefix = String(repeating: " ", count: numberWidth) + "  \(padded)  · "
                lines.append(renderer.dim(prefix + Renderer.fit(title, max(10, renderer.width - Renderer.columns(prefix)))))
            }
        }
        let source =
            switch result.source {
            case "podcast:chapters": "the episode's chapters file"
            case "psc": "the feed's Podlove chapters"
            case "id3": "the downloaded file's ID3 chapters"
            case "service": "the service"
            case "description": "timestamps in the description"
            default: result.source ?? "?"
            }
        let hidden = result.chapters.count - contents
        lines.append(
            renderer.dim(
                "\(contents) chapter\(contents == 1 ? "" : "s") from \(source)"
                    + (hidden > 0 ? "; \(hidden) marker\(hidden == 1 ? "" : "s") (·) outside the contents" : "")))
        lines.append(renderer.dim("`play <n> --chapter K` starts at one; while it plays, `chapter next|prev|K`"))
        for note in result.notes ?? [] { lines.append(renderer.dim("note: " + note)) }
        await page(lines.joined(separator: "\n"))
    }

    /// What was said, a line a cue: its time, its speaker when it changes, its words (through
    /// the pager when longer than the screen).
    func present(transcript result: MediaTranscript.Response) async {
        var lines: [String] = []
        var speaker: String?
        let width = result.timed ? (result.cues.map { Renderer.duration($0.start.rounded(.down)).count }.max() ?? 4) : 0
        for cue in result.cues {
            var line = ""
            if result.timed {
                let time = Renderer.duration(cue.start.rounded(.down))
                line += renderer.dim(String(repeating: " ", count: width - time.count) + time) + "  "
            }
            if let name = cue.speaker, name != speaker { line += renderer.bold(Renderer.clean(name) + ":") + " " }
            speaker = cue.speaker ?? speaker
            line += Renderer.clean(cue.text)
            lines.append(line)
        }
        let from = result.cached ? "kept from before" : "fetched now"
        lines.append(
            renderer.dim(
                "\(result.cues.count) line\(result.cues.count == 1 ? "" : "s") (\(result.format), \(from)); "
                    + "`transcript search <words>` looks in every one read"))
        for note in result.notes ?? [] { lines.append(renderer.dim("note: " + note)) }
        await page(lines.joined(separator: "\n"))
    }

    /// The passages found: a row each (what it is from, where, the words around), `play n`
    /// starting there.
    func present(hits result: TranscriptsSearch.Response, query: String) {
        listing = .hits(result.hits)
        guard !result.hits.isEmpty else {
            display(
                result.transcripts == 0
                    ? "no transcripts read yet: `transcript <n>` reads an episode's"
                    : "'\(query)' is in none of the \(result.transcripts) transcripts read")
            return
        }
        var lines: [String] = []
        let numberWidth = String(result.hits.count).count
        for (index, hit) in result.hits.enumerated() {
            let number = String(index + 1)
            let label = String(repeating: " ", count: numberWidth - number.count) + number
            let heading = "\(label)  \(Renderer.clean(hit.title)) · \(Renderer.duration(hit.start.rounded(.down)))"
            lines.append(Renderer.fit(heading, renderer.width))
            let said = (hit.speaker.map { Renderer.clean($0) + ": " } ?? "") + Renderer.clean(hit.text)
            let indent = String(repeating: " ", count: numberWidth + 2)
            lines.append(indent + renderer.dim(Renderer.fit(said, max(20, renderer.width - indent.count))))
        }
        lines.append(
            renderer.dim("\(result.hits.count) found in \(result.transcripts) transcripts; `play <n>` starts where it was said"))
        display(lines.joined(separator: "\n"))
    }

    /// `stop`: "■ Title: stopped", said once (by the line above the prompt when it knew what
    /// played).
    func present(stopped status: PlayerStatus) {
        let known = board.playing?.item != nil
        board.receive(status)
        if !known { display("■ stopped") }
    }

    /// What `play` started or queued, by its name.
    func present(opened result: PlayerOpen.Response, reason: String) {
        // "the newest episode, Title, ": what was chosen, by its name.
        let what = result.note.map { "\($0), \(Renderer.clean(result.title ?? result.played?.description ?? "")), " } ?? ""
        let source = result.local ? "the downloaded file" : "the stream"
        defer {
            if let filled = result.filled {
                display("then \(filled) more of it, queued in its order (`queue` lists them)")
            }
        }
        if result.queued == true {
            let name = result.note == nil ? result.title.map { Renderer.clean($0) + ", " } ?? "" : ""
            display("queued \(what)\(name)\(source): it plays after what plays now (`skip` goes to it)")
        } else if PlayerStatus.isMPV(result.command) {
            let from = result.resumedAt.map { " from \(Renderer.duration($0)), \(reason)" } ?? ""
            display("playing \(what)\(source) in mpv\(from) (`player` shows it; toggle, seek, stop)")
        } else {
            display("playing \(what)\(source) in \(result.command.first ?? "the player") (pid \(result.pid)): \(result.target)")
        }
    }

    func present(auth status: AuthStatusEntry) {
        display(
            status.loggedIn
                ? "logged in to \(status.provider)" + (status.account.map { " as \($0)" } ?? "")
                : "logged out of \(status.provider)")
    }

    static func prettyJSON(_ data: Data) -> String {
        guard let value = try? JSONParser.parse(Array(data)) else { return String(decoding: data, as: UTF8.self) }
        return JSONWriter.pretty(value)
    }
}
