import Basics
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// ISO 8601 dates as the services and feeds write them, read and written without
/// `ISO8601DateFormatter`: that one builds an ICU formatter each time it is made (milliseconds
/// of a cold start, and per episode of an Atom feed).
public enum ISODate {
    /// `2025-06-10T09:41:00Z`: UTC, whole seconds (`ISO8601DateFormatter`'s default), in the
    /// proleptic Gregorian calendar (Foundation switches to the Julian one before 1582).
    public static func string(from date: Date) -> String {
        let interval = date.timeIntervalSince1970
        guard interval.isFinite, abs(interval) < 253_402_300_800 else { return "" }  // years 0001-9999
        var seconds = time_t(interval.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var out: [UInt8] = []
        out.reserveCapacity(20)
        func digits(_ value: Int32, _ count: Int) {
            var divisor: Int32 = 1
            for _ in 1..<count { divisor *= 10 }
            var rest = max(0, value)
            while divisor > 0 {
                out.append(UInt8(ascii: "0") + UInt8(rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(parts.tm_year + 1900, 4)
        out.append(UInt8(ascii: "-"))
        digits(parts.tm_mon + 1, 2)
        out.append(UInt8(ascii: "-"))
        digits(parts.tm_mday, 2)
        out.append(UInt8(ascii: "T"))
        digits(parts.tm_hour, 2)
        out.append(UInt8(ascii: ":"))
        digits(parts.tm_min, 2)
        out.append(UInt8(ascii: ":"))
        digits(parts.tm_sec, 2)
        out.append(UInt8(ascii: "Z"))
        return String(decoding: out, as: UTF8.self)
    }

    /// `2025-06-10T09:41:00Z`, `…:00.123+02:00`, or a date alone (`2025-06-10`, also the date of
    /// a date-time without a zone), as `ISO8601DateFormatter` reads them with the internet
    /// date-time, fractional seconds and full date options in turn.
    public static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    private static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var i = 0
        func number(_ count: Int) -> Int? {
            guard i + count <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<count {
                let byte = bytes[i]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                i += 1
            }
            return value
        }
        func skip(_ byte: UInt8) -> Bool {
            guard i < bytes.count, bytes[i] == byte else { return false }
            i += 1
            return true
        }
        guard let year = number(4), skip(UInt8(ascii: "-")), let month = number(2), skip(UInt8(ascii: "-")),
            let day = number(2), (1...12).contains(month), (1...daysIn(month, year)).contains(day)
        else { return nil }
        let days = daysFromCivil(year, month, day)
        let dateOnly = Date(timeIntervalSince1970: Double(days) * 86_400)
        // A time with its zone, else the date alone.
        guard i < bytes.count, bytes[i] == UInt8(ascii: "T") || bytes[i] == UInt8(ascii: "t") else { return dateOnly }
        i += 1
        guard let hour = number(2), skip(UInt8(ascii: ":")), let minute = number(2), skip(UInt8(ascii: ":")),
            let second = number(2), hour < 24, minute < 60, second < 61
        else { return dateOnly }
        var fraction = 0.0
        if skip(UInt8(ascii: ".")) {
            var scale = 0.1
            var any = false
            while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
                fraction += Double(bytes[i] - UInt8(ascii: "0")) * scale
                scale /= 10
                i += 1
                any = true
            }
            guard any else { return dateOnly }
        }
        var offset = 0
        if skip(UInt8(ascii: "Z")) || skip(UInt8(ascii: "z")) {
            offset = 0
        } else if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
            let sign = bytes[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let hours = number(2), hours < 24 else { return dateOnly }
            _ = skip(UInt8(ascii: ":"))
            guard let minutes = number(2), minutes < 60 else { return dateOnly }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return dateOnly
        }
        guard i == bytes.count else { return dateOnly }
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    public static func daysIn(_ month: Int, _ year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    public static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
