import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC

/// `help`: the commands by what they are for, on one screen; `help <command>` that command
/// alone (usage, what it calls, its options, two examples); `help all` every command with its
/// method, through the pager when it is longer than the screen. The words come from the
/// command table (`CommandSpec.all`); what is here is what only help says.
extension CommandSpec {
    /// The commands by what they are for, in `help`'s order: every command once.
    static let groups: [(title: String, names: [String])] = [
        ("find", ["search", "browse", "categories", "providers", "show", "open", "next", "prev", "history", "artwork"]),
        (
            "keep",
            ["fav", "unfav", "favs", "new", "seen", "refresh", "rules", "latest", "lists", "list", "add", "export", "import"]
        ),
        ("download", ["download", "downloads", "pause", "resume", "cancel", "remove"]),
        (
            "play",
            [
                "play", "queue", "toggle", "seek", "stop", "skip", "sleep", "volume", "speed", "player", "chapter",
                "chapters", "transcript", "played", "unplayed",
            ]
        ),
        ("accounts", ["login", "logout", "sync", "pair", "config", "doctor"]),
        ("more", ["call", "help", "quit"]),
    ]

    /// Two examples of each command: the line, and what it does.
    static let examples: [String: [(line: String, what: String)]] = [
        "providers": [("providers", "each provider, its kinds and what it needs"), ("categories 1", "then a row's categories")],
        "categories": [("categories podcasts", "Apple's podcast genres"), ("categories youtube", "YouTube's video categories")],
        "browse": [
            ("browse podcasts Comedy", "a genre's top shows"),
            ("browse youtube 1 --pictures", "the first category, with thumbnails"),
        ],
        "search": [
            ("search swift", "every provider at once"),
            ("search podcastindex person:ada lovelace", "a guest's episodes across shows"),
        ],
        "show": [
            ("show 3", "row 3's details, its picture where the terminal draws one"), ("show 2 --reveal", "a post's hidden text"),
        ],
        "open": [
            ("open 1", "a show's episodes, a channel's videos, a post's replies"), ("open podcasts:podcast:1999999997", "by id"),
        ],
        "next": [("next", "the next page of the last listing"), ("n", "the same, shorter")],
        "prev": [("prev", "the page before"), ("p", "the same, shorter")],
        "fav": [("fav 2", "keep row 2 (a show or channel is then followed)"), ("fav 2-4", "rows 2, 3 and 4")],
        "unfav": [("unfav 1", "forget favorite 1 (after `favs`)"), ("unfav 2 5", "two at once")],
        "favs": [("favs", "every favorite, newest first"), ("favs youtube --remote", "the YouTube account's likes")],
        "new": [("new", "what arrived since you last looked (then seen)"), ("new --keep", "look, and leave it new")],
        "seen": [("seen 2 4", "rows 2 and 4 out of `new`"), ("seen all", "empty `new`")],
        "pair": [
            ("pair K7M-4QX", "pair the browser showing that code"), ("pair --link", "a link that pairs the phone opening it"),
        ],
        "refresh": [("refresh", "fetch what is new now, then the rules"), ("refresh --dry-run", "only say what it would do")],
        "rules": [
            ("rules set 2 auto_download 3", "download row 2's newest 3 of each refresh"),
            ("rules set default delete_played_after_days 30", "tidy every show"),
        ],
        "latest": [
            ("latest", "the newest of every followed show, live"), ("latest --live", "live streams: now, upcoming, ended"),
        ],
        "lists": [("lists", "your lists and how many items each has"), ("list new \"Road trip\"", "make one")],
        "list": [("list \"Road trip\"", "a list's items"), ("list download \"Road trip\" --new", "download what is new in it")],
        "add": [("add 2 3 to \"Road trip\"", "rows 2 and 3 into a list"), ("add 1-5 to Later", "rows 1 to 5")],
        "export": [
            ("export favorites opml shows.opml", "your shows for another podcast app"), ("export Later m3u", "a playlist"),
        ],
        "import": [("import shows.opml", "shows from another podcast app"), ("import subscriptions.csv", "a Google Takeout")],
        "download": [("download 3", "row 3's media file"), ("download 2-5", "rows 2 to 5, one after another")],
        "downloads": [("downloads", "every download, its state and progress"), ("pause 1", "then pause the first")],
        "pause": [("pause 1", "pause download 1 (after `downloads`)"), ("pause 1 2", "two at once")],
        "resume": [("resume 1", "go on with a paused or failed download"), ("resume 1-3", "three at once")],
        "cancel": [("cancel 2", "stop download 2 and delete what it had"), ("cancel 2 3", "two at once")],
        "remove": [("remove 1", "forget download 1 and delete its file"), ("remove 1 --keep-file", "forget it, keep the file")],
        "play": [("play 4", "row 4 (resumes where it was left)"), ("play 4 --soundbite 1", "just row 4's first soundbite")],
        "queue": [("queue add 3 4", "rows 3 and 4 play after what plays now"), ("queue move 5 1", "item 5 plays next")],
        "player": [("player", "what plays, where, and what is queued"), ("player volume 60", "as `volume 60`")],
        "toggle": [("toggle", "pause, or play on"), ("player pause", "pause only")],
        "seek": [("seek +30", "30 s forward"), ("seek 12:30", "to 12 minutes 30")],
        "stop": [("stop", "stop playing (`play` resumes there)"), ("player stop", "the same")],
        "skip": [("skip", "what is queued next"), ("player skip", "the same")],
        "sleep": [("sleep 30m", "pause in half an hour, fading out"), ("sleep end", "pause at the end of this episode")],
        "volume": [("volume 60", "the player's volume to 60%"), ("vol 100", "full")],
        "speed": [("speed 1.5", "half again as fast"), ("speed 1", "as recorded")],
        "played": [("played 3", "mark row 3 played"), ("played 1-10", "the first ten")],
        "unplayed": [("unplayed 3", "mark it new again"), ("unplayed 2 4", "two at once")],
        "chapters": [("chapters 2", "row 2's chapters with their times"), ("play 2 --chapter 3", "then play from chapter 3")],
        "transcript": [
            ("transcript 2", "what was said in row 2, with times"),
            ("transcript search \"solar panels\"", "find words in every transcript read"),
        ],
        "chapter": [("chapter next", "the next chapter of what plays"), ("chapter 4", "chapter 4")],
        "artwork": [("artwork 1", "row 1's picture, large, and its file"), ("art 2", "the same, shorter")],
        "login": [
            ("login youtube", "a code to enter on Google's page"), ("login sync https://gpodder.net me", "your phone's sync"),
        ],
        "logout": [("logout bluesky", "sign out and forget the session"), ("logout sync", "stop syncing with the phone")],
        "sync": [("sync", "shows and positions with the phone now"), ("sync status", "when it last synced, what waits")],
        "config": [("config", "every setting, its value and where it comes from"), ("config player.args --ao=null", "set one")],
        "doctor": [("doctor", "what works here and what does not, with fixes"), ("doctor --online", "also reach each service")],
        "history": [("history", "your last searches"), ("history clear", "forget them")],
        "call": [
            ("call host.info", "any method, its JSON answer"), ("call media.get {\"id\":\"tmdb:movie:550\"}", "with params"),
        ],
        "help": [("help search", "one command"), ("help all", "every command with its method")],
        "quit": [("quit", "leave (Ctrl-D too)"), ("exit", "the same")],
    ]

