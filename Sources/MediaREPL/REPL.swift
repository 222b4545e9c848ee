import Foundation
import JSONRPC
import MediaHost
import MediaKit
import MediaStore

/// The interactive front end: command lines in, dispatcher calls, rendered results out.
/// Used by one task at a time (hence `@unchecked Sendable`: the Ctrl-C handler only cancels).
///
/// Every command is a thin translation into one `Dispatcher.call`; with `json` the raw result of
/// that call is printed as one line, exactly what `mediahost rpc` would answer.
public final class REPL: @unchecked Sendable {
    public struct Options: Sendable {
        /// Print each result as one JSON line.
        public var json: Bool
        /// Keep going after a failing command (scripts stop at the first by default).
        public var keepGoing: Bool
        /// Use ANSI colors.
        public var color: Bool

        public init(json: Bool = false, keepGoing: Bool = false, color: Bool = false) {
            self.json = json
            self.keepGoing = keepGoing
            self.color = color
        }
    }

    let host: HostRuntime
    let options: Options
    let renderer: Renderer
    private let write: @Sendable (String) -> Void
    private let writeError: @Sendable (String) -> Void

    // What the last listing showed, so row numbers and next/prev refer to it.
    private var listing: Command.Listing = .none
    private var items: [MediaItem] = []
    private var categoryRows: [MediaCategory] = []
    private var categoryProvider = ""
    private var historyRows: [SearchRecord] = []
    private var providerRows: [ProvidersList.ProviderInfo] = []
    private var downloadRows: [Download] = []
    /// The section rows of the last post shown, and its provider.
    private var sectionRows: [TextEntity] = []
    private var sectionProvider = ""
    /// Running downloads' progress, from the host's notifications.
    let board = ProgressBoard()
    private var subscription: Int?
    private var pagedRequest: (method: String, params: [String: JSONValue])?
    private var cursors: (next: Cursor?, prev: Cursor?) = (nil, nil)
    /// Categories seen per provider, for names in `browse` and completion.
    let categoryCache = CategoryCache()

    /// Set by `quit`.
    public private(set) var finished = false
    /// Asks the person something at the terminal (secret: no echo); nil when there is no terminal.
    var ask: ((_ question: String, _ secret: Bool) async -> String?)?

    public init(
        host: HostRuntime, options: Options,
        write: @escaping @Sendable (String) -> Void = { print($0) },
        writeError: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
    ) {
        self.host = host
        self.options = options
        self.renderer = Renderer(color: options.color)
        // Nothing the REPL prints carries a secret, whatever a server echoed; error lines (which
        // quote servers and the user's own input) carry no control characters either.
        let redactor = host.redactor
        self.write = { write(redactor.redact($0)) }
        self.writeError = { writeError(redactor.redact($0)) }
        let board = board
        let write = self.write
        subscription = host.events.subscribe { method, params in
            if method == "auth.prompt" {
                // The login command is waiting for this: show it at once.
                write(params["message"]?.stringValue ?? "")
            } else {
                board.receive(method, params)
            }
        }
    }

    /// An error line: red label, then the message cleaned of control characters (it may quote a
    /// server or the person's own input).
    private func fail(_ message: String, label: String = "error") {
        writeError(renderer.red(label + ": ") + Renderer.clean(message, keepNewlines: true))
    }

    deinit {
        if let subscription { host.events.unsubscribe(subscription) }
    }

