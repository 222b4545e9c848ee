import Basics
@preconcurrency import CReadline
import Dispatch
import FoundationEssentials
import HostAPI
import JSONRPC
import MediaKit
import Pictures
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension REPL {
    /// Whether a line may be kept in the history file: not when it carries a password or a
    /// secret setting's value, or any secret now in effect.
    static func mayKeepInHistory(_ line: String, host: any LocalSession) -> Bool {
        guard host.redacting.redact(line) == line else { return false }
        let words = (try? ShellWords.split(line).get()) ?? line.split(separator: " ").map(String.init)
        guard let command = words.first?.lowercased() else { return true }
        func isSecret(_ key: String) -> Bool { host.isSecretSetting(key) }
        switch command {
        case "login":
            return words.count < 4  // `login <provider> <user> <password>`
        case "config":
            return words.count < 3 || !isSecret(words[1])
        case "call":
            // The JSON is the raw rest of the line, not shell words.
            let raw = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true).map(String.init)
            guard raw.count > 1 else { return true }
            let json = raw.count > 2 ? raw[2] : ""
            if raw[1] == "auth.login", json.contains("password") { return false }
            if raw[1] == "config.set" {
                guard let value = try? JSONValue(parsing: json) else { return !json.contains("providers.") }
                return !(value["key"]?.stringValue.map(isSecret) ?? false)
            }
            return true
        default:
            return true
        }
    }

    /// The terminal session: readline prompt, history file, completion; Ctrl-C cancels the running
    /// command, Ctrl-D or `quit` leaves.
    public func runInteractive() async {
        let host = host
        // What is completed is what is there where commands run (the service's plugins too).
        let methods = (try? await dispatch(HostInfo()))?.methods ?? host.methodNames
        let configKeys = (try? await dispatch(ConfigGet()))?.map(\.key) ?? host.settingKeys
        let infos = (try? await dispatch(ProvidersList())) ?? []
        let editor = LineEditor(
            historyPath: host.historyFile,
            completer: Completer(
                providers: providerIDs, methods: methods, configKeys: configKeys, categories: categoryCache,
                fetchCategories: { provider in
                    let result = Mutex<[MediaCategory]?>(nil)
                    let done = DispatchSemaphore(value: 0)
                    Task {
                        let categories = try? await self.dispatch(ProvidersCategories(provider: provider))
                        result.withLock { $0 = categories }
                        done.signal()
                    }
                    _ = done.wait(timeout: .now() + 5)
                    return result.withLock { $0 }
                },
                accountProviders: infos.filter { $0.capabilities.contains(.login) }.map(\.id),
                kinds: Dictionary(infos.map { ($0.id, $0.kinds) }, uniquingKeysWith: { a, _ in a })))

        // Ctrl-C: at the prompt it drops the typed line (readline's thread, in its event hook);
        // while a command runs it cancels it (a watcher, as the handler may only take a note).
        let running = Mutex<Task<Bool, Never>?>(nil)
        mh_catch_interrupts()
        let watcher = Task.detached {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(50))
                let task = running.withLock { $0 }
                if let task, mh_take_interrupt() != 0 { task.cancel() }
            }
        }
        defer { watcher.cancel() }

        // What another process of this data dir plays (an mpv this REPL can control) is shown too,
        // when it answers: a stuck player does not hold the prompt back.
        Task { [self] in
            if let status = try? await dispatch(PlayerStatusGet()), status.state != .stopped {
                board.receive(status)
            }
        }
        // Downloads resumed from an earlier run get their names on the bars.
        for download in (try? await dispatch(DownloadsList())) ?? [] {
            board.setTitle(download.title, for: download.id.description)
        }
        ask = { question, secret in await editor.ask(question, secret: secret) }
        // Bars are drawn in place on a terminal; with stdout redirected, on stderr if that is one,
        // else as plain lines.
        let output: Int32? = isatty(1) == 1 ? 1 : isatty(2) == 1 ? 2 : nil
        // Rows fit the terminal they are shown on; redirected, they keep their natural length.
        if output == 1 { renderer.terminalWidth = { Renderer.terminalColumns(1) } }
        stdoutFit.follow(isatty(1) == 1 ? 1 : nil)
        stderrFit.follow(isatty(2) == 1 ? 2 : nil)
        // A log line written now would land on the line being typed: it is shown above the prompt.
        if output != nil { host.divertLog { [board] level, message in board.post("\(level): \(message)") } }
        defer {
            host.divertLog(nil)
            stdoutFit.follow(nil)
            stderrFit.follow(nil)
        }
        if output == 1 {
            drawsOnTerminal = true
            await findGraphics()
        }
        defer { drawsOnTerminal = false }
        let progress = output.map {
            InPlaceProgress(board: board, color: options.color, fd: $0, pictures: pictures, graphics: { [self] in graphics })
        }
        showsNowPlaying = progress != nil
        defer { showsNowPlaying = false }
        idleHook = { [self] in
            if mh_take_interrupt() != 0 {
                mh_rl_discard_line()
                // Ctrl-C stops the pictures still coming too.
                pictures.clear()
            }
            if let progress { progress.draw() } else { flushProgress() }
        }
        defer { idleHook = nil }

        write("\(host.programName) \(host.programVersion) — `help` lists commands, Ctrl-D quits")
        switch options.sandbox {
        case .apart?:
            write("sandbox: made-up shows and accounts; your own library is not touched")
            write("  (what you do here is kept in \(Renderer.home(host.dataDir)))")
        case .named?:
            write("sandbox: made-up shows and accounts, kept in the data dir you named")
        case nil: break
        }
        if isAttached {
            write("attached to the background service: downloads and playback go on when this REPL quits")
        }
        let prompt = options.color ? "\u{01}\u{1B}[1m\u{02}mediahost>\u{01}\u{1B}[0m\u{02} " : "mediahost> "
        // What was typed while it started runs now, as typed at the prompt.
        TypeAhead.release()
        while let line = await editor.readLine(prompt: prompt, remember: { [host] in Self.mayKeepInHistory($0, host: host) }) {
            progress?.forget()
            _ = mh_take_interrupt()
            let task = Task { await self.execute(line) }
            running.withLock { $0 = task }
            _ = await task.value
            running.withLock { $0 = nil }
            if finished {
                await sayWhatBecomesOfDownloads()
                return
            }
        }
        write("")  // Ctrl-D leaves the cursor after the prompt
        await sayWhatBecomesOfDownloads()
    }

    /// Leaving with downloads under way or something playing: offered to the background service
    /// (which finishes the downloads and keeps the playback's place with this window closed);
    /// otherwise the downloads stop with the process and go on at the next start, and the
    /// playback stops where it is (`play` resumes it).
    func sayWhatBecomesOfDownloads() async {
        if isAttached {
            let active = (try? await dispatch(DownloadsList()))?.filter { $0.state == .running || $0.state == .queued } ?? []
            let playing = board.playing != nil
            if !active.isEmpty || playing {
                write("downloads and playback go on in the background service (`mediahost serve --stop` ends it)")
            }
            return
        }
        let active =
            (try? await dispatch(DownloadsList()))?.filter { $0.state == .running || $0.state == .queued } ?? []
        let playing = board.playing?.item
        guard !active.isEmpty || playing != nil else { return }
        let count = active.count == 1 ? "1 download is" : "\(active.count) downloads are"
        var what: [String] = []
        if !active.isEmpty { what.append("\(count) not finished") }
        if let playing { what.append("\(Renderer.clean(playing.title)) is playing") }
        let them = active.count + (playing == nil ? 0 : 1) == 1 ? "it" : "them"
        if let startService, let ask,
            let answer = await ask(
                "\(what.joined(separator: " and ")): keep \(them) going in the background? [Y/n] ", false),
            !answer.lowercased().hasPrefix("n")
        {
            await host.handOverDownloads()
            if await startService() {
                write(
                    "\(what.joined(separator: " and ")): going on in the background service (`mediahost serve --status`; `mediahost serve --stop` ends it)"
                )
                return
            }
            writeError("the background service could not be started (see <data dir>/service.log)")
        }
        if let playing, let status = try? await dispatch(PlayerStop()) {
            _ = status
            writeError("stopped \(Renderer.clean(playing.title)) (`play` resumes it where it was left)")
        }
        guard !active.isEmpty else { return }
        writeError(
            "\(count) not finished: \(active.count == 1 ? "it stops" : "they stop") now, keeping what \(active.count == 1 ? "it has" : "they have"), and \(active.count == 1 ? "goes" : "go") on the next time mediahost starts"
        )
    }

    /// How this terminal draws pictures (asked before the prompt reads the keyboard), by the
    /// `repl.images` setting; said once when the libraries for them are missing.
    func findGraphics() async {
        graphics = nil
        listingPictures = false
        guard options.images, !options.json else { return }
        let entries = (try? await dispatch(ConfigGet())) ?? []
        func setting(_ key: String) -> String? { entries.first { $0.key == key }?.value }
        let chosen = PictureSetting(rawValue: setting("repl.images") ?? "auto") ?? .auto
        listingPictures = setting("repl.listing_images") == "on"
        guard let found = TerminalGraphics.detect(setting: chosen, typed: TypeAhead.keep) else { return }
        host.logger.debug("pictures: \(found.mode.rawValue), \(found.cell.width)x\(found.cell.height) px cells: \(found.reason)")
        if case .failure(let why) = Picture.available {
            write(
                renderer.dim(
                    "pictures are off: \(why) (`sudo apt install libchafa0 libgdk-pixbuf-2.0-0`, or `config repl.images off`)"))
            return
        }
        graphics = found
    }

    /// A `repl.*` setting changed at the prompt: it applies at once, as the others do.
    func pictureSettingsChanged() async {
        guard drawsOnTerminal else { return }
        pictures.clear()
        await findGraphics()
    }
}
