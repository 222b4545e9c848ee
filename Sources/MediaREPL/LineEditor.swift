@preconcurrency import CReadline
import Foundation
import JSONRPC
import MediaHost
import MediaKit
import Synchronization

/// GNU readline: line editing, a persistent history file and tab completion. Used only when stdin
/// is a terminal.
final class LineEditor: Sendable {
    private let historyPath: String
    static let historyLength: Int32 = 1000

    init(historyPath: String, completer: Completer) {
        self.historyPath = historyPath
        Completer.shared.withLock { $0 = completer }
        mh_rl_set_name("mediahost")
        mh_rl_set_completion(attemptCompletion)
        mh_rl_set_event_hook(eventHook)
        using_history()
        stifle_history(Self.historyLength)
        _ = read_history(historyPath)
    }

    /// Asks a question; a secret answer is read with echo off and kept out of the history.
    func ask(_ question: String, secret: Bool) async -> String? {
        guard secret else {
            return await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                Thread {
                    let raw = readline(question)
                    continuation.resume(returning: raw.map { line in defer { free(line) }; return String(cString: line) })
                }.start()
            }
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            Thread {
                FileHandle.standardOutput.write(Data(question.utf8))
                var original = termios()
                tcgetattr(0, &original)
                var silent = original
                silent.c_lflag &= ~tcflag_t(ECHO)
                tcsetattr(0, TCSANOW, &silent)
                let answer = Swift.readLine(strippingNewline: true)
                tcsetattr(0, TCSANOW, &original)
                FileHandle.standardOutput.write(Data("\n".utf8))
                continuation.resume(returning: answer)
            }.start()
        }
    }

    /// Reads one line on a thread of its own so the concurrency pool never blocks on the terminal.
    /// - Parameter remember: whether the line may go into the history file (lines with secrets may not).
    func readLine(prompt: String, remember: @escaping @Sendable (String) -> Bool = { _ in true }) async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            let thread = Thread { [self] in
                guard let raw = readline(prompt) else {
                    continuation.resume(returning: nil)
                    return
                }
                let line = String(cString: raw)
                free(raw)
                if !line.trimmingCharacters(in: .whitespaces).isEmpty, remember(line) {
                    add_history(line)
                    // Append at once so nothing is lost if the process is killed.
                    if append_history(1, historyPath) != 0 { _ = write_history(historyPath) }
                    _ = history_truncate_file(historyPath, Self.historyLength)
                    chmod(historyPath, 0o600)
                }
                continuation.resume(returning: line)
            }
            thread.start()
        }
    }
}

/// What tab completion offers: commands, provider ids, categories, methods, settings.
struct Completer: Sendable {
    var providers: [String]
    var methods: [String]
    var configKeys: [String]
    var categories: CategoryCache
    /// Fetches a provider's categories when completion needs them; runs on readline's thread.
    var fetchCategories: @Sendable (String) -> [MediaCategory]?

    nonisolated(unsafe) static let shared = Mutex<Completer?>(nil)

    /// Candidates for `word`, the text being completed, after `before` (the line up to it).
    func candidates(before: String, word: String) -> [String] {
        let words = before.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let options: [String]
        if words.isEmpty {
            options = CommandSpec.names
        } else {
            switch (words[0], words.count) {
            case ("categories", 1), ("browse", 1), ("favs", 1), ("cats", 1): options = providers
            case ("search", _) where words.last == "--kind": options = MediaKind.allCases.map(\.rawValue)
            case ("search", 1): options = providers + ["--kind"]
            case ("history", 1): options = providers + ["clear"]
            case ("history", 2) where words[1] == "clear": options = providers
            case ("browse", 2...):
                let provider = words[1]
                var categories = self.categories.get(provider)
                if categories == nil, let fetched = fetchCategories(provider) {
                    self.categories.set(provider, fetched)
                    categories = fetched
                }
                options = (categories ?? []).map(\.name)
            case ("call", 1): options = methods
            case ("config", 1): options = configKeys
            default: options = []
            }
        }
        return options.filter { $0.lowercased().hasPrefix(word.lowercased()) }.sorted()
    }
}

nonisolated(unsafe) private var completionMatches: [String] = []
nonisolated(unsafe) private var completionIndex = 0

private let generateMatch: @convention(c) (UnsafePointer<CChar>?, Int32) -> UnsafeMutablePointer<CChar>? = { _, state in
    if state == 0 { completionIndex = 0 }
    guard completionIndex < completionMatches.count else { return nil }
    defer { completionIndex += 1 }
    return strdup(completionMatches[completionIndex])
}

private let attemptCompletion: @convention(c) (UnsafePointer<CChar>?, Int32, Int32) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = {
    text, start, _ in
    mh_rl_no_default_completion()
    guard let text, let buffer = mh_rl_line_buffer(), let completer = Completer.shared.withLock({ $0 }) else { return nil }
    let line = Array(String(cString: buffer).utf8)
    let before = String(decoding: line.prefix(Int(start)), as: UTF8.self)
    completionMatches = completer.candidates(before: before, word: String(cString: text))
    return rl_completion_matches(text, generateMatch)
}

/// Set by the interactive REPL: redraws download progress while readline waits for a key.
nonisolated(unsafe) var idleHook: (() -> Void)?

private let eventHook: @convention(c) () -> Int32 = {
    idleHook?()
    return 0
}

/// Redraws progress bars just above the prompt, in place: it runs on readline's thread (from
/// its event hook), the only place where the prompt may be redrawn safely.
final class InPlaceProgress: @unchecked Sendable {
    private let board: ProgressBoard
    private let color: Bool
    /// Bar lines currently drawn above the prompt.
    private var shown = 0

    init(board: ProgressBoard, color: Bool) {
        self.board = board
        self.color = color
    }

    /// After a command printed, the old bars scrolled away: draw anew below its output.
    func forget() { shown = 0 }

    func draw() {
        guard let update = board.takeUpdate(width: terminalWidth() - 1, color: color) else { return }
        var out = "\r"
        if shown > 0 { out += "\u{1B}[\(shown)A" }
        out += "\u{1B}[J"
        for line in update.events { out += line + "\n" }
        for line in update.bars { out += line + "\n" }
        shown = update.bars.count
        FileHandle.standardOutput.write(Data(out.utf8))
        rl_on_new_line()
        rl_redisplay()
    }
}

func terminalWidth() -> Int {
    var size = winsize()
    if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
    return 100
}