    /// Runs one command line.
    /// - Returns: false when the command failed.
    @discardableResult
    public func execute(_ line: String) async -> Bool {
        let parser = CommandParser(providerIDs: host.providerIDs, resolveItem: resolveItem, resolveDownload: resolveDownload)
        let command: Command?
        do {
            command = try parser.parse(line)
        } catch {
            fail(error.description)
            return false
        }
        guard let command else { return true }
        switch command {
        case .quit:
            finished = true
            return true
        case .help:
            showHelp()
            return true
        case .page(let forward):
            guard let request = pagedRequest, let cursor = forward ? cursors.next : cursors.prev else {
                fail((forward ? "no next page" : "no previous page") + " in the last listing")
                return false
            }
            var params = request.params
            params["cursor"] = .string(cursor.rawValue)
            return await call(request.method, params: .object(params), listing: .items)
        case .openRow(let text):
            return await open(text)
        case .call(let method, var params, let listing):
            if method == "auth.login", case .object(var members) = params, members["password"] == nil,
                let provider = members["provider"]?.stringValue, host.needsPassword(provider)
            {
                guard let ask else {
                    fail("usage in scripts: login \(provider) <username> <password>")
                    return false
                }
                if members["username"] == nil {
                    guard let name = await ask("\(provider) username: ", false), !name.isEmpty else { return false }
                    members["username"] = .string(name)
                }
                guard let password = await ask("\(provider) password: ", true) else { return false }
                members["password"] = .string(password)
                params = .object(members)
            }
            if method == "media.browse", case .object(var members) = params,
                let provider = members["provider"]?.stringValue, let category = members["category"]?.stringValue
            {
                members["category"] = .string(await resolveCategory(provider: provider, text: category))
                params = .object(members)
            }
            return await call(method, params: params, listing: listing)
        }
    }

    private func open(_ text: String) async -> Bool {
        if let row = Int(text) {
            switch listing {
            case .categories where (1...categoryRows.count).contains(row):
                let params: JSONValue = ["provider": .string(categoryProvider), "category": .string(categoryRows[row - 1].id)]
                return await call("media.browse", params: params, listing: .items)
            case .history where (1...historyRows.count).contains(row):
                let record = historyRows[row - 1]
                var params: [String: JSONValue] = ["query": .string(record.query)]
                if let provider = record.provider { params["provider"] = .string(provider) }
                if let kind = record.kind { params["kind"] = .string(kind.rawValue) }
                return await call("media.search", params: .object(params), listing: .items)
            case .sections where (1...sectionRows.count).contains(row):
                let entity = sectionRows[row - 1]
                switch entity.type {
                case .hashtag, .mention:
                    let query = (entity.type == .hashtag ? "#" : "@") + entity.value
                    return await call("media.search", params: ["provider": .string(sectionProvider), "query": .string(query)], listing: .items)
                case .url, .media:
                    write(entity.value)
                    return true
                }
            case .providers where (1...providerRows.count).contains(row):
                let provider = providerRows[row - 1].id
                return await call("providers.categories", params: ["provider": .string(provider)], listing: .categories(provider: provider))
            default: break
            }
        }
        let id: ItemID
        do { id = try resolveItem(text) } catch {
            fail(error.description)
            return false
        }
        if id.kind.isContainer {
            return await call("media.children", params: ["id": .string(id.description)], listing: .items)
        }
        return await call("media.get", params: ["id": .string(id.description)], listing: .detail)
    }

    private func resolveItem(_ text: String) throws(CommandError) -> ItemID {
        if let row = Int(text) {
            guard listing == .items, (1...max(1, items.count)).contains(row), row <= items.count else {
                throw CommandError(description: "there is no row \(row) in the last listing")
            }
            return items[row - 1].id
        }
        do { return try ItemID(parsing: text) } catch { throw CommandError(description: error.description) }
    }

    /// A row of the last `downloads` listing; else a row of the last items listing, or an id.
    private func resolveDownload(_ text: String) throws(CommandError) -> ItemID {
        if let row = Int(text), listing == .downloads {
            guard (1...max(1, downloadRows.count)).contains(row), row <= downloadRows.count else {
                throw CommandError(description: "there is no row \(row) in the last downloads listing")
            }
            return downloadRows[row - 1].id
        }
        return try resolveItem(text)
    }

