import Foundation

/// Pictures the replicas' file hosts answer with: one per path, always the same, in the shape
/// of what the real host serves (a video's 16:9 thumbnail, a poster's 2:3, a cover's square),
/// so pictures drawn from the sandbox look like pictures, and tests can find them on a screen:
/// four quadrants in four saturated colours chosen by the path's hash (`colours(for:)`). An
/// uncompressed PNG.
public enum SandboxPicture {
    /// The size of the picture for `path`.
    public static func size(for path: String) -> (width: Int, height: Int) {
        let lower = path.lowercased()
        if lower.contains("tmdb") || lower.contains("/t/p/") { return (200, 300) }
        if lower.contains("mzstatic") || lower.contains("avatar") || lower.contains("podcast") { return (240, 240) }
        return (320, 180)
    }

    /// The quadrants' colours, top-left, top-right, bottom-left, bottom-right: four hues a
    /// quarter turn apart from one chosen by the hash.
    public static func colours(for path: String) -> [(r: UInt8, g: UInt8, b: UInt8)] {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let start = Double(hash % 360)
        return (0..<4).map { quarter in
            // HSV with saturation 0.85 and value 0.95, to RGB.
            let hue = (start + Double(quarter) * 90).truncatingRemainder(dividingBy: 360) / 60
            let (v, s) = (0.95, 0.85)
            let c = v * s
            let x = c * (1 - abs(hue.truncatingRemainder(dividingBy: 2) - 1))
            let (r, g, b): (Double, Double, Double) =
                switch Int(hue) {
                case 0: (c, x, 0)
                case 1: (x, c, 0)
                case 2: (0, c, x)
                case 3: (0, x, c)
                case 4: (x, 0, c)
                default: (c, 0, x)
                }
            let m = v - c
            return (UInt8((r + m) * 255), UInt8((g + m) * 255), UInt8((b + m) * 255))
        }
    }

    /// The picture for a file host's `path`.
    public static func png(for path: String) -> [UInt8] {
        let (width, height) = size(for: path)
        let colours = colours(for: path)
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            raw.append(0)
            for x in 0..<width {
                let colour = colours[(y < height / 2 ? 0 : 2) + (x < width / 2 ? 0 : 1)]
                raw += [colour.r, colour.g, colour.b]
            }
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        chunk("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, 2, 0, 0, 0], into: &png)
        chunk("IDAT", stored(raw), into: &png)
        chunk("IEND", [], into: &png)
        return png
    }

    /// A zlib stream of stored (uncompressed) blocks.
    private static func stored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let count = min(65535, data.count - start)
            let last: UInt8 = start + count >= data.count ? 1 : 0
            out += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[start..<(start + count)]
            start += count
        } while start < data.count
        var (s1, s2): (UInt32, UInt32) = (1, 0)
        for byte in data {
            s1 = (s1 + UInt32(byte)) % 65521
            s2 = (s2 + s1) % 65521
        }
        return out + bigEndian(s2 << 16 | s1)
    }

    private static func chunk(_ type: String, _ data: [UInt8], into png: inout [UInt8]) {
        let body = Array(type.utf8) + data
        png += bigEndian(UInt32(data.count)) + body + bigEndian(crc32(body))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
