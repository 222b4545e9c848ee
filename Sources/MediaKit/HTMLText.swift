/// Turns HTML from feeds into plain text: tags dropped (script and style with their contents),
/// block elements as line breaks, entities decoded, runs of spaces collapsed.
///
/// Works on UTF-8 bytes: feeds carry thousands of descriptions, and Character-by-Character
/// String walking was most of the time spent parsing them.
public enum HTMLText {
    public static func plain(_ html: String) -> String {
        var html = html
        return html.withUTF8 { input in
            var out: [UInt8] = []
            out.reserveCapacity(input.count)
            var i = 0
            let n = input.count
            while i < n {
                let byte = input[i]
                if byte == UInt8(ascii: "<"), i + 1 < n,
                    isLetter(input[i + 1]) || input[i + 1] == UInt8(ascii: "/") || input[i + 1] == UInt8(ascii: "!"),
                    let close = find(UInt8(ascii: ">"), in: input, from: i + 1)
                {
                    var j = i + 1
                    let closing = input[j] == UInt8(ascii: "/")
                    if closing { j += 1 }
                    let nameStart = j
                    while j < close, isLetter(input[j]) || (input[j] >= 0x30 && input[j] <= 0x39) { j += 1 }
                    switch tagKind(input, nameStart..<j) {
                    case .skipContents(let name) where !closing:
                        if let end = findClosing(name, in: input, from: close) {
                            i = end
                            continue
                        }
                    case .block: out.append(0x0A)
                    case .listItem: if !closing { out.append(contentsOf: [0x0A, 0xE2, 0x80, 0xA2, 0x20]) }  // "\n• "
                    default: break
                    }
                    i = close + 1
                    continue
                }
                if byte == UInt8(ascii: "&"), let end = decodeEntity(input, at: i, into: &out) {
                    i = end
                    continue
                }
                out.append(byte)
                i += 1
            }
            return tidy(out)
        }
    }