    /// A category given by row number of the last `categories`, by name, or by id.
    private func resolveCategory(provider: String, text: String) async -> String {
        if let row = Int(text), listing == .categories(provider: provider), (1...categoryRows.count).contains(row) {
            return categoryRows[row - 1].id
        }
        if categoryCache.get(provider) == nil,
            let bytes = try? await host.dispatcher.call("providers.categories", params: ["provider": .string(provider)]),
            let categories = try? JSONDecoder().decode([MediaCategory].self, from: Data(bytes))
        {
            categoryCache.set(provider, categories)
        }
        let categories = categoryCache.get(provider) ?? []
        return categories.first { $0.name.caseInsensitiveCompare(text) == .orderedSame }?.id
            ?? categories.first { $0.id == text }?.id ?? text
    }

    /// Calls the dispatcher and shows the result.
    private func call(_ method: String, params: JSONValue, listing newListing: Command.Listing) async -> Bool {
        let bytes: [UInt8]
        do {
            bytes = try await host.dispatcher.call(method, params: params)
        } catch {
            fail(error.message)
            return false
        }
        if options.json { write(String(decoding: bytes, as: UTF8.self)) }
        do {
            try remember(method, params: params, listing: newListing, bytes: bytes)
        } catch {
            fail("cannot read the result of \(method): \(error)")
            return false
        }
        return true
    }

    private func remember(_ method: String, params: JSONValue, listing newListing: Command.Listing, bytes: [UInt8]) throws {
        let data = Data(bytes)
        let decoder = JSONDecoder()
        var text: String?
        switch newListing {
        case .items:
            let page: Page
            if method == "media.search" {
                let result = try decoder.decode(MediaSearch.Response.self, from: data)
                page = Page(items: result.items, next: result.next, prev: result.prev, total: result.total)
                for failure in result.errors ?? [] {
                    fail(failure.message, label: "warning")
                }
            } else {
                page = try decoder.decode(Page.self, from: data)
            }
            items = page.items
            cursors = (page.next, page.prev)
            var request = params.objectValue ?? [:]
            request["cursor"] = nil
            pagedRequest = (method, request)
            listing = .items
            text = renderer.items(page)
        case .categories(let provider):
            let categories = try decoder.decode([MediaCategory].self, from: data)
            categoryCache.set(provider, categories)
            categoryRows = categories
            categoryProvider = provider
            listing = newListing
            text = renderer.categories(categories)
        case .history:
            historyRows = try decoder.decode([SearchRecord].self, from: data)
            listing = .history
            text = renderer.history(historyRows)
        case .providers:
            providerRows = try decoder.decode([ProvidersList.ProviderInfo].self, from: data)
            listing = .providers
            text = renderer.providers(providerRows)
        case .detail:
            let item = try decoder.decode(MediaItem.self, from: data)
            text = renderer.detail(item)
            // A post's hashtags, users, links and media become rows: `open <n>` follows them.
            if let entities = item.entities, !entities.isEmpty {
                sectionRows = Renderer.sectionRows(entities)
                sectionProvider = item.provider
                listing = .sections
                text = (text ?? "") + "\n\n" + renderer.sections(sectionRows)
            }
        case .sections:
            break
        case .downloads:
            downloadRows = try decoder.decode([Download].self, from: data)
            listing = .downloads
            for row in downloadRows { board.setTitle(row.title, for: row.id.description) }
            text = renderer.downloads(downloadRows) { [board] in board.rate(of: $0.id.description) }
        case .download:
            let download = try decoder.decode(Download.self, from: data)
            board.setTitle(download.title, for: download.id.description)
            text = renderer.downloadLine(download)
        case .config:
            if method == "config.set" {
                text = renderer.config([try decoder.decode(ConfigEntry.self, from: data)])
            } else {
                text = renderer.config(try decoder.decode([ConfigEntry].self, from: data))
            }
        case .none:
            switch method {
            case "favorites.remove":
                let result = try decoder.decode(FavoritesRemove.Response.self, from: data)
                text = (result.removed ? "removed \(result.id) from favorites" : "\(result.id) was not a favorite")
                    + (result.account.map { "; " + $0 } ?? "")
            case "player.open":
                let result = try decoder.decode(PlayerOpen.Response.self, from: data)
                text = "playing \(result.local ? "the downloaded file" : "the stream") in \(result.command.first ?? "the player") (pid \(result.pid)): \(result.target)"
            case "media.artwork":
                let result = try decoder.decode(MediaArtwork.Response.self, from: data)
                text = result.path + renderer.dim(result.cached ? "  (cached)" : "")
            case "auth.login", "auth.logout":
                let status = try decoder.decode(AuthStatusEntry.self, from: data)
                text = status.loggedIn ? "logged in to \(status.provider)" + (status.account.map { " as \($0)" } ?? "") : "logged out of \(status.provider)"
            case "history.clear":
                let result = try decoder.decode(HistoryClear.Response.self, from: data)
                text = "forgot \(result.cleared) search\(result.cleared == 1 ? "" : "es")"
            default:
                text = Self.prettyJSON(data)
            }
        }
        if !options.json, let text { write(text) }
    }

