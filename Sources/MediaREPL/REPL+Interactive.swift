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
                        if let bytes = try? await host.dispatcher.call("providers.categories", params: ["provider": .string(provider)]) {
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
        while let line = await editor.readLine(prompt: prompt) {
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
