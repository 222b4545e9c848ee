import JSONRPC
import MediaKit

/// One REPL command, documented for `help`.
public struct CommandSpec: Sendable {
    public var name: String
    public var usage: String
    /// The dispatcher method it calls, or how it is served.
    public var method: String
    public var summary: String

    /// Every command, in the order `help` lists them.
    public static let all: [CommandSpec] = [
        CommandSpec(name: "providers", usage: "providers", method: "providers.list", summary: "list providers and what each needs"),
        CommandSpec(name: "categories", usage: "categories <provider>", method: "providers.categories", summary: "a provider's categories"),
        CommandSpec(name: "browse", usage: "browse <provider> <category|n>", method: "media.browse", summary: "a category's items"),
        CommandSpec(name: "search", usage: "search [<provider>] [--kind K] <query>", method: "media.search", summary: "search one or every provider"),
        CommandSpec(name: "show", usage: "show <n|id>", method: "media.get", summary: "an item's details"),
        CommandSpec(name: "open", usage: "open <n|id>", method: "media.children / media.get", summary: "open a row: a channel's videos, a podcast's episodes, a category, a past search"),
        CommandSpec(name: "next", usage: "next", method: "(last listing's method)", summary: "the next page of the last listing"),
        CommandSpec(name: "prev", usage: "prev", method: "(last listing's method)", summary: "the previous page of the last listing"),
        CommandSpec(name: "fav", usage: "fav <n|id>", method: "favorites.add", summary: "keep an item as a favorite"),
        CommandSpec(name: "unfav", usage: "unfav <n|id>", method: "favorites.remove", summary: "forget a favorite"),
        CommandSpec(name: "favs", usage: "favs [<provider> [--remote]]", method: "favorites.list", summary: "favorites, newest first (works offline); --remote: the account's"),
        CommandSpec(name: "download", usage: "download <n|id>", method: "downloads.start", summary: "download an item's media (episodes)"),
        CommandSpec(name: "downloads", usage: "downloads", method: "downloads.list", summary: "downloads with state, size, progress"),
        CommandSpec(name: "pause", usage: "pause <n|id>", method: "downloads.pause", summary: "pause a download (keeps what it has)"),
        CommandSpec(name: "resume", usage: "resume <n|id>", method: "downloads.resume", summary: "continue a paused or failed download"),
        CommandSpec(name: "cancel", usage: "cancel <n|id>", method: "downloads.cancel", summary: "stop a download and delete its partial file"),
        CommandSpec(name: "play", usage: "play <n|id>", method: "player.open", summary: "play in the configured player (the download if any, else the stream)"),
        CommandSpec(name: "artwork", usage: "artwork <n|id>", method: "media.artwork", summary: "an item's image as a local file (cached)"),
        CommandSpec(name: "login", usage: "login <provider> [<username> [<password>]]", method: "auth.login", summary: "sign in: a device code to enter, or a username and password (asked without echo)"),
        CommandSpec(name: "logout", usage: "logout <provider>", method: "auth.logout", summary: "sign out and revoke the session"),
        CommandSpec(name: "history", usage: "history [<provider>] | history clear [<provider>]", method: "history.list / history.clear", summary: "the last 100 searches, newest first"),
        CommandSpec(name: "config", usage: "config [<key> [<value>|--unset]]", method: "config.get / config.set", summary: "show or change settings"),
        CommandSpec(name: "call", usage: "call <method> [<json>]", method: "any", summary: "call any method with JSON params"),
        CommandSpec(name: "help", usage: "help", method: "(local)", summary: "this list"),
        CommandSpec(name: "quit", usage: "quit", method: "(local)", summary: "leave (also exit, Ctrl-D)"),
    ]

    public static var names: [String] { all.map(\.name) + ["exit"] }
}

/// A parsed command line: a method call, or something the REPL does itself.
enum Command: Equatable {
    /// Call a method; `listing` says how to remember the result for row numbers and paging.
    case call(method: String, params: JSONValue, listing: Listing)
    case page(forward: Bool)
    case openRow(String)
    case help
    case quit

    enum Listing: Equatable {
        case items, categories(provider: String), history, providers, none, detail, config, downloads, download, sections
    }
}

/// Why a line is not a command, with the usage that helps.
struct CommandError: Error, CustomStringConvertible, Equatable {
    var description: String
}

/// Translates command lines into dispatcher calls.
struct CommandParser {
    var providerIDs: [String]
    /// Resolves a row number of the last listing (or an item id) to an item id.
    var resolveItem: (String) throws(CommandError) -> ItemID
    /// Resolves a row of the last `downloads` listing (or of the last items listing, or an id).
    var resolveDownload: (String) throws(CommandError) -> ItemID

