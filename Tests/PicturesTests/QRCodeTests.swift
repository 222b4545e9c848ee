import Basics
import Foundation
import Pictures
import Testing

/// The pairing link's QR code, read back by a decoder we did not write (zbarimg, Debian's
/// zbar-tools, which `make test` installs with libqrencode4).
@Suite struct QRCodeTests {
    @Test(arguments: [
        "http://192.168.1.20:8733/pair/link/fEyf-R2QzwQYB2p5bhyW0Ij2ewJIrsuc",
        "http://[fe80::1]:8733/pair/link/abc", "https://remote.example.org/pair/link/" + String(repeating: "x", count: 200),
    ])
    func aCodeReadsBackAsItsText(_ text: String) throws {
        let modules = try #require(QRCode.modules(text), "libqrencode4 is not installed")
        #expect(modules.count >= 21 && (modules.count - 17) % 4 == 0, "not a QR code's size: \(modules.count)")
        // As a picture: 4 pixels a module, a quiet zone of 4, black on white (PBM: 1 is black).
        let scale = 4
        let quiet = 4
        let size = (modules.count + 2 * quiet) * scale
        var pbm = "P1\n\(size) \(size)\n"
        for y in 0..<size {
            let row = (0..<size).map { x -> String in
                let (mx, my) = (x / scale - quiet, y / scale - quiet)
                let dark = mx >= 0 && my >= 0 && mx < modules.count && my < modules.count && modules[my][mx]
                return dark ? "1" : "0"
            }
            pbm += row.joined(separator: " ") + "\n"
        }
        let file = NSTemporaryDirectory() + "qr-\(UUID().uuidString).pbm"
        try pbm.write(toFile: file, atomically: true, encoding: .ascii)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let zbar = try ChildProcess("/usr/bin/zbarimg", arguments: ["--raw", "-q", file], standardOutput: .pipe)
        let output = try #require(zbar.standardOutput)
        let read = readToEnd(output)
        close(output)
        zbar.waitUntilExit()
        #expect(String(decoding: read, as: UTF8.self).trimmingCharacters(in: .newlines) == text)
    }

    @Test func linesFitAnEightyColumnTerminal() throws {
        let lines = try #require(QRCode.lines("http://192.168.1.20:8733/pair/link/fEyf-R2QzwQYB2p5bhyW0Ij2ewJIrsuc"))
        let width = lines[0].replacingOccurrences(of: "\u{1B}[30;107m", with: "").replacingOccurrences(of: "\u{1B}[0m", with: "")
            .count
        #expect(width <= 80 && lines.count <= 22, "\(width) columns, \(lines.count) lines")
        // Each line says its own colours and ends with a reset: nothing leaks into what follows.
        #expect(lines.allSatisfy { $0.hasPrefix("\u{1B}[30;107m") && $0.hasSuffix("\u{1B}[0m") })
    }
}
