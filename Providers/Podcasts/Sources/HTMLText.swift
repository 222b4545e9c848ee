/// Turns HTML from feeds into plain text: tags dropped, block elements as line breaks,
/// entities decoded, runs of spaces collapsed.
enum HTMLText {
    static func plain(_ html: String) -> String {
        var out = ""
        out.reserveCapacity(html.utf8.count)
        var index = html.startIndex
        while index < html.endIndex {
            let character = html[index]
            let next = html.index(after: index) < html.endIndex ? html[html.index(after: index)] : " "
            if character == "<", next.isLetter || next == "/" || next == "!", let close = html[index...].firstIndex(of: ">") {
                let tag = html[html.index(after: index)..<close].lowercased()
                let name = tag.drop { $0 == "/" }.prefix { $0.isLetter || $0.isNumber }
                if (name == "script" || name == "style"), !tag.hasPrefix("/"),
                    let end = html.range(of: "</\(name)", options: .caseInsensitive, range: close..<html.endIndex)
                {
                    // Their contents are code, not text.
                    index = html[end.upperBound...].firstIndex(of: ">").map { html.index(after: $0) } ?? html.endIndex
                    continue
                }
                switch name {
                case "br", "p", "div", "h1", "h2", "h3", "h4", "tr", "ul", "ol", "blockquote": out.append("\n")
                case "li": out.append(tag.hasPrefix("/") ? "" : "\n• ")
                default: break
                }
                index = html.index(after: close)
                continue
            }
            if character == "&", let semicolon = html[index...].prefix(12).firstIndex(of: ";") {
                let entity = String(html[html.index(after: index)..<semicolon])
                if let decoded = decode(entity) {
                    out.append(decoded)
                    index = html.index(after: semicolon)
                    continue
                }
            }
            out.append(character)
            index = html.index(after: index)
        }
        return tidy(out)
    }

    /// Decodes entities only (for text that is not HTML but may hold &amp; and friends).
    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == "&", let semicolon = text[index...].prefix(12).firstIndex(of: ";"),
                let decoded = decode(String(text[text.index(after: index)..<semicolon]))
            {
                out.append(decoded)
                index = text.index(after: semicolon)
            } else {
                out.append(text[index])
                index = text.index(after: index)
            }
        }
        return out
    }

    private static let named: [String: Character] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "hellip": "…", "mdash": "—",
        "ndash": "–", "rsquo": "’", "lsquo": "‘", "rdquo": "”", "ldquo": "“", "copy": "©", "reg": "®", "trade": "™",
        "eacute": "é", "egrave": "è", "agrave": "à", "uuml": "ü", "ouml": "ö", "auml": "ä", "ccedil": "ç", "bull": "•",
    ]

    private static func decode(_ entity: String) -> Character? {
        if entity.hasPrefix("#x") || entity.hasPrefix("#X") {
            return UInt32(entity.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map(Character.init)
        }
        if entity.hasPrefix("#") {
            return UInt32(entity.dropFirst()).flatMap(Unicode.Scalar.init).map(Character.init)
        }
        return named[entity]
    }

    /// Collapses spaces within lines and blank lines between paragraphs.
    private static func tidy(_ text: String) -> String {
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let collapsed = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" }).joined(separator: " ")
            if collapsed.isEmpty, lines.last?.isEmpty ?? true { continue }
            lines.append(collapsed)
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        return lines.joined(separator: "\n")
    }
}
