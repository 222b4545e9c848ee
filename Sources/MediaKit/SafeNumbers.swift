import Basics
import FoundationEssentials
import Glibc

extension Int {
    /// `value` rounded toward zero, or nil when it is NaN, infinite or does not fit: numbers from
    /// outside (feeds, headers, settings) must never reach `Int(_: Double)`, which traps.
    public init?(finite value: Double) {
        guard value.isFinite, value > -9.0e18, value < 9.0e18 else { return nil }
        self.init(value)
    }
}

/// A count of bytes another program or a server told us (a progress line, Content-Length,
/// Content-Range): believed up to a petabyte, so sums and differences of a few of them never
/// overflow `Int64` (a trap that ends the process).
public enum ByteCount {
    /// 2^50 bytes (1 PiB): no file mediahost downloads is larger.
    public static let maximum: Int64 = 1 << 50

    /// `value` when it is a count: not negative and at most `maximum`.
    public static func checked(_ value: Int64?) -> Int64? {
        guard let value, value >= 0, value <= maximum else { return nil }
        return value
    }

    /// A count in text ("1200", "5100.7", "8e18"): nil when it is no number, negative, not
    /// finite or beyond `maximum`.
    public static func parse<S: StringProtocol>(_ text: S) -> Int64? {
        if let whole = Int64(text) { return checked(whole) }
        guard let value = Double(text), value.isFinite, value >= 0, value <= Double(maximum) else { return nil }
        return Int64(value)
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
        guard let value = value?.trimming(.whitespaces), !value.isEmpty else { return nil }
        if let seconds = Double(value) {
            guard seconds.isFinite else { return nil }
            return min(max(0, seconds), maximum)
        }
        guard let date = HTTPDate.parse(value) else { return nil }
        return min(max(0, date.timeIntervalSince(now)), maximum)
    }

    /// Seconds until a reset time given in Unix seconds (X's `x-rate-limit-reset`).
    public static func untilEpoch(_ value: String?, now: Date = Date()) -> Double? {
        guard let text = value?.trimming(.whitespaces), let epoch = Double(text), epoch.isFinite else { return nil }
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
