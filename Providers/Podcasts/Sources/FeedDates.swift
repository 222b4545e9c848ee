import Foundation
import MediaKit

/// Dates as podcast feeds write them: the RFC 822 variants (with or without weekday, seconds,
/// 2-digit years, numeric or named zones) and ISO 8601 (Atom).
enum FeedDates {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays: Set<String> = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let zones: [String: Int] = [
        "gmt": 0, "ut": 0, "utc": 0, "z": 0, "est": -5, "edt": -4, "cst": -6, "cdt": -5, "mst": -7, "mdt": -6,
        "pst": -8, "pdt": -7, "bst": 1, "cet": 1, "cest": 2, "ist": 5,
    ]

    static func parse(_ text: String) -> Date? {
        let trimmed = FeedParser.trim(text)
        guard !trimmed.isEmpty else { return nil }
        let bytes = Array(trimmed.utf8)
        if bytes.count >= 10, bytes[4] == UInt8(ascii: "-"), bytes[0] >= 0x30, bytes[0] <= 0x39 {
            return iso8601(trimmed)
        }
        return rfc822(bytes)
    }

    static func rfc822(_ text: String) -> Date? { rfc822(Array(FeedParser.trim(text).utf8)) }

    /// Tokenizes on bytes: letters, digits and ':' runs; '+'/'-' start a numeric zone.
    static func rfc822(_ bytes: [UInt8]) -> Date? {
        var day: Int?, month: Int?, year: Int?, time: (Int, Int, Int)?, offset: Int?
        var i = 0
        while i < bytes.count {
            let start = i
            let first = bytes[i]
            if isLetter(first) {
                while i < bytes.count, isLetter(bytes[i]) { i += 1 }
                let word = String(decoding: bytes[start..<i].map { $0 | 0x20 }, as: UTF8.self)
                let prefix = String(word.prefix(3))
                if weekdays.contains(prefix) { continue }
                if month == nil, let index = months.firstIndex(of: prefix) {
                    month = index + 1
                } else if let hours = zones[word] {
                    offset = hours * 3600
                }
            } else if isDigit(first) {
                var numbers: [Int] = []
                var value = 0
                var digits = 0
                while i < bytes.count, isDigit(bytes[i]) || bytes[i] == UInt8(ascii: ":") {
                    if bytes[i] == UInt8(ascii: ":") {
                        numbers.append(value)
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
                numbers.append(value)
                if numbers.count > 1 {
                    guard time == nil, numbers.count <= 3 else { return nil }
                    time = (numbers[0], numbers[1], numbers.count > 2 ? numbers[2] : 0)
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
