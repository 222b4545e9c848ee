import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit
import Pictures

/// Pictures in the REPL: `show` beside its details, `artwork` larger, listings' thumbnails in a
/// grid. Rows print first; each picture is fetched through the artwork cache, decoded at the
/// size it is drawn at and drawn into the room left for it as it arrives (`PictureSlots`).
extension REPL {
    /// How the terminal draws pictures; nil where none are drawn (not a terminal, `--json`,
    /// `--no-images`, `repl.images off`, `NO_COLOR`, a script).
    var drawing: TerminalGraphics? { options.json ? nil : graphics }

    /// The room a picture of a `kind` gets, `rows` high: its usual shape (a video's 16:9, a
    /// poster's 2:3, a cover's square) in this terminal's cells.
    static func pictureBox(kind: MediaKind, rows: Int, cell: CellSize) -> CellBox {
        let aspect: Double =
            switch kind {
            case .movie: 2.0 / 3
            case .podcast, .episode, .user, .channel: 1
            default: 16.0 / 9
            }
        let columns = Double(rows) * Double(cell.height) / Double(max(1, cell.width)) * aspect
        return CellBox(columns: max(2, Int(columns.rounded())), rows: rows)
    }

    /// Where `show` puts a picture: beside the details, above them, or below them when the
    /// details fill the screen (a picture is drawn when it arrives, after the text: its room
    /// must still be on the screen then).
    enum PictureLayout: Equatable {
        case beside(CellBox)
        case above(CellBox)
        case below(CellBox)
    }

    /// The narrowest the details are set beside a picture.
    static let textBesidePicture = 40
    /// The fewest rows a picture is drawn in.
    static let smallestPicture = 4

    /// The largest picture that fits with the details on a screen of `screenRows` (one of them
    /// the prompt's) and `width` columns: beside them when the columns allow, else above them
    /// (whichever draws it larger); below them when the details alone fill the screen. Pure:
    /// `textLines` counts the details' lines at a width; `reserved` rows follow (a post's other
    /// photos).
    static func pictureLayout(
        kind: MediaKind, width: Int, screenRows: Int, cell: CellSize, reserved: Int = 0, textLines: (Int) -> Int
    ) -> PictureLayout? {
        let room = screenRows - 1 - reserved
        let largest = min(12, max(smallestPicture, screenRows / 2 - 1))
        guard room >= smallestPicture else { return nil }
        var beside: CellBox?
        for rows in stride(from: min(largest, room), through: smallestPicture, by: -1) {
            let box = pictureBox(kind: kind, rows: rows, cell: cell)
            guard width >= box.columns + 2 + textBesidePicture else { continue }
            if max(rows, textLines(width - box.columns - 2)) <= room {
                beside = box
                break
            }
        }
        var above: CellBox?
        let full = textLines(width)
        for rows in stride(from: min(largest, room - full), through: smallestPicture, by: -1) {
            let box = pictureBox(kind: kind, rows: rows, cell: cell)
            if box.columns <= width {
                above = box
                break
            }
        }
        switch (beside, above) {
        case (let beside?, let above?): return above.rows > beside.rows ? .above(above) : .beside(beside)
        case (let beside?, nil): return .beside(beside)
        case (nil, let above?): return .above(above)
        case (nil, nil): break
        }
        // The details fill the screen: the picture after them, where it is still seen when drawn.
        for rows in stride(from: min(largest, room), through: smallestPicture, by: -1) {
            let box = pictureBox(kind: kind, rows: rows, cell: cell)
            if box.columns <= width { return .below(box) }
        }
        return nil
    }

    /// `show`'s text with the item's picture beside it (above or below it where the columns or
    /// rows do not allow), and a post's other attached images in a row below; false when there
    /// is no picture to draw (the caller shows the text alone).
    func presentWithPicture(detail item: MediaItem, reveal: Bool, text compose: (Renderer) -> String) -> Bool {
        guard let graphics = drawing else { return false }
        // A sensitive post's photos are drawn only when asked (`show <n> --reveal`).
        let images = item.extra?["sensitive"] == "true" && !reveal ? [] : MediaArtwork.attachedImages(of: item)
        // A post's picture is its first photo, else its author's avatar; anything else's, its artwork.
        let first: Int? = item.kind == .post && !images.isEmpty ? 1 : nil
        guard first != nil || item.artwork != nil else { return false }
        let width = renderer.fit ?? 79
        let small = Self.pictureBox(kind: .post, rows: 5, cell: graphics.cell)
        let others = images.count > 1 ? small.rows + 1 : 0
        func lines(at room: Int) -> [String] {
            var narrow = renderer
            narrow.terminalWidth = { room }
            return Renderer.fitLines(compose(narrow), width: room).split(separator: "\n", omittingEmptySubsequences: false)
                .map(String.init)
        }
        var measured: [Int: [String]] = [:]
        func text(at room: Int) -> [String] {
            if let known = measured[room] { return known }
            let made = lines(at: room)
            measured[room] = made
            return made
        }
        guard
            let layout = Self.pictureLayout(
                kind: first == nil ? item.kind : .post, width: width, screenRows: Renderer.terminalRows(1),
                cell: graphics.cell, reserved: others, textLines: { text(at: $0).count })
        else { return false }
        let box: CellBox
        let top: Int
        switch layout {
        case .beside(let besideBox):
            box = besideBox
            var lines = text(at: width - box.columns - 2)
            while lines.count < box.rows { lines.append("") }
            let margin = String(repeating: " ", count: box.columns + 2)
            top = pictures.rowsWritten
            display(lines.map { $0.isEmpty ? "" : margin + $0 }.joined(separator: "\n"))
        case .above(let aboveBox):
            box = aboveBox
            top = pictures.rowsWritten
            display((Array(repeating: "", count: box.rows) + text(at: width)).joined(separator: "\n"))
        case .below(let belowBox):
            box = belowBox
            display(text(at: width).joined(separator: "\n"))
            top = pictures.rowsWritten
            display(Array(repeating: "", count: box.rows).joined(separator: "\n"))
        }
        let id = item.id
        // The artwork's size for the box (a feed's podcast:images); an attached photo as it is.
        let pixels = first == nil ? min(max(box.columns * graphics.cell.width, 1), 10_000) : nil
        reservePicture(topRow: top, column: 1, box: box, graphics: graphics) { connection in
            try await connection.run(MediaArtwork(id: id, image: first, width: pixels))
        }
        // The other photos, small, in a row (as many as fit), each with its number.
        if images.count > 1 {
            let fit = max(1, (width + 1) / (small.columns + 1))
            let shown = Array(images.indices.dropFirst().prefix(fit))
            let labels = shown.map { Renderer.pad("  photo \($0 + 1)", small.columns + 1) }.joined()
            let gridTop = pictures.rowsWritten
            display(Array(repeating: "", count: small.rows).joined(separator: "\n") + "\n" + renderer.dim(labels))
            for (place, index) in shown.enumerated() {
                reservePicture(topRow: gridTop, column: 1 + place * (small.columns + 1), box: small, graphics: graphics) {
                    connection in try await connection.run(MediaArtwork(id: id, image: index + 1))
                }
            }
        }
        return true
    }

