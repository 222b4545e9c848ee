import Foundation
import HostPlayer
import JSONRPC
import MediaHost
import MediaKit

/// What a command line asks for: a dispatcher call, or something the REPL does itself.
enum Action {
    case call(Call)
    case page(forward: Bool)
    case open(String)
    case help
    case quit
}

/// One typed dispatcher call and what the REPL does with its response (show it, remember it as
/// the last listing). JSON appears only with `--json`, exactly the method's JSON-RPC result.
struct Call {
    let method: String
    let perform: @Sendable (REPL) async throws(RPCError) -> Void

    init(method: String, perform: @escaping @Sendable (REPL) async throws(RPCError) -> Void) {
        self.method = method
        self.perform = perform
    }

    /// Runs `request` through the dispatcher; `show` presents the response.
    static func run<M: RPCMethod>(_ request: M, show: @escaping @Sendable (REPL, M.Response) async -> Void) -> Call {
        Call(method: M.method) { repl throws(RPCError) in
            let response = try await repl.dispatch(request)
            repl.printJSON(M.self, response)
            await show(repl, response)
        }
    }
}

/// What an argument is, for completion.
enum ArgumentKind: Sendable {
    case provider
    /// A provider with accounts.
    case accountProvider
    /// A category of the provider named by the argument at this position.
    case category(providerAt: Int)
    case method
    case configKey
    case mediaKind
    case words([String])
}

/// The words of a command line after the command's name, split as a shell does (`ShellWords`:
/// quotes group words and are removed, a backslash escapes one character). (Not `CommandLine`:
/// that is Swift's own, the process's arguments.)
struct CommandWords {
    var words: [String]
    /// The text after the command's name as typed, for `call`'s JSON.
    var raw: String

    /// Every word as one argument: a query, a category name.
    var text: String { words.joined(separator: " ") }

    /// The command's one argument.
    /// - Throws: `.usage` when there is none or more than one.
    func single() throws(CommandError) -> String {
        guard words.count == 1 else { throw CommandError.usage }
        return words[0]
    }

    /// The command's one argument besides `flag` (`show 3 --reveal`), and whether the flag is given.
    /// - Throws: `.usage` when there is not exactly one other word.
    func single(withFlag flag: String) throws(CommandError) -> (word: String, flag: Bool) {
        let others = words.filter { $0 != flag }
        guard others.count == 1 else { throw CommandError.usage }
        return (others[0], others.count < words.count)
    }
}

/// Why a line is not a command.
enum CommandError: Error, Equatable {
    /// Something the command needs is missing: the REPL answers with the command's usage.
    case usage
    /// What is wrong, said to the person.
    case invalid(String)

    /// The line to show, given the command's usage.
    func message(usage: String) -> String {
        switch self {
        case .usage: "usage: \(usage)"
        case .invalid(let text): text
        }
    }
}

/// One REPL command: its name and aliases, usage and summary for `help`, the arguments it takes
/// (for completion), and how its line becomes an action. The table below is the whole grammar.
public struct CommandSpec: Sendable {
    public var name: String
    public var aliases: [String]
    public var usage: String
    /// The dispatcher method it calls, or how it is served.
    public var method: String
    public var summary: String
    /// What each argument position takes; `flags` what follows a flag.
    var arguments: [[ArgumentKind]]
    var flags: [String: [ArgumentKind]]
    /// Commands named by the first word after this one (`list new`): each with its own usage,
    /// summary, arguments and parsing, shown by `help` and offered by completion from this table.
    public var subcommands: [CommandSpec]
    let build: @Sendable (CommandWords, REPL) throws(CommandError) -> Action

