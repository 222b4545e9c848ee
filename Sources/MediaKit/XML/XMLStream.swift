#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An element or attribute name with its namespace resolved from the `xmlns` declarations in
/// scope. A prefix that no declaration binds keeps `namespace == nil` (real feeds use `itunes:`
/// without declaring it; the reader decides what a well-known prefix means).
public struct XMLName: Sendable {
    /// The three strings in one object: a name goes to the delegate at every tag, and a copy of
    /// three strings cost three retains and three releases (a tenth of a big feed's parse).
    private final class Parts: Sendable {
        let namespace: String?
        let prefix: String
        let local: String

        init(namespace: String?, prefix: String, local: String) {
            self.namespace = namespace
            self.prefix = prefix
            self.local = local
        }
    }

    private let parts: Parts
    /// The namespace URI as declared (compare case-insensitively: feeds vary the case).
    public var namespace: String? { parts.namespace }
    /// The prefix as written, "" for none.
    public var prefix: String { parts.prefix }
    public var local: String { parts.local }
    /// The same small number for every occurrence of this name (namespace, prefix and local) in
    /// one stream, so a delegate can keep what it worked out about a name in an array indexed by
    /// it instead of comparing strings at every tag; -1 for a name the stream did not number (a
    /// document with thousands of distinct names).
    public var symbol: Int

    public init(namespace: String?, prefix: String, local: String, symbol: Int = -1) {
        parts = Parts(namespace: namespace, prefix: prefix, local: local)
        self.symbol = symbol
    }

    public var qualified: String { prefix.isEmpty ? local : prefix + ":" + local }
}

extension XMLName: Equatable {
    public static func == (a: XMLName, b: XMLName) -> Bool {
        a.parts === b.parts || (a.local == b.local && a.prefix == b.prefix && a.namespace == b.namespace)
    }
}

public struct XMLAttribute: Sendable, Equatable {
    public var name: XMLName
    /// Entity references decoded.
    public var value: String
}

/// A start tag's attributes (`xmlns` declarations excluded), read only when asked for: most
/// tags' attributes are never looked at, and a reader that looks at two of ten pays for two.
///
/// A view of the tag where it lies in the stream's input, not a copy: valid during the
/// `xmlStart` it is given to only. Read what you need there; do not keep it.
public struct XMLAttributes {
    /// Where an attribute's name (with its colon, or -1) and value are in the tag's bytes.
    struct Span {
        var name: Range<Int>
        var colon: Int
        var value: Range<Int>
    }

    /// The tag's bytes after its name.
    fileprivate var tag = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
    /// The namespace bindings in scope at the tag, innermost last (set only for a tag with attributes).
    fileprivate var bindings: [Binding] = []

    /// Every attribute, in the order written, names resolved.
    public var all: [XMLAttribute] {
        var all: [XMLAttribute] = []
        let tag = tag
        XMLReader.forEachAttribute(in: tag) { span in
            guard XMLReader.declaredPrefix(tag, span) == nil else { return false }
            let value = XMLReader.decodeAttribute(UnsafeBufferPointer(rebasing: tag[span.value]))
            if span.colon < 0 {
                // Unprefixed attributes are in no namespace.
                all.append(
                    XMLAttribute(
                        name: XMLName(namespace: nil, prefix: "", local: String(decoding: tag[span.name], as: UTF8.self)),
                        value: value))
            } else {
                let prefix = String(decoding: tag[span.name.lowerBound..<span.colon], as: UTF8.self)
                let local = String(decoding: tag[(span.colon + 1)..<span.name.upperBound], as: UTF8.self)
                all.append(
                    XMLAttribute(
                        name: XMLName(namespace: XMLReader.lookup(prefix, in: bindings), prefix: prefix, local: local),
                        value: value))
            }
            return false
        }
        return all
    }

