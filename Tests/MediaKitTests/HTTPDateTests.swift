import Foundation
import MediaKit
import Testing

@Suite struct HTTPDateTests {
    /// The same text and instant as Foundation's DateFormatter with the RFC 9110 format.
    @Test func writesAndReadsAsDateFormatter() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        for seconds in [0.0, 784_111_777, 951_782_400, 1_795_000_000.9, 4_102_444_800, -86_400] {
            let date = Date(timeIntervalSince1970: seconds)
            let text = HTTPDate.string(from: date)
            #expect(text == formatter.string(from: date))
            #expect(HTTPDate.parse(text) == Date(timeIntervalSince1970: seconds.rounded(.down)) || seconds < 0)
        }
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(HTTPDate.parse("06 nov 1994 08:49:37") == Date(timeIntervalSince1970: 784_111_777))
        for bad in ["", "Sun, 31 Feb 2026 00:00:00 GMT", "Sun, 06 Nov 1994 25:00:00 GMT", "yesterday", "06 Nov 1994"] {
            #expect(HTTPDate.parse(bad) == nil, "\(bad)")
        }
    }
}
