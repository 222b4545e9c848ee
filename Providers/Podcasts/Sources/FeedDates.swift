import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// Dates as podcast feeds write them: the RFC 822 variants (with or without weekday, seconds,
/// 2-digit years, numeric or named zones) and ISO 8601 (Atom).
enum FeedDates {
    /// Words by their first letters, lowercased, packed into a number ("jan" is 0x6A616E): the
    /// tokenizer looks them up without making a String of each.
    private static func code(_ word: String) -> UInt32 { word.utf8.reduce(0) { $0 << 8 | UInt32($1) } }
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].map(code)
    private static let weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map(code)
    private static let zones: [(code: UInt32, hours: Int)] = [
        ("gmt", 0), ("ut", 0), ("utc", 0), ("z", 0), ("est", -5), ("edt", -4), ("cst", -6), ("cdt", -5), ("mst", -7),
        ("mdt", -6), ("pst", -8), ("pdt", -7), ("bst", 1), ("cet", 1), ("cest", 2), ("ist", 5),
    ].map { (code($0.0), $0.1) }

    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    /// A date from a feed's bytes (white space around it ignored).
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var start = 0
        var end = bytes.count
        while start < end, FeedParser.isSpace(bytes[start]) { start += 1 }
        while end > start, FeedParser.isSpace(bytes[end - 1]) { end -= 1 }
        let trimmed = UnsafeBufferPointer(rebasing: bytes[start..<end])
        guard !trimmed.isEmpty else { return nil }
        if trimmed.count >= 10, trimmed[4] == UInt8(ascii: "-"), isDigit(trimmed[0]) {
            return iso8601(String(decoding: trimmed, as: UTF8.self))
        }
        return rfc822(trimmed)
    }

    /// Tokenizes on bytes: letters, digits and ':' runs; '+'/'-' start a numeric zone.
    static func rfc822(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var day: Int?, month: Int?, year: Int?, time: (Int, Int, Int)?, offset: Int?
        var i = 0
        while i < bytes.count {
            let start = i
            let first = bytes[i]
            if isLetter(first) {
                // The first three letters (weekday, month) and, for a short word, all (zone).
                var prefix: UInt32 = 0
                var whole: UInt32 = 0
                while i < bytes.count, isLetter(bytes[i]) {
                    let letter = UInt32(bytes[i] | 0x20)
                    if i - start < 3 { prefix = prefix << 8 | letter }
                    if i - start < 4 { whole = whole << 8 | letter }
                    i += 1
                }
                if weekdays.contains(prefix) { continue }
                if month == nil, let index = months.firstIndex(of: prefix) {
                    month = index + 1
                } else if i - start <= 4, let zone = zones.first(where: { $0.code == whole }) {
                    offset = zone.hours * 3600
                }
            } else if isDigit(first) {
                // A number, or up to three joined by ':' (a time).
                var numbers = (0, 0, 0)
                var count = 0
                var value = 0
                var digits = 0
                while i < bytes.count, isDigit(bytes[i]) || bytes[i] == UInt8(ascii: ":") {
                    if bytes[i] == UInt8(ascii: ":") {
                        guard count < 2 else { return nil }
                        if count == 0 { numbers.0 = value } else { numbers.1 = value }
                        count += 1
                        value = 0
                        digits = 0
                    } else {
                        // More digits than any date field has: not a date (and no overflow).
                        guard digits < 9 else { return nil }
                        value = value * 10 + Int(bytes[i] - 0x30)
                        digits += 1
                    }
                    i += 1
                }
                if count > 0 {
                    guard time == nil else { return nil }
                    if count == 1 { numbers.1 = value } else { numbers.2 = value }
                    time = numbers
                } else if day == nil, i - start <= 2, value >= 1, value <= 31 {
                    day = value
                } else if year == nil {
                    year = i - start == 2 ? (value < 70 ? 2000 + value : 1900 + value) : value
                }
            } else if (first == UInt8(ascii: "+") || first == UInt8(ascii: "-")), i + 4 < bytes.count,
                bytes[(i + 1)...(i + 4)].allSatisfy(isDigit)
            {
                let value = bytes[(i + 1)...(i + 4)].reduce(0) { $0 * 10 + Int($1 - 0x30) }
                offset = (first == UInt8(ascii: "-") ? -1 : 1) * ((value / 100) * 3600 + (value % 100) * 60)
                i += 5
            } else {
                i += 1
            }
        }
        guard let day, let month, let year, year > 1900, year < 10_000 else { return nil }
        let (hour, minute, second) = time ?? (0, 0, 0)
        guard hour < 24, minute < 60, second < 61, day <= ISODate.daysIn(month, year) else { return nil }
        let days = ISODate.daysFromCivil(year, month, day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - (offset ?? 0))
        return Date(timeIntervalSince1970: seconds)
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    static func iso8601(_ text: String) -> Date? { ISODate.parse(text) }

    /// Ten years: a longer "duration" is a typo or an attack, not an episode.
    static let maxDuration: Double = 315_576_000

    /// itunes:duration: seconds ("3723", "3723.5") or [HH:]MM:SS.
    static func duration(_ text: String) -> Double? {
        let trimmed = FeedParser.trim(text)
        guard !trimmed.isEmpty else { return nil }
        if let seconds = Double(trimmed) { return seconds.within(0...maxDuration) }
        let parts = trimmed.split(separator: ":", omittingEmptySubsequences: false).compactMap {
            Double($0)?.within(0...maxDuration)
        }
        guard (2...3).contains(parts.count), parts.count == trimmed.split(separator: ":", omittingEmptySubsequences: false).count
        else { return nil }
        return parts.reduce(0) { $0 * 60 + $1 }.within(0...maxDuration)
    }

    static func isoString(_ date: Date) -> String { ISODate.string(from: date) }
}