    init(
        _ name: String, aliases: [String] = [], usage: String, method: String, summary: String, arguments: [[ArgumentKind]] = [],
        flags: [String: [ArgumentKind]] = [:], subcommands: [CommandSpec] = [],
        build: @escaping @Sendable (CommandWords, REPL) throws(CommandError) -> Action
    ) {
        self.name = name
        self.aliases = aliases
        self.usage = usage
        self.method = method
        self.summary = summary
        self.arguments = subcommands.isEmpty ? arguments : [[.words(subcommands.map(\.name))] + (arguments.first ?? [])]
        self.flags = flags
        self.subcommands = subcommands
        self.build = build
    }

    /// The command a line's words name, down to a subcommand, and the words left for it.
    func resolve(_ line: CommandWords) -> (spec: CommandSpec, line: CommandWords) {
        guard let first = line.words.first?.lowercased(),
            let sub = subcommands.first(where: { $0.name == first || $0.aliases.contains(first) })
        else {
            return (self, line)
        }
        let rest = Array(line.words.dropFirst())
        return sub.resolve(CommandWords(words: rest, raw: line.raw.trimmingSpaces().splitFirstWord().1))
    }

    /// Every command, in the order `help` lists them.
    public static let all: [CommandSpec] = [
        CommandSpec(
            "providers", usage: "providers", method: ProvidersList.method, summary: "list providers and what each needs"
        ) { _, _ in
            .call(
                .run(ProvidersList()) { repl, providers in
                    repl.present(providers: providers)
                    // Plugins that could not be loaded at all (an invalid id...) are said too.
                    if let problems = (try? await repl.dispatch(HostInfo()))?.pluginProblems {
                        let listed = Set(providers.map(\.id))
                        let unlisted = problems.filter { problem in !listed.contains { problem.hasPrefix("plugin \($0) ") } }
                        if !unlisted.isEmpty {
                            repl.display(
                                ([repl.renderer.red("not loaded:")] + unlisted.map { "  " + Renderer.clean($0) })
                                    .joined(separator: "\n"))
                        }
                    }
                })
        },
        CommandSpec(
            "categories", aliases: ["cats"], usage: "categories <provider>", method: ProvidersCategories.method,
            summary: "a provider's categories", arguments: [[.provider]]
        ) { line, repl throws(CommandError) in
            let provider = try repl.requireProvider(try line.single())
            return .call(
                .run(ProvidersCategories(provider: provider)) { repl, categories in
                    repl.present(categories: categories, of: provider)
                })
        },
        CommandSpec(
            "browse", usage: "browse <provider> <category|n>", method: MediaBrowse.method, summary: "a category's items",
            arguments: [[.provider], [.category(providerAt: 0)]]
        ) { line, repl throws(CommandError) in
            guard line.words.count >= 2 else { throw CommandError.usage }
            let provider = try repl.requireProvider(line.words[0])
            return .call(repl.browse(provider: provider, category: line.words.dropFirst().joined(separator: " ")))
        },
        CommandSpec(
            "search", aliases: ["s"], usage: "search [<provider>] [--kind K] <query>", method: MediaSearch.method,
            summary: "search one or every provider", arguments: [[.provider, .words(["--kind"])]], flags: ["--kind": [.mediaKind]]
        ) { line, repl throws(CommandError) in .call(try repl.searchCall(line.words)) },
        CommandSpec(
            "show", aliases: ["get"], usage: "show <n|id> [--reveal]", method: MediaGet.method,
            summary: "an item's details (--reveal: a post's text under its content warning)",
            arguments: [[], [.words(["--reveal"])]]
        ) { line, repl throws(CommandError) in
            let (word, reveal) = try line.single(withFlag: "--reveal")
            let id = try repl.item(word)
            return .call(.run(MediaGet(id: id)) { repl, item in repl.present(detail: item, reveal: reveal) })
        },
        CommandSpec(
            "open", usage: "open <n|id>", method: "\(MediaChildren.method) / \(MediaGet.method)",
            summary:
                "what is inside: a channel's videos, a show's episodes, a movie's similar movies, a post's replies; a category, past search or link row"
        ) { line, _ throws(CommandError) in .open(try line.single()) },
        CommandSpec(
            "next", aliases: ["n"], usage: "next", method: "(last listing's method)", summary: "the next page of the last listing"
        ) { _, _ in .page(forward: true) },
        CommandSpec(
            "prev", aliases: ["p", "previous"], usage: "prev", method: "(last listing's method)",
            summary: "the previous page of the last listing"
        ) { _, _ in .page(forward: false) },
        CommandSpec("fav", usage: "fav <n|id>", method: FavoritesAdd.method, summary: "keep an item as a favorite") {
            line, repl throws(CommandError) in
            let id = try repl.item(try line.single())
            // One line: the details are a `show` away.
            return .call(
                .run(FavoritesAdd(id: id)) { repl, item in
                    let account = item.extra?["account"].map { " (\(Renderer.clean($0)))" } ?? ""
                    repl.display(repl.renderer.star("★ ") + Renderer.clean(item.title) + " is a favorite" + account)
                })
        },
        CommandSpec("unfav", usage: "unfav <n|id>", method: FavoritesRemove.method, summary: "forget a favorite") {
            line, repl throws(CommandError) in
            let id = try repl.item(try line.single())
            return .call(
                .run(FavoritesRemove(id: id)) { repl, result in
                    repl.display(
                        (result.removed ? "removed \(result.id) from favorites" : "\(result.id) was not a favorite")
                            + (result.account.map { "; " + $0 } ?? ""))
                })
        },
        CommandSpec(
            "favs", aliases: ["favorites"], usage: "favs [<provider> [--remote]]", method: FavoritesList.method,
            summary: "favorites, newest first (works offline); --remote: the account's",
            arguments: [[.provider], [.words(["--remote"])]]
        ) { line, repl throws(CommandError) in
            var request = FavoritesList()
            var words = line.words
            if let flag = words.firstIndex(of: "--remote") {
                request.remote = true
                words.remove(at: flag)
            }
            guard words.count <= 1 else { throw CommandError.usage }
            if let provider = words.first { request.provider = try repl.requireProvider(provider) }
            if request.remote == true, request.provider == nil {
                throw CommandError.invalid("--remote lists one account's favorites: favs <provider> --remote")
            }
            return .call(repl.listing(.favorites(request)))
        },
        CommandSpec(
            "new", aliases: ["latest"], usage: "new [<provider>] [--unplayed] [--no-shorts]", method: FavoritesLatest.method,
            summary:
                "what is new from followed favorites (shows, channels, people), newest first; --no-shorts leaves out YouTube Shorts",
            arguments: [[.provider], [.words(["--unplayed", "--no-shorts"])]]
        ) { line, repl throws(CommandError) in
            var request = FavoritesLatest()
            var words = line.words
            if let flag = words.firstIndex(of: "--unplayed") {
                request.unplayed = true
                words.remove(at: flag)
            }
            if let flag = words.firstIndex(of: "--no-shorts") {
                request.shorts = false
                words.remove(at: flag)
            }
            guard words.count <= 1 else { throw CommandError.usage }
            if let provider = words.first { request.provider = try repl.requireProvider(provider) }
            return .call(.run(request) { repl, latest in repl.present(latest: latest) })
        },
        CommandSpec(
            "lists", usage: "lists", method: ListsList.method, summary: "your lists and how many items each holds"
        ) { line, _ throws(CommandError) in
            guard line.words.isEmpty else { throw CommandError.usage }
            return .call(.run(ListsList()) { repl, lists in repl.present(lists: lists) })
        },
        CommandSpec(
            "list", usage: "list <name>", method: ListsItems.method,
            summary: "a list's items (then the usual row commands)", subcommands: REPL.listSubcommands
        ) { line, repl throws(CommandError) in
            guard !line.words.isEmpty else { throw CommandError.usage }
            return .call(repl.listing(.list(ListsItems(name: line.text))))
        },
        CommandSpec(
            "add", usage: "add <n|id>... to <list>", method: ListsAdd.method,
            summary: "add items to a list (`list new` makes one)"
        ) { line, repl throws(CommandError) in
            var words = line.words
            guard words.count >= 3, let to = words.lastIndex(of: "to"), to == words.count - 2, to > 0 else {
                throw CommandError.usage
            }
            let name = words[to + 1]
            words.removeLast(2)
            var ids: [ItemID] = []
            for word in words { ids.append(try repl.item(word)) }
            let chosen = ids
            return .call(
                Call(method: ListsAdd.method) { repl throws(RPCError) in
                    for id in chosen {
                        let result = try await repl.dispatch(ListsAdd(name: name, id: id))
                        repl.printJSON(ListsAdd.self, result)
                        repl.display(
                            result.added
                                ? "added \(Renderer.clean(result.item.title)) to \(result.name)"
                                : "\(Renderer.clean(result.item.title)) is in \(result.name) already")
                    }
                })
        },
        exportAndImport[0],
        exportAndImport[1],
        CommandSpec(
            "download", aliases: ["dl"], usage: "download <n|id>", method: DownloadsStart.method,
            summary: "download an item's media (episodes)"
        ) { line, repl throws(CommandError) in
            let id = try repl.item(try line.single())
            return .call(.run(DownloadsStart(id: id)) { repl, download in repl.present(download: download) })
        },
        CommandSpec(
            "downloads", usage: "downloads", method: DownloadsList.method, summary: "downloads with state, size, progress"
        ) { _, _ in .call(.run(DownloadsList()) { repl, downloads in repl.present(downloads: downloads) }) },
        CommandSpec(
            "pause", usage: "pause <n|id>", method: DownloadsPause.method, summary: "pause a download (keeps what it has)"
        ) { line, repl throws(CommandError) in
            let id = try repl.item(try line.single())
            repl.board.expect(id.description, "paused")
            return .call(.run(DownloadsPause(id: id)) { repl, download in repl.present(download: download) })
        },
        CommandSpec(
            "resume", usage: "resume <n|id>", method: DownloadsResume.method, summary: "continue a paused or failed download"
        ) { line, repl throws(CommandError) in
            let id = try repl.item(try line.single())
            return .call(.run(DownloadsResume(id: id)) { repl, download in repl.present(download: download) })
        },
        CommandSpec(
            "cancel", usage: "cancel <n|id>", method: DownloadsCancel.method,
            summary: "stop a download and delete its partial file"
        ) { line, repl throws(CommandError) in
            let id = try repl.item(try line.single())
            repl.board.expect(id.description, "cancelled")
            return .call(.run(DownloadsCancel(id: id)) { repl, download in repl.present(download: download) })
        },
        CommandSpec(
            "remove", aliases: ["rm"], usage: "remove <n|id> [--keep-file | from <list>]", method: DownloadsRemove.method,
            summary: "forget a download and delete its file (--keep-file keeps it); `from <list>` takes it out of a list",
            arguments: [[], [.words(["--keep-file", "from"])]]
        ) { line, repl throws(CommandError) in
            var words = line.words
            if words.count == 3, words[1] == "from" {
                let id = try repl.item(words[0])
                return .call(
                    .run(ListsRemove(name: words[2], id: id)) { repl, result in
                        repl.display(
                            result.removed ? "took \(result.id) out of \(result.name)" : "\(result.id) was not in \(result.name)")
                    })
            }
            let keepFile = words.contains("--keep-file")
            words.removeAll { $0 == "--keep-file" }
            guard words.count == 1 else { throw CommandError.usage }
            let id = try repl.item(words[0])
            repl.board.expect(id.description, "removed")
            return .call(
                .run(DownloadsRemove(id: id, keepFile: keepFile)) { repl, result in
                    let name = repl.board.title(for: result.id.description).map { Renderer.clean($0) } ?? result.id.description
                    repl.display(
                        result.removed
                            ? "removed the download of \(name)" + (keepFile ? " (the file stays)" : " and its file")
                            : "\(name) has no download")
                })
        },
        CommandSpec(
            "play", usage: "play <n|id> [--now]", method: PlayerOpen.method,
            summary:
                "play in the configured player (the download if any, else the stream; a movie's trailer, a show's newest episode); with mpv it resumes where it was left, and queues while something plays unless --now",
            arguments: [[], [.words(["--now"])]]
        ) { line, repl throws(CommandError) in
            let (word, now) = try line.single(withFlag: "--now")
            let id = try repl.item(word)
            return .call(
                .run(PlayerOpen(id: id, now: now ? true : nil)) { repl, result in
                    // "the newest episode, Title, ": what was chosen, by its name.
                    let what =
                        result.note.map { "\($0), \(Renderer.clean(result.title ?? result.played?.description ?? "")), " } ?? ""
                    let source = result.local ? "the downloaded file" : "the stream"
                    if result.queued == true {
                        repl.display("queued \(what)\(source): it plays after what plays now (`skip` goes to it)")
                    } else if PlayerController.isMPV(result.command) {
                        let from = result.resumedAt.map { " from \(Renderer.duration($0)), where it was left" } ?? ""
                        repl.display("playing \(what)\(source) in mpv\(from) (`player` shows it; toggle, seek, stop)")
                    } else {
                        repl.display(
                            "playing \(what)\(source) in \(result.command.first ?? "the player") (pid \(result.pid)): \(result.target)"
                        )
                    }
                })
        },
        CommandSpec(
            "player", usage: "player", method: PlayerStatusGet.method,
            summary: "what plays and what is queued; its subcommands control it (mpv)", subcommands: REPL.playerSubcommands
        ) { line, _ throws(CommandError) in
            guard line.words.isEmpty else { throw CommandError.usage }
            return .call(.run(PlayerStatusGet()) { repl, status in repl.present(player: status) })
        },
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
                    repl.printJSON(PlayerPause.self, changed)
                    repl.present(player: changed)
                })
        },
        CommandSpec(
            "seek", usage: "seek <+s|-s|mm:ss|s>", method: PlayerSeek.method,
            summary: "jump in what plays: +30 forward, -10 back, 12:30 or 750 to that point"
        ) { line, _ throws(CommandError) in try REPL.seekCall(line) },
        CommandSpec(
            "stop", usage: "stop", method: PlayerStop.method, summary: "stop playing (the position is kept) and empty the queue"
        ) { line, _ throws(CommandError) in
            guard line.words.isEmpty else { throw CommandError.usage }
            return .call(.run(PlayerStop()) { repl, status in repl.present(player: status) })
        },
        CommandSpec(
            "skip", usage: "skip", method: PlayerNext.method, summary: "play what is queued next (stops when nothing is)"
        ) { line, _ throws(CommandError) in
            guard line.words.isEmpty else { throw CommandError.usage }
            return .call(.run(PlayerNext()) { repl, status in repl.present(player: status) })
        },
        CommandSpec(
            "volume", aliases: ["vol"], usage: "volume <0-100>", method: PlayerVolume.method, summary: "the player's volume"
        ) { line, _ throws(CommandError) in try REPL.volumeCall(line) },
        CommandSpec(
            "played", usage: "played <n|id>...", method: PlayerMark.method, summary: "mark items played"
        ) { line, repl throws(CommandError) in try REPL.markCall(line, repl: repl, played: true) },
        CommandSpec(
            "unplayed", usage: "unplayed <n|id>...", method: PlayerMark.method,
            summary: "mark items not played (forgets where they were left)"
        ) { line, repl throws(CommandError) in try REPL.markCall(line, repl: repl, played: false) },
        CommandSpec(
            "artwork", aliases: ["art"], usage: "artwork <n|id>", method: MediaArtwork.method,
            summary: "an item's image as a local file (cached)"
        ) { line, repl throws(CommandError) in
            let id = try repl.item(try line.single())
            return .call(
                .run(MediaArtwork(id: id)) { repl, result in
                    let path = repl.renderer.fit == nil ? result.path : Renderer.home(result.path)
                    repl.display(path + repl.renderer.dim(result.cached ? "  (cached)" : ""))
                })
        },
        CommandSpec(
            "login", usage: "login <provider> [<username> [<password>]]", method: AuthLogin.method,
            summary: "sign in: a device code to enter, or a username and password (asked without echo)",
            arguments: [[.accountProvider]]
        ) { line, repl throws(CommandError) in
            let words = line.words
            guard let provider = words.first, words.count <= 3 else { throw CommandError.usage }
            var request = AuthLogin(provider: try repl.requireProvider(provider))
            if words.count > 1 { request.username = words[1] }
            if words.count > 2 { request.password = words[2] }
            return .call(repl.login(request))
        },
        CommandSpec(
            "sync", usage: "sync <provider>", method: FavoritesSync.method,
            summary: "add the favorites kept here to your account (those made while logged out)", arguments: [[.accountProvider]]
        ) { line, repl throws(CommandError) in .call(syncCall(try repl.requireProvider(try line.single()))) },
        CommandSpec(
            "logout", usage: "logout <provider>", method: AuthLogout.method, summary: "sign out and revoke the session",
            arguments: [[.accountProvider]]
        ) { line, repl throws(CommandError) in
            let provider = try repl.requireProvider(try line.single())
            return .call(.run(AuthLogout(provider: provider)) { repl, status in repl.present(auth: status) })
        },
        CommandSpec(
            "history", usage: "history [<provider>] | history clear [<provider>]",
            method: "\(HistoryList.method) / \(HistoryClear.method)",
            summary: "the last 100 searches, newest first", arguments: [[.provider, .words(["clear"])]],
            flags: ["clear": [.provider]]
        ) { line, repl throws(CommandError) in
            var words = line.words
            if words.first == "clear" {
                words.removeFirst()
                guard words.count <= 1 else { throw CommandError.usage }
                var request = HistoryClear()
                if let provider = words.first { request.provider = try repl.requireProvider(provider) }
                return .call(
                    .run(request) { repl, result in
                        repl.display("forgot \(result.cleared) search\(result.cleared == 1 ? "" : "es")")
                    })
            }
            guard words.count <= 1 else { throw CommandError.usage }
            var request = HistoryList()
            if let provider = words.first { request.provider = try repl.requireProvider(provider) }
            return .call(.run(request) { repl, records in repl.present(searches: records) })
        },
        CommandSpec(
            "config", usage: "config [<key> [<value>|--unset]]", method: "\(ConfigGet.method) / \(ConfigSet.method)",
            summary: "show or change settings", arguments: [[.configKey]]
        ) { line, _ in
            guard let key = line.words.first else {
                return .call(.run(ConfigGet()) { repl, entries in repl.display(repl.renderer.config(entries)) })
            }
            // The value is the rest of the line, its quotes removed: config player.command "mpv --fs".
            let value = line.words.dropFirst().joined(separator: " ")
            if value.isEmpty {
                return .call(.run(ConfigGet(key: key)) { repl, entries in repl.display(repl.renderer.config(entries)) })
            }
            let request = ConfigSet(key: key, value: value == "--unset" ? .null : .string(value))
            return .call(.run(request) { repl, entry in repl.display(repl.renderer.config([entry])) })
        },
        CommandSpec(
            "call", usage: "call <method> [<json>]", method: "any", summary: "call any method with JSON params",
            arguments: [[.method]]
        ) { line, _ throws(CommandError) in
            guard let method = line.words.first else { throw CommandError.usage }
            // JSON is taken as typed; in quotes, as the words inside them.
            var json = line.raw.splitFirstWord().1
            if json.first == "'" || json.first == "\"" { json = line.words.dropFirst().joined(separator: " ") }
            let params: JSONValue
            do { params = json.isEmpty ? [:] : try JSONValue(parsing: json) } catch {
                throw CommandError.invalid("params are not JSON: \(error)")
            }
            return .call(
                Call(method: method) { repl throws(RPCError) in
                    let bytes = try await repl.dispatch(method, params: params)
                    repl.writeData(repl.options.json ? String(decoding: bytes, as: UTF8.self) : REPL.prettyJSON(Data(bytes)))
                })
        },
        CommandSpec("help", aliases: ["?"], usage: "help", method: "(local)", summary: "this list") { _, _ in .help },
        CommandSpec("quit", aliases: ["exit", "q"], usage: "quit", method: "(local)", summary: "leave (Ctrl-D too)") {
            _, _ in .quit
        },
    ]

    /// `sync <provider>`: pushes local favorites to the account and says what happened.
    static func syncCall(_ provider: String) -> Call {
        .run(FavoritesSync(provider: provider)) { repl, result in
            repl.display("added \(result.synced) favorite\(result.synced == 1 ? "" : "s") to your \(provider) account")
            for failure in result.failed { repl.fail("\(failure.id): \(failure.message)", label: "not added") }
        }
    }

    /// `export` and `import`, also reached as `list export` and `list import`.
    static let exportAndImport: [CommandSpec] = [
        CommandSpec(
            "export", usage: "export <list|favorites> <opml|json|m3u> [<file>]", method: ListsExport.method,
            summary: "write a list as OPML (podcasts, for other apps), JSON (mediahost's own) or M3U (for players)",
            arguments: [[], [.words(["opml", "json", "m3u"])]]
        ) { line, _ throws(CommandError) in
            let words = line.words
            guard (2...3).contains(words.count) else { throw CommandError.usage }
            guard let format = ListFormat(rawValue: words[1].lowercased()) else {
                throw CommandError.invalid("the format is opml, json or m3u")
            }
            let path = words.count == 3 ? words[2] : nil
            return .call(
                .run(ListsExport(name: words[0], format: format, path: path)) { repl, result in
                    if let path = result.path {
                        repl.display("wrote \(result.count) entries of \(result.name) to \(path)")
                    } else {
                        repl.display(result.text ?? "")
                    }
                })
        },
        CommandSpec(
            "import", usage: "import <file> [into <list>]", method: ListsImport.method,
            summary: "read an OPML (from any podcast app) or mediahost JSON file into a list"
        ) { line, _ throws(CommandError) in
            let words = line.words
            guard words.count == 1 || (words.count == 3 && words[1] == "into") else { throw CommandError.usage }
            return .call(
                .run(ListsImport(name: words.count == 3 ? words[2] : nil, path: words[0])) { repl, result in
                    var text = "imported \(result.added) into \(result.name)"
                    if result.present > 0 { text += " (\(result.present) were there already)" }
                    if !result.skipped.isEmpty {
                        text += "; skipped \(result.skipped.count): " + result.skipped.prefix(5).joined(separator: "; ")
                    }
                    repl.display(text + " — `list \(ShellWords.quote(result.name))` shows it")
                })
        },
    ]

    /// The command a word names, by name or alias.
    static func named(_ word: String) -> CommandSpec? {
        let word = word.lowercased()
        return all.first { $0.name == word || $0.aliases.contains(word) }
    }

    /// Names offered by completion.
    public static var names: [String] { all.map(\.name) + ["exit"] }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let c = s.first, c == " " || c == "\t" || c == "\r" || c == "\n" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\r" || c == "\n" { s.removeLast() }
        return String(s)
    }

    /// The first word and the trimmed rest.
    func splitFirstWord() -> (String, String) {
        let trimmed = trimmingSpaces()
        guard let space = trimmed.firstIndex(where: { $0 == " " || $0 == "\t" }) else { return (trimmed, "") }
        return (String(trimmed[..<space]), String(trimmed[space...]).trimmingSpaces())
    }
}
