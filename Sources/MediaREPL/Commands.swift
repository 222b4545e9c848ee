import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit

extension CommandSpec {
    /// Every command, in the order `help` lists them.
    public static let all: [CommandSpec] = finding + playing + account

    /// Finding things and keeping them: providers, categories, search, rows, favorites, lists.
    static let finding: [CommandSpec] = [
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
            "browse", usage: "browse <provider> <category|n> [--pictures]", method: MediaBrowse.method,
            summary: "a category's items (--pictures: with their thumbnails)",
            arguments: [[.provider], [.category(providerAt: 0)]], options: [.flag("--pictures")]
        ) { line, repl throws(CommandError) in
            guard line.words.count >= 2 else { throw CommandError.usage }
            let provider = try repl.requireProvider(line.words[0])
            return .call(
                repl.browse(
                    provider: provider, category: line.words.dropFirst().joined(separator: " "),
                    pictures: line.has("--pictures")))
        },
        CommandSpec(
            "search", aliases: ["s"], usage: "search [<provider>] [--kind K] [--pictures] <query>",
            method: MediaSearch.method, summary: "search one or every provider (--pictures: with thumbnails)",
            arguments: [[.provider]], options: [.value("--kind", .mediaKind), .flag("--pictures")]
        ) { line, repl throws(CommandError) in .call(try repl.searchCall(line)) },
        CommandSpec(
            "show", aliases: ["get"], usage: "show <n|id>... [--reveal]", method: MediaGet.method,
            summary:
                "an item's details, with its picture where the terminal draws them (--reveal: a post's text under its content warning)",
            options: [.flag("--reveal")]
        ) { line, repl throws(CommandError) in
            let ids = try repl.items(line.words)
            let reveal = line.has("--reveal")
            return .call(
                .each(ids, { MediaGet(id: $0) }) { repl, item in
                    var item = item
                    // Chapters in a file of their own: how many, rather than where they are.
                    if item.extra?["chapters"]?.hasPrefix("http") == true,
                        let chapters = try? await repl.dispatch(MediaChapters(id: item.id)), !chapters.contents.isEmpty
                    {
                        item.extra?["chapters"] = Renderer.chapterCount(chapters, duration: item.duration)
                    }
                    repl.present(detail: item, reveal: reveal, picture: true)
                    await repl.presentOwnRules(of: item)
                })
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
        CommandSpec("fav", usage: "fav <n|id>...", method: FavoritesAdd.method, summary: "keep items as favorites") {
            line, repl throws(CommandError) in
            let ids = try repl.items(line.words)
            // One line: the details are a `show` away.
            return .call(
                .each(ids, { FavoritesAdd(id: $0) }) { repl, item in
                    let account = item.extra?["account"].map { " (\(Renderer.clean($0)))" } ?? ""
                    repl.display(repl.renderer.star("★ ") + Renderer.clean(item.title) + " is a favorite" + account)
                })
        },
        CommandSpec("unfav", usage: "unfav <n|id>...", method: FavoritesRemove.method, summary: "forget favorites") {
            line, repl throws(CommandError) in
            let ids = try repl.items(line.words)
            return .call(
                .each(ids, { FavoritesRemove(id: $0) }) { repl, result in
                    repl.display(
                        (result.removed ? "removed \(result.id) from favorites" : "\(result.id) was not a favorite")
                            + (result.account.map { "; " + $0 } ?? ""))
                })
        },
        CommandSpec(
            "favs", aliases: ["favorites"], usage: "favs [<provider> [--remote]] [--pictures]", method: FavoritesList.method,
            summary: "favorites, newest first (works offline); --remote: the account's",
            arguments: [[.provider]], options: [.flag("--remote"), .flag("--pictures")]
        ) { line, repl throws(CommandError) in
            var request = FavoritesList(remote: line.has("--remote") ? true : nil)
            guard line.words.count <= 1 else { throw CommandError.usage }
            if let provider = line.words.first { request.provider = try repl.requireProvider(provider) }
            if request.remote == true, request.provider == nil {
                throw CommandError.invalid("--remote lists one account's favorites: favs <provider> --remote")
            }
            return .call(repl.listing(.favorites(request), pictures: line.has("--pictures")))
        },
        CommandSpec(
            "new", usage: "new [--keep] [--pictures]", method: NewList.method,
            summary: "what arrived from what you follow since you last looked (then seen; --keep leaves it new)",
            options: [.flag("--keep"), .flag("--pictures")]
        ) { line, repl throws(CommandError) in
            guard line.words.isEmpty else { throw CommandError.usage }
            let pictures = line.has("--pictures")
            return .call(
                .run(NewList(keep: line.has("--keep") ? true : nil)) { repl, new in repl.present(new: new, pictures: pictures) })
        },
        CommandSpec(
            "pair", usage: "pair [<code>|--link|--list|--revoke ID] [--read-only]",
            method: [WebStatus.method, WebPair.method, WebLink.method, WebDevices.method, WebRevoke.method].joined(
                separator: " / "),
            summary:
                "the web remote: where it answers and who waits (no arguments); pair the browser showing a code, or by a one-time link; list or unpair",
            options: [.flag("--read-only"), .flag("--link"), .flag("--list"), .flag("--revoke")]
        ) { line, repl throws(CommandError) in
            let access: WebAccess? = line.has("--read-only") ? .read : nil
            if line.has("--list") {
                guard line.words.isEmpty else { throw CommandError.usage }
                return .call(
                    .run(WebDevices()) { repl, devices in
                        repl.display(
                            devices.isEmpty
                                ? "no browser is paired"
                                : devices.map {
                                    "\($0.id)  \($0.name)  \($0.access == .read ? "read-only" : "full")  paired \($0.paired.prefix(10))"
                                }
                                .joined(separator: "\n"))
                    })
            }
            if line.has("--revoke") {
                guard line.words.count == 1, let id = line.words.first else { throw CommandError.usage }
                return .call(
                    .run(WebRevoke(id: id)) { repl, answer in
                        repl.display(
                            answer.revoked.isEmpty
                                ? "no browser was paired" : "unpaired " + answer.revoked.map(\.name).joined(separator: ", "))
                    })
            }
            if line.has("--link") {
                guard line.words.isEmpty else { throw CommandError.usage }
                return .call(
                    .run(WebLink(access: access)) { repl, link in
                        repl.display(
                            "open on the device within 10 minutes (pairs the first browser to open it):\n"
                                + link.urls.joined(separator: "\n"))
                    })
            }
            if line.words.isEmpty {
                return .call(
                    .run(WebStatus()) { repl, status in
                        var lines: [String] = []
                        if status.listening {
                            lines.append("the web remote answers on " + status.urls.joined(separator: " "))
                        } else {
                            lines.append(
                                status.problem
                                    ?? "the web remote is off: `config web.listen 0.0.0.0:8733`, then `mediahost serve`")
                        }
                        for waiting in status.waiting {
                            lines.append(
                                "waiting: \(waiting.device) at \(waiting.address) shows \(waiting.code): `pair \(waiting.code)`")
                        }
                        lines.append("\(status.devices) browser\(status.devices == 1 ? "" : "s") paired (`pair --list`)")
                        repl.display(lines.joined(separator: "\n"))
                    })
            }
            // A code as read off a screen may come in two halves: `pair K7M 4QX`.
            guard line.words.count <= 2 else { throw CommandError.usage }
            let code = line.words.joined()
            return .call(
                .run(WebPair(code: code, access: access)) { repl, device in
                    repl.display(
                        "paired \(device.name) (\(device.access == .read ? "read-only" : "full access")); its page goes on by itself"
                    )
                })
        },
        CommandSpec(
            "seen", usage: "seen <n|id>... | seen all", method: NewSeen.method,
            summary: "take episodes out of `new` without listing them"
        ) { line, repl throws(CommandError) in
            guard !line.words.isEmpty else { throw CommandError.usage }
            let request = line.words == ["all"] ? NewSeen(all: true) : NewSeen(ids: try repl.items(line.words))
            return .call(
                .run(request) { repl, result in
                    repl.display("\(result.marked) marked seen; \(result.left) new left")
                })
        },
        CommandSpec(
            "refresh", usage: "refresh [<provider>|<n|id>] [--dry-run]", method: RefreshRun.method,
            summary:
                "fetch new episodes of what you follow (a provider's, or one show) now, then each show's rules (--dry-run: only say)",
            arguments: [[.provider]], options: [.flag("--dry-run")]
        ) { line, repl throws(CommandError) in
            guard line.words.count <= 1 else { throw CommandError.usage }
            var request = RefreshRun(dryRun: line.has("--dry-run") ? true : nil)
            if let word = line.words.first {
                if repl.providerIDs.contains(word) {
                    request.provider = word
                } else {
                    request.show = try repl.items([word]).first
                }
            }
            let provider = request.provider
            return .call(
                .run(request) { repl, report in
                    var text = RefreshReport.render(report, width: repl.renderer.fit ?? 100, provider: provider)
                    while text.hasSuffix("\n") { text.removeLast() }
                    await repl.page(text)
                })
        },
        CommandSpec(
            "rules", usage: "rules [<n|id>]", method: RulesList.method,
            summary: "each followed show's download, tidy and playback rules (`rules set`, `rules unset`)",
            subcommands: REPL.rulesSubcommands
        ) { line, repl throws(CommandError) in
            guard line.words.count <= 1 else { throw CommandError.usage }
            let show = try line.words.first.flatMap { word throws(CommandError) in try repl.showOrDefault(word) }
            return .call(
                .run(RulesList(show: show)) { repl, list in
                    var text = RulesReport.render(list, width: repl.renderer.fit ?? 100, summaries: show != nil)
                    while text.hasSuffix("\n") { text.removeLast() }
                    await repl.page(text)
                })
        },
        CommandSpec(
            "latest", usage: "latest [<provider>] [--unplayed] [--no-shorts] [--live] [--pictures]",
            method: FavoritesLatest.method,
            summary:
                "the newest of every followed show, channel and person, read live, newest first; --no-shorts leaves out YouTube Shorts; --live lists live streams only: live now, upcoming, ended",
            arguments: [[.provider]],
            options: [.flag("--unplayed"), .flag("--no-shorts"), .flag("--live"), .flag("--pictures")]
        ) { line, repl throws(CommandError) in
            var request = FavoritesLatest(
                unplayed: line.has("--unplayed") ? true : nil, shorts: line.has("--no-shorts") ? false : nil,
                live: line.has("--live") ? true : nil)
            guard line.words.count <= 1 else { throw CommandError.usage }
            if let provider = line.words.first { request.provider = try repl.requireProvider(provider) }
            let pictures = line.has("--pictures")
            let live = request.live == true
            return .call(.run(request) { repl, latest in repl.present(latest: latest, pictures: pictures, live: live) })
        },
        .plain(
            "lists", summary: "your lists and how many items each holds", ListsList()
        ) { repl, lists in repl.present(lists: lists) },
        CommandSpec(
            "list", usage: "list <name>", method: ListsItems.method,
            summary: "a list's items (then the usual row commands)", subcommands: REPL.listSubcommands
        ) { line, repl throws(CommandError) in
            guard !line.words.isEmpty else { throw CommandError.usage }
            return .call(repl.listing(.list(ListsItems(name: line.text))))
        },
        CommandSpec(
            "queue", aliases: ["upnext"], usage: "queue", method: QueueList.method,
            summary: "what plays next, in order (kept for every front end, across restarts)",
            subcommands: REPL.queueSubcommands
        ) { line, repl throws(CommandError) in
            guard line.words.isEmpty else { throw CommandError.usage }
            return .call(repl.listing(.queue(QueueList())))
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
            let chosen = try repl.items(words)
            return .call(
                Call(method: ListsAdd.method) { repl throws(RPCError) in
                    for id in chosen {
                        let result = try await repl.dispatch(ListsAdd(name: name, id: id))
                        try repl.printJSON(ListsAdd.self, result)
                        repl.display(
                            result.added
                                ? "added \(Renderer.clean(result.item.title)) to \(result.name)"
                                : "\(Renderer.clean(result.item.title)) is in \(result.name) already")
                    }
                })
        },
        exportAndImport[0],
        exportAndImport[1],
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
}