    /// A listing's thumbnails in a grid below its rows, each over its row number.
    func presentThumbnails(_ items: [MediaItem], from first: Int) {
        guard let graphics = drawing, items.contains(where: { $0.artwork != nil }) else { return }
        let width = renderer.fit ?? 79
        let box = Self.pictureBox(kind: .video, rows: 4, cell: graphics.cell)
        let perLine = max(1, (width + 1) / (box.columns + 1))
        var start = 0
        while start < items.count {
            let line = Array(items[start..<min(items.count, start + perLine)])
            // Each over its row's own number.
            let labels = line.indices.map { Renderer.pad(" \(first + start + $0)", box.columns + 1) }
            let top = pictures.rowsWritten
            display(Array(repeating: "", count: box.rows).joined(separator: "\n") + "\n" + renderer.dim(labels.joined()))
            for (place, item) in line.enumerated() where item.artwork != nil {
                let id = item.id
                let pixels = min(max(box.columns * graphics.cell.width, 1), 10_000)
                reservePicture(topRow: top, column: 1 + place * (box.columns + 1), box: box, graphics: graphics) {
                    connection in try await connection.run(MediaArtwork(id: id, width: pixels))
                }
            }
            start += perLine
        }
    }

    /// `artwork <n>`: the picture large, below the line naming its file; drawn before the prompt
    /// returns (it is what was asked for), Ctrl-C stops it.
    func drawLarge(_ artwork: MediaArtwork.Response) async {
        guard let graphics = drawing else { return }
        let width = renderer.fit ?? 79
        let rows = max(4, min(Renderer.terminalRows(1) - 3, 30))
        let box = CellBox(columns: width, rows: rows)
        let content = await PictureMaker.shared.make(path: artwork.path, box: box, graphics: graphics)
        guard !Task.isCancelled else { return }
        switch content {
        case .drawing(let drawing):
            display(Array(repeating: "", count: drawing.rows - 1).joined(separator: "\n"))
            Descriptor.writeAll(1, Array(graphics.place(drawing, rowsUp: drawing.rows, column: 1).utf8))
        case .note(let note):
            display(renderer.dim(note))
        }
    }

    /// Room for a picture, filled with what `fetch` finds once it is decoded and drawn.
    private func reservePicture(
        topRow: Int, column: Int, box: CellBox, graphics: TerminalGraphics,
        fetch: @escaping @Sendable (any HostConnection) async throws -> MediaArtwork.Response
    ) {
        let connection = self.connection
        pictures.reserve(topRow: topRow, column: column, box: box) {
            let artwork: MediaArtwork.Response
            do {
                artwork = try await fetch(connection)
            } catch let error as RPCError {
                if error.code == RPCError.requestCancelledCode { return nil }
                return .note("no picture: " + Renderer.clean(error.message))
            } catch {
                return nil
            }
            return await PictureMaker.shared.make(path: artwork.path, box: box, graphics: graphics)
        }
    }
}

/// Decodes and draws one picture at a time (each holds its decoded pixels until drawn): memory
/// is bounded by the largest picture drawn, not by how many a listing has.
actor PictureMaker {
    static let shared = PictureMaker()

    func make(path: String, box: CellBox, graphics: TerminalGraphics) -> PictureSlots.Content {
        guard !Task.isCancelled else { return .note("") }
        do {
            let picture = try Picture(
                path: path, maxWidth: box.columns * graphics.cell.width, maxHeight: box.rows * graphics.cell.height)
            guard let drawing = picture.draw(graphics.mode, colors: graphics.colors, box: box, cell: graphics.cell) else {
                return .note("no picture: it could not be drawn")
            }
            return .drawing(drawing)
        } catch {
            return .note("no picture: \(error)")
        }
    }
}