    /// Decodes entities only (for text that is not HTML but may hold &amp; and friends).
    public static func decodeEntities(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "&")) else { return text }
        var text = text
        return text.withUTF8 { input in
            var out: [UInt8] = []
            out.reserveCapacity(input.count)
            var i = 0
            while i < input.count {
                if input[i] == UInt8(ascii: "&"), let end = decodeEntity(input, at: i, into: &out) {
                    i = end
                } else {
                    out.append(input[i])
                    i += 1
                }
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    private static let named: [String: Unicode.Scalar] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "hellip": "…", "mdash": "—",
        "ndash": "–", "rsquo": "’", "lsquo": "‘", "rdquo": "”", "ldquo": "“", "copy": "©", "reg": "®", "trade": "™",
        "eacute": "é", "egrave": "è", "agrave": "à", "uuml": "ü", "ouml": "ö", "auml": "ä", "ccedil": "ç", "bull": "•",
    ]

    /// Decodes the entity at `start` ('&'), appending its UTF-8; returns the index after ';'.
    static func decodeEntity(_ input: UnsafeBufferPointer<UInt8>, at start: Int, into out: inout [UInt8]) -> Int? {
        let limit = min(input.count, start + 12)
        var semicolon = start + 1
        while semicolon < limit, input[semicolon] != UInt8(ascii: ";") { semicolon += 1 }
        guard semicolon < limit, semicolon > start + 1 else { return nil }
        let body = UnsafeBufferPointer(rebasing: input[(start + 1)..<semicolon])
        let scalar: Unicode.Scalar?
        if body[0] == UInt8(ascii: "#") {
            let hex = body.count > 1 && (body[1] == UInt8(ascii: "x") || body[1] == UInt8(ascii: "X"))
            let digits = String(decoding: UnsafeBufferPointer(rebasing: body[(hex ? 2 : 1)...]), as: UTF8.self)
            scalar = UInt32(digits, radix: hex ? 16 : 10).flatMap(Unicode.Scalar.init)
        } else {
            scalar = named[String(decoding: body, as: UTF8.self)]
        }
        guard let scalar else { return nil }
        out.append(contentsOf: UTF8.encode(scalar)!)
        return semicolon + 1
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    private enum TagKind { case block, listItem, skipContents(String), other }

    private static let blockTags: [[UInt8]] = ["br", "p", "div", "h1", "h2", "h3", "h4", "tr", "ul", "ol", "blockquote"].map {
        Array($0.utf8)
    }
    private static let li = Array("li".utf8)
    private static let script = Array("script".utf8)
    private static let style = Array("style".utf8)

    /// What a tag means for plain text, from its name's bytes (no String per tag).
    private static func tagKind(_ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> TagKind {
        if range.count > 10 || range.isEmpty { return .other }
        for name in blockTags where matches(name, input, range) { return .block }
        if matches(li, input, range) { return .listItem }
        if matches(script, input, range) { return .skipContents("script") }
        if matches(style, input, range) { return .skipContents("style") }
        return .other
    }

    /// Whether the bytes in `range` spell `name`, ignoring ASCII case.
    private static func matches(_ name: [UInt8], _ input: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        guard name.count == range.count else { return false }
        var k = 0
        while k < name.count {
            if input[range.lowerBound + k] | 0x20 != name[k] { return false }
            k += 1
        }
        return true
    }

    private static func find(_ byte: UInt8, in input: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var i = start
        while i < input.count {
            if input[i] == byte { return i }
            i += 1
        }
        return nil
    }

    /// The index after `</name ...>`, case-insensitively.
    private static func findClosing(_ name: String, in input: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        let pattern = Array("</\(name)".utf8)
        var i = start
        while i + pattern.count <= input.count {
            var matches = true
            for k in 0..<pattern.count where (input[i + k] | (k > 1 ? 0x20 : 0)) != pattern[k] {
                matches = false
                break
            }
            if matches { return find(UInt8(ascii: ">"), in: input, from: i).map { $0 + 1 } ?? input.count }
            i += 1
        }
        return nil
    }

    /// Collapses spaces within lines, trims them, and keeps at most one blank line in a row.
    private static func tidy(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var blankPending = false
        var wroteAnything = false
        var pendingSpace = false
        var lineHasText = false
        for byte in bytes + [0x0A] {
            switch byte {
            case 0x0A:
                // An empty line between two with text becomes one blank line.
                if !lineHasText, wroteAnything { blankPending = true }
                lineHasText = false
                pendingSpace = false
            case 0x20, 0x09, 0x0D:
                if lineHasText { pendingSpace = true }
            default:
                if !lineHasText {
                    if wroteAnything { out.append(0x0A) }
                    if blankPending, wroteAnything { out.append(0x0A) }
                    blankPending = false
                    lineHasText = true
                    wroteAnything = true
                } else if pendingSpace {
                    out.append(0x20)
                }
                pendingSpace = false
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// A link found while converting HTML: where its text sits in the plain text (Unicode scalar
/// offsets, end exclusive), its target, its classes (Mastodon marks mentions and hashtags).
public struct HTMLLink: Sendable, Equatable {
    public var start: Int
    public var end: Int
    public var href: String
    public var classes: [String]
    public var text: String
}

extension HTMLText {
    /// Plain text of short HTML (a post): paragraphs as blank lines, `<br>` as line breaks,
    /// entities decoded, and every link with its position. Text inside `class="invisible"` spans
    /// is dropped and `class="ellipsis"` spans end with "…", as Mastodon renders long URLs.
    public static func plainWithLinks(_ html: String) -> (text: String, links: [HTMLLink]) {
        var out = String.UnicodeScalarView()
        var links: [HTMLLink] = []
        var open: (start: Int, href: String, classes: [String])?
        var hidden = 0
        var spans: [String] = []  // the kind of each open span: "invisible", "ellipsis" or ""
        var paragraphs = 0
        var index = html.startIndex
        func append(_ text: String) {
            guard hidden == 0 else { return }
            out.append(contentsOf: text.unicodeScalars)
        }
        while index < html.endIndex {
            let character = html[index]
            if character == "<", let close = html[index...].firstIndex(of: ">") {
                let tag = String(html[html.index(after: index)..<close])
                let closing = tag.hasPrefix("/")
                let name = tag.drop { $0 == "/" }.prefix { $0.isLetter || $0.isNumber }.lowercased()
                let classes = attribute("class", in: tag)?.split(separator: " ").map(String.init) ?? []
                switch name {
                case "p":
                    if closing { paragraphs += 1 } else if paragraphs > 0 { append("\n\n") }
                case "br": append("\n")
                case "a" where !closing:
                    open = (out.count, decodeEntities(attribute("href", in: tag) ?? ""), classes)
                case "a":
                    if let link = open {
                        let text = String(String.UnicodeScalarView(out[out.index(out.startIndex, offsetBy: link.start)...]))
                        links.append(
                            HTMLLink(start: link.start, end: out.count, href: link.href, classes: link.classes, text: text))
                    }
                    open = nil
                case "span" where !closing:
                    let kind = classes.contains("invisible") ? "invisible" : classes.contains("ellipsis") ? "ellipsis" : ""
                    spans.append(kind)
                    if kind == "invisible" { hidden += 1 }
                case "span":
                    let kind = spans.popLast() ?? ""
                    if kind == "invisible" { hidden -= 1 }
                    if kind == "ellipsis" { append("…") }
                default: break
                }
                index = html.index(after: close)
                continue
            }
            if character == "&", let semicolon = html[index...].prefix(12).firstIndex(of: ";") {
                let decoded = decodeEntities(String(html[index...semicolon]))
                if decoded != String(html[index...semicolon]) {
                    append(decoded)
                    index = html.index(after: semicolon)
                    continue
                }
            }
            append(String(character))
            index = html.index(after: index)
        }
        return (String(out), links)
    }

    /// The value of `name="…"` in a tag's text.
    private static func attribute(_ name: String, in tag: String) -> String? {
        guard let range = tag.firstRange(of: "\(name)=\"") else { return nil }
        let rest = tag[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}
