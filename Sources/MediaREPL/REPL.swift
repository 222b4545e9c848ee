import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit
import Pictures
import Synchronization

/// The interactive front end: command lines in, typed dispatcher calls, rendered results out.
/// Used by one task at a time (hence `@unchecked Sendable`: the Ctrl-C handler only cancels).
///
/// Each command is one entry of `CommandSpec.all`, which turns its line into one typed call of
/// `Dispatcher.run` (the same handlers as JSON-RPC, without JSON in between); with `json` the
/// response is printed as one line, exactly what `mediahost rpc` would answer.
public final class REPL: @unchecked Sendable {
    public struct Options: Sendable {
        /// Print each result as one JSON line.
        public var json: Bool
        /// Keep going after a failing command (scripts stop at the first by default).
        public var keepGoing: Bool
        /// Use ANSI colors.
        public var color: Bool
        /// Draw pictures where the terminal can (`--no-images` turns them off whatever the setting).
        public var images: Bool
        /// A try-out on the sandbox (`--sandbox`): the banner says so, and where it keeps things.
        public var sandbox: Sandbox?

        public enum Sandbox: Sendable {
            /// In the sandbox's own data dir (the banner names it).
            case apart
            /// In the data dir `--data-dir` named.
            case named
        }

        public init(
            json: Bool = false, keepGoing: Bool = false, color: Bool = false, images: Bool = true, sandbox: Sandbox? = nil
        ) {
            self.json = json
            self.keepGoing = keepGoing
            self.color = color
            self.images = images
            self.sandbox = sandbox
        }
    }

    /// The process this REPL runs in (its files, its secrets, its downloads); its calls go
    /// through `connection`.
    let host: any LocalSession
    let options: Options
    var renderer: Renderer
    let write: @Sendable (String) -> Void
    /// Writes data (JSON) as it is: redacted, never fitted to the terminal, whose "…" would
    /// change the values a person copies.
    let writeData: @Sendable (String) -> Void
    let writeError: @Sendable (String) -> Void
    /// Set while the interactive session writes to a terminal: nothing is wider than it.
    let stdoutFit: TerminalFit
    let stderrFit: TerminalFit

    /// What the last listing showed: row numbers and next/prev refer to it (set by `show`).
    var listing: Listing = .none
    /// How the terminal draws pictures, found when the interactive session starts (nil: none).
    var graphics: TerminalGraphics?
    /// Whether this REPL's output is the terminal it asked how to draw pictures.
    var drawsOnTerminal = false
    /// Whether listings end with their thumbnails (`repl.listing_images`).
    var listingPictures = false
    /// Pictures on their way to the room left for them, and the rows written to count it by.
    let pictures = PictureSlots()
    /// Running downloads' progress, from the host's notifications.
    let board = ProgressBoard()
    /// Where the progress board and login prompts hear from: the events of where commands run.
    private let subscriptions = Mutex<[(EventHub, Int)]>([])
    /// Categories seen per provider, for names in `browse` and completion.
    let categoryCache = CategoryCache()

    /// Set by `quit`.
    public private(set) var finished = false
    /// Asks the person something at the terminal (secret: no echo); nil when there is no terminal.
    var ask: ((_ question: String, _ secret: Bool) async -> String?)?
    /// Whether what plays is on a line above the prompt (a terminal), so replies need not repeat it.
    var showsNowPlaying = false
    /// Starts the background service and waits until it answers; set by the executable, nil
    /// where there is none to start (--sandbox: its replicas end with this process).
    public var startService: (@Sendable () async -> Bool)?
    /// Where this session's commands run: the host in this process, or the background service
    /// (then its downloads and playback are the service's, and its notifications, other
    /// clients' downloads too, reach the progress bars).
    private let connectionBox: Mutex<any HostConnection>
    public var connection: any HostConnection { connectionBox.withLock { $0 } }
    /// The providers where commands run, as `providers.list` gives them: what a command names is
    /// checked, completed and logged in to against these, not this process's own registry.
    private let providerInfo = Mutex<[ProvidersList.ProviderInfo]>([])

    /// Runs this session's commands through `connection` (the background service, with this
    /// process's host to fall back on), and learns its providers.
    public func use(_ connection: any HostConnection) async {
        let old = connectionBox.withLock { box in
            defer { box = connection }
            return box
        }
        if old !== connection {
            let (board, show) = (board, write)
            let token = connection.events.subscribe { event in
                if let prompt = event.payload(AuthPrompt.self) { show(prompt.message) } else { board.receive(event) }
            }
            subscriptions.withLock { tokens in
                for (hub, token) in tokens { hub.unsubscribe(token) }
                tokens = [(connection.events, token)]
            }
        }
        await learnProviders()
    }

