import Foundation
import MediaKit
import Testing

/// Writes down everything a stream reports, one line per event.
private final class Recorder: XMLStreamDelegate {
    var events: [String] = []
    private var text: [UInt8] = []

    func xmlStart(_ name: XMLName, attributes: XMLAttributes) {
        flush()
        let listed = attributes.all.map { "\($0.name.namespace ?? "-")|\($0.name.qualified)=\($0.value)" }
        events.append("start \(name.namespace ?? "-") \(name.qualified) [\(listed.joined(separator: ", "))]")
    }

    func xmlEnd(_ name: XMLName, explicit: Bool) {
        flush()
        events.append("end \(name.namespace ?? "-") \(name.qualified)\(explicit ? "" : " (implicit)")")
    }

    func xmlText(_ bytes: UnsafeBufferPointer<UInt8>) { text += bytes }

    private func flush() {
        guard !text.isEmpty else { return }
        events.append("text " + String(decoding: text, as: UTF8.self))
        text.removeAll()
    }

    /// Reads `document` in chunks of `size` bytes (all at once when nil).
    static func read(_ document: [UInt8], chunks size: Int? = nil) throws -> [String] {
        let recorder = Recorder()
        let stream = XMLStream(delegate: recorder)
        var offset = 0
        let size = size ?? max(1, document.count)
        while offset < document.count {
            try stream.feed(Array(document[offset..<min(document.count, offset + size)]))
            offset += size
        }
        try stream.finish()
        recorder.flush()
        return recorder.events
    }
}

@Suite struct XMLStreamTests {
    /// Text with a reference every few bytes and no '<' for megabytes (an OPML title of
    /// invalid references, read whole): each reference looked ahead to the next '<' again, so
    /// 5 MB took 15 s. Read once, and each reference costs what a valid one costs. The deadline
    /// is a generous bound against that regression, not a speed goal.
    @Test func referencesInLongTextAreReadInOnePass() throws {
        let count = 1_000_000
        let references = ["&#xD800;x", "&#99999999999;", "&#65;y", "&#0;"]
        var body = ""
        var expected = ""
        for i in 0..<count {
            let reference = references[i % references.count]
            body += reference
            switch i % references.count {
            case 0: expected += "&#xD800;x"
            case 1: expected += "&#99999999999;"
            case 2: expected += "Ay"
            default: expected += "\u{0}"
            }
        }
        let document = Array("<opml><head><title>\(body)</title></head></opml>".utf8)
        let started = ContinuousClock.now
        let events = try Recorder.read(document)
        #expect(ContinuousClock.now - started < .seconds(15))
        #expect(events.count == 7)
        #expect(events.dropFirst(3).first == "text " + expected)
    }

    static let mixed = Array(
        """
        <?xml version="1.0"?>
        <!DOCTYPE rss>
        <rss xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns="urn:default">
          <!-- a comment with <tags> and "quotes" -->
          <channel a='x>y' b="1 &amp; 2" c=bare d>
            <title>Fish &amp; chips &lt;3 &#233;&#x41; &nbsp;&unknown; & a</title>
            <itunes:image href="https://example.com/a.jpg"/>
            <media:content url="u" xmlns:media="http://search.yahoo.com/mrss/"/>
            <description><![CDATA[<p>raw ]] > text</p>]]></description>
            <item><title>unclosed</item>
            <br/><x:y xmlns:x="urn:x" x:z="1">in x</x:y>
            stray < and </nothing> end
          </channel>
        </rss>
        """.utf8)

    @Test func aDocumentReadsTheSameInChunksOfEverySize() throws {
        let whole = try Recorder.read(Self.mixed)
        #expect(whole.contains("start urn:default channel [-|a=x>y, -|b=1 & 2, -|c=bare, -|d=]"))
        #expect(whole.contains("text Fish & chips <3 éA  &unknown; & a"), "&nbsp; reads as a space")
        #expect(whole.contains("start http://search.yahoo.com/mrss/ media:content [-|url=u]"))
        #expect(whole.contains("start urn:x x:y [urn:x|x:z=1]"))
        #expect(whole.contains("end urn:default title (implicit)"), "the item's title is closed by </item>")
        #expect(whole.contains("text <p>raw ]] > text</p>"))
        for size in 1...64 {
            #expect(try Recorder.read(Self.mixed, chunks: size) == whole, "chunks of \(size) bytes")
        }
    }

    /// A construct far larger than a chunk is finished across many of them, and read the same.
    @Test func aConstructLargerThanManyChunks() throws {
        let big = String(repeating: "0123456789abcdef", count: 1 << 14)
        let document = Array("<a><!-- \(big) --><![CDATA[\(big)]]><b c=\"\(big)\">x</b></a>".utf8)
        let whole = try Recorder.read(document)
        #expect(whole.count == 6)
        for size in [1000, 4095, 4096, 70_000] {
            #expect(try Recorder.read(document, chunks: size) == whole, "chunks of \(size) bytes")
        }
    }

    /// Beyond the names the stream numbers, names are read as strings: elements still open and
    /// close in the same order, end tags still find their element.
    @Test func thousandsOfDistinctNames() throws {
        var document = "<root>"
        for n in 0..<5000 { document += "<n\(n) xmlns=\"urn:\(n % 3)\"><inner>\(n)</inner></n\(n)>" }
        document += "<deep5000><deep5001><deep5002>x</deep5001>y</deep5000></root>"
        let bytes = Array(document.utf8)
        let whole = try Recorder.read(bytes)
        #expect(whole.filter { $0.hasPrefix("start") }.count == 5000 * 2 + 4)
        #expect(whole.contains("end urn:1 n4999"))
        #expect(whole.contains("end - deep5002 (implicit)"))
        #expect(Array(whole.suffix(4)) == ["end - deep5001", "text y", "end - deep5000", "end - root"])
        #expect(try Recorder.read(bytes, chunks: 777) == whole)
    }

    @Test func entityDeclarationsAreRefusedInAnyChunking() throws {
        let document = Array(#"<!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>"#.utf8)
        for size in [nil, 1, 7] as [Int?] {
            #expect(throws: XMLStreamError.declaresEntities) { try Recorder.read(document, chunks: size) }
        }
    }
}
