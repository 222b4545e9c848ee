import Foundation
import Synchronization

/// Writes a show's feed the way real podcast hosts do, quirks included: several date and
/// duration formats, CDATA and escaped HTML, missing guids, relative links, Atom, ISO-8859-1.
struct FeedWriter {
    let catalogue: PodcastCatalogue
    /// e.g. "http://127.0.0.1:8080/podcasts"
    let base: String

    func feed(for show: PodcastCatalogue.Show) -> (body: Data, contentType: String) {
        switch show.format {
        case .rss: return (Data(rss(show, encoding: "UTF-8").utf8), "application/rss+xml; charset=utf-8")
        case .latin1:
            let text = rss(show, encoding: "ISO-8859-1")
            return (text.data(using: .isoLatin1, allowLossyConversion: true) ?? Data(), "application/rss+xml; charset=iso-8859-1")
        case .atom: return (Data(atom(show).utf8), "application/atom+xml; charset=utf-8")
        }
    }

    func artwork(_ show: PodcastCatalogue.Show) -> String { "\(base)/artwork/\(show.id).png" }
    func mediaURL(_ show: PodcastCatalogue.Show, _ number: Int) -> String {
        "\(base)/media/\(show.id)/\(mediaFile(show, number))"
    }
    func mediaFile(_ show: PodcastCatalogue.Show, _ number: Int) -> String {
        show.id == PodcastCatalogue.radioShowID ? "\(number).wav" : "\(number).mp3"
    }
    func mediaType(_ show: PodcastCatalogue.Show) -> String {
        show.id == PodcastCatalogue.radioShowID ? "audio/wav" : "audio/mpeg"
    }

    private func rss(_ show: PodcastCatalogue.Show, encoding: String) -> String {
        var out = rssHeader(show, encoding: encoding)
        for number in stride(from: show.episodeCount, through: 1, by: -1) { out += rssItem(show, number) }
        return out + rssFooter
    }

    /// Some hosts put a newline (or several) before the XML declaration; real clients read it.
    func rssHeader(_ show: PodcastCatalogue.Show, encoding: String) -> String {
        let leading = show.id % 13 == 0 ? "\n" : ""
        return leading + """
            <?xml version="1.0" encoding="\(encoding)"?>
            <rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" xmlns:podcast="https://podcastindex.org/namespace/1.0" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:atom="http://www.w3.org/2005/Atom">
            <channel>
            <title>\(escape(show.title))</title>
            <link>\(base)/shows/\(show.id)/</link>
            <atom:link href="\(base)/feeds/\(show.id).xml" rel="self" type="application/rss+xml"/>
            <language>en-us</language>
            <itunes:author>\(escape(show.author))</itunes:author>
            <itunes:summary>\(escape(show.summary))</itunes:summary>
            <description><![CDATA[<p>\(show.summary)</p><p>Café crème &amp; croissants, every week.</p>]]></description>
            <itunes:image href="\(artwork(show))"/>
            <image><url>\(artwork(show))</url><title>\(escape(show.title))</title><link>\(base)/shows/\(show.id)/</link></image>
            <itunes:category text="\(escape(show.genre.name))"/>
            <itunes:explicit>false</itunes:explicit>

            """
    }

    func rssItem(_ show: PodcastCatalogue.Show, _ number: Int) -> String {
        let episode = catalogue.episode(show, number)
        var out = "<item>\n<title>\(escape(episode.title))</title>\n"
        if episode.hasGUID { out += "<guid isPermaLink=\"false\">\(show.id)-ep-\(number)</guid>\n" }
        out += "<pubDate>\(Self.pubDate(episode.published, variant: number))</pubDate>\n"
        if let duration = Self.duration(episode.duration, variant: number) {
            out += "<itunes:duration>\(duration)</itunes:duration>\n"
        }
        out += "<itunes:season>\((number - 1) / 10 + 1)</itunes:season>\n<itunes:episode>\(number)</itunes:episode>\n"
        // Every fourth enclosure is relative to the feed, as some hosts write them.
        let media = number % 4 == 0 ? "../media/\(show.id)/\(mediaFile(show, number))" : mediaURL(show, number)
        out += "<enclosure url=\"\(media)\" length=\"\(number % 9 == 0 ? 0 : episode.size)\" type=\"\(mediaType(show))\"/>\n"
        out += "<link>episodes/\(number)</link>\n"
        out += "<description>\(description(show, number))</description>\n"
        if show.id == PodcastCatalogue.longShowID {
            // Long-running shows write long notes: about 2.5 KB an episode.
            out +=
                "<content:encoded><![CDATA["
                + String(repeating: "<p>Show notes with links, credits and chapters. </p>", count: 40) + "]]></content:encoded>\n"
        }
        if number % 5 == 0 { out += "<itunes:image href=\"\(base)/artwork/\(show.id)-\(number).png\"/>\n" }
        if number % 7 == 0 {
            out += "<podcast:transcript url=\"\(base)/transcripts/\(show.id)/\(number).vtt\" type=\"text/vtt\"/>\n"
        }
        if show.id == PodcastCatalogue.radioShowID { out += radioChapters(show, number) }
        return out + "</item>\n"
    }

