import Foundation
import MediaKit
import Testing

/// The byte-wise checks that links, feed URLs and ids go through say what the Unicode
/// properties they stand in for say, scalar by scalar and at either end of a text.
@Suite struct DisplayTextTests {
    /// Every scalar of the Basic Multilingual Plane (all control, space and two-byte ones), and
    /// beyond it one in 61 (all four bytes long, none of them a control or a space).
    static let scalars: [Unicode.Scalar] = (Array(0..<0x1_0000) + Array(stride(from: 0x1_0000, to: 0x11_0000, by: 61)))
        .compactMap { Unicode.Scalar(UInt32($0)) }

    @Test func controlIsCategoryCcForEveryScalar() {
        var wrong: [String] = []
        for scalar in Self.scalars {
            let expected = scalar.properties.generalCategory == .control
            for text in ["\(scalar)", "a\(scalar)", "\(scalar)é", "é\(scalar)x"] where DisplayText.hasControl(text) != expected {
                wrong.append(String(scalar.value, radix: 16))
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(20))")
    }

    @Test func controlOrSpaceIsWhatThePropertiesSayForEveryScalar() {
        var wrong: [String] = []
        for scalar in Self.scalars {
            let expected = scalar.properties.generalCategory == .control || scalar.properties.isWhitespace
            for text in ["\(scalar)", "https://a.example/\(scalar)", "\(scalar)é"]
            where DisplayText.hasControlOrSpace(text) != expected {
                wrong.append(String(scalar.value, radix: 16))
            }
        }
        #expect(wrong.isEmpty, "\(wrong.prefix(20))")
    }

    @Test func trimmedIsFoundationsTrimming() {
        let samples = [
            "", " ", "plain", " lead", "trail ", "\t\nboth\r\n ", "\u{00A0}nbsp\u{00A0}", "\u{3000}ideographic\u{3000}",
            "é", " é ", "\u{2028}line\u{2029}", "in side", "\u{1F600}",
        ]
        for text in samples {
            #expect(
                DisplayText.trimmed(text) == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(Array(text.unicodeScalars))"
            )
        }
    }
}