    /// `help <name>`'s command (a name, an alias, or a command and its subcommand).
    static func helpTopic(_ words: [String]) -> CommandSpec? {
        guard let first = words.first, let spec = named(first) else { return nil }
        guard words.count > 1 else { return spec }
        return spec.resolve(CommandWords(words: Array(words.dropFirst()), raw: "")).spec
    }
}

extension REPL {
    /// `help [<command>|all]`.
    func showHelp(_ topic: [String]) async -> Bool {
        if options.json || topic.first?.lowercased() == "all" {
            await showAllHelp()
            return true
        }
        guard !topic.isEmpty else {
            display(helpOverview(width: renderer.fit ?? 79))
            return true
        }
        guard let spec = CommandSpec.helpTopic(topic.map { $0.lowercased() }) else {
            fail("no command '\(topic.joined(separator: " ").prefix(40))'; `help` lists them")
            return false
        }
        await page(helpText(for: spec, width: renderer.fit ?? 79))
        return true
    }

    /// The commands by what they are for, one line a group, and how to get more: one screen.
    func helpOverview(width: Int) -> String {
        let label = (CommandSpec.groups.map(\.title.count).max() ?? 0) + 2
        var lines = [renderer.bold("Commands") + " (`help <command>` for one, `help all` for all):"]
        for (title, names) in CommandSpec.groups {
            let text = Renderer.wrap(
                names.joined(separator: "  "), width: width, indent: String(repeating: " ", count: label + 2))
            lines.append("  " + renderer.dim(title.padded(toLength: label)) + text.dropFirst(label + 2))
        }
        lines.append("")
        for line in [
            "n is a row of the last listing; several at once: `download 2 3`, `played 2-5`",
            "Any method: `call <method> <json>`. Ctrl-C stops a command, Ctrl-D quits.",
            "Everything, with examples: `man mediahost-repl`",
        ] {
            lines.append(Renderer.wrap(line, width: width, indent: "  ").dropFirst(2).description)
        }
        return lines.joined(separator: "\n")
    }

