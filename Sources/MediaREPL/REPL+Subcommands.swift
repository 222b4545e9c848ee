import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit

/// The grammar of subcommands (`list …`, `player …`) and of the player's arguments, as entries
/// of the command table.
extension REPL {
    /// `seek +30`, `seek -10`, `seek 12:30`, `seek 750`.
    static func seekCall(_ line: CommandWords) throws(CommandError) -> Action {
        guard let text = try? line.single() else { throw CommandError.usage }
        guard let (seconds, relative) = parsePosition(text) else {
            throw CommandError.invalid(
                "'\(text)' is not a position: +30 or -10 (seconds from here), 12:30 or 1:02:03 or 750 (from the start)")
        }
        return .call(.run(PlayerSeek(seconds: seconds, relative: relative)) { repl, status in repl.present(player: status) })
    }

    /// Seconds and whether they count from the current position: "+30", "-1:00", "12:30", "750".
    static func parsePosition(_ text: String) -> (Double, Bool)? {
        var body = Substring(text)
        var sign = 1.0
        let relative = body.first == "+" || body.first == "-"
        if relative {
            if body.first == "-" { sign = -1 }
            body = body.dropFirst()
        }
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var seconds = 0.0
        for (index, part) in parts.enumerated() {
            guard let value = Double(part), value >= 0, value.isFinite, index == 0 || value < 60 else { return nil }
            seconds = seconds * 60 + value
        }
        return (sign * seconds, relative)
    }

    static func volumeCall(_ line: CommandWords) throws(CommandError) -> Action {
        guard let text = try? line.single() else { throw CommandError.usage }
        guard let level = Double(text.hasSuffix("%") ? String(text.dropLast()) : text), (0...130).contains(level) else {
            throw CommandError.invalid("the volume is a number from 0 to 100 (up to 130 amplifies)")
        }
        return .call(.run(PlayerVolume(level: level)) { repl, status in repl.present(player: status) })
    }

    static func markCall(_ line: CommandWords, repl: REPL, played: Bool) throws(CommandError) -> Action {
        let ids = try repl.items(line.words)
        return .call(
            .run(PlayerMark(ids: ids, played: played)) { repl, result in
                let what = result.ids.count == 1 ? result.ids[0].description : "\(result.ids.count) items"
                repl.display("marked \(what) \(played ? "played" : "not played")")
            })
    }