    /// Asks where commands run which providers there are.
    func learnProviders() async {
        if let providers = try? await connection.run(ProvidersList()) { providerInfo.withLock { $0 = providers } }
    }

    /// Provider ids where commands run.
    var providerIDs: [String] {
        let known = providerInfo.withLock { $0.map(\.id) }
        return known.isEmpty ? host.providerIDs : known
    }

    /// Whether logging in to `provider` takes a username and password, where commands run.
    func needsPassword(_ provider: String) -> Bool {
        if let info = providerInfo.withLock({ $0.first { $0.id == provider } }) { return info.auth == .sessionLogin }
        return host.needsPassword(provider)
    }

    /// Whether this session's commands run in the background service.
    public var isAttached: Bool { connection.isRemote }

    /// A note above the prompt at its next redraw, not through the line being typed.
    public func note(_ text: String) { board.post("note: " + text) }

    /// Runs a method where this session's commands run.
    func dispatch<M: APIMethod>(_ request: M) async throws(RPCError) -> M.Response { try await connection.run(request) }

    /// `dispatch` by name with JSON params (`call`).
    func dispatch(_ method: String, params: JSONValue?) async throws(RPCError) -> [UInt8] {
        host.redacting.redact(bytes: try await connection.call(method, params: params))
    }

    public init(
        host: any LocalSession, options: Options,
        write: @escaping @Sendable (String) -> Void = { print($0) },
        writeError: @escaping @Sendable (String) -> Void = { Descriptor.standardError($0 + "\n") }
    ) {
        self.host = host
        self.options = options
        self.renderer = Renderer(color: options.color)
        // Nothing the REPL prints carries a secret, whatever a server echoed; error lines (which
        // quote servers and the user's own input) carry no control characters either.
        let redactor = host.redacting
        let (stdoutFit, stderrFit) = (TerminalFit(), TerminalFit())
        (self.stdoutFit, self.stderrFit) = (stdoutFit, stderrFit)
        // Rows written are counted: a picture's room is found by them (stderr's too when it is the
        // same terminal).
        let pictures = pictures
        let rows: @Sendable (String) -> Int = { $0.split(separator: "\n", omittingEmptySubsequences: false).count }
        self.write = {
            let text = stdoutFit.apply(redactor.redact($0))
            pictures.wrote(rows: rows(text))
            write(text)
        }
        self.writeData = {
            let text = redactor.redact($0)
            pictures.wrote(rows: rows(text))
            write(text)
        }
        self.writeError = {
            let text = stderrFit.apply(redactor.redact($0))
            if isatty(2) == 1 { pictures.wrote(rows: rows(text)) }
            writeError(text)
        }
        connectionBox = Mutex(host.connection)
        let board = board
        let show = self.write
        let subscription = host.events.subscribe { event in
            if let prompt = event.payload(AuthPrompt.self) {
                // The login command is waiting for this: show it at once.
                show(prompt.message)
            } else {
                board.receive(event)
            }
        }
        subscriptions.withLock { $0 = [(host.events, subscription)] }
    }

    deinit {
        for (hub, token) in subscriptions.withLock({ $0 }) { hub.unsubscribe(token) }
    }

    // MARK: Output

    /// Shows a result as text (not with `--json`, where the JSON line is the output).
    func display(_ text: String) {
        if !options.json { write(text) }
    }

    /// With `--json`, the response exactly as JSON-RPC would answer it; a response that cannot
    /// be written fails the command (a script would take nothing and exit 0 for an answer).
    func printJSON<M: APIMethod>(_ method: M.Type, _ response: M.Response) throws(RPCError) {
        guard options.json else { return }
        let bytes: [UInt8]
        do {
            bytes = try JSONCoding.bytes(response)
        } catch {
            throw .internalError("the answer to \(M.method) could not be written as JSON: \(error)")
        }
        writeData(String(decoding: bytes, as: UTF8.self))
    }

    /// An error line: red label, then the message cleaned of control characters (it may quote a
    /// server or the person's own input).
    func fail(_ message: String, label: String = "error") {
        let prefix = (location ?? "") + label + ": "
        let text = renderer.message(Renderer.clean(message, keepNewlines: true), labelColumns: Renderer.columns(prefix))
        writeError((location ?? "") + renderer.red(label + ": ") + text)
    }

    // MARK: Running a line

