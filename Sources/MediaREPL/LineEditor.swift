import Basics
@preconcurrency import CReadline
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
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
        mh_rl_use_stderr_unless_stdout_is_a_terminal(isatty(1), isatty(2))
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
                detachThread {
                    let raw = readline(question)
                    continuation.resume(
                        returning: raw.map { line in
                            defer { free(line) }; return String(cString: line)
                        })
                }
            }
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            detachThread {
                Descriptor.standardOutput(question)
                var original = termios()
                tcgetattr(0, &original)
                var silent = original
                silent.c_lflag &= ~tcflag_t(ECHO)
                tcsetattr(0, TCSANOW, &silent)
                let answer = Swift.readLine(strippingNewline: true)
                tcsetattr(0, TCSANOW, &original)
                Descriptor.standardOutput("\n")
                continuation.resume(returning: answer)
            }
        }
    }

    /// Reads one line on a thread of its own so the concurrency pool never blocks on the terminal.
    /// - Parameter remember: whether the line may go into the history file (lines with secrets may not).
    func readLine(prompt: String, remember: @escaping @Sendable (String) -> Bool = { _ in true }) async -> String? {
        await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
            detachThread(name: "readline") { [self] in
                guard let raw = readline(prompt) else {
                    continuation.resume(returning: nil)
                    return
                }
                let line = String(cString: raw)
                free(raw)
                if !line.trimming(.whitespaces).isEmpty, remember(line) {
                    add_history(line)
                    // Append at once so nothing is lost if the process is killed.
                    if append_history(1, historyPath) != 0 { _ = write_history(historyPath) }
                    _ = history_truncate_file(historyPath, Self.historyLength)
                    chmod(historyPath, 0o600)
                }
                continuation.resume(returning: line)
            }
        }
    }
}

/// Set by the interactive REPL: redraws download progress while readline waits for a key.
nonisolated(unsafe) var idleHook: (() -> Void)?

private let eventHook: @convention(c) () -> Int32 = {
    idleHook?()
    return 0
}
