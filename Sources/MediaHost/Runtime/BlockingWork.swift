import Basics
import FoundationEssentials
import Glibc

/// Work that blocks its thread (a C library's own wait loop, as Avahi's), run on a thread of its
/// own: a task awaiting it holds no thread of the cooperative pool, which has one per core and
/// which every other request of the host needs.
public enum BlockingWork {
    public static func run<T: Sendable>(_ name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            detachThread(name: name) { continuation.resume(with: Result { try body() }) }
        }
    }
}
