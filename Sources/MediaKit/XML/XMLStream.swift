/// An element or attribute name with its namespace resolved from the `xmlns` declarations in
/// scope. A prefix that no declaration binds keeps `namespace == nil` (real feeds use `itunes:`
/// without declaring it; the reader decides what a well-known prefix means).
public struct XMLName: Sendable, Equatable {
    /// The namespace URI as declared (compare case-insensitively: feeds vary the case).
    public var namespace: String?
    /// The prefix as written, "" for none.
    public var prefix: String
    public var local: String

    public init(namespace: String?, prefix: String, local: String) {
        self.namespace = namespace
        self.prefix = prefix
        self.local = local
    }

    public var qualified: String { prefix.isEmpty ? local : prefix + ":" + local }
}

public struct XMLAttribute: Sendable, Equatable {
    public var name: XMLName
    /// Entity references decoded.
    public var value: String
}

/// Receives what an `XMLStream` reads, in document order.
public protocol XMLStreamDelegate: AnyObject {
    func xmlStart(_ name: XMLName, attributes: [XMLAttribute])
    /// - Parameter explicit: false when the element was closed implicitly (its end tag is
    ///   missing: a mismatched end tag further out, or the end of the document).
    func xmlEnd(_ name: XMLName, explicit: Bool)
    /// Character data (entities decoded, CDATA as is), possibly in several pieces per run.
    func xmlText(_ text: UnsafeBufferPointer<UInt8>)
}

/// Why a document cannot be read at all (as opposed to a bad element, which is skipped).
public enum XMLStreamError: Error, Equatable, CustomStringConvertible {
    /// The document declares its own entities: expanding them is how entity bombs and external
    /// entity reads work, so such documents are refused.
    case declaresEntities
    case tooDeep(Int)
    /// One tag, comment, CDATA section or declaration is larger than the limit.
    case constructTooLarge(Int)

    public var description: String {
        switch self {
        case .declaresEntities:
            "it declares its own XML entities (entity expansion, used by entity bombs and external-entity reads), which is refused for safety"
        case .tooDeep(let depth): "its elements nest deeper than \(depth) levels"
        case .constructTooLarge(let limit): "one of its tags or sections is larger than \(limit >> 20) MiB"
        }
    }
}

/// A streaming XML reader for documents from the network (feeds, OPML): bytes go in chunk by
/// chunk, in any size, and elements come out as they complete, so memory stays proportional to
/// the largest single construct, not to the document.
///
/// It is deliberately forgiving, as feed readers must be: text before the root, a stray `<` or
/// `&`, unquoted attribute values, mismatched or missing end tags (closed implicitly, reported
/// as such), HTML entities like `&nbsp;` (decoded). It is deliberately strict where safety is at
/// stake: no DTD is read, no entity is declared or expanded beyond the predefined, numeric and
/// HTML ones, nothing outside the document is ever fetched.
///
/// Input must be UTF-8; `XMLTextDecoder` turns any declared or detected encoding into it.
public final class XMLStream {
    public static let maxDepth = 1024
    public static let maxConstruct = 16 << 20

    private weak var delegate: (any XMLStreamDelegate)?
    private var buffer: [UInt8] = []
    private var position = 0
    /// Where a search for the end of the construct at `position` left off (no rescans).
    private var resume = 0
    /// Decoded character data waiting to be handed over.
    private var text: [UInt8] = []
    /// Open elements, for end tags and namespace scope.
    private var open: [(qualified: [UInt8], name: XMLName, bindings: Int)] = []
    private var bindings: [(prefix: String, uri: String)] = []
    public private(set) var stopped = false

    public init(delegate: any XMLStreamDelegate) { self.delegate = delegate }

    /// Stops reading: nothing more is reported (a delegate that has seen enough).
    public func stop() { stopped = true }

    /// Reads a chunk; complete constructs are reported at once, a partial one waits for more.
    public func feed(_ bytes: UnsafeRawBufferPointer) throws {
        guard !stopped else { return }
        if position > 0, position >= buffer.count / 2 {
            buffer.removeSubrange(0..<position)
            resume -= position
            position = 0
        }
        buffer.append(contentsOf: bytes)
        try parse(final: false)
    }

