import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit

/// What a command line asks for: a dispatcher call, or something the REPL does itself.
enum Action {
    case call(Call)
    case page(forward: Bool)
    case open(String)
    /// `help` on these words (a command, `all`, or none).
    case help([String])
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
    static func run<M: APIMethod>(_ request: M, show: @escaping @Sendable (REPL, M.Response) async -> Void) -> Call {
        Call(method: M.method) { repl throws(RPCError) in
            let response = try await repl.dispatch(request)
            try repl.printJSON(M.self, response)
            await show(repl, response)
        }
    }
}

extension Call {
    /// `request` for each of `ids` in turn (`download 2 3`, `fav 2-5`), each answer shown as it
    /// comes; one that fails is said with its item and the others go on, and the call fails at
    /// the end with how many did (a single item fails as itself).
    static func each<M: APIMethod>(
        _ ids: [ItemID], _ request: @escaping @Sendable (ItemID) -> M,
        show: @escaping @Sendable (REPL, M.Response) async -> Void
    ) -> Call {
        if ids.count == 1 { return .run(request(ids[0]), show: show) }
        return Call(method: M.method) { repl throws(RPCError) in
            var failed = 0
            for id in ids {
                do throws(RPCError) {
                    let response = try await repl.dispatch(request(id))
                    try repl.printJSON(M.self, response)
                    await show(repl, response)
                } catch {
                    if error.code == RPCError.requestCancelledCode { throw error }
                    failed += 1
                    repl.fail("\(id): " + REPL.personal(error))
                }
            }
            if failed > 0 {
                throw RPCError(code: RPCError.invalidParamsCode, message: "\(failed) of \(ids.count) did not")
            }
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

/// A `--name` a command takes anywhere on its line: a switch (`--now`), or one followed by its
/// value (`--kind video`), read into `CommandWords.options` before the command sees its words.
struct CommandOption: Sendable {
    let name: String
    /// What follows it; nil for a switch.
    let value: ArgumentKind?

    static func flag(_ name: String) -> CommandOption { CommandOption(name: name, value: nil) }
    static func value(_ name: String, _ kind: ArgumentKind) -> CommandOption { CommandOption(name: name, value: kind) }
}

/// A value typed after an option, read as swift-argument-parser's `ExpressibleByArgument` reads one.
protocol CommandArgument {
    init?(commandArgument: String)
    /// What it may be, for the message when it is none of them.
    static var choices: [String] { get }
}

extension MediaKind: CommandArgument {
    init?(commandArgument: String) { self.init(rawValue: commandArgument.lowercased()) }
    static var choices: [String] { allCases.map(\.rawValue) }
}

/// The words of a command line after the command's name, split as a shell does (`ShellWords`:
/// quotes group words and are removed, a backslash escapes one character). (Not `CommandLine`:
/// that is Swift's own, the process's arguments.)
struct CommandWords {
    var words: [String]
    /// The text after the command's name as typed, for `call`'s JSON.
    var raw: String
    /// The command's options given (`CommandSpec.options`), by name: a value, or "" for a switch.
    var options: [String: String] = [:]

    /// Whether the switch `name` is given.
    func has(_ name: String) -> Bool { options[name] != nil }

    /// The value given after `name`, read as a `T`; nil when it is not given.
    /// - Throws: `.invalid` saying what it may be when it is none of them.
    func value<T: CommandArgument>(_ name: String, as type: T.Type) throws(CommandError) -> T? {
        guard let text = options[name] else { return nil }
        guard let value = T(commandArgument: text) else {
            throw .invalid("\(name) takes one of \(T.choices.joined(separator: ", "))")
        }
        return value
    }

    /// Every word as one argument: a query, a category name.
    var text: String { words.joined(separator: " ") }

    /// The command's one argument.
    /// - Throws: `.usage` when there is none or more than one.
    func single() throws(CommandError) -> String {
        guard words.count == 1 else { throw CommandError.usage }
        return words[0]
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
    /// What each argument position takes (options aside); `follows` what comes after a word
    /// (`history clear <provider>`).
    var arguments: [[ArgumentKind]]
    var follows: [String: [ArgumentKind]]
    /// The `--options` it takes, anywhere on its line.
    var options: [CommandOption]
    /// Commands named by the first word after this one (`list new`): each with its own usage,
    /// summary, arguments and parsing, shown by `help` and offered by completion from this table.
    public var subcommands: [CommandSpec]
    let build: @Sendable (CommandWords, REPL) throws(CommandError) -> Action

    init(
        _ name: String, aliases: [String] = [], usage: String, method: String, summary: String, arguments: [[ArgumentKind]] = [],
        options: [CommandOption] = [], follows: [String: [ArgumentKind]] = [:], subcommands: [CommandSpec] = [],
        build: @escaping @Sendable (CommandWords, REPL) throws(CommandError) -> Action
    ) {
        self.name = name
        self.aliases = aliases
        self.usage = usage
        self.method = method
        self.summary = summary
        self.arguments = subcommands.isEmpty ? arguments : [[.words(subcommands.map(\.name))] + (arguments.first ?? [])]
        self.follows = follows
        self.options = options
        self.subcommands = subcommands
        self.build = build
    }

    /// `line` with this command's options taken out of its words into `options`.
    func parse(_ line: CommandWords) -> CommandWords {
        var parsed = CommandWords(words: [], raw: line.raw)
        var words = line.words[...]
        while let word = words.popFirst() {
            guard let option = options.first(where: { $0.name == word }) else {
                parsed.words.append(word)
                continue
            }
            // A value missing is "": `value(_:as:)` says what it may be.
            parsed.options[word] = option.value == nil ? "" : words.popFirst() ?? ""
        }
        return parsed
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

    /// A command that takes no words: it runs `request` and `show`s the answer.
    static func plain<M: APIMethod>(
        _ name: String, aliases: [String] = [], usage: String? = nil, summary: String, subcommands: [CommandSpec] = [],
        _ request: M, show: @escaping @Sendable (REPL, M.Response) async -> Void
    ) -> CommandSpec {
        CommandSpec(
            name, aliases: aliases, usage: usage ?? name, method: M.method, summary: summary, subcommands: subcommands
        ) { line, _ throws(CommandError) in
            guard line.words.isEmpty else { throw CommandError.usage }
            return .call(.run(request, show: show))
        }
    }

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
