import ArgumentParser
import Basics
import FoundationEssentials
import JSONRPC
import Pictures

#if canImport(Glibc)
    import Glibc
#endif

/// `mediahost picture <file>`: an image drawn for the terminal, as the REPL draws one (the
/// editors use it: Neovim draws the details' picture with it).
struct PictureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "picture",
        abstract: "Draw an image file in the terminal (kitty graphics, sixels, iTerm2 images or Unicode blocks).",
        discussion: """
            Prints the escape sequences that draw FILE in at most COLUMNS x ROWS cells, its aspect \
            ratio kept. Without --protocol the terminal is asked what it draws with (as the REPL asks); \
            an editor that owns the terminal names it. The cells used are printed on stderr as \
            `COLUMNSxROWS`. Exit status 1 when the image cannot be drawn, with why.
            """)

    @Argument(
        help: ArgumentHelp("The image (JPEG, PNG, GIF, WebP).", valueName: "file"),
        completion: .file(extensions: ["jpg", "jpeg", "png", "gif", "webp"]))
    var file: String

    @Option(help: ArgumentHelp("kitty, sixel, iterm or blocks (default: ask the terminal).", valueName: "protocol"))
    var `protocol`: GraphicsMode?

    @Option(help: "At most this many columns (default: the terminal's width).")
    var columns: Int?

    @Option(help: "At most this many rows (default: half the terminal's height).")
    var rows: Int?

    @Option(help: ArgumentHelp("A cell's size in pixels, e.g. 8x16 (default: the terminal's).", valueName: "WxH"))
    var cell: String?

    func run() throws {
        let detected =
            `protocol` == nil ? TerminalGraphics.detect(setting: .auto) : nil
        let mode = `protocol` ?? detected?.mode ?? .blocks
        var size = detected?.cell ?? TerminalGraphics.windowCell(1) ?? .usual
        if let cell {
            let parts = cell.split(separator: "x").compactMap { Int($0) }
            guard parts.count == 2, parts.allSatisfy({ (1...200).contains($0) }) else {
                throw ValidationError("--cell is WIDTHxHEIGHT in pixels, e.g. 8x16")
            }
            size = CellSize(width: parts[0], height: parts[1])
        }
        var window = winsize()
        let known = ioctl(1, UInt(TIOCGWINSZ), &window) == 0 && window.ws_col > 0
        let box = CellBox(
            columns: max(1, min(columns ?? (known ? Int(window.ws_col) : 80), 1000)),
            rows: max(1, min(rows ?? (known ? Int(window.ws_row) / 2 : 12), 1000)))
        let colors =
            detected?.colors ?? (ProcessInfo.processInfo.environment["COLORTERM"] == "truecolor" ? .truecolor : .palette256)
        do {
            let picture = try Picture(
                path: file, maxWidth: box.columns * size.width, maxHeight: box.rows * size.height)
            guard let drawing = picture.draw(mode, colors: colors, box: box, cell: size) else {
                throw PictureError("it could not be drawn")
            }
            let text =
                detected?.passthrough == true && mode != .blocks ? TerminalGraphics.tmuxWrapped(drawing.text) : drawing.text
            Descriptor.writeAll(1, Array(text.utf8))
            Descriptor.standardError("\(drawing.columns)x\(drawing.rows)\n")
        } catch let error as PictureError {
            Descriptor.standardError("mediahost: no picture of \(file): \(error)\n")
            throw ExitCode(1)
        }
    }
}

extension GraphicsMode: ExpressibleByArgument {}
