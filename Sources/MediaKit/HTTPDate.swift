import Basics
import FoundationEssentials

/// HTTP's date (RFC 9110's IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`): read in Retry-After,
/// written in exported feeds; always GMT, English names, as the format requires.
public enum HTTPDate {
    static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    public static func string(from date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let rest = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let weekday = weekdays[((days % 7) + 7) % 7]
        return
            "\(weekday), \(two(day)) \(months[month - 1]) \(year) \(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60)) GMT"
    }

    /// The date of `Sun, 06 Nov 1994 08:49:37 GMT` (the weekday and "GMT" optional, any case).
    public static func parse(_ text: String) -> Date? {
        var words = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        if let first = words.first, first.count == 3, first.first?.isLetter == true,
            weekdays.contains(where: { $0.equalsIgnoringCase(first) })
        {
            words.removeFirst()
        }
        if let last = words.last, last.equalsIgnoringCase("GMT") || last.equalsIgnoringCase("UTC") { words.removeLast() }
        guard words.count == 4, let day = Int(words[0]), let year = Int(words[2]), (1...31).contains(day),
            (1970...9999).contains(year),
            let month = months.firstIndex(where: { $0.equalsIgnoringCase(words[1]) }).map({ $0 + 1 }),
            day <= ISODate.daysIn(month, year)
        else { return nil }
        let clock = words[3].split(separator: ":").map { Int($0) }
        guard clock.count == 3, let hour = clock[0], let minute = clock[1], let second = clock[2], (0...23).contains(hour),
            (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        let days = ISODate.daysFromCivil(year, month, day)
        return Date(timeIntervalSince1970: Double(days * 86_400 + hour * 3600 + minute * 60 + second))
    }

    /// (year, month, day) of a day counted from 1970-01-01 (Howard Hinnant's algorithm).
    public static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