    /// `list new`, `list rename`...: subcommands of `list`, each a command of its own.
    static let listSubcommands: [CommandSpec] = [
        CommandSpec("new", usage: "list new <name>", method: ListsCreate.method, summary: "make a list") {
            line, _ throws(CommandError) in
            let name = try line.single()
            return .call(.run(ListsCreate(name: name)) { repl, list in repl.display("made the list \(list.name)") })
        },
        CommandSpec(
            "rename", usage: "list rename <name> <new>", method: ListsRename.method, summary: "give a list another name"
        ) { line, _ throws(CommandError) in
            guard line.words.count == 2 else { throw CommandError.usage }
            return .call(
                .run(ListsRename(name: line.words[0], to: line.words[1])) { repl, list in
                    repl.display("renamed it \(list.name)")
                })
        },
        CommandSpec("delete", usage: "list delete <name>", method: ListsDelete.method, summary: "delete a list (not its items)") {
            line, _ throws(CommandError) in
            let name = try line.single()
            return .call(
                .run(ListsDelete(name: name)) { repl, result in
                    repl.display(result.deleted ? "deleted the list \(result.name)" : "there is no list \(result.name)")
                })
        },
        CommandSpec(
            "download", usage: "list download <name> [--new]", method: ListsDownload.method,
            summary: "download every item of a list (--new: those not played yet)", options: [.flag("--new")]
        ) { line, _ throws(CommandError) in
            let name = try line.single()
            return .call(
                .run(ListsDownload(name: name, new: line.has("--new") ? true : nil)) { repl, result in
                    for download in result.started { repl.board.setTitle(download.title, for: download.id.description) }
                    var lines = ["downloading \(result.started.count) item\(result.started.count == 1 ? "" : "s")"]
                    for skip in result.skipped.prefix(10) {
                        lines.append(repl.renderer.dim("  skipped \(skip.id): \(skip.reason)"))
                    }
                    repl.display(lines.joined(separator: "\n"))
                })
        },
        CommandSpec(
            "play", usage: "list play <name>", method: QueueAdd.method,
            summary: "play a list in its order: its items go first in the queue, the first starts"
        ) { line, _ throws(CommandError) in
            let name = try line.single()
            return .call(
                Call(method: QueueAdd.method) { repl throws(RPCError) in
                    let queued = try await repl.dispatch(QueueAdd(list: name, next: true))
                    try repl.printJSON(QueueAdd.self, queued)
                    let status = try await repl.dispatch(PlayerNext())
                    repl.display("queued \(queued.added.count) from \(name) (\(queued.count) in the queue)")
                    repl.present(player: status)
                })
        },
        CommandSpec(
            "move", usage: "list move <name> <n> <place>", method: ListsMove.method,
            summary: "move row n of a list to a place (1 is first)"
        ) { line, repl throws(CommandError) in
            let words = line.words
            guard words.count == 3 else { throw CommandError.usage }
            guard let place = Int(words[2]), place >= 1 else {
                throw CommandError.invalid("the place is a number from 1 (first)")
            }
            let id = try repl.item(words[1])
            return .call(
                .run(ListsMove(name: words[0], id: id, to: place - 1)) { repl, list in
                    repl.display("moved it to place \(place) of \(list.name)")
                })
        },
        // The same commands as `export` and `import`: one grammar for the two spellings.
        alias(of: "export", as: "list export"),
        alias(of: "import", as: "list import"),
    ]

    /// `queue add 3 4 --next`, `queue move 5 1`...: the queue's changes, as subcommands.
    static let queueSubcommands: [CommandSpec] = [
        CommandSpec(
            "add", usage: "queue add <n|id>... [--next]", method: QueueAdd.method,
            summary: "queue items at the end (--next: first, after what plays now)", options: [.flag("--next")]
        ) { line, repl throws(CommandError) in
            guard !line.words.isEmpty else { throw CommandError.usage }
            let ids = try repl.items(line.words)
            let next = line.has("--next")
            return .call(
                .run(QueueAdd(ids: ids, next: next ? true : nil)) { repl, result in
                    let what =
                        result.added.count == 1
                        ? Renderer.clean(result.added[0].title) : "\(result.added.count) items"
                    repl.display("queued \(what) \(next ? "next" : "last") (\(result.count) in the queue)")
                })
        },
        CommandSpec(
            "move", usage: "queue move <n> <place>", method: QueueMove.method,
            summary: "move item n of the queue to a place (1 is first)"
        ) { line, _ throws(CommandError) in
            guard line.words.count == 2, let from = Int(line.words[0]), let to = Int(line.words[1]), from >= 1, to >= 1 else {
                throw CommandError.usage
            }
            return .call(.run(QueueMove(from: from, to: to)) { repl, _ in repl.display("moved item \(from) to place \(to)") })
        },
        CommandSpec(
            "remove", usage: "queue remove <n|id>...", method: QueueRemove.method, summary: "take items out of the queue"
        ) { line, repl throws(CommandError) in
            guard !line.words.isEmpty else { throw CommandError.usage }
            let ids = try repl.items(line.words)
            return .call(
                .run(QueueRemove(ids: ids)) { repl, result in
                    repl.display("took \(result.removed) out of the queue (\(result.count) left)")
                })
        },
        .plain("clear", usage: "queue clear", summary: "empty the queue", QueueClear()) { repl, result in
            repl.display("emptied the queue (\(result.removed) item\(result.removed == 1 ? "" : "s"))")
        },
    ]

