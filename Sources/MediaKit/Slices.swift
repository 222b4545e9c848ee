import Basics
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

extension Array where Element: Sendable {
    /// `transform` of the elements, in order: at once for fewer than `smallest`, else in
    /// slices, one per core, side by side (encoding or decoding thousands of items, an import's
    /// thousands of entries). The first slice's error is thrown.
    public func mapInSlices<Result: Sendable>(
        smallest: Int, _ transform: @Sendable (ArraySlice<Element>) throws -> [Result]
    ) throws -> [Result] {
        let slices = count < smallest ? 1 : Swift.min(ProcessInfo.processInfo.activeProcessorCount, 8)
        guard slices > 1 else { return try transform(self[...]) }
        let size = (count + slices - 1) / slices
        let results = Mutex([Swift.Result<[Result], any Error>?](repeating: nil, count: slices))
        DispatchQueue.concurrentPerform(iterations: slices) { slice in
            let part = self[Swift.min(count, slice * size)..<Swift.min(count, (slice + 1) * size)]
            let result = Swift.Result { try transform(part) }
            results.withLock { $0[slice] = result }
        }
        return try results.withLock { $0 }.flatMap { try $0?.get() ?? [] }
    }
}
