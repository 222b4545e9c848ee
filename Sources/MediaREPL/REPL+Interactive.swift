import Dispatch
import Foundation
import JSONRPC
import MediaHost
import MediaKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension REPL {
    /// Whether a line may be kept in the history file: not when it carries a password or a
    /// secret setting's value, or any secret now in effect.
    static func mayKeepInHistory(_ line: String, host: HostRuntime) -> Bool {
        guard host.redactor.redact(line) == line else { return false }
        let words = (try? ShellWords.split(line).get()) ?? line.split(separator: " ").map(String.init)
        guard let command = words.first?.lowercased() else { return true }
        let config = host.config
        func isSecret(_ key: String) -> Bool { config.keys[key]?.secret == true }
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
        let methods = Dispatcher.methodNames
        let configKeys = host.config.sortedKeys
        let editor = LineEditor(
            historyPath: host.paths.replHistory,
            completer: Completer(
                providers: host.providerIDs, methods: methods, configKeys: configKeys, categories: categoryCache,
                fetchCategories: { provider in
                    let result = Mutex<[MediaCategory]?>(nil)
                    let done = DispatchSemaphore(value: 0)
                    Task {
                        if let bytes = try? await host.dispatcher.call(
                            "providers.categories", params: ["provider": .string(provider)])
                        {
                            result.withLock { $0 = try? JSONDecoder().decode([MediaCategory].self, from: Data(bytes)) }
                        }
                        done.signal()
                    }
                    _ = done.wait(timeout: .now() + 5)
                    return result.withLock { $0 }
                }))

        let running = Mutex<Task<Bool, Never>?>(nil)
        signal(SIGINT, SIG_IGN)
        let interrupts = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupts.setEventHandler { running.withLock { $0?.cancel() } }
        interrupts.resume()
        defer { interrupts.cancel() }

        // Downloads resumed from an earlier run get their names on the bars.
        if let bytes = try? await host.dispatcher.call("downloads.list"),
            let known = try? JSONDecoder().decode([Download].self, from: Data(bytes))
        {
            for download in known { board.setTitle(download.title, for: download.id.description) }
        }
        ask = { question, secret in await editor.ask(question, secret: secret) }
        let progress = InPlaceProgress(board: board, color: options.color)
        idleHook = { progress.draw() }
        defer { idleHook = nil }

        print("\(HostRuntime.name) \(HostRuntime.version) — `help` lists commands, Ctrl-D quits")
        let prompt = options.color ? "\u{01}\u{1B}[1m\u{02}mediahost>\u{01}\u{1B}[0m\u{02} " : "mediahost> "
        while let line = await editor.readLine(prompt: prompt, remember: { [host] in Self.mayKeepInHistory($0, host: host) }) {
            progress.forget()
            let task = Task { await self.execute(line) }
            running.withLock { $0 = task }
            _ = await task.value
            running.withLock { $0 = nil }
            if finished { return }
        }
        print("")  // Ctrl-D leaves the cursor after the prompt
    }
}
