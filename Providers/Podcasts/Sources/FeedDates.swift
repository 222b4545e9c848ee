import Foundation

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
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        if let first = trimmed.first, first.isNumber, trimmed.count >= 10, trimmed[trimmed.index(trimmed.startIndex, offsetBy: 4)] == "-" {
            return iso8601(trimmed)
        }
        return rfc822(trimmed)
    }

    static func rfc822(_ text: String) -> Date? {
        // Tokens: letters, digits and ':' runs; '+'/'-' start a numeric zone.
        var tokens: [String] = []
        var current = ""
        for character in text {
            if character.isLetter || character.isNumber || character == ":" || ((character == "+" || character == "-") && current.isEmpty) {
                current.append(character)
            } else {
                if !current.isEmpty { tokens.append(current) }
                current = ""
                if character == "+" || character == "-" { current.append(character) }
            }
        }
        if !current.isEmpty { tokens.append(current) }

        var day: Int?, month: Int?, year: Int?, time: (Int, Int, Int)?, offset: Int?
        for token in tokens {
            let lower = token.lowercased()
            let prefix = String(lower.prefix(3))
            if token.first?.isLetter == true, weekdays.contains(prefix) {
                continue
            } else if token.first?.isLetter == true, month == nil, let index = months.firstIndex(of: prefix) {
                month = index + 1
            } else if token.contains(":"), time == nil {
                let parts = token.split(separator: ":").compactMap { Int($0) }
                guard parts.count >= 2 else { return nil }
                time = (parts[0], parts[1], parts.count > 2 ? parts[2] : 0)
            } else if (token.hasPrefix("+") || token.hasPrefix("-")), token.count == 5, let value = Int(token.dropFirst()) {
                offset = (token.hasPrefix("-") ? -1 : 1) * ((value / 100) * 3600 + (value % 100) * 60)
            } else if let hours = zones[lower] {
                offset = hours * 3600
            } else if let number = Int(token) {
                if day == nil, number >= 1, number <= 31, token.count <= 2 { day = number }
                else if year == nil { year = token.count == 2 ? (number < 70 ? 2000 + number : 1900 + number) : number }
            }
        }
        guard let day, let month, let year, year > 1900 else { return nil }
        var components = DateComponents()
        components.year = year
        components.month = month
        components.day = day
        components.hour = time?.0 ?? 0
        components.minute = time?.1 ?? 0
        components.second = time?.2 ?? 0
        components.timeZone = TimeZone(secondsFromGMT: offset ?? 0)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        return calendar.date(from: components)
    }

    static func iso8601(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withFullDate]
        return formatter.date(from: String(text.prefix(10)))
    }

    /// itunes:duration: seconds ("3723", "3723.5") or [HH:]MM:SS.
    static func duration(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        if let seconds = Double(trimmed) { return seconds >= 0 ? seconds : nil }
        let parts = trimmed.split(separator: ":").map { Double($0) }
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil && $0! >= 0 }) else { return nil }
        return parts.reduce(0) { $0 * 60 + $1! }
    }

    static func isoString(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}
