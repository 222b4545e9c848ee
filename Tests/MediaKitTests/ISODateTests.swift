import Foundation
import MediaKit
import Testing

/// ISODate against Foundation's ISO8601DateFormatter, which it replaces on hot paths.
@Suite struct ISODateTests {
    @Test func writesWhatISO8601DateFormatterWrites() {
        let formatter = ISO8601DateFormatter()
        var generator = SystemRandomNumberGenerator()
        let samples: [Double] =
            [0, -1, 951_782_400, 1_749_548_460.75, 4_102_444_799, -2_208_988_800, 253_402_300_799]
            // From 1600 on: before the 1582 reform Foundation counts in the Julian calendar.
            + (0..<2000).map { _ in Double(Int64.random(in: -11_676_096_000...250_000_000_000, using: &generator)) }
        for seconds in samples {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(ISODate.string(from: date) == formatter.string(from: date), "\(seconds)")
        }
        #expect(ISODate.string(from: Date(timeIntervalSince1970: .infinity)) == "")
    }

    @Test func readsWhatISO8601DateFormatterReads() throws {
        let internet = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for text in [
            "2025-06-10T09:41:00Z", "2025-06-10T09:41:00+02:00", "2025-06-10T09:41:00-0530", "1999-12-31T23:59:59z",
            "2024-02-29T12:00:00Z", "2025-06-10T09:41:00.123Z", "2025-06-10T09:41:00.5+01:00", "1969-07-20T20:17:40Z",
        ] {
            let expected = internet.date(from: text) ?? fractional.date(from: text)
            let parsed = try #require(ISODate.parse(text), "\(text)")
            #expect(abs(parsed.timeIntervalSince1970 - (expected?.timeIntervalSince1970 ?? .nan)) < 0.001, "\(text)")
        }
        // A date alone, or the date of a time without a zone (as the full-date option reads it).
        let day = Date(timeIntervalSince1970: 1_749_513_600)
        #expect(ISODate.parse("2025-06-10") == day)
        #expect(ISODate.parse("2025-06-10T09:41:00") == day)
        #expect(ISODate.parse("2025-06-10T09:41") == day)
        #expect(ISODate.parse("2025-06-10T25:00:00Z") == day)
        for bad in ["", "2025", "2025-13-01", "2025-02-30", "20x5-01-01", "🙂", "2025-06-1"] {
            #expect(ISODate.parse(bad) == nil, "\(bad)")
        }
    }
}
