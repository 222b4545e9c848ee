import Basics
import Foundation
import Testing

/// What Basics does in place of full Foundation does what Foundation did: each checked against
/// Foundation itself (which the tests may link) on the inputs the host meets, hostile ones included.
@Suite struct FoundationParityTests {
    static let texts = [
        "", " ", "plain", "  both ends \t", "\n\r\n lines \n", "\u{00A0}nbsp\u{2003}", "\u{2028}x\u{2029}", "\u{85}y",
        "tab\tinside", "é café ", "👍🏽 ", " \u{200B}zero-width", "\"quoted\"", "# tag ",
    ]

    @Test(arguments: texts) func trimmingMatchesFoundation(_ text: String) {
        #expect(text.trimming(.whitespaces) == text.trimmingCharacters(in: .whitespaces))
        #expect(text.trimming(.whitespacesAndNewlines) == text.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(text.trimming(.characters(in: "# \"")) == text.trimmingCharacters(in: CharacterSet(charactersIn: "# \"")))
    }

    @Test(arguments: texts) func percentEncodingMatchesFoundation(_ text: String) {
        let pathSegment = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))
        #expect(text.percentEncoded(allowing: .urlPathSegment) == text.addingPercentEncoding(withAllowedCharacters: pathSegment))
        let encoded = text.percentEncoded(allowing: .asciiAlphanumerics())
        #expect(encoded.percentDecoded == text)
        #expect(encoded.percentDecoded == encoded.removingPercentEncoding)
    }

    @Test func percentDecodingRefusesWhatFoundationRefuses() {
        for text in ["%", "%4", "%zz", "%C3", "%FF%FE", "a%20b", "%E2%82%AC", "100%25"] {
            #expect(text.percentDecoded == text.removingPercentEncoding, "\(text)")
        }
    }

    @Test func printfFormatsAsStringFormat() {
        #expect(String(printf: "%3d  ", 7) == String(format: "%3d  ", 7))
        #expect(String(printf: "%.1f MB", 12.345) == String(format: "%.1f MB", 12.345))
        #expect(String(printf: "%04d-%02d-%02d", 2026, 11, 6) == "2026-11-06")
        #expect(String(printf: "%g", 2.5) == String(format: "%g", 2.5))
        // Longer than the first buffer.
        let long = String(printf: "%0200d", 1)
        #expect(long.count == 200 && long.hasSuffix("01"))
    }

    @Test func paddingMatchesNSString() {
        for (text, width) in [("abc", 5), ("abcdef", 3), ("", 2), ("exact", 5)] {
            #expect(text.padded(toLength: width) == text.padding(toLength: width, withPad: " ", startingAt: 0))
        }
        #expect("é".padded(toLength: 3) == "é  ")
    }

    @Test func caseInsensitiveComparison() {
        #expect("Comedy".equalsIgnoringCase("comedy") && !"Comedy".equalsIgnoringCase("comedies"))
        let html = "<HTML><Head><title>x</title></HEAD><body>why</body>"
        let head = html.rangeIgnoringASCIICase(of: "<head")
        #expect(head.map { html[$0] } == "<Head")
        let end = head.flatMap { html.rangeIgnoringASCIICase(of: "</head>", from: $0.upperBound) }
        #expect(end.map { html[$0] } == "</HEAD>")
        #expect(html.rangeIgnoringASCIICase(of: "<nothing") == nil)
    }

    @Test func groupedThousands() {
        #expect(0.groupedThousands == "0" && 999.groupedThousands == "999" && 1000.groupedThousands == "1,000")
        #expect(1_234_567.groupedThousands == "1,234,567" && (-45_000).groupedThousands == "-45,000")
    }

    @Test func pathsMatchNSString() {
        // (Not "", "c" or "a/": swift-corelibs-foundation's deletingLastPathComponent traps on
        // a path without a slash before its name, below.)
        let paths = ["/a/b/c.mp3", "/a/b/", "/c", "/", "a/b.tar.gz", "/a/.hidden", "/x/.profile", "//a//b//"]
        for path in paths {
            let ns = path as NSString
            #expect(Path.directory(of: path) == ns.deletingLastPathComponent, "directory of \(path)")
            #expect(Path.name(of: path) == ns.lastPathComponent, "name of \(path)")
            #expect(Path.extension(of: path) == ns.pathExtension, "extension of \(path)")
            #expect(Path.deletingExtension(path) == ns.deletingPathExtension, "without extension \(path)")
        }
        #expect(Path.directory(of: "c") == "" && Path.name(of: "c") == "c" && Path.directory(of: "a/") == "")
        #expect(Path.name(of: "a/") == "a" && Path.extension(of: ".profile") == "" && Path.directory(of: "") == "")
        #expect(Path.expandingTilde("~/x") == Path.homeDirectory() + "/x")
        #expect(Path.expandingTilde("/x/~") == "/x/~")
    }

    @Test func fileErrorsSayWhatTheSystemSaid() {
        do {
            try FileManager.default.createDirectory(atPath: "/proc/none/here", withIntermediateDirectories: true)
            Issue.record("a folder was made in /proc")
        } catch {
            #expect(describe(error) == "No such file or directory", "\(describe(error))")
        }
    }
}
