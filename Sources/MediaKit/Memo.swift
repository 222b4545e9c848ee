import Basics
import FoundationEssentials
import Glibc
import Synchronization

/// Values a provider keeps in memory because they change rarely (categories, charts, an API's
/// image configuration), by key, for the provider's life or for `lifetime` seconds.
public final class Memo<Value: Sendable>: Sendable {
    private let state = Mutex<[String: (stored: Date, value: Value)]>([:])
    /// Seconds a value is served; nil for as long as the provider lives.
    public let lifetime: TimeInterval?

    public init(lifetime: TimeInterval? = nil) { self.lifetime = lifetime }

    /// The value kept under `key`, unless it has expired.
    public func value(_ key: String = "", now: Date = Date()) -> Value? {
        state.withLock { entries in
            guard let entry = entries[key] else { return nil }
            if let lifetime, now.timeIntervalSince(entry.stored) >= lifetime { return nil }
            return entry.value
        }
    }

    public func keep(_ value: Value, _ key: String = "", now: Date = Date()) {
        state.withLock { $0[key] = (now, value) }
    }
}