    let rssFooter = "</channel>\n</rss>\n"

    /// The radio's tones carry chapters as real feeds do: tone 3 a Podcasting 2.0 chapters file,
    /// tone 2 Podlove Simple Chapters in the item (with its namespace declared on the element,
    /// as Podlove Publisher writes it), a soundbite and a second format (the same tone, as a
    /// player that chose it can tell by its URL).
    private func radioChapters(_ show: PodcastCatalogue.Show, _ number: Int) -> String {
        switch number {
        case 3:
            return "<podcast:chapters url=\"\(base)/chapters/\(show.id)/3.json\" type=\"application/json+chapters\"/>\n"
                + "<podcast:transcript url=\"\(base)/transcripts/\(show.id)/3.vtt\" type=\"text/vtt\" language=\"en\" rel=\"captions\"/>\n"
                + "<podcast:transcript url=\"\(base)/transcripts/\(show.id)/3.json\" type=\"application/json\" language=\"en\"/>\n"
        case 2:
            return """
                <psc:chapters version="1.2" xmlns:psc="http://podlove.org/simple-chapters">
                <psc:chapter start="00:00:00" title="Start"/>
                <psc:chapter start="00:00:40" title="Forty seconds in"/>
                <psc:chapter start="00:01:20.500" title="Eighty and a half" href="https://example.invalid/80"/>
                </psc:chapters>
                <podcast:transcript url="\(base)/transcripts/\(show.id)/2.de.vtt" type="text/vtt" language="de"/>
                <podcast:transcript url="\(base)/transcripts/\(show.id)/2.srt" type="application/x-subrip" language="en-US"/>
                <podcast:soundbite startTime="40" duration="6">The tone at forty</podcast:soundbite>
                <podcast:alternateEnclosure type="audio/wav" bitrate="64000" title="Low">
                <podcast:source uri="\(mediaURL(show, number))?bitrate=64"/>
                </podcast:alternateEnclosure>

                """
        default:
            return ""
        }
    }

    /// The transcripts the feeds name, in the formats real hosts serve: the radio's tone 3 as
    /// word-level Podcasting 2.0 JSON and as WebVTT captions, tone 2 as SRT (English) and WebVTT
    /// (German); every seventh episode of the other shows as WebVTT with voices.
    func transcript(_ show: PodcastCatalogue.Show, file: String) -> (body: String, type: String)? {
        let radio = show.id == PodcastCatalogue.radioShowID
        switch (radio, file) {
        case (true, "3.json"):
            let words: [(String, Double)] = [
                ("The", 0.4), ("tone", 0.7), ("rises", 1.0), ("slowly.", 1.4), ("Listen", 31), ("for", 31.3), ("the", 31.5),
                ("long", 31.7), ("middle", 32), ("of", 32.3), ("the", 32.4), ("sine", 32.6), ("wave.", 33),
            ]
            let segments = words.map { word, start in
                "{\"speaker\":\"Ada\",\"startTime\":\(start),\"endTime\":\(start + 0.25),\"body\":\"\(word)\"}"
            }
            let closing =
                "{\"speaker\":\"Grace\",\"startTime\":151,\"endTime\":155,\"body\":\"Closing words: thank you for listening.\"}"
            return (
                "{\"version\":\"1.0.0\",\"segments\":[" + (segments + [closing]).joined(separator: ",") + "]}", "application/json"
            )
        case (true, "3.vtt"):
            return (
                "WEBVTT\n\n00:00.400 --> 00:01.600\n<v Ada>The tone rises slowly.\n\n00:31.000 --> 00:33.300\n"
                    + "<v Ada>Listen for the long middle of the sine wave.\n\n02:31.000 --> 02:35.000\n"
                    + "<v Grace>Closing words: thank you for listening.\n", "text/vtt"
            )
        case (true, "2.srt"):
            return (
                "1\n00:00:01,000 --> 00:00:04,000\nHost: Forty seconds of a steady tone\nbegin here.\n\n"
                    + "2\n00:00:40,000 --> 00:00:43,500\nthen the pitch changes, as promised.\n", "application/x-subrip"
            )
        case (true, "2.de.vtt"):
            return ("WEBVTT\n\n00:01.000 --> 00:04.000\n<v Moderatorin>Hier beginnt ein gleichmäßiger Ton.\n", "text/vtt")
        case (false, _):
            guard file.hasSuffix(".vtt"), let number = Int(file.dropLast(4)), (1...show.episodeCount).contains(number),
                number % 7 == 0
            else { return nil }
            let episode = catalogue.episode(show, number)
            let title = episode.title
            return (
                "WEBVTT\n\n00:00:01.000 --> 00:00:06.000\n<v \(show.author)>Welcome to \(show.title). \(title).\n\n"
                    + "00:00:06.000 --> 00:00:12.500\n<v \(show.author)>Today we talk about \(title.lowercased()) with a guest.\n\n"
                    + "00:01:00.000 --> 00:01:08.000\n<v Guest>Thank you for having me; this is episode \(number).\n",
                "text/vtt"
            )
        default:
            return nil
        }
    }

