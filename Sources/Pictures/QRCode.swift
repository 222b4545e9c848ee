#if canImport(Glibc)
    import Glibc
#endif

/// A QR code for the terminal, through libqrencode (libqrencode4, loaded at first use: without
/// it there is no code, and the link is shown alone). Drawn with Unicode half blocks, two rows
/// of modules to a line, dark on light whatever the terminal's colours (phones' scanners read
/// dark on light), within a quiet zone.
public enum QRCode {
    private typealias Encode = @convention(c) (UnsafePointer<CChar>, Int32, Int32, Int32, Int32) -> UnsafeMutableRawPointer?
    private typealias Free = @convention(c) (UnsafeMutableRawPointer) -> Void

    private struct Library: @unchecked Sendable {
        let encode: Encode
        let free: Free
    }

    private static let library: Library? = {
        guard let handle = dlopen("libqrencode.so.4", RTLD_NOW | RTLD_LOCAL),
            let encode = dlsym(handle, "QRcode_encodeString"), let free = dlsym(handle, "QRcode_free")
        else { return nil }
        return Library(encode: unsafeBitCast(encode, to: Encode.self), free: unsafeBitCast(free, to: Free.self))
    }()

    /// Whether codes can be made here.
    public static var isAvailable: Bool { library != nil }

    /// The code's modules row by row (true: dark), at error correction level M; nil without
    /// libqrencode or for text too long for a code.
    public static func modules(_ text: String) -> [[Bool]]? {
        guard let library, !text.isEmpty else { return nil }
        // QR_ECLEVEL_M = 1, QR_MODE_8 = 2, case-sensitive; version 0: the smallest that fits.
        guard let code = text.withCString({ library.encode($0, 0, 1, 2, 1) }) else { return nil }
        defer { library.free(code) }
        // struct QRcode { int version; int width; unsigned char *data; }
        let width = Int(code.load(fromByteOffset: 4, as: Int32.self))
        guard width > 0, width <= 177, let data = code.load(fromByteOffset: 8, as: UnsafePointer<UInt8>?.self) else {
            return nil
        }
        return (0..<width).map { y in (0..<width).map { x in data[y * width + x] & 1 == 1 } }
    }

    /// The code as lines of text, `quiet` light modules around it; nil as `modules`.
    public static func lines(_ text: String, quiet: Int = 2) -> [String]? {
        guard let modules = modules(text) else { return nil }
        let size = modules.count + 2 * quiet
        func dark(_ x: Int, _ y: Int) -> Bool {
            let (mx, my) = (x - quiet, y - quiet)
            return mx >= 0 && my >= 0 && mx < modules.count && my < modules.count && modules[my][mx]
        }
        return stride(from: 0, to: size, by: 2).map { y in
            var line = "\u{1B}[30;107m"
            for x in 0..<size {
                switch (dark(x, y), y + 1 < size && dark(x, y + 1)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            return line + "\u{1B}[0m"
        }
    }
}