    func parse(_ line: String) throws(CommandError) -> Command? {
        let trimmed = line.trimmingSpaces()
        guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { return nil }
        let (word, rest) = trimmed.splitFirstWord()
        switch word.lowercased() {
        case "providers": return .call(method: "providers.list", params: [:], listing: .providers)
        case "categories", "cats":
            let provider = try requireProvider(rest, usage: "categories <provider>")
            return .call(method: "providers.categories", params: ["provider": .string(provider)], listing: .categories(provider: provider))
        case "browse":
            let (provider, category) = rest.splitFirstWord()
            guard !provider.isEmpty, !category.isEmpty else { throw usage("browse <provider> <category>") }
            try checkProvider(provider)
            return .call(
                method: "media.browse",
                params: ["provider": .string(provider), "category": .string(category)], listing: .items)
        case "search", "s":
            return try parseSearch(rest)
        case "show", "get":
            return .call(method: "media.get", params: ["id": .string(try item(rest, usage: "show <n|id>").description)], listing: .detail)
        case "open":
            guard !rest.isEmpty else { throw usage("open <n|id>") }
            return .openRow(rest)
        case "next", "n": return .page(forward: true)
        case "prev", "p", "previous": return .page(forward: false)
        case "fav":
            return .call(method: "favorites.add", params: ["id": .string(try item(rest, usage: "fav <n|id>").description)], listing: .detail)
        case "unfav":
            return .call(method: "favorites.remove", params: ["id": .string(try item(rest, usage: "unfav <n|id>").description)], listing: .none)
        case "favs", "favorites":
            var params: [String: JSONValue] = [:]
            var words = rest
            if words.hasSuffix("--remote") {
                params["remote"] = true
                words = String(words.dropLast("--remote".count)).trimmingSpaces()
            }
            if !words.isEmpty { params["provider"] = .string(try requireProvider(words, usage: "favs [<provider> [--remote]]")) }
            return .call(method: "favorites.list", params: .object(params), listing: .items)
        case "login":
            let words = rest.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard let provider = words.first else { throw usage("login <provider> [<username> [<password>]]") }
            var params: [String: JSONValue] = ["provider": .string(try requireProvider(provider, usage: "login <provider>"))]
            if words.count > 1 { params["username"] = .string(words[1]) }
            if words.count > 2 { params["password"] = .string(words[2...].joined(separator: " ")) }
            return .call(method: "auth.login", params: .object(params), listing: .none)
        case "logout":
            return .call(method: "auth.logout", params: ["provider": .string(try requireProvider(rest, usage: "logout <provider>"))], listing: .none)
        case "download", "dl":
            return .call(method: "downloads.start", params: ["id": .string(try item(rest, usage: "download <n|id>").description)], listing: .download)
        case "play":
            return .call(method: "player.open", params: ["id": .string(try download(rest, usage: "play <n|id>").description)], listing: .none)
        case "artwork", "art":
            return .call(method: "media.artwork", params: ["id": .string(try item(rest, usage: "artwork <n|id>").description)], listing: .none)
        case "downloads":
            return .call(method: "downloads.list", params: [:], listing: .downloads)
        case "pause", "resume", "cancel":
            let target = try download(rest, usage: "\(word.lowercased()) <n|id>")
            return .call(method: "downloads.\(word.lowercased())", params: ["id": .string(target.description)], listing: .download)
        case "history":
            let (sub, provider) = rest.splitFirstWord()
            if sub == "clear" {
                var params: [String: JSONValue] = [:]
                if !provider.isEmpty { params["provider"] = .string(try requireProvider(provider, usage: "history clear [<provider>]")) }
                return .call(method: "history.clear", params: .object(params), listing: .none)
            }
            var params: [String: JSONValue] = [:]
            if !rest.isEmpty { params["provider"] = .string(try requireProvider(rest, usage: "history [<provider>]")) }
            return .call(method: "history.list", params: .object(params), listing: .history)
        case "config":
            let (key, value) = rest.splitFirstWord()
            if key.isEmpty { return .call(method: "config.get", params: [:], listing: .config) }
            if value.isEmpty { return .call(method: "config.get", params: ["key": .string(key)], listing: .config) }
            let json: JSONValue = value == "--unset" ? .null : .string(value)
            return .call(method: "config.set", params: ["key": .string(key), "value": json], listing: .config)
        case "call":
            let (method, json) = rest.splitFirstWord()
            guard !method.isEmpty else { throw usage("call <method> [<json>]") }
            var params: JSONValue = [:]
            if !json.isEmpty {
                do { params = try JSONValue(parsing: json) } catch { throw CommandError(description: "params are not JSON: \(error)") }
            }
            return .call(method: method, params: params, listing: .none)
        case "help", "?": return .help
        case "quit", "exit", "q": return .quit
        default:
            throw CommandError(description: "unknown command '\(word.prefix(40))'; `help` lists the commands")
        }
    }

    private func parseSearch(_ rest: String) throws(CommandError) -> Command {
        var words = rest
        var params: [String: JSONValue] = [:]
        while true {
            let (word, remainder) = words.splitFirstWord()
            if word == "--kind" {
                let (kind, after) = remainder.splitFirstWord()
                guard let parsed = MediaKind(rawValue: kind) else {
                    throw CommandError(description: "--kind takes one of \(MediaKind.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                params["kind"] = .string(parsed.rawValue)
                words = after
            } else if params["provider"] == nil, providerIDs.contains(word), !remainder.isEmpty {
                params["provider"] = .string(word)
                words = remainder
            } else {
                break
            }
        }
        guard !words.isEmpty else { throw usage("search [<provider>] [--kind K] <query>") }
        params["query"] = .string(words)
        return .call(method: "media.search", params: .object(params), listing: .items)
    }

    private func item(_ text: String, usage text2: String) throws(CommandError) -> ItemID {
        guard !text.isEmpty else { throw usage(text2) }
        return try resolveItem(text)
    }

    private func download(_ text: String, usage text2: String) throws(CommandError) -> ItemID {
        guard !text.isEmpty else { throw usage(text2) }
        return try resolveDownload(text)
    }

    private func requireProvider(_ text: String, usage text2: String) throws(CommandError) -> String {
        let provider = text.trimmingSpaces()
        guard !provider.isEmpty else { throw usage(text2) }
        try checkProvider(provider)
        return provider
    }

    private func checkProvider(_ provider: String) throws(CommandError) {
        guard providerIDs.contains(provider) else {
            throw CommandError(
                description: providerIDs.isEmpty
                    ? "unknown provider '\(provider.prefix(40))': no provider is registered"
                    : "unknown provider '\(provider.prefix(40))'; providers are \(providerIDs.joined(separator: ", "))")
        }
    }

    private func usage(_ text: String) -> CommandError { CommandError(description: "usage: \(text)") }
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