    /// Tone 3's chapters file (180 s): four chapters and a picture change kept out of the table of
    /// contents, as the namespace's example has one.
    static func radioChaptersFile(base: String) -> [String: Any] {
        [
            "version": "1.2.0",
            "chapters": [
                ["startTime": 0, "title": "Opening"],
                ["startTime": 30, "title": "The long middle", "url": "https://example.invalid/middle"],
                ["startTime": 60, "toc": false, "img": "\(base)/artwork/\(PodcastCatalogue.radioShowID).png"],
                ["startTime": 90, "title": "Part three"],
                ["startTime": 150.5, "title": "Closing"],
            ],
        ]
    }

    private func description(_ show: PodcastCatalogue.Show, _ number: Int) -> String {
        switch number % 3 {
        case 0:
            return
                "<![CDATA[<p>In episode \(number), \(show.author) &amp; guests dig in.</p><ul><li>Notes &lt;here&gt;</li><li><a href=\"https://example.invalid/\(number)\">Links</a></li></ul>]]>"
        case 1:
            return
                "&lt;p&gt;Episode \(number) of \(escape(show.title)): &amp;quot;quoted&amp;quot; &amp;amp; more.&lt;/p&gt;&lt;br/&gt;Second line."
        default:
            return "Plain notes for episode \(number) &amp; nothing else."
        }
    }

    private func atom(_ show: PodcastCatalogue.Show) -> String {
        var out = """
            <?xml version="1.0" encoding="utf-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd">
            <title>\(escape(show.title))</title>
            <subtitle>\(escape(show.summary))</subtitle>
            <author><name>\(escape(show.author))</name></author>
            <link rel="alternate" href="\(base)/shows/\(show.id)/"/>
            <link rel="self" href="\(base)/feeds/\(show.id).xml"/>
            <icon>\(artwork(show))</icon>
            <id>urn:mediahost:sandbox:\(show.id)</id>
            <updated>\(Self.iso(show.releaseDate))</updated>

            """
        for number in stride(from: show.episodeCount, through: 1, by: -1) {
            let episode = catalogue.episode(show, number)
            out += """
                <entry>
                <title>\(escape(episode.title))</title>
                <id>urn:mediahost:sandbox:\(show.id):\(number)</id>
                <published>\(Self.iso(episode.published))</published>
                <updated>\(Self.iso(episode.published))</updated>
                <summary type="html">&lt;p&gt;Atom notes for episode \(number) &amp;amp; friends.&lt;/p&gt;</summary>
                <link rel="alternate" href="episodes/\(number)"/>
                <link rel="enclosure" href="\(mediaURL(show, number))" length="\(episode.size)" type="audio/mpeg"/>
                <itunes:duration>\(episode.duration)</itunes:duration>
                </entry>

                """
        }
        out += "</feed>\n"
        return out
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(
            of: ">", with: "&gt;")
    }

    static func iso(_ date: Date) -> String {
        Self.formatters.withLock { $0.iso.string(from: date) }
    }

    /// An HTTP date (Last-Modified).
    static func httpDate(_ date: Date) -> String {
        Self.formatters.withLock { $0.rfc822[5].string(from: date) }
    }

    /// The RFC 822 variants real feeds use.
    static func pubDate(_ date: Date, variant: Int) -> String {
        Self.formatters.withLock { $0.rfc822[variant % 5].string(from: date) }
    }

    /// Made once: a formatter takes longer to make than a feed item to write (a 450-episode feed
    /// took 80 ms, most of it making formatters, where a static file server takes 1). Used under
    /// the lock: Foundation's formatters are not safe to share between threads.
    private struct Formatters: @unchecked Sendable {
        let iso = ISO8601DateFormatter()
        /// The five pubDate variants, then the HTTP date.
        let rfc822: [DateFormatter] = [
            ("EEE, dd MMM yyyy HH:mm:ss Z", 0), ("EEE, dd MMM yyyy HH:mm:ss 'GMT'", 0), ("dd MMM yyyy HH:mm:ss 'EST'", -5),
            ("EEE, d MMM yyyy HH:mm Z", 0), ("EEE, dd MMM yyyy HH:mm:ss 'PDT'", -7), ("EEE, dd MMM yyyy HH:mm:ss 'GMT'", 0),
        ].map { format, hours in
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = hours == 0 ? TimeZone(identifier: "GMT") : TimeZone(secondsFromGMT: hours * 3600)
            formatter.dateFormat = format
            return formatter
        }
    }
    private static let formatters = Mutex(Formatters())

    /// Seconds, MM:SS, H:MM:SS, or nothing.
    static func duration(_ seconds: Int, variant: Int) -> String? {
        switch variant % 4 {
        case 0: return String(seconds)
        case 1: return String(format: "%d:%02d", seconds / 60, seconds % 60)
        case 2: return String(format: "%d:%02d:%02d", seconds / 3600, seconds / 60 % 60, seconds % 60)
        default: return nil
        }
    }
}
