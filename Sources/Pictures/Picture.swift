import Basics
import CPictures
import FoundationEssentials
import Glibc

/// Why a picture is not drawn: the libraries are missing, or the file is not an image one can
/// show (said in a few words in place of the picture).
public struct PictureError: Error, CustomStringConvertible, Sendable, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// An image decoded for drawing: scaled down to what it will be drawn at, turned as its EXIF
/// orientation says. gdk-pixbuf reads it and libchafa draws it, both loaded at first use.
public final class Picture: @unchecked Sendable {
    private let handle: OpaquePointer
    /// Its size as decoded, and as the file says it is.
    public let width: Int
    public let height: Int
    public let originalWidth: Int
    public let originalHeight: Int

    /// The most pixels a file may say it has: more is a decompression bomb, not a picture (a
    /// JPEG decodes scaled; other formats, which decode whole first, may have a quarter of it).
    public static let maxPixels = 40_000_000

    /// Whether pictures can be drawn here, and if not, why.
    public static let available: Result<Void, PictureError> = {
        var error = [CChar](repeating: 0, count: 256)
        guard mh_pictures_load(&error, error.count) == 0 else {
            return .failure(PictureError(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return .success(())
    }()

    /// Reads the image at `path`, scaled down to fit `maxWidth` x `maxHeight` pixels.
    /// - Throws: `PictureError` saying what is wrong with it.
    public init(path: String, maxWidth: Int, maxHeight: Int) throws(PictureError) {
        try Self.available.get()
        var error = [CChar](repeating: 0, count: 512)
        guard
            let opened = mh_picture_open(
                path, Int32(clamping: max(1, maxWidth)), Int32(clamping: max(1, maxHeight)), Int64(Self.maxPixels), &error,
                error.count)
        else {
            throw PictureError(Self.text(error))
        }
        handle = opened
        var (w, h, ow, oh): (Int32, Int32, Int32, Int32) = (0, 0, 0, 0)
        mh_picture_size(opened, &w, &h, &ow, &oh)
        (width, height, originalWidth, originalHeight) = (Int(w), Int(h), Int(ow), Int(oh))
    }

    deinit { mh_picture_close(handle) }

    /// The escape text that draws it in at most `box` cells, and the cells it takes.
    public func draw(_ mode: GraphicsMode, colors: TerminalColors, box: CellBox, cell: CellSize) -> Drawing? {
        var (columns, rows): (Int32, Int32) = (0, 0)
        var length = 0
        guard
            let text = mh_picture_draw(
                handle, mode.code, colors.code, Int32(clamping: box.columns), Int32(clamping: box.rows),
                Int32(clamping: cell.width), Int32(clamping: cell.height), &columns, &rows, &length)
        else { return nil }
        defer { mh_pictures_free(text) }
        let bytes = UnsafeRawBufferPointer(start: text, count: length)
        return Drawing(mode: mode, text: String(decoding: bytes, as: UTF8.self), columns: Int(columns), rows: Int(rows))
    }

    /// The picture as PNG bytes (an assistant's thumbnail).
    public func png() throws(PictureError) -> [UInt8] {
        var error = [CChar](repeating: 0, count: 512)
        var length = 0
        guard let bytes = mh_picture_png(handle, &length, &error, error.count) else { throw PictureError(Self.text(error)) }
        defer { mh_pictures_free(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    private static func text(_ error: [CChar]) -> String {
        let said = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return said.isEmpty ? "the image cannot be read" : said
    }
}

/// A size in terminal cells.
public struct CellBox: Sendable, Equatable {
    public var columns: Int
    public var rows: Int
    public init(columns: Int, rows: Int) {
        self.columns = columns
        self.rows = rows
    }
}

/// A terminal cell's size in pixels.
public struct CellSize: Sendable, Equatable {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    /// What most terminals use when they do not say.
    public static let usual = CellSize(width: 8, height: 16)
}

/// A picture as escape text, and the cells it covers.
public struct Drawing: Sendable, Equatable {
    public var mode: GraphicsMode
    public var text: String
    public var columns: Int
    public var rows: Int

    public init(mode: GraphicsMode, text: String, columns: Int, rows: Int) {
        self.mode = mode
        self.text = text
        self.columns = columns
        self.rows = rows
    }
}