    /// One command: usage (and its subcommands'), what it does and calls, two examples.
    func helpText(for spec: CommandSpec, width: Int) -> String {
        var lines: [String] = []
        for (index, each) in ([spec] + spec.subcommands).enumerated() {
            let aliases = each.aliases.isEmpty ? "" : renderer.dim("  (also " + each.aliases.joined(separator: ", ") + ")")
            lines.append((index == 0 ? renderer.bold(each.usage) : "  " + each.usage) + aliases)
            lines.append(Renderer.wrap(each.summary, width: width, indent: index == 0 ? "  " : "    "))
            if index == 0 { lines.append(renderer.dim("  calls " + each.method)) }
        }
        let examples = CommandSpec.examples[spec.name] ?? []
        if !examples.isEmpty {
            lines.append("examples:")
            // The descriptions in a column of their own when they all fit beside the lines.
            let column = (examples.map { Renderer.columns($0.line) }.max() ?? 0) + 4
            let aligned = examples.allSatisfy { column + Renderer.columns($0.what) <= width }
            for example in examples {
                let head = "  " + example.line
                if aligned {
                    lines.append(head.padded(toLength: column) + renderer.dim(example.what))
                } else {
                    lines.append(head)
                    lines.append(renderer.dim(Renderer.wrap(example.what, width: width, indent: "      ")))
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Every command with its method and summary (`help all`); one line a command when not on a
    /// terminal, for grep.
    func showAllHelp() async {
        if options.json {
            let commands: [JSONValue] = CommandSpec.all.flatMap { [$0] + $0.subcommands }.map {
                ["command": .string($0.usage), "method": .string($0.method), "summary": .string($0.summary)]
            }
            writeData(JSONValue.array(commands).jsonString)
            return
        }
        // Subcommands are lines of their own, after their command.
        let specs = CommandSpec.all.flatMap { [$0] + $0.subcommands }
        let width = specs.map(\.usage.count).max() ?? 0
        let methodWidth = specs.map(\.method.count).max() ?? 0
        let intro =
            "Commands (n is a row of the last listing, whatever it listed; words are split as in a shell: \"two words\" or 'two words' is one word, a backslash escapes one character: don\\'t):"
        let methods =
            "Every command is one JSON-RPC call; `call <method> <json>` reaches any of: "
            + host.methodNames.joined(separator: " ")
        guard let columns = renderer.fit else {
            // Not a terminal: one line per command, for grep.
            var lines = [intro]
            for spec in specs {
                var line =
                    "  " + spec.usage.padded(toLength: width) + "  "
                    + renderer.dim(spec.method.padded(toLength: methodWidth)) + "  " + spec.summary
                if !spec.aliases.isEmpty { line += renderer.dim(" (also " + spec.aliases.joined(separator: ", ") + ")") }
                lines.append(line)
            }
            lines.append(methods)
            return write(lines.joined(separator: "\n"))
        }
        // A terminal: the usage and method on one line, the summary wrapped at word boundaries below.
        var lines = [Renderer.wrap(intro, width: columns, indent: "")]
        for spec in specs {
            let head = "  " + spec.usage
            let method = spec.method
            lines.append(
                Renderer.columns(head) + 2 + method.count <= columns
                    ? head + "  " + renderer.dim(method) : head + "\n      " + renderer.dim(method))
            let summary = spec.summary + (spec.aliases.isEmpty ? "" : " (also " + spec.aliases.joined(separator: ", ") + ")")
            lines.append(Renderer.wrap(summary, width: columns, indent: "      "))
        }
        lines.append(Renderer.wrap(methods, width: columns, indent: ""))
        await page(lines.joined(separator: "\n"))
    }

    /// Long text on a terminal goes through the person's pager (`$PAGER`, else `less -R`), as
    /// git and man do: when it is taller than the screen and stdout is the terminal. Otherwise,
    /// or when the pager cannot be started, it is written as any output.
    func page(_ text: String) async {
        let lines = text.count { $0 == "\n" } + 1
        guard !options.json, renderer.fit != nil, isatty(1) == 1, lines >= Renderer.terminalRows(1) - 1,
            await Self.runPager(text)
        else { return display(text) }
    }

    /// The pager's words: `$PAGER` (split as a shell would), else `less -R`; nil for `PAGER=cat`
    /// or an empty PAGER, which ask for no pager.
    static func pagerCommand(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [String]? {
        guard let pager = environment["PAGER"] else { return ["less", "-R"] }
        let words = (try? ShellWords.split(pager).get()) ?? []
        guard let first = words.first, first != "cat" else { return nil }
        return words
    }

    /// Runs the pager with `text` on its stdin and waits for it (on a thread of its own: a
    /// person reads for minutes); false when it cannot start.
    static func runPager(_ text: String) async -> Bool {
        guard let words = pagerCommand(), let program = Path.findProgram(words[0]) else { return false }
        var environment = ProcessInfo.processInfo.environment
        // less: leave at once when it fits, keep colours, leave the text on the screen.
        if environment["LESS"] == nil { environment["LESS"] = "FRX" }
        let pager: ChildProcess
        do {
            pager = try ChildProcess(
                program, arguments: Array(words.dropFirst()), environment: environment, standardInput: .pipe,
                grouping: .inherit)
        } catch {
            return false
        }
        let bytes = Array((text + "\n").utf8)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            detachThread(name: "pager") {
                if let input = pager.standardInput {
                    // A pager quit before the end closes its end: the rest is not written, and
                    // the SIGPIPE that brings is taken here, not by the REPL.
                    var pipeSignal = sigset_t()
                    sigemptyset(&pipeSignal)
                    sigaddset(&pipeSignal, SIGPIPE)
                    var previous = sigset_t()
                    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
                    var offset = 0
                    while offset < bytes.count {
                        let written = bytes[offset...].withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) }
                        if written < 0, errno == EINTR { continue }
                        guard written > 0 else { break }
                        offset += written
                    }
                    close(input)
                    var none = timespec(tv_sec: 0, tv_nsec: 0)
                    while sigtimedwait(&pipeSignal, nil, &none) > 0 {}
                    pthread_sigmask(SIG_SETMASK, &previous, nil)
                }
                _ = pager.waitUntilExit()
                done.resume()
            }
        }
        return true
    }
}

/// The REPL's commands as a manual page (`man mediahost-repl`), in mdoc, from the same table as
/// `help`: every command by what it is for, its usage, what it does and calls, and examples.
public enum REPLManual {
    public static func mdoc(date: String) -> String {
        var out = [
            ".Dd \(date)", ".Dt MEDIAHOST-REPL 1", ".Os", ".Sh NAME", ".Nm mediahost-repl",
            ".Nd the commands of mediahost's interactive REPL", ".Sh SYNOPSIS", ".Nm mediahost", "[options]",
            ".Sh DESCRIPTION", ".nh",
            "Started with no subcommand, or `mediahost repl`, mediahost reads commands at a prompt (or, when stdin is not a terminal, one a line).",
            "Each command is one JSON-RPC call to the host (see",
            ".Xr mediahost 1 ) .",
            "A number n is a row of the last listing, whatever it listed; commands that take rows take several at once",
            "(`download 2 3`, `played 2-5`).",
            "Words are split as in a shell: \"two words\" is one word, a backslash escapes one character.",
            "`help` lists the commands on one screen; `help <command>` shows one.",
        ]
        for (title, names) in CommandSpec.groups {
            out.append(".Ss \(escape(title.prefix(1).uppercased() + title.dropFirst()))")
            out.append(".Bl -tag -width Ds")
            for name in names {
                guard let spec = CommandSpec.named(name) else { continue }
                for each in [spec] + spec.subcommands {
                    out.append(".It Li \(escape(each.usage))")
                    let aliases = each.aliases.isEmpty ? "" : " (also " + each.aliases.joined(separator: ", ") + ")"
                    out += [escape(each.summary + aliases + "; calls"), ".Li \(escape(each.method)) ."]
                }
                if let examples = CommandSpec.examples[spec.name] {
                    out.append(".Bl -tag -width Ds -offset indent -compact")
                    for example in examples { out += [".It Li \(escape(example.line))", escape(example.what)] }
                    out.append(".El")
                }
            }
            out.append(".El")
        }
        out += [".Sh SEE ALSO", ".Xr mediahost 1 ,", ".Xr mediahost.rpc 1"]
        return out.joined(separator: "\n") + "\n"
    }

    /// A line as roff text: backslashes written as `\e`, a leading dot or quote made plain.
    static func escape(_ text: String) -> String {
        let escaped = text.replacing("\\", with: "\\e")
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }
}
