import Foundation

extension Int {
    /// `value` rounded toward zero, or nil when it is NaN, infinite or does not fit: numbers from
    /// outside (feeds, headers, settings) must never reach `Int(_: Double)`, which traps.
    public init?(finite value: Double) {
        guard value.isFinite, value > -9.0e18, value < 9.0e18 else { return nil }
        self.init(value)
    }
}

extension Double {
    /// The value when it is finite and within `range`, else nil.
    public func within(_ range: ClosedRange<Double>) -> Double? {
        isFinite && range.contains(self) ? self : nil
    }
}

/// Retry-After as services send it: delta-seconds or an HTTP date.
public enum RetryAfter {
    /// The longest wait believed: a week. Anything larger (or negative, or not a number) is noise.
    public static let maximum: Double = 7 * 86_400

    /// Seconds to wait, or nil when the header is absent or unreadable.
    public static func seconds(_ value: String?, now: Date = Date()) -> Double? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Double(value) {
            guard seconds.isFinite else { return nil }
            return min(max(0, seconds), maximum)
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return min(max(0, date.timeIntervalSince(now)), maximum)
    }

    /// Seconds until a reset time given in Unix seconds (X's `x-rate-limit-reset`).
    public static func untilEpoch(_ value: String?, now: Date = Date()) -> Double? {
        guard let text = value?.trimmingCharacters(in: .whitespaces), let epoch = Double(text), epoch.isFinite else { return nil }
        return min(max(0, epoch - now.timeIntervalSince1970), maximum)
    }
}

extension HTTPResponse {
    /// The response's Retry-After in seconds, when it has a readable one.
    public var retryAfter: Double? { RetryAfter.seconds(header("retry-after")) }
}

extension Duration {
    /// Whole milliseconds, for logs and messages.
    public var milliseconds: Int {
        Int(components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
    }
}