    public func feed(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try feed($0) } }

    /// The end of the document: what is left is read as far as it goes, and every element still
    /// open is closed implicitly.
    public func finish() throws {
        guard !stopped else { return }
        try parse(final: true)
        flushText()
        while let element = open.popLast() {
            bindings.removeLast(element.bindings)
            delegate?.xmlEnd(element.name, explicit: false)
        }
    }

    // MARK: The scanner

    private static let lt = UInt8(ascii: "<")
    private static let amp = UInt8(ascii: "&")
    private static let gt = UInt8(ascii: ">")

    private func parse(final: Bool) throws {
        try buffer.withUnsafeBufferPointer { input in
            while position < input.count, !stopped {
                let byte = input[position]
                if byte == Self.lt {
                    guard let next = try markup(input, final: final) else { return }
                    position = next
                    resume = next
                } else if byte == Self.amp {
                    guard let next = entity(input, final: final) else { return }
                    position = next
                } else {
                    // A run of plain text up to the next '<' or '&'.
                    var end = position + 1
                    while end < input.count, input[end] != Self.lt, input[end] != Self.amp { end += 1 }
                    if !open.isEmpty { text.append(contentsOf: input[position..<end]) }
                    position = end
                }
            }
        }
    }

    /// An entity reference at `position`; returns the index after it, or nil to wait for more.
    private func entity(_ input: UnsafeBufferPointer<UInt8>, final: Bool) -> Int? {
        var semicolon = position + 1
        let limit = min(input.count, position + 34)
        while semicolon < limit, input[semicolon] != UInt8(ascii: ";"), input[semicolon] != Self.lt, input[semicolon] != Self.amp,
            input[semicolon] > 0x20
        {
            semicolon += 1
        }
        if semicolon == input.count, !final, input.count - position < 34 { return nil }
        if open.isEmpty { return position + 1 }
        if semicolon < input.count, input[semicolon] == UInt8(ascii: ";"),
            let next = HTMLText.decodeEntity(input, at: position, into: &text)
        {
            return next
        }
        // Not a reference we know: the '&' is text, as a forgiving reader takes it.
        text.append(Self.amp)
        return position + 1
    }

    /// The construct starting with '<' at `position`: returns the index after it, or nil to
    /// wait for more bytes.
    private func markup(_ input: UnsafeBufferPointer<UInt8>, final: Bool) throws -> Int? {
        let available = input.count - position
        func starts(_ prefix: StaticString) -> Bool? {
            let count = prefix.utf8CodeUnitCount
            let bytes = UnsafeBufferPointer(start: prefix.utf8Start, count: count)
            for i in 0..<min(count, available) where input[position + i] != bytes[i] { return false }
            return available >= count ? true : nil
        }
        // Which construct: decided on as few bytes as possible, waiting when they are not here.
        guard available >= 2 else { return final ? plainLessThan() : nil }
        let second = input[position + 1]
        if second == UInt8(ascii: "!") {
            switch (starts("<!--"), starts("<![CDATA["), starts("<!DOCTYPE"), starts("<!doctype")) {
            case (true?, _, _, _):
                guard let end = find("-->", in: input, from: position + 4, final: final) else { return try waiting(final) }
                return end
            case (_, true?, _, _):
                guard let end = find("]]>", in: input, from: position + 9, final: final) else { return try waiting(final) }
                flushIfNeeded()
                if !open.isEmpty { text.append(contentsOf: input[(position + 9)..<(end - 3)]) }
                return end
            case (_, _, true?, _), (_, _, _, true?):
                return try doctype(input, final: final)
            case (false, false, false, false):
                // Some other declaration: skipped to its '>'.
                guard let end = find(">", in: input, from: position + 2, final: final) else { return try waiting(final) }
                return end
            default:
                return final ? plainLessThan() : nil
            }
        }
        if second == UInt8(ascii: "?") {
            guard let end = find("?>", in: input, from: position + 2, final: final) else { return try waiting(final) }
            return end
        }
        let closing = second == UInt8(ascii: "/")
        let nameStart = position + (closing ? 2 : 1)
        guard nameStart < input.count else { return final ? plainLessThan() : nil }
        guard Self.isNameStart(input[nameStart]) else { return plainLessThan() }
        // Tags are short: an incomplete one is simply scanned again when more bytes come.
        guard let end = tagEnd(input, from: nameStart) else {
            if final { return plainLessThan() }
            if input.count - position > Self.maxConstruct { throw XMLStreamError.constructTooLarge(Self.maxConstruct) }
            return nil
        }
        flushText()
        if closing {
            endTag(UnsafeBufferPointer(rebasing: input[nameStart..<(end - 1)]))
        } else {
            try startTag(UnsafeBufferPointer(rebasing: input[nameStart..<(end - 1)]))
        }
        return end
    }

    /// A '<' that starts nothing: kept as text.
    private func plainLessThan() -> Int {
        if !open.isEmpty { text.append(Self.lt) }
        return position + 1
    }

    private func waiting(_ final: Bool) throws -> Int? {
        if final { return buffer.count }  // an unterminated comment or section runs to the end
        if buffer.count - position > Self.maxConstruct { throw XMLStreamError.constructTooLarge(Self.maxConstruct) }
        return nil
    }

    /// The index after the first `terminator` at or after `from`, or nil.
    private func find(_ terminator: StaticString, in input: UnsafeBufferPointer<UInt8>, from: Int, final: Bool) -> Int? {
        let count = terminator.utf8CodeUnitCount
        let bytes = UnsafeBufferPointer(start: terminator.utf8Start, count: count)
        var i = max(from, resume)
        while i + count <= input.count {
            if input[i] == bytes[0] {
                var matches = true
                for j in 1..<count where input[i + j] != bytes[j] {
                    matches = false
                    break
                }
                if matches { return i + count }
            }
            i += 1
        }
        // Resume where a terminator could still begin.
        resume = max(from, input.count - count + 1)
        return nil
    }

    /// The index after the '>' that ends a tag (quotes respected), or nil.
    private func tagEnd(_ input: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        var quote: UInt8 = 0
        var i = from
        while i < input.count {
            let byte = input[i]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == 0x22 || byte == 0x27 {
                quote = byte
            } else if byte == Self.gt {
                return i + 1
            }
            i += 1
        }
        return nil
    }

    private func doctype(_ input: UnsafeBufferPointer<UInt8>, final: Bool) throws -> Int? {
        // To its '>', skipping an internal subset in brackets, which must not declare entities.
        var i = position + 9
        var depth = 0
        var quote: UInt8 = 0
        while i < input.count {
            let byte = input[i]
            if quote != 0 {
                if byte == quote { quote = 0 }
            } else if byte == 0x22 || byte == 0x27 {
                quote = byte
            } else if byte == UInt8(ascii: "[") {
                depth += 1
            } else if byte == UInt8(ascii: "]") {
                depth -= 1
            } else if byte == Self.gt, depth <= 0 {
                return i + 1
            } else if byte == Self.lt, depth > 0, i + 8 <= input.count,
                String(decoding: UnsafeBufferPointer(rebasing: input[i..<(i + 8)]), as: UTF8.self) == "<!ENTITY"
            {
                throw XMLStreamError.declaresEntities
            }
            i += 1
        }
        return try waiting(final)
    }

    // MARK: Tags

    private func flushText() {
        guard !text.isEmpty else { return }
        text.withUnsafeBufferPointer { delegate?.xmlText($0) }
        text.removeAll(keepingCapacity: true)
    }

    /// Long text runs go to the delegate as they grow, so a huge CDATA section is not held twice.
    private func flushIfNeeded() {
        if text.count > 1 << 16 { flushText() }
    }

    private func startTag(_ tag: UnsafeBufferPointer<UInt8>) throws {
        var end = tag.count
        var selfClosing = false
        if end > 0, tag[end - 1] == UInt8(ascii: "/") {
            selfClosing = true
            end -= 1
        }
        var i = 0
        while i < end, !Self.isSpace(tag[i]) { i += 1 }
        let qualified = Array(tag[0..<i])
        // Attributes: name="value", name='value', name=value, or a bare name.
        var raw: [(name: [UInt8], value: String)] = []
        var declared = 0
        while i < end {
            while i < end, Self.isSpace(tag[i]) { i += 1 }
            let nameStart = i
            while i < end, !Self.isSpace(tag[i]), tag[i] != UInt8(ascii: "=") { i += 1 }
            guard i > nameStart else { i += 1; continue }
            let name = Array(tag[nameStart..<i])
            while i < end, Self.isSpace(tag[i]) { i += 1 }
            var value = ""
            if i < end, tag[i] == UInt8(ascii: "=") {
                i += 1
                while i < end, Self.isSpace(tag[i]) { i += 1 }
                if i < end, tag[i] == 0x22 || tag[i] == 0x27 {
                    let quote = tag[i]
                    let valueStart = i + 1
                    i = valueStart
                    while i < end, tag[i] != quote { i += 1 }
                    value = Self.decodeAttribute(UnsafeBufferPointer(rebasing: tag[valueStart..<i]))
                    i += 1
                } else {
                    let valueStart = i
                    while i < end, !Self.isSpace(tag[i]) { i += 1 }
                    value = Self.decodeAttribute(UnsafeBufferPointer(rebasing: tag[valueStart..<i]))
                }
            }
            if name == Self.xmlns {
                bindings.append(("", value))
                declared += 1
            } else if name.count > 6, Array(name[0..<6]) == Self.xmlnsColon {
                bindings.append((String(decoding: name[6...], as: UTF8.self), value))
                declared += 1
            } else {
                raw.append((name, value))
            }
        }
        guard open.count < Self.maxDepth else { throw XMLStreamError.tooDeep(Self.maxDepth) }
        let name = resolve(qualified, isAttribute: false)
        let attributes = raw.map { XMLAttribute(name: resolve($0.name, isAttribute: true), value: $0.value) }
        open.append((qualified, name, declared))
        delegate?.xmlStart(name, attributes: attributes)
        if selfClosing {
            open.removeLast()
            bindings.removeLast(declared)
            delegate?.xmlEnd(name, explicit: true)
        }
    }

    private func endTag(_ tag: UnsafeBufferPointer<UInt8>) {
        var end = tag.count
        while end > 0, Self.isSpace(tag[end - 1]) { end -= 1 }
        let qualified = Array(tag[0..<end])
        // An end tag closes its element and any left open inside it; one that matches nothing
        // open is ignored.
        guard let index = open.lastIndex(where: { $0.qualified == qualified }) else { return }
        while open.count > index {
            let element = open.removeLast()
            bindings.removeLast(element.bindings)
            delegate?.xmlEnd(element.name, explicit: open.count == index)
        }
    }

    private static let xmlns = Array("xmlns".utf8)
    private static let xmlnsColon = Array("xmlns:".utf8)

    private func resolve(_ qualified: [UInt8], isAttribute: Bool) -> XMLName {
        guard let colon = qualified.firstIndex(of: UInt8(ascii: ":")) else {
            let local = String(decoding: qualified, as: UTF8.self)
            // Unprefixed attributes are in no namespace; elements are in the default one.
            return XMLName(namespace: isAttribute ? nil : lookup(""), prefix: "", local: local)
        }
        let prefix = String(decoding: qualified[..<colon], as: UTF8.self)
        return XMLName(
            namespace: lookup(prefix), prefix: prefix, local: String(decoding: qualified[(colon + 1)...], as: UTF8.self))
    }

    private func lookup(_ prefix: String) -> String? {
        for binding in bindings.reversed() where binding.prefix == prefix { return binding.uri.isEmpty ? nil : binding.uri }
        return prefix == "xml" ? "http://www.w3.org/XML/1998/namespace" : nil
    }

    private static func decodeAttribute(_ value: UnsafeBufferPointer<UInt8>) -> String {
        guard value.contains(amp) else { return String(decoding: value, as: UTF8.self) }
        var out: [UInt8] = []
        out.reserveCapacity(value.count)
        var i = 0
        while i < value.count {
            if value[i] == amp, let next = HTMLText.decodeEntity(value, at: i, into: &out) {
                i = next
            } else {
                out.append(value[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }

    private static func isNameStart(_ byte: UInt8) -> Bool {
        ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte >= 0x80
    }
}