    /// The value of the first attribute named `local` with no prefix, entities decoded.
    public func value(_ local: StaticString) -> String? {
        let key = local.utf8Start
        let count = local.utf8CodeUnitCount
        guard let base = tag.baseAddress else { return nil }
        var found: Range<Int>?
        XMLReader.forEachAttribute(in: tag) { span in
            guard span.colon < 0, span.name.count == count, memcmp(base + span.name.lowerBound, key, count) == 0 else {
                return false
            }
            found = span.value
            return true
        }
        return found.map { XMLReader.decodeAttribute(UnsafeBufferPointer(rebasing: tag[$0])) }
    }
}

/// A namespace declaration in scope.
struct Binding: Sendable {
    var prefix: String
    var uri: String
}

/// Receives what an `XMLStream` reads, in document order.
public protocol XMLStreamDelegate: AnyObject {
    func xmlStart(_ name: XMLName, attributes: XMLAttributes)
    /// - Parameter explicit: false when the element was closed implicitly (its end tag is
    ///   missing: a mismatched end tag further out, or the end of the document).
    func xmlEnd(_ name: XMLName, explicit: Bool)
    /// Character data (entities decoded, CDATA as is), possibly in several pieces per run.
    func xmlText(_ text: UnsafeBufferPointer<UInt8>)
    /// Whether the text at this point is wanted: asked at each run of text, so a reader that
    /// keeps a few fields does not pay for decoding and handing over the rest (indentation,
    /// notes it skips).
    var wantsText: Bool { get }
}

extension XMLStreamDelegate {
    public var wantsText: Bool { true }
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
    /// Beyond this many distinct names a document's names go unnumbered (read as strings each time).
    static let maxSymbols = 4096

    private weak var delegate: (any XMLStreamDelegate)?
    /// Everything the reading keeps, taken out of the object while a chunk is read: the loop
    /// works on a local value (no dynamic exclusivity checks, no copies) with the delegate in a
    /// local strong reference (no reference counting per tag).
    private var reader = XMLReader()
    public private(set) var stopped = false

    public init(delegate: any XMLStreamDelegate) { self.delegate = delegate }

    /// Stops reading: nothing more is reported (a delegate that has seen enough).
    public func stop() { stopped = true }

    /// Reads a chunk; complete constructs are reported at once, a partial one waits for more.
    public func feed(_ bytes: UnsafeRawBufferPointer) throws {
        guard !stopped, let delegate else { return }
        var reader = XMLReader()
        swap(&reader, &self.reader)
        defer { swap(&reader, &self.reader) }
        try reader.feed(bytes.assumingMemoryBound(to: UInt8.self), final: false, delegate: delegate, stream: self)
    }

    public func feed(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try feed($0) } }

    /// The end of the document: what is left is read as far as it goes, and every element still
    /// open is closed implicitly.
    public func finish() throws {
        guard !stopped, let delegate else { return }
        var reader = XMLReader()
        swap(&reader, &self.reader)
        defer { swap(&reader, &self.reader) }
        try reader.feed(UnsafeBufferPointer(start: nil, count: 0), final: true, delegate: delegate, stream: self)
        if !stopped { reader.finish(delegate: delegate) }
    }

}

/// The reading state of an `XMLStream` and the scanner over it.
///
/// Chunks are read where they lie: only the bytes of a construct cut by a chunk's end are kept
/// (`carry`), and finished with as few of the next chunk's bytes as it takes.
struct XMLReader {
    /// The start of a construct that the last chunk ended inside of.
    private var carry: [UInt8] = []
    /// Where a search for the end of the construct being read left off, from its start (no rescans).
    private var resume = 0
    /// Decoded character data waiting to be handed over.
    private var text: [UInt8] = []
    /// Open elements, innermost last.
    private var open: [Open] = []
    /// The names of open elements that are not `listed` (a document with thousands of names).
    private var unnumbered: [(written: [UInt8], name: XMLName)] = []
    private var bindings: [Binding] = []
    /// Changes whenever `bindings` does: resolved names are reused while it stays the same.
    private var scope = 0
    /// Names as written (`itunes:image`), numbered in the order first seen.
    private var written = NameTable()
    /// By written name: the symbol it resolved to, and the scope then.
    private var resolved: [(scope: Int, symbol: Int32)] = []
    /// Resolved names by symbol, and symbols by namespace and name as written.
    private var names: [XMLName] = []
    private var symbols: [String: Int] = [:]
    /// The attributes of the tag being read, reused from tag to tag.
    private var attributes = XMLAttributes()
    /// The last start tag's written name, and by written name the one that started next last
    /// time: feeds repeat the same sequence of tags, so most names are found without hashing.
    private var lastStart = -1
    private var follows: [Int32] = []