    static func prettyJSON(_ data: Data) -> String {
        guard let value = try? JSONParser.parse(Array(data)) else { return String(decoding: data, as: UTF8.self) }
        return JSONWriter.pretty(value)
    }

    private func showHelp() {
        if options.json {
            let commands: [JSONValue] = CommandSpec.all.map {
                ["command": .string($0.usage), "method": .string($0.method), "summary": .string($0.summary)]
            }
            write(JSONValue.array(commands).jsonString)
            return
        }
        let width = CommandSpec.all.map(\.usage.count).max() ?? 0
        let methodWidth = CommandSpec.all.map(\.method.count).max() ?? 0
        var lines = ["Commands (numbers refer to rows of the last listing):"]
        for spec in CommandSpec.all {
            lines.append(
                "  " + spec.usage.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                    + renderer.dim(spec.method.padding(toLength: methodWidth, withPad: " ", startingAt: 0)) + "  " + spec.summary)
        }
        lines.append("Every command is one JSON-RPC call; `call <method> <json>` reaches any of: ")
        lines.append("  " + Dispatcher.methodNames.joined(separator: " "))
        write(lines.joined(separator: "\n"))
    }

    /// Runs lines until EOF or `quit`, as for a script or piped stdin, then waits for the
    /// downloads it started, printing their progress every two seconds.
    /// - Returns: the process exit status: 0, or 1 when a command failed.
    public func run(lines: some Sequence<String>) async -> Int32 {
        var status: Int32 = 0
        for (number, line) in lines.enumerated() {
            if Task.isCancelled || finished { break }
            flushProgress()
            if await !execute(line) {
                status = 1
                if !options.keepGoing {
                    writeError("stopped at line \(number + 1) (use --keep-going to run the rest)")
                    break
                }
            }
        }
        if status == 0 || options.keepGoing {
            let ticker = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(2))
                    self.flushProgress()
                }
            }
            await host.downloads.idle()
            ticker.cancel()
            flushProgress()
            if (try? await host.store.downloads(in: [.failed]).contains { $0.updatedAt > started }) == true { status = 1 }
        }
        return status
    }

    private let started = Date()

    /// Plain progress lines (scripts, pipes): what changed since the last call.
    func flushProgress() {
        guard !options.json, let update = board.takeUpdate(width: renderer.width, color: false) else { return }
        for line in update.events + update.bars { writeError(line) }
    }
}

/// Categories per provider, shared with tab completion (which runs on readline's thread).
final class CategoryCache: Sendable {
    private let storage = Mutex<[String: [MediaCategory]]>([:])
    func get(_ provider: String) -> [MediaCategory]? { storage.withLock { $0[provider] } }
    func set(_ provider: String, _ categories: [MediaCategory]) { storage.withLock { $0[provider] = categories } }
}

import Synchronization
