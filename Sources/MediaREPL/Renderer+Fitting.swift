import Basics
import FoundationEssentials
import Glibc
import Synchronization

/// The rule every line the REPL prints on a terminal follows: it is never wider than the
/// terminal. Renderers shape their own rows (titles cut, columns aligned); whatever is still
/// too wide when it is written (a path, a URL, a server's message, a note) is wrapped at word
/// boundaries under its own text; a URL wider than the room left goes on as many lines as it
/// needs, whole, and any other word wider than it (a path) keeps its start and its end with
/// "…" in the middle.
extension Renderer {
    /// Columns `text` takes on a terminal, its escape sequences (colours) taking none.
    static func visibleColumns(_ text: some StringProtocol) -> Int { columns(withoutEscapes(text)) }

    /// `text` without its escape sequences.
    static func withoutEscapes(_ text: some StringProtocol) -> String {
        var out = ""
        var inEscape = false
        for character in text {
            if inEscape {
                if character.isLetter { inEscape = false }
                continue
            }
            if character == "\u{1B}" {
                inEscape = true
                continue
            }
            out.append(character)
        }
        return out
    }

    /// `word` in at most `limit` columns: its start and its end with "…" between (the end of a
    /// path or URL, the file's name, is what tells two apart, so it keeps the larger part).
    static func elide(_ word: String, _ limit: Int) -> String {
        let plain = withoutEscapes(word)
        guard columns(plain) > limit else { return word }
        guard limit > 2 else { return fit(plain, limit) }
        let headRoom = (limit - 1) * 2 / 5
        var head = ""
        var used = 0
        for character in plain {
            let width = columns(character)
            if used + width > headRoom { break }
            head.append(character)
            used += width
        }
        var tail = ""
        var tailUsed = 0
        for character in plain.reversed() {
            let width = columns(character)
            if used + tailUsed + width > limit - 1 { break }
            tail.insert(character, at: tail.startIndex)
            tailUsed += width
        }
        // A styled word keeps its style; the style ends with it.
        let styled = plain != word
        return (styled ? leadingEscapes(word) : "") + head + "…" + tail + (styled ? "\u{1B}[0m" : "")
    }

    /// Whether a word is a URL (kept whole when wrapped, never shortened with "…").
    static func isURL(_ word: String) -> Bool {
        let plain = withoutEscapes(word)
        return plain.contains("://") && !plain.hasPrefix("(")
    }

    /// The escape sequences `text` starts with.
    private static func leadingEscapes(_ text: String) -> String {
        var out = ""
        var inEscape = false
        for character in text {
            if inEscape {
                out.append(character)
                if character.isLetter { inEscape = false }
            } else if character == "\u{1B}" {
                out.append(character)
                inEscape = true
            } else {
                break
            }
        }
        return out
    }

    /// Where a wrapped line's continuation starts: under the text of a numbered row or a
    /// labelled field ("  3  Title", "  media      https://…"), else under the line's own indent
    /// (two columns in for a line that has none).
    static func continuationIndent(_ plainLine: String, width: Int) -> Int {
        let characters = Array(plainLine)
        let leading = characters.prefix { $0 == " " }.count
        var index = leading
        while index < characters.count, characters[index] != " " { index += 1 }
        var spaces = 0
        while index + spaces < characters.count, characters[index + spaces] == " " { spaces += 1 }
        let column = index + spaces
        let indent: Int
        if spaces >= 2, column <= 24, column < characters.count {
            indent = column
        } else {
            indent = leading > 0 ? leading : 2
        }
        return min(indent, width / 2)
    }

    /// Every line of `text` in at most `width` columns (see the rule above); lines that fit are
    /// left as they are.
    static func fitLines(_ text: String, width: Int) -> String {
        guard width >= 10 else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            visibleColumns(line) <= width ? String(line) : fitLine(String(line), width: width)
        }.joined(separator: "\n")
    }

    private static func fitLine(_ line: String, width: Int) -> String {
        let indent = continuationIndent(withoutEscapes(line), width: width)
        let pad = String(repeating: " ", count: indent)
        // Runs of spaces and words, in order: the spacing of the first line (aligned columns) is kept.
        var tokens: [(spaces: Int, word: String)] = []
        var spaces = 0
        var word = ""
        for character in line {
            if character == " " {
                if !word.isEmpty {
                    tokens.append((spaces, word))
                    word = ""
                    spaces = 0
                }
                spaces += 1
            } else {
                word.append(character)
            }
        }
        if !word.isEmpty { tokens.append((spaces, word)) }

        var lines: [String] = []
        var current = ""
        var used = 0
        var fresh = true  // nothing but the indent on `current` yet
        for (index, token) in tokens.enumerated() {
            let gap = fresh ? (index == 0 ? token.spaces : 0) : token.spaces
            var word = token.word
            var wordWidth = visibleColumns(word)
            if used + gap + wordWidth > width {
                let roomHere = width - used - gap
                let roomAlone = width - indent
                if wordWidth > roomAlone, isURL(word) {
                    // A URL is kept whole, to be copied: on as many lines as it needs.
                    if !fresh, roomHere < 12 {
                        lines.append(current)
                        current = pad
                        used = indent
                        fresh = true
                    }
                    var rest = Substring(withoutEscapes(word))
                    let style = leadingEscapes(word)
                    var gapHere = fresh ? 0 : gap
                    while !rest.isEmpty {
                        var piece = ""
                        var pieceWidth = 0
                        let room = max(1, width - used - gapHere)
                        while let next = rest.first, pieceWidth + columns(next) <= room || piece.isEmpty {
                            piece.append(next)
                            pieceWidth += columns(next)
                            rest = rest.dropFirst()
                        }
                        current += String(repeating: " ", count: gapHere) + style + piece + (style.isEmpty ? "" : "\u{1B}[0m")
                        used += gapHere + pieceWidth
                        gapHere = 0
                        if !rest.isEmpty {
                            lines.append(current)
                            current = pad
                            used = indent
                        }
                    }
                    fresh = false
                    continue
                }
                if wordWidth > roomAlone, roomHere >= 12 || fresh {
                    // It fits on no line: cut it where it stands.
                    word = elide(word, max(1, roomHere))
                    wordWidth = visibleColumns(word)
                } else if !fresh {
                    lines.append(current)
                    current = pad
                    used = indent
                    fresh = true
                    if wordWidth > roomAlone {
                        word = elide(word, roomAlone)
                        wordWidth = visibleColumns(word)
                    }
                    current += word
                    used += wordWidth
                    fresh = false
                    continue
                }
            }
            current += String(repeating: " ", count: gap) + word
            used += gap + wordWidth
            fresh = false
        }
        lines.append(current)
        return lines.joined(separator: "\n")
    }
}

/// The width of the terminal a stream of the REPL's output goes to, when it goes to one: the
/// interactive session sets it, so every line written there is fitted (see `fitLines`).
final class TerminalFit: Sendable {
    private let columns = Mutex<(@Sendable () -> Int)?>(nil)

    /// Fits what is written from now on to the terminal on `fd` (its width read at each write,
    /// so a resize is followed); nil stops fitting.
    func follow(_ fd: Int32?) {
        var width: (@Sendable () -> Int)?
        if let fd { width = { Renderer.terminalColumns(fd) } }
        columns.withLock { $0 = width }
    }

    func apply(_ text: String) -> String {
        guard let width = columns.withLock({ $0 })?() else { return text }
        return Renderer.fitLines(text, width: width)
    }
}