    /// Runs one command line.
    /// - Returns: false when the command failed.
    @discardableResult
    public func execute(_ line: String) async -> Bool {
        let trimmed = line.trimmingSpaces()
        guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { return true }
        let words: [String]
        switch ShellWords.split(trimmed) {
        case .success(let split): words = split
        case .failure(let error):
            fail("\(error.description): put a quote in the other kind of quotes (\"don't\") or after a backslash (don\\'t)")
            return false
        }
        guard let word = words.first, let command = CommandSpec.named(word) else {
            fail("unknown command '\((words.first ?? "").prefix(40))'; `help` lists the commands")
            return false
        }
        let (spec, arguments) = command.resolve(CommandWords(words: Array(words.dropFirst()), raw: trimmed.splitFirstWord().1))
        let action: Action
        do {
            action = try spec.build(spec.parse(arguments), self)
        } catch {
            // A command with subcommands, used wrongly, shows them all.
            let usage = ([spec.usage] + spec.subcommands.map(\.usage)).joined(separator: " | ")
            fail(error.message(usage: usage))
            return false
        }
        switch action {
        case .quit:
            finished = true
            return true
        case .help(let topic):
            return await showHelp(topic)
        case .page(let forward):
            guard let paging = listing.paging, let cursor = forward ? paging.next : paging.prev else {
                fail((forward ? "no next page" : "no previous page") + " in the last listing")
                return false
            }
            return await perform(listing(paging.request.with(cursor: cursor)))
        case .open(let text):
            return await open(text)
        case .call(let call):
            return await perform(call)
        }
    }

    private func perform(_ call: Call) async -> Bool {
        do {
            try await call.perform(self)
            return true
        } catch {
            if error.code == RPCError.requestCancelledCode, showsNowPlaying {
                // Ctrl-C at a terminal: it echoed "^C" where the cursor was; the word goes on a
                // line of its own, not as an error.
                writeError("\n" + renderer.dim("cancelled"))
                return false
            }
            fail(Self.personal(error))
            return false
        }
    }

    /// A host error as a person reads it: the JSON-RPC label its message carries for clients
    /// ("Invalid params: ") is not the person's concern.
    static func personal(_ error: RPCError) -> String {
        if error.code == RPCError.requestCancelledCode { return "cancelled" }
        for label in ["Invalid params: ", "Invalid Request: ", "Internal error: ", "Parse error: "]
        where error.message.hasPrefix(label) {
            return String(error.message.dropFirst(label.count))
        }
        if error.message.hasPrefix("Method not found: ") {
            return "no method '\(error.message.dropFirst("Method not found: ".count))' (`call rpc.discover` lists them)"
        }
        return error.message
    }

    /// `open <n|id>`: what opening means for the row's kind. An item opens as what is inside it
    /// (a channel's videos, a show's episodes, a movie's similar movies, a post's replies); one
    /// whose provider has nothing inside it opens as its details.
    private func open(_ text: String) async -> Bool {
        if let n = Int(text), let row = listing.row(n) {
            switch row {
            case .category(let provider, let category):
                return await perform(listing(.browse(MediaBrowse(provider: provider, category: category.id))))
            case .search(let record):
                return await perform(
                    listing(.search(MediaSearch(query: record.query, provider: record.provider, kind: record.kind))))
            case .section(let provider, let entity):
                switch entity.type {
                case .hashtag, .mention:
                    let query = (entity.type == .hashtag ? "#" : "@") + entity.value
                    return await perform(listing(.search(MediaSearch(query: query, provider: provider))))
                case .url, .media:
                    writeData(entity.value)
                    return true
                }
            case .provider(let info):
                return await perform(
                    .run(ProvidersCategories(provider: info.id)) { repl, categories in
                        repl.present(categories: categories, of: info.id)
                    })
            case .item, .download, .link, .hit:
                break
            }
        }
        let id: ItemID
        do { id = try item(text) } catch {
            fail(error.message(usage: "open <n|id>"))
            return false
        }
        let details = Call.run(MediaGet(id: id)) { repl, item in repl.present(detail: item) }
        let children = listing(.children(MediaChildren(id: id)))
        return await perform(
            Call(method: MediaChildren.method) { repl throws(RPCError) in
                do throws(RPCError) {
                    try await children.perform(repl)
                } catch  where error.data?["kind"]?.stringValue == "unsupported" {
                    try await details.perform(repl)
                }
            })
    }

    // MARK: Resolving arguments (used by the command table)

    /// An item: row `n` of the last listing, whatever it listed (items, or downloads), or an id.
    /// The items words name, in order: rows (`2`), ranges of rows (`2-5`), lists (`2,4`) and ids.
    /// - Throws: `.usage` for no words; `.invalid` naming a row that is not there.
    func items(_ words: [String]) throws(CommandError) -> [ItemID] {
        guard !words.isEmpty else { throw CommandError.usage }
        var ids: [ItemID] = []
        for word in words {
            // An id is taken whole (its native part may hold a comma or a dash).
            if word.contains(":") {
                ids.append(try item(word))
                continue
            }
            for part in word.split(separator: ",", omittingEmptySubsequences: true).map(String.init) {
                let ends = part.split(separator: "-", maxSplits: 1).map { Int($0) }
                if ends.count == 2, let from = ends[0], let to = ends[1] {
                    guard from <= to else { throw CommandError.invalid("\(part) runs backwards: write \(to)-\(from)") }
                    guard to - from < 1000 else { throw CommandError.invalid("\(part) is more than 1,000 rows") }
                    for n in from...to { ids.append(try item(String(n))) }
                } else {
                    ids.append(try item(part))
                }
            }
        }
        return ids
    }