    /// `rules set`, `rules unset`: a followed show's rules (or every show's, `default`).
    static let rulesSubcommands: [CommandSpec] = [
        CommandSpec(
            "set", usage: "rules set <n|id|default> <key> <value>", method: RulesSet.method,
            summary: "set a rule of a followed show, or of every show (default)"
        ) { line, repl throws(CommandError) in
            guard line.words.count >= 3 else { throw CommandError.usage }
            let show = try repl.showOrDefault(line.words[0])
            let request = RulesSet(show: show, key: line.words[1], value: line.words.dropFirst(2).joined(separator: " "))
            return .call(
                .run(request) { repl, rules in
                    let rule = rules.rules.first { $0.key == request.key.lowercased() }
                    repl.display("\(Renderer.clean(rules.title)): \(request.key.lowercased()) \(rule?.value ?? request.value)")
                    if request.key.lowercased() == "auto_download" {
                        repl.display(
                            repl.renderer.dim("(a refresh downloads by it: `refresh --dry-run` says what it would take)"))
                    }
                })
        },
        CommandSpec(
            "unset", usage: "rules unset <n|id|default> [<key>]", method: RulesUnset.method,
            summary: "take back a rule (or all) of a show: the default applies again"
        ) { line, repl throws(CommandError) in
            guard (1...2).contains(line.words.count) else { throw CommandError.usage }
            let show = try repl.showOrDefault(line.words[0])
            let key = line.words.count == 2 ? line.words[1] : nil
            return .call(
                .run(RulesUnset(show: show, key: key)) { repl, rules in repl.present(unset: key, show: show, rules: rules) })
        },
    ]

    /// A show's row or id, or `default` (every show: nil).
    func showOrDefault(_ word: String) throws(CommandError) -> ItemID? {
        if word.lowercased() == "default" { return nil }
        return try items([word]).first
    }

    /// `player pause`, `player seek +30`...: the controls of what plays, as subcommands.
    static let playerSubcommands: [CommandSpec] = [
        .plain(
            "pause", usage: "player pause", summary: "pause what plays", PlayerPause()
        ) { repl, status in repl.present(player: status) },
        .plain(
            "resume", usage: "player resume", summary: "play on", PlayerResume()
        ) { repl, status in repl.present(player: status) },
        .plain(
            "stop", usage: "player stop", summary: "as `stop`", PlayerStop()
        ) { repl, status in repl.present(player: status) },
        .plain(
            "skip", aliases: ["next"], usage: "player skip", summary: "as `skip`", PlayerNext()
        ) { repl, status in repl.present(player: status) },
        .plain(
            "previous", aliases: ["back", "prev"], usage: "player previous",
            summary: "back to what played before (what plays goes first in the queue)", PlayerPrevious()
        ) { repl, status in repl.present(player: status) },
        CommandSpec("seek", usage: "player seek <+s|-s|mm:ss|s>", method: PlayerSeek.method, summary: "as `seek`") {
            line, _ throws(CommandError) in try REPL.seekCall(line)
        },
        CommandSpec(
            "volume", aliases: ["vol"], usage: "player volume <0-130>", method: PlayerVolume.method, summary: "as `volume`"
        ) { line, _ throws(CommandError) in try REPL.volumeCall(line) },
    ]

    /// A top-level command under another name (`list export` is `export`).
    private static func alias(of name: String, as usage: String) -> CommandSpec {
        CommandSpec(
            name, usage: usage + String(topLevel(name)?.usage.dropFirst(name.count) ?? ""),
            method: topLevel(name)?.method ?? "", summary: "as `\(name)`", arguments: topLevel(name)?.arguments ?? [],
            options: topLevel(name)?.options ?? []
        ) { line, repl throws(CommandError) in
            guard let spec = topLevel(name) else { throw CommandError.usage }
            return try spec.build(line, repl)
        }
    }

    /// A command of the top level of the table, by name, without reading the table while it is
    /// being made (the list's subcommands are part of it).
    private static func topLevel(_ name: String) -> CommandSpec? {
        CommandSpec.exportAndImport.first { $0.name == name }
    }
}
