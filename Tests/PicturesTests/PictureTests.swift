import Foundation
import Pictures
import Testing

/// Images as they come from the services, odd and broken ones included, read and drawn: each
/// good one in its colours and turned as its EXIF says, each broken one a short reason, never a
/// crash, and memory bounded by the size it is drawn at.
@Suite struct PictureTests {
    static let images = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Images").path

    static func open(_ name: String, max: Int = 400) throws(PictureError) -> Picture {
        try Picture(path: images + "/" + name, maxWidth: max, maxHeight: max)
    }

    /// The 24-bit colours a blocks drawing uses, as (r, g, b).
    static func colours(_ text: String) -> [(Int, Int, Int)] {
        text.matches(of: /\x1B\[(?:38|48);2;(\d+);(\d+);(\d+)m/).compactMap { m in
            guard let r = Int(m.1), let g = Int(m.2), let b = Int(m.3) else { return nil }
            return (r, g, b)
        }
    }

    static func has(_ colours: [(Int, Int, Int)], near target: (Int, Int, Int)) -> Bool {
        colours.contains { abs($0.0 - target.0) < 40 && abs($0.1 - target.1) < 40 && abs($0.2 - target.2) < 40 }
    }

    /// `make run` and `make test` install them; the other tests say nothing more when they are not.
    @Test func theLibrariesAreThere() {
        if case .failure(let error) = Picture.available { Issue.record("\(error)") }
    }

    static let quadrants = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)]

    @Test(arguments: ["quad.jpg", "progressive.jpg", "cmyk.jpg", "png16.png", "palette.png", "quad.webp", "alpha.png"])
    func everyFormatIsDrawnInItsColours(name: String) throws {
        guard case .success = Picture.available else { return }
        let picture = try Self.open(name)
        #expect(picture.width == 320 && picture.height == 180, "\(name)")
        let drawing = try #require(
            picture.draw(.blocks, colors: .truecolor, box: CellBox(columns: 40, rows: 20), cell: CellSize(width: 8, height: 16)))
        // 320x180 in 8x16 cells, 40 wide: 40x11 (aspect kept, never wider than the box).
        #expect(drawing.columns == 40 && drawing.rows == 11, "\(name): \(drawing.columns)x\(drawing.rows)")
        let colours = Self.colours(drawing.text)
        for quadrant in Self.quadrants where name != "alpha.png" {
            #expect(Self.has(colours, near: quadrant), "\(name) lacks \(quadrant)")
        }
    }

    @Test func exifOrientationTurnsThePicture() throws {
        guard case .success = Picture.available else { return }
        let picture = try Self.open("exif6.jpg")
        #expect(picture.width == 180 && picture.height == 320)
        #expect(picture.originalWidth == 320 && picture.originalHeight == 180)
    }

    @Test func aGIFIsItsFirstFrame() throws {
        guard case .success = Picture.available else { return }
        let drawing = try #require(
            try Self.open("anim.gif").draw(.blocks, colors: .truecolor, box: CellBox(columns: 8, rows: 4), cell: .usual))
        let colours = Self.colours(drawing.text)
        #expect(Self.has(colours, near: (255, 0, 0)) && !Self.has(colours, near: (0, 0, 255)))
    }

    /// A large cover is decoded at the size it is drawn at, not whole.
    @Test func aLargeCoverIsDecodedAtTheSizeItIsDrawn() throws {
        guard case .success = Picture.available else { return }
        let picture = try Self.open("big.jpg", max: 300)
        #expect(picture.originalWidth == 3000 && picture.width <= 300 && picture.height <= 300)
    }

    @Test(arguments: [
        ("zero.jpg", "recognize"), ("html.jpg", "recognize"), ("bomb.png", "30000x30000"), ("missing.jpg", "No such file"),
    ])
    func brokenImagesSayWhyInAFewWords(name: String, needle: String) throws {
        guard case .success = Picture.available else { return }
        do {
            _ = try Self.open(name)
            Issue.record("\(name) is no picture")
        } catch {
            #expect(error.description.contains(needle), "\(name): \(error)")
            #expect(error.description.count < 200, "\(name): \(error)")
        }
    }

    /// What a truncated file holds is drawn (as browsers do), and a file named as another type
    /// is read as what it is.
    @Test(arguments: ["truncated.jpg", "truncated.webp", "png-named.jpg"])
    func oddButReadableImagesAreDrawn(name: String) throws {
        guard case .success = Picture.available else { return }
        let picture = try Self.open(name)
        #expect(picture.draw(.blocks, colors: .palette256, box: CellBox(columns: 20, rows: 10), cell: .usual) != nil)
    }

    /// Files built at test time, as a hostile or odd host sends them: each is drawn from what
    /// it holds or refused in one short line, never by a decoder that runs away.
    static func write(_ bytes: [UInt8], _ name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("picture-\(UUID().uuidString)-\(name)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func reason(_ path: String) -> String? {
        do {
            _ = try Picture(path: path, maxWidth: 400, maxHeight: 400)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func formatsNotDrawnAreNamedInOneLine() throws {
        guard case .success = Picture.available else { return }
        let avif = try Self.write(
            Array("\0\0\0\u{1C}ftypavif\0\0\0\0avifmif1miaf".utf8) + [UInt8](repeating: 0, count: 200), "x.avif")
        #expect(Self.reason(avif) == "AVIF pictures are not drawn (JPEG, PNG, GIF and WebP are)")
        // An SVG is never decoded (a filter can run for minutes), whatever its name says.
        let svg = try Self.write(
            Array(
                #"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><filter id="f"><feTurbulence numOctaves="1000000000"/></filter><rect filter="url(#f)" width="10" height="10"/></svg>"#
                    .utf8),
            "cover.jpg")
        let started = ContinuousClock.now
        #expect(Self.reason(svg) == "SVG pictures are not drawn (JPEG, PNG, GIF and WebP are)")
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    /// A JPEG cut off in its header says so in a few words: not the decoder's state number.
    @Test func aJPEGCutInItsHeaderIsOneShortReason() throws {
        guard case .success = Picture.available else { return }
        let whole = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.images + "/quad.jpg")))
        for cut in [4, 40, 200, 400] {
            let path = try Self.write(Array(whole.prefix(cut)), "cut\(cut).jpg")
            if let reason = Self.reason(path) {
                #expect(reason.count < 80 && !reason.contains("(") && !reason.contains("\n"), "\(cut): \(reason)")
            }
        }
    }

    /// A progressive JPEG is decoded whole into memory (two bytes per component per pixel): a
    /// CMYK one of 6300x6300 (310 KB on the wire, 320 MB to decode) is refused before decoding.
    @Test func aLargeProgressiveJPEGIsRefusedBeforeDecoding() throws {
        guard case .success = Picture.available else { return }
        // SOI, then SOF2: 8 bits, 6300x6300, 4 components.
        var header: [UInt8] = [0xFF, 0xD8, 0xFF, 0xC2, 0x00, 0x14, 0x08, 0x18, 0x9C, 0x18, 0x9C, 0x04]
        for component in 1...4 { header += [UInt8(component), 0x11, 0x00] }
        let path = try Self.write(header + [0xFF, 0xD9], "cmyk-progressive.jpg")
        #expect(Self.reason(path) == "the progressive JPEG is 6300x6300 pixels, more than a picture needs")
    }

    /// An animated WebP is its first frame: a 3000x3000 canvas of 1,000 frames (each the
    /// quadrants) is decoded as one 320x180 picture, not composed frame by frame.
    @Test func anAnimatedWebPIsItsFirstFrameOnly() throws {
        guard case .success = Picture.available else { return }
        let still = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.images + "/quad.webp")))
        // The still's VP8 chunk, and the frame's place and size (320x180) on a 3000x3000 canvas.
        let image = Array(still[12...])
        func le(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        let frame: [UInt8] = le(0, 3) + le(0, 3) + le(319, 3) + le(179, 3) + le(100, 3) + [0] + image
        var body: [UInt8] = Array("WEBP".utf8)
        body += Array("VP8X".utf8) + le(10, 4) + [0x02, 0, 0, 0] + le(2999, 3) + le(2999, 3)
        body += Array("ANIM".utf8) + le(6, 4) + le(0xFFFF_FFFF, 4) + le(0, 2)
        for _ in 0..<1000 { body += Array("ANMF".utf8) + le(frame.count, 4) + frame + (frame.count % 2 == 1 ? [0] : []) }
        let path = try Self.write(Array("RIFF".utf8) + le(body.count, 4) + body, "animated.webp")
        let started = ContinuousClock.now
        let picture = try Picture(path: path, maxWidth: 400, maxHeight: 400)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(picture.width == 320 && picture.height == 180, "\(picture.width)x\(picture.height)")
        let drawing = try #require(picture.draw(.blocks, colors: .truecolor, box: CellBox(columns: 40, rows: 20), cell: .usual))
        for quadrant in Self.quadrants { #expect(Self.has(Self.colours(drawing.text), near: quadrant)) }
    }

    @Test(arguments: GraphicsMode.allCases)
    func everyProtocolDraws(mode: GraphicsMode) throws {
        guard case .success = Picture.available else { return }
        let drawing = try #require(
            try Self.open("quad.jpg").draw(
                mode, colors: .truecolor, box: CellBox(columns: 20, rows: 10), cell: CellSize(width: 10, height: 20)))
        switch mode {
        case .kitty: #expect(drawing.text.hasPrefix("\u{1B}_G") && drawing.text.contains("a=T"))
        case .sixel: #expect(drawing.text.contains("\u{1B}P") && drawing.text.contains("q"))
        case .iterm: #expect(drawing.text.hasPrefix("\u{1B}]1337;File=inline=1"))
        case .blocks: #expect(!Self.colours(drawing.text).isEmpty)
        }
        // 320x180 in 10x20 cells, at most 20x10: 20 wide, 6 high (180/320*200/20 = 5.6).
        #expect(drawing.columns == 20 && drawing.rows == 6, "\(mode): \(drawing.columns)x\(drawing.rows)")
    }

    @Test func aThumbnailIsAPNG() throws {
        guard case .success = Picture.available else { return }
        let png = try Self.open("big.jpg", max: 256).png()
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count < 100_000)
    }
}