    /// An open element: plain numbers, so the stack is copied as bytes.
    private struct Open {
        /// The number of the name as written, or -1.
        var written: Int32
        /// The resolved name's symbol, or -1 when it is in `unnumbered`.
        var symbol: Int32
        /// How many namespace bindings its tag declared.
        var bindings: Int32

        /// Whether both its names have numbers; if not, its name is on `unnumbered`.
        var listed: Bool { written >= 0 && symbol >= 0 }
    }

    static let maxDepth = XMLStream.maxDepth
    static let maxConstruct = XMLStream.maxConstruct
    static let maxSymbols = XMLStream.maxSymbols

    /// Reads `chunk` (or, when `final`, what is left).
    mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>, final: Bool, delegate: any XMLStreamDelegate, stream: XMLStream)
        throws
    {
        var start = 0
        if !carry.isEmpty {
            // The construct held over is finished on a copy of as few new bytes as it takes:
            // a piece as large as what is held, doubled until it ends.
            var held = carry.count
            var taken = 0
            var piece = max(512, held)
            while true {
                let count = min(chunk.count - taken, piece)
                carry.append(contentsOf: chunk[taken..<(taken + count)])
                taken += count
                let last = taken == chunk.count
                var buffer: [UInt8] = []
                swap(&buffer, &carry)
                let stop = try buffer.withUnsafeBufferPointer {
                    try run($0, from: 0, final: final && last, delegate: delegate, stream: stream)
                }
                swap(&buffer, &carry)
                if stream.stopped { return carry.removeAll() }
                if stop >= held {
                    // Past what was held: the rest is read where it lies.
                    start = stop - held
                    carry.removeAll(keepingCapacity: carry.capacity <= 1 << 20)
                    break
                }
                carry.removeSubrange(0..<stop)
                held -= stop
                if last { return }
                piece *= 2
            }
        }
        let stop = try run(chunk, from: start, final: final, delegate: delegate, stream: stream)
        if !stream.stopped, stop < chunk.count { carry.append(contentsOf: chunk[stop...]) }
    }

    mutating func finish(delegate: any XMLStreamDelegate) {
        flushText(delegate)
        while !open.isEmpty { close(explicit: false, delegate) }
    }

    // MARK: The scanner

    private static let lt = UInt8(ascii: "<")
    private static let amp = UInt8(ascii: "&")
    private static let gt = UInt8(ascii: ">")

    /// Reads `input` from `position` as far as it goes; returns where the construct it could not
    /// finish starts (`input.count` when it finished all).
    private mutating func run(
        _ input: UnsafeBufferPointer<UInt8>, from start: Int, final: Bool, delegate: any XMLStreamDelegate, stream: XMLStream
    ) throws -> Int {
        var position = start
        // Where the next '<' is, once looked for: text with a reference every few bytes and no
        // '<' for megabytes (an OPML title) looked for it again after every reference.
        var nextLT = -1
        while position < input.count {
            let byte = input[position]
            if byte == Self.lt {
                guard let next = try markup(input, at: position, final: final, delegate) else { return position }
                position = next
                resume = 0
                if stream.stopped { return input.count }
            } else if open.isEmpty || !delegate.wantsText {
                // Text no one reads: skipped to the next '<', entities and all (mostly the
                // indentation between tags: looked at here before asking memchr).
                var next = position + 1
                while next < input.count, next - position < 24, input[next] <= 0x20 { next += 1 }
                if next < input.count, input[next] == Self.lt {
                    position = next
                } else {
                    position = Self.index(of: Self.lt, in: input, from: next, to: input.count) ?? input.count
                }
            } else if byte == Self.amp {
                guard let next = entity(input, at: position, final: final) else { return position }
                position = next
            } else {
                // A run of plain text up to the next '<' or '&'.
                if nextLT <= position {
                    nextLT = Self.index(of: Self.lt, in: input, from: position + 1, to: input.count) ?? input.count
                }
                let stop = Self.index(of: Self.amp, in: input, from: position + 1, to: nextLT) ?? nextLT
                text.append(contentsOf: UnsafeBufferPointer(rebasing: input[position..<stop]))
                position = stop
            }
        }
        return position
    }

    /// An entity reference at `position`; returns the index after it, or nil to wait for more.
    private mutating func entity(_ input: UnsafeBufferPointer<UInt8>, at position: Int, final: Bool) -> Int? {
        var semicolon = position + 1
        let limit = min(input.count, position + 34)
        while semicolon < limit, input[semicolon] != UInt8(ascii: ";"), input[semicolon] != Self.lt, input[semicolon] != Self.amp,
            input[semicolon] > 0x20
        {
            semicolon += 1
        }
        if semicolon == input.count, !final, input.count - position < 34 { return nil }
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
    private mutating func markup(
        _ input: UnsafeBufferPointer<UInt8>, at position: Int, final: Bool, _ delegate: any XMLStreamDelegate
    ) throws -> Int? {
        let available = input.count - position
        guard available >= 2 else { return final ? plainLessThan(position) : nil }
        let second = input[position + 1]
        if second == UInt8(ascii: "!") {
            func starts(_ prefix: StaticString) -> Bool? {
                let count = prefix.utf8CodeUnitCount
                let bytes = UnsafeBufferPointer(start: prefix.utf8Start, count: count)
                for i in 0..<min(count, available) where input[position + i] != bytes[i] { return false }
                return available >= count ? true : nil
            }
            // Which construct: decided on as few bytes as possible, waiting when they are not here.
            switch (starts("<!--"), starts("<![CDATA["), starts("<!DOCTYPE"), starts("<!doctype")) {
            case (true?, _, _, _):
                guard let end = find("-->", in: input, at: position, from: position + 4) else {
                    return try waiting(final, input, position)
                }
                return end
            case (_, true?, _, _):
                guard let end = find("]]>", in: input, at: position, from: position + 9) else {
                    return try waiting(final, input, position)
                }
                if !open.isEmpty, delegate.wantsText {
                    text.append(contentsOf: UnsafeBufferPointer(rebasing: input[(position + 9)..<(end - 3)]))
                    flushIfNeeded(delegate)
                }
                return end
            case (_, _, true?, _), (_, _, _, true?):
                return try doctype(input, at: position, final: final)
            case (false, false, false, false):
                // Some other declaration: skipped to its '>'.
                guard let end = find(">", in: input, at: position, from: position + 2) else {
                    return try waiting(final, input, position)
                }
                return end
            default:
                return final ? plainLessThan(position) : nil
            }
        }
        if second == UInt8(ascii: "?") {
            guard let end = find("?>", in: input, at: position, from: position + 2) else {
                return try waiting(final, input, position)
            }
            return end
        }
        let closing = second == UInt8(ascii: "/")
        let nameStart = position + (closing ? 2 : 1)
        guard nameStart < input.count else { return final ? plainLessThan(position) : nil }
        guard Self.isNameStart(input[nameStart]) else { return plainLessThan(position) }
        // Tags are short: an incomplete one is simply scanned again when more bytes come.
        guard let end = Self.tagEnd(input, from: nameStart) else {
            if final { return plainLessThan(position) }
            if input.count - position > Self.maxConstruct { throw XMLStreamError.constructTooLarge(Self.maxConstruct) }
            return nil
        }
        flushText(delegate)
        if closing {
            endTag(UnsafeBufferPointer(rebasing: input[nameStart..<(end - 1)]), delegate)
        } else {
            try startTag(UnsafeBufferPointer(rebasing: input[nameStart..<(end - 1)]), delegate)
        }
        return end
    }

    /// A '<' that starts nothing: kept as text.
    private mutating func plainLessThan(_ position: Int) -> Int {
        if !open.isEmpty { text.append(Self.lt) }
        return position + 1
    }

    private func waiting(_ final: Bool, _ input: UnsafeBufferPointer<UInt8>, _ position: Int) throws -> Int? {
        if final { return input.count }  // an unterminated comment or section runs to the end
        if input.count - position > Self.maxConstruct { throw XMLStreamError.constructTooLarge(Self.maxConstruct) }
        return nil
    }

    /// The index after the first `terminator` at or after `from` in the construct at `start`, or nil.
    private mutating func find(_ terminator: StaticString, in input: UnsafeBufferPointer<UInt8>, at start: Int, from: Int) -> Int?
    {
        let count = terminator.utf8CodeUnitCount
        let bytes = UnsafeBufferPointer(start: terminator.utf8Start, count: count)
        var i = max(from, start + resume)
        while let found = Self.index(of: bytes[0], in: input, from: i, to: input.count - count + 1) {
            var matches = true
            for j in 1..<count where input[found + j] != bytes[j] {
                matches = false
                break
            }
            if matches { return found + count }
            i = found + 1
        }
        // Resume where a terminator could still begin.
        resume = max(from, input.count - count + 1) - start
        return nil
    }

    /// The index after the '>' that ends a tag (quotes respected), or nil: eight bytes at a time
    /// to the next '>', '"' or '\''.
    private static func tagEnd(_ input: UnsafeBufferPointer<UInt8>, from: Int) -> Int? {
        guard let base = input.baseAddress else { return nil }
        let count = input.count
        var i = from
        while i < count {
            var found = -1
            while i + 8 <= count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                let hits = hasByte(word, 0x3E) | hasByte(word, 0x22) | hasByte(word, 0x27)
                if hits != 0 {
                    found = i + hits.trailingZeroBitCount >> 3
                    break
                }
                i += 8
            }
            if found < 0 {
                while i < count, input[i] != gt, input[i] != 0x22, input[i] != 0x27 { i += 1 }
                guard i < count else { return nil }
                found = i
            }
            let byte = input[found]
            if byte == gt { return found + 1 }
            // A quoted value, skipped whole.
            guard let close = index(of: byte, in: input, from: found + 1, to: count) else { return nil }
            i = close + 1
        }
        return nil
    }

    /// The high bit set in each byte of `word` that equals `byte` (exact for the lowest one).
    @inline(__always)
    private static func hasByte(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        let x = word ^ (0x0101_0101_0101_0101 &* UInt64(byte))
        return (x &- 0x0101_0101_0101_0101) & ~x & 0x8080_8080_8080_8080
    }

    /// The first `byte` in `input[from..<end]` (memchr: values and text are skipped a word at a time).
    @inline(__always)
    static func index(of byte: UInt8, in input: UnsafeBufferPointer<UInt8>, from: Int, to end: Int) -> Int? {
        guard from < end, let base = input.baseAddress, let found = memchr(base + from, Int32(byte), end - from) else {
            return nil
        }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    private func doctype(_ input: UnsafeBufferPointer<UInt8>, at position: Int, final: Bool) throws -> Int? {
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
        return try waiting(final, input, position)
    }

    // MARK: Tags

    private mutating func flushText(_ delegate: any XMLStreamDelegate) {
        guard !text.isEmpty else { return }
        text.withUnsafeBufferPointer { delegate.xmlText($0) }
        text.removeAll(keepingCapacity: true)
    }

    /// Long text runs go to the delegate as they grow, so a huge CDATA section is not held twice.
    private mutating func flushIfNeeded(_ delegate: any XMLStreamDelegate) {
        if text.count > 1 << 16 { flushText(delegate) }
    }

    private mutating func startTag(_ tag: UnsafeBufferPointer<UInt8>, _ delegate: any XMLStreamDelegate) throws {
        var end = tag.count
        var selfClosing = false
        if end > 0, tag[end - 1] == UInt8(ascii: "/") {
            selfClosing = true
            end -= 1
        }
        var i = 0
        while i < end, !Self.isSpace(tag[i]) { i += 1 }
        let qualified = UnsafeBufferPointer(rebasing: tag[0..<i])
        // The attributes are read when the delegate asks; only namespace declarations now.
        let rest = UnsafeBufferPointer(rebasing: tag[i..<end])
        var declared = 0
        if Self.mayDeclare(rest) {
            Self.forEachAttribute(in: rest) { span in
                if let prefix = Self.declaredPrefix(rest, span) {
                    bindings.append(
                        Binding(prefix: prefix, uri: Self.decodeAttribute(UnsafeBufferPointer(rebasing: rest[span.value]))))
                    declared += 1
                }
                return false
            }
        }
        guard open.count < Self.maxDepth else { throw XMLStreamError.tooDeep(Self.maxDepth) }
        if declared > 0 { scope += 1 }
        var number = -1
        if lastStart >= 0, lastStart < follows.count {
            let guess = Int(follows[lastStart])
            if guess >= 0, written.bytes(guess, equal: qualified) { number = guess }
        }
        if number < 0 {
            number = written.number(qualified, adding: true)
            if lastStart >= 0, number >= 0 {
                while follows.count <= lastStart { follows.append(-1) }
                follows[lastStart] = Int32(number)
            }
        }
        lastStart = number
        let symbol = resolve(number, qualified)
        attributes.tag = rest
        if !rest.isEmpty { attributes.bindings = bindings }
        open.append(Open(written: Int32(number), symbol: Int32(symbol), bindings: Int32(declared)))
        delegate.xmlStart(symbol >= 0 ? names[symbol] : unnumbered[unnumbered.count - 1].name, attributes: attributes)
        if selfClosing { close(explicit: true, delegate) }
    }

    /// Whether a tag's attributes may hold a namespace declaration: a quick look for "xmlns".
    private static func mayDeclare(_ rest: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        while let x = index(of: UInt8(ascii: "x"), in: rest, from: i, to: rest.count - 4) {
            if rest[x + 1] == UInt8(ascii: "m"), rest[x + 2] == UInt8(ascii: "l"), rest[x + 3] == UInt8(ascii: "n"),
                rest[x + 4] == UInt8(ascii: "s")
            {
                return true
            }
            i = x + 1
        }
        return false
    }

    /// Calls `body` with each attribute in `tag` (the bytes after a tag's name): name="value",
    /// name='value', name=value, or a bare name; until it returns true.
    static func forEachAttribute(in tag: UnsafeBufferPointer<UInt8>, _ body: (XMLAttributes.Span) -> Bool) {
        let end = tag.count
        var i = 0
        while i < end {
            while i < end, isSpace(tag[i]) { i += 1 }
            let nameStart = i
            var colon = -1
            while i < end, !isSpace(tag[i]), tag[i] != UInt8(ascii: "=") {
                if tag[i] == UInt8(ascii: ":"), colon < 0 { colon = i }
                i += 1
            }
            guard i > nameStart else {
                i += 1
                continue
            }
            let name = nameStart..<i
            while i < end, isSpace(tag[i]) { i += 1 }
            var value = i..<i
            if i < end, tag[i] == UInt8(ascii: "=") {
                i += 1
                while i < end, isSpace(tag[i]) { i += 1 }
                if i < end, tag[i] == 0x22 || tag[i] == 0x27 {
                    let valueStart = i + 1
                    i = index(of: tag[i], in: tag, from: valueStart, to: end) ?? end
                    value = valueStart..<i
                    i += 1
                } else {
                    let valueStart = i
                    while i < end, !isSpace(tag[i]) { i += 1 }
                    value = valueStart..<i
                }
            }
            if body(XMLAttributes.Span(name: name, colon: colon, value: value)) { return }
        }
    }

    /// The prefix an `xmlns` or `xmlns:prefix` attribute declares ("" for the default), or nil.
    static func declaredPrefix(_ tag: UnsafeBufferPointer<UInt8>, _ span: XMLAttributes.Span) -> String? {
        guard tag[span.name.lowerBound] == UInt8(ascii: "x") else { return nil }
        let bytes = UnsafeBufferPointer(rebasing: tag[span.name])
        if span.colon < 0 { return bytes.elementsEqual(xmlns) ? "" : nil }
        guard span.colon == span.name.lowerBound + 5, bytes[0..<6].elementsEqual(xmlnsColon) else { return nil }
        return String(decoding: bytes[6...], as: UTF8.self)
    }

    private mutating func endTag(_ tag: UnsafeBufferPointer<UInt8>, _ delegate: any XMLStreamDelegate) {
        var end = tag.count
        while end > 0, Self.isSpace(tag[end - 1]) { end -= 1 }
        let qualified = UnsafeBufferPointer(rebasing: tag[0..<end])
        // Most end tags close the innermost element: compared as bytes, no hashing.
        if let innermost = open.last, innermost.written >= 0, written.bytes(Int(innermost.written), equal: qualified) {
            close(explicit: true, delegate)
            return
        }
        let number = written.number(qualified, adding: false)
        // An end tag closes its element and any left open inside it; one that matches nothing
        // open is ignored.
        let index: Int?
        if number >= 0 {
            index = open.lastIndex { $0.written == number }
        } else if let position = unnumbered.lastIndex(where: { qualified.elementsEqual($0.written) }) {
            // The unnumbered names' element: counted from the innermost.
            var seen = unnumbered.count - 1 - position
            index = open.lastIndex {
                guard !$0.listed else { return false }
                seen -= 1
                return seen < 0
            }
        } else {
            index = nil
        }
        guard let index else { return }
        while open.count > index { close(explicit: open.count == index + 1, delegate) }
    }

    /// Closes the innermost element.
    private mutating func close(explicit: Bool, _ delegate: any XMLStreamDelegate) {
        let element = open.removeLast()
        unbind(Int(element.bindings))
        if element.listed {
            delegate.xmlEnd(names[Int(element.symbol)], explicit: explicit)
        } else {
            let name = unnumbered.removeLast().name
            delegate.xmlEnd(element.symbol >= 0 ? names[Int(element.symbol)] : name, explicit: explicit)
        }
    }

    private mutating func unbind(_ count: Int) {
        guard count > 0 else { return }
        bindings.removeLast(count)
        scope += 1
    }

    private static let xmlns = Array("xmlns".utf8)
    private static let xmlnsColon = Array("xmlns:".utf8)

    /// The symbol of the element name written as `qualified` (numbered `number`, or -1) with the
    /// bindings in scope, or -1; an element without both numbers has its name pushed on `unnumbered`.
    private mutating func resolve(_ number: Int, _ qualified: UnsafeBufferPointer<UInt8>) -> Int {
        if number >= 0, number < resolved.count, resolved[number].scope == scope, resolved[number].symbol >= 0 {
            return Int(resolved[number].symbol)
        }
        var name: XMLName
        if let colon = qualified.firstIndex(of: UInt8(ascii: ":")) {
            let prefix = String(decoding: qualified[..<colon], as: UTF8.self)
            name = XMLName(
                namespace: Self.lookup(prefix, in: bindings), prefix: prefix,
                local: String(decoding: qualified[(colon + 1)...], as: UTF8.self))
        } else {
            // Unprefixed elements are in the default namespace.
            name = XMLName(
                namespace: Self.lookup("", in: bindings), prefix: "", local: String(decoding: qualified, as: UTF8.self))
        }
        let key = (name.namespace ?? "") + " " + name.qualified
        let symbol: Int
        if let known = symbols[key] {
            symbol = known
        } else if symbols.count < Self.maxSymbols {
            symbol = symbols.count
            symbols[key] = symbol
            name.symbol = symbol
            names.append(name)
        } else {
            symbol = -1
        }
        if number >= 0 {
            while resolved.count <= number { resolved.append((-1, -1)) }
            resolved[number] = (scope, Int32(symbol))
        }
        if number < 0 || symbol < 0 { unnumbered.append((Array(qualified), name)) }
        return symbol
    }

    static func lookup(_ prefix: String, in bindings: [Binding]) -> String? {
        for binding in bindings.reversed() where binding.prefix == prefix { return binding.uri.isEmpty ? nil : binding.uri }
        return prefix == "xml" ? "http://www.w3.org/XML/1998/namespace" : nil
    }

    static func decodeAttribute(_ value: UnsafeBufferPointer<UInt8>) -> String {
        guard let base = value.baseAddress, memchr(base, Int32(amp), value.count) != nil else {
            return String(decoding: value, as: UTF8.self)
        }
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

/// Byte strings numbered in the order first seen (open addressing, FNV-1a): a tag's name is
/// found without making a String or an Array of it.
struct NameTable {
    private var slots = [Int32](repeating: -1, count: 256)
    private var hashes: [UInt32] = []
    private var ranges: [Range<Int>] = []
    private var storage: [UInt8] = []

    /// The number of `bytes`, adding it when `adding` and there is room; -1 when it has none.
    mutating func number(_ bytes: UnsafeBufferPointer<UInt8>, adding: Bool) -> Int {
        let hash = Self.hash(bytes)
        let mask = slots.count - 1
        var slot = Int(hash) & mask
        while true {
            let number = Int(slots[slot])
            if number < 0 { break }
            if hashes[number] == hash, self.bytes(number, equal: bytes) { return number }
            slot = (slot + 1) & mask
        }
        guard adding, hashes.count < XMLStream.maxSymbols else { return -1 }
        let number = hashes.count
        hashes.append(hash)
        ranges.append(storage.count..<(storage.count + bytes.count))
        storage.append(contentsOf: bytes)
        slots[slot] = Int32(number)
        if hashes.count * 2 > slots.count { grow() }
        return number
    }

    /// Eight bytes at a time (names are short: one to three words).
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
        guard let base = bytes.baseAddress else { return 0 }
        let count = bytes.count
        var hash = 0x9E37_79B9_7F4A_7C15 ^ UInt64(count)
        var i = 0
        while i + 8 <= count {
            hash = (hash ^ UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 32
            i += 8
        }
        var tail: UInt64 = 0
        while i < count {
            tail = tail << 8 | UInt64(base[i])
            i += 1
        }
        hash = (hash ^ tail) &* 0xFF51_AFD7_ED55_8CCD
        return UInt32(truncatingIfNeeded: hash ^ hash >> 32)
    }

    /// Whether name `number` is `bytes`.
    func bytes(_ number: Int, equal bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let range = ranges[number]
        guard range.count == bytes.count else { return false }
        guard range.count > 0, let other = bytes.baseAddress else { return true }
        return storage.withUnsafeBufferPointer { Self.equal($0.baseAddress! + range.lowerBound, other, range.count) }
    }

    /// memcmp for a few bytes, without the call.
    @inline(__always)
    private static func equal(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        var i = 0
        while i + 8 <= count {
            guard UnsafeRawPointer(a + i).loadUnaligned(as: UInt64.self) == UnsafeRawPointer(b + i).loadUnaligned(as: UInt64.self)
            else { return false }
            i += 8
        }
        while i < count {
            guard a[i] == b[i] else { return false }
            i += 1
        }
        return true
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        let mask = slots.count - 1
        for (number, hash) in hashes.enumerated() {
            var slot = Int(hash) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(number)
        }
    }
}