    func item(_ text: String) throws(CommandError) -> ItemID {
        guard let n = Int(text) else {
            do { return try ItemID(parsing: text) } catch { throw CommandError.invalid(error.description) }
        }
        guard let row = listing.row(n) else {
            throw CommandError.invalid(
                listing.count == 0
                    ? "there is no row \(n): nothing has been listed yet"
                    : "there is no row \(n) in the last listing (1–\(listing.count))")
        }
        switch row {
        case .item(let item): return item.id
        case .download(let download): return download.id
        case .hit(let hit): return hit.id
        case .link(_, let id): return id
        case .category: throw CommandError.invalid("row \(n) is a category: `open \(n)` browses it")
        case .search: throw CommandError.invalid("row \(n) is a past search: `open \(n)` runs it again")
        case .provider: throw CommandError.invalid("row \(n) is a provider: `open \(n)` lists its categories")
        case .section(_, let entity):
            switch entity.type {
            case .hashtag, .mention:
                throw CommandError.invalid("row \(n) is a \(entity.type.rawValue): `open \(n)` searches for it")
            case .url, .media: throw CommandError.invalid("row \(n) is a link: `open \(n)` prints it")
            }
        }
    }

    func requireProvider(_ text: String) throws(CommandError) -> String {
        let provider = text.trimmingSpaces()
        guard !provider.isEmpty else { throw CommandError.usage }
        try checkProvider(provider)
        return provider
    }

    func checkProvider(_ provider: String) throws(CommandError) {
        let ids = providerIDs
        guard ids.contains(provider) else {
            // The host's own wording, said once for every front end.
            throw CommandError.invalid(host.unknownProvider(String(provider.prefix(40)), known: ids))
        }
    }

    // MARK: Scripts

    /// Runs lines until EOF or `quit`, as for a script or piped stdin, then waits for the
    /// downloads it started, printing their progress every two seconds.
    /// - Returns: the process exit status: 0, or 1 when a command failed.
    /// - Parameter source: the script's name, which errors are prefixed with (`script.mh:12:`).
    public func run(lines: some Sequence<String>, source: String? = nil) async -> Int32 {
        var status: Int32 = 0
        for (number, line) in lines.enumerated() {
            if Task.isCancelled || finished { break }
            flushProgress()
            location = source.map { "\($0):\(number + 1): " }
            defer { location = nil }
            if await !execute(line) {
                status = 1
                if !options.keepGoing {
                    writeError("stopped at line \(number + 1) (use --keep-going to run the rest)")
                    break
                }
            }
        }
        location = nil
        // The downloads the script started run to their end, failing script or not.
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(2))
                self.flushProgress()
            }
        }
        await host.downloadsIdle()
        ticker.cancel()
        flushProgress()
        var ended: [Download] = []
        do {
            ended = try await host.downloadsEnded(since: started)
        } catch {
            // Not "no downloads": the script is told its downloads could not be checked.
            writeError("the downloads of this run cannot be read (\(error)); `downloads` lists them")
            status = 1
        }
        let failed = ended.filter { $0.state == .failed }.count
        if failed > 0 { status = 1 }
        if !ended.isEmpty, !options.json {
            let completed = ended.count - failed
            writeError(
                "downloads this run: \(completed) completed"
                    + (failed > 0 ? ", \(failed) failed (`downloads` lists why; `resume <n>` tries again)" : ""))
        }
        return status
    }

    /// `file:line: ` while a script's line runs, for its error lines.
    private var location: String?

    private let started = Date()

    /// Plain progress lines (scripts, pipes): what changed since the last call.
    func flushProgress() {
        guard !options.json, let update = board.takeUpdate(width: renderer.width, color: false, playing: false) else { return }
        for line in update.events + update.bars { writeError(line) }
    }
}

/// Categories per provider, shared with tab completion (which runs on readline's thread).
final class CategoryCache: Sendable {
    private let storage = Mutex<[String: [MediaCategory]]>([:])
    func get(_ provider: String) -> [MediaCategory]? { storage.withLock { $0[provider] } }
    func set(_ provider: String, _ categories: [MediaCategory]) { storage.withLock { $0[provider] = categories } }
}
