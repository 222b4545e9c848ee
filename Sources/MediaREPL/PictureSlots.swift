import Basics
import FoundationEssentials
import Glibc
import Pictures
import Synchronization

/// Pictures on their way to room a command left for them in its output: rows print first, each
/// picture is drawn into its place as it arrives (by the prompt's idle hook, between keystrokes),
/// and those of a command that is over when the next one starts, or that scrolled away, are not.
final class PictureSlots: Sendable {
    /// Room for one picture: its top row (counted in rows written to the terminal) and column.
    struct Slot: Sendable {
        let id: Int
        let topRow: Int
        let column: Int
        let box: CellBox
    }

    /// A picture ready to draw, or a short note where it could not be had.
    enum Content: Sendable {
        case drawing(Drawing)
        case note(String)
    }

    private struct State {
        var rowsWritten = 0
        var nextID = 0
        var waiting: [Int: Slot] = [:]
        var ready: [(Slot, Content)] = []
        var tasks: [Int: Task<Void, Never>] = [:]
    }
    private let state = Mutex(State())

    /// Rows written to the terminal so far (the REPL's output counts them).
    func wrote(rows: Int) { state.withLock { $0.rowsWritten += rows } }
    var rowsWritten: Int { state.withLock { $0.rowsWritten } }

    /// Room at `topRow` (a row count, as `rowsWritten` was when the room's first row was
    /// written), filled by `make` when it is done.
    func reserve(
        topRow: Int, column: Int, box: CellBox, make: @escaping @Sendable () async -> Content?
    ) {
        let slot = state.withLock { state -> Slot in
            state.nextID += 1
            let slot = Slot(id: state.nextID, topRow: topRow, column: column, box: box)
            state.waiting[slot.id] = slot
            return slot
        }
        let task = Task.detached { [self] in
            let content = await make()
            state.withLock { state in
                state.tasks[slot.id] = nil
                guard let content, !Task.isCancelled, let slot = state.waiting.removeValue(forKey: slot.id) else { return }
                state.ready.append((slot, content))
            }
        }
        state.withLock { state in
            if state.waiting[slot.id] != nil { state.tasks[slot.id] = task }
        }
    }

    /// What is ready, taken.
    func takeReady() -> [(Slot, Content)] {
        state.withLock { state in
            defer { state.ready = [] }
            return state.ready
        }
    }

    var isWaiting: Bool { state.withLock { !$0.waiting.isEmpty || !$0.ready.isEmpty } }

    /// Forgets every picture not drawn yet, and stops fetching them (a new command, Ctrl-C).
    func clear() {
        let tasks = state.withLock { state -> [Task<Void, Never>] in
            defer {
                state.waiting = [:]
                state.ready = []
                state.tasks = [:]
            }
            return Array(state.tasks.values)
        }
        for task in tasks { task.cancel() }
    }
}
