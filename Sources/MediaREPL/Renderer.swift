import Basics
import FoundationEssentials
import Glibc
import HostAPI
import MediaKit

/// Turns results into text for people: numbered rows, details, tables.
struct Renderer {
    var color: Bool
    /// Columns available, for wrapping text.
    var width: Int = 100
    /// The terminal's width, read at each use (so a resized window is followed); nil when the
    /// output is not a terminal, where rows keep their natural length.
    var terminalWidth: (@Sendable () -> Int)?

    /// The usable columns of the terminal on `fd` (one less than its width, so a full row never
    /// wraps by itself); 80 when it cannot say.
    static func terminalColumns(_ fd: Int32) -> Int {
        var size = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col >= 20 { return Int(size.ws_col) - 1 }
        return 79
    }

    /// The rows of the terminal on `fd`; 24 when it cannot say.
    static func terminalRows(_ fd: Int32) -> Int {
        var size = winsize()
        if ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_row >= 2 { return Int(size.ws_row) }
        return 24
    }

    /// The columns rows are fitted to, when on a terminal.
    var fit: Int? { terminalWidth?() }

    private func style(_ code: String, _ text: String) -> String { color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    func dim(_ text: String) -> String { style("2", text) }
    func bold(_ text: String) -> String { style("1", text) }
    func star(_ text: String) -> String { style("33", text) }
    func red(_ text: String) -> String { style("31", text) }

    /// Text from the network with terminal control sequences made harmless.
    static func clean(_ text: String, keepNewlines: Bool = false) -> String {
        let cleaned = DisplayText.clean(text, keepNewlines: keepNewlines)
        guard cleaned.unicodeScalars.contains("\u{200D}") else { return cleaned }
        // An emoji ZWJ sequence (👩‍💻) is one picture in kitty and two in xterm and tmux: its
        // parts are shown apart, the same width everywhere, so a row is never wider than counted.
        var scalars = String.UnicodeScalarView()
        for scalar in cleaned.unicodeScalars {
            if scalar == "\u{200D}", let previous = scalars.last,
                previous.properties.isEmoji || previous == "\u{FE0F}" || previous.properties.isEmojiModifier
            {
                continue
            }
            scalars.append(scalar)
        }
        return String(scalars)
    }

    func truncate(_ text: String, _ limit: Int) -> String {
        guard text.count > limit, limit > 1 else { return text }
        return String(text.prefix(limit - 1)) + "…"
    }

    /// Columns a character takes in a terminal: 2 for wide East Asian characters and emoji, 0
    /// for zero-width and combining ones, else 1.
    static func columns(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if character.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation }) { return 2 }
        // Text-style emoji made graphic by VS16 (❤️).
        if character.unicodeScalars.contains("\u{FE0F}"), first.properties.isEmoji { return 2 }
        switch first.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F,
            0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            break
        }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: return 1
        }
    }

    /// Columns a text takes in a terminal.
    static func columns(_ text: String) -> Int { text.reduce(0) { $0 + columns($1) } }

    /// `text` cut to `limit` columns, with "…" where it was cut.
    static func fit(_ text: String, _ limit: Int) -> String {
        guard columns(text) > limit else { return text }
        guard limit > 1 else { return limit == 1 ? "…" : "" }
        var out = ""
        var used = 0
        for character in text {
            let width = columns(character)
            if used + width > limit - 1 { break }
            out.append(character)
            used += width
        }
        return out + "…"
    }

    /// `text` padded with spaces to `width` columns.
    static func pad(_ text: String, _ width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - columns(text)))
    }

    /// Numbered rows of items. With `fit` (a terminal), each row fits its width: the title (and
    /// subtitle) cut by display width, the kind, duration and date in an aligned column. With
    /// `grouped` (a search across providers), a heading before each provider's items.
    /// - Parameter followed: what is new from followed favorites, where anything not played is new.
    func items(_ page: Page, grouped: Bool = false, followed: Bool = false) -> String {
        guard !page.items.isEmpty else { return dim("(no items)") }
        // What every row shares (a show's episodes all name the show and are all episodes) is
        // said once, in a heading, so the rows keep their room for what tells them apart.
        let shared = Self.shared(page.items)
        // The title keeps at least 24 columns; the column beside it drops the kind, then the
        // progress, before anything would be cut (a date cut to "2025-10…" says nothing).
        let metaRoom = fit.map { max(0, $0 - 5 - 2 - 24) } ?? .max
        let rows = page.items.map { item -> (item: MediaItem, meta: String) in
            var kind: String? = shared.kind == nil ? item.kind.rawValue : nil
            var progress = Self.progress(item, followed: followed)
            func meta() -> String {
                var parts = [Self.live(item), progress, kind, item.isShort ? "short" : nil].compactMap { $0 }
                if let duration = item.duration { parts.append(Self.duration(duration)) }
                if let published = item.published { parts.append(String(published.prefix(10))) }
                return parts.joined(separator: " · ")
            }
            if Self.columns(meta()) > metaRoom { kind = nil }
            if Self.columns(meta()) > metaRoom { progress = nil }
            return (item, meta())
        }
        var lines: [String] = []
        if !grouped, let heading = Self.heading(shared, count: page.items.count) {
            lines.append(dim("     " + (fit.map { Self.fit(heading, max(8, $0 - 5)) } ?? heading)))
        }
        var provider: String?
        let metaWidth = fit.map { _ in min(rows.map { Self.columns($0.meta) }.max() ?? 0, metaRoom) } ?? 0
        // A show's seasons as headings, where its episodes span more than one and the headings
        // fit the terminal's height with the rows (the first rows are never pushed off the
        // screen: at 80x24 a page of 20 leaves room for one).
        let seasons = grouped ? [] : page.items.map { $0.extra?["season"] }
        let changes = zip(seasons, [nil] + seasons).filter { $0.0 != nil && $0.0 != $0.1 }.count
        let room = fit == nil ? Int.max : Self.terminalRows(1) - (rows.count + 3)
        let bySeason = Set(seasons.compactMap { $0 }).count > 1 && changes <= room
        var season: String?
        for (i, row) in rows.enumerated() {
            let item = row.item
            if grouped, item.id.provider != provider {
                provider = item.id.provider
                lines.append(bold(item.id.provider))
            }
            if bySeason, let number = item.extra?["season"], number != season {
                season = number
                let heading = "Season \(number)" + (item.namespace?.seasonName.map { ": " + Self.clean($0) } ?? "")
                lines.append("     " + bold(fit.map { Self.fit(heading, max(8, $0 - 5)) } ?? heading))
            }
            let favorite = item.favorite == true
            var line = String(printf: "%3d  ", i + 1)
            if let width = fit {
                let titleWidth = max(8, width - 5 - 2 - metaWidth - (favorite ? 2 : 0))
                let title = Self.fit(Self.clean(item.title), titleWidth)
                var used = Self.columns(title)
                line += title
                if let subtitle = item.subtitle, shared.subtitle == nil, titleWidth - used > 6 {
                    let rest = Self.fit(" — " + Self.clean(subtitle), titleWidth - used)
                    used += Self.columns(rest)
                    line += dim(rest)
                }
                // Right-aligned: the dates line up whatever comes before them (a duration or none).
                let meta = Self.fit(row.meta, metaWidth)
                line +=
                    String(repeating: " ", count: titleWidth - used + 2 + metaWidth - Self.columns(meta)) + dim(meta)
            } else {
                line += truncate(Self.clean(item.title), 60)
                if let subtitle = item.subtitle, shared.subtitle == nil {
                    line += dim(" — " + truncate(Self.clean(subtitle), 30))
                }
                line += "  " + dim(row.meta)
            }
            if favorite { line += " " + star("★") }
            lines.append(line)
        }
        var footer: [String] = []
        if let total = page.total { footer.append("\(total) in all") }
        if page.prev != nil { footer.append("`prev` for the previous page") }
        if page.next != nil { footer.append("`next` for more") }
        if !footer.isEmpty { lines.append(dim("     " + footer.joined(separator: " · "))) }
        return lines.joined(separator: "\n")
    }

    /// A live item's state, for its row.
    static func live(_ item: MediaItem) -> String? {
        switch item.namespace?.live?.status {
        case "live"?: "live now"
        case "pending"?: "upcoming live"
        case "ended"?: "live, ended"
        default: nil
        }
    }

    /// The subtitle and the kind every item of a listing has, when there are several.
    static func shared(_ items: [MediaItem]) -> (subtitle: String?, kind: MediaKind?) {
        guard items.count > 1, let first = items.first else { return (nil, nil) }
        let subtitle = first.subtitle.flatMap { text in items.allSatisfy { $0.subtitle == text } ? text : nil }
        let kind = items.allSatisfy { $0.kind == first.kind } ? first.kind : nil
        return (subtitle, kind)
    }

    /// "The Slow Engine 3 · episodes": what every row shares, said once.
    static func heading(_ shared: (subtitle: String?, kind: MediaKind?), count: Int) -> String? {
        // Every kind's plural is its name and an s (videos, episodes, posts...).
        let kind = shared.kind.map { $0.rawValue + "s" }
        let parts = [shared.subtitle.map { clean($0) }, kind].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " · ")
    }

    /// New, in progress ("at 12:30") or played, for what plays: episodes always (and everything
    /// in what is new from followed favorites), others once played.
    static func progress(_ item: MediaItem, followed: Bool = false) -> String? {
        if item.played == true { return "played" }
        if let position = item.position { return "at " + duration(position) }
        return item.kind == .episode || followed ? "new" : nil
    }

    /// An item's details. A post's text under a content warning is shown in its place only
    /// with `reveal`.
    /// The Podcasting 2.0 elements, a line each (several lines under one name for lists).
    private func podcastFields(_ namespace: PodcastNamespace, _ field: (String, String?, (String) -> String) -> Void) {
        func each(_ name: String, _ values: [String]) {
            for (index, value) in values.prefix(20).enumerated() { field(index == 0 ? name : "", value, { $0 }) }
            if values.count > 20 { field("", "and \(values.count - 20) more", dim) }
        }
        if let live = namespace.live {
            let when = [live.start.map { "from " + Self.when($0) }, live.end.map { "to " + Self.when($0) }].compactMap { $0 }
            field("live", ([live.status == "live" ? "live now" : live.status] + when).joined(separator: " "), red)
        }
        if let name = namespace.seasonName { field("season is", name, { $0 }) }
        if let display = namespace.episodeDisplay { field("episode is", display, { $0 }) }
        if let people = namespace.people {
            each("people", people.map { "\($0.name), \($0.role)" + ($0.group == "cast" ? "" : " (\($0.group))") })
        }
        if let bites = namespace.soundbites {
            each(
                "soundbites",
                bites.enumerated().map { index, bite in
                    "\(index + 1). \(Self.duration(bite.start)) for \(Self.duration(bite.duration))"
                        + (bite.title.map { "  " + $0 } ?? "")
                })
            field("", "`play <n> --soundbite K` plays one alone", dim)
        }
        if let funding = namespace.funding {
            each("funding", funding.map { [$0.text, $0.url].compactMap { $0 }.joined(separator: "  ") })
        }
        if let podroll = namespace.podroll {
            each("recommends", podroll.map { $0.title ?? $0.feedURL ?? "podcast:guid " + $0.feedGuid })
        }
        if let trailers = namespace.trailers { each("trailers", trailers.map { "\($0.title)  \($0.url)" }) }
        if let alternates = namespace.alternateEnclosures {
            each(
                "formats",
                alternates.map { alternate in
                    [
                        alternate.type, alternate.bitrate.map { "\(Int($0 / 1000)) kb/s" }, alternate.height.map { "\($0)p" },
                        alternate.language, alternate.title,
                    ].compactMap { $0 }.joined(separator: " ")
                })
        }
        if let license = namespace.license {
            field("license", [license.text, license.url].compactMap { $0 }.joined(separator: "  "), { $0 })
        }
        if let location = namespace.location { field("location", location.name, { $0 }) }
        if let locked = namespace.locked {
            field(
                "locked",
                locked.locked ? "yes: not to be imported elsewhere" + (locked.owner.map { " (owner \($0))" } ?? "") : "no", { $0 }
            )
        }
        if let value = namespace.value {
            let names = value.recipients.compactMap(\.name)
            field(
                "value",
                "\(value.type) \(value.method) to \(value.recipients.count) recipient\(value.recipients.count == 1 ? "" : "s")"
                    + (names.isEmpty ? "" : " (" + names.prefix(3).joined(separator: ", ") + ")") + "; said, not paid", { $0 })
        }
        if let guid = namespace.guid { field("show guid", guid, { $0 }) }
    }

    func detail(_ item: MediaItem, reveal: Bool = false) -> String {
        var lines = [bold(Self.clean(item.title))]
        // Values are cleaned before they are styled, so the style's own escapes survive.
        func field(_ name: String, _ value: String?, style: (String) -> String = { $0 }) {
            guard let value, !value.isEmpty else { return }
            // Names line up in a column of 10; a longer one is never cut.
            let label = name.count >= 10 ? name : name.padded(toLength: 10)
            lines.append("  " + dim(label) + " " + style(Self.clean(value)))
        }
        field("id", item.id.description)
        field("kind", item.kind.rawValue)
        field("from", item.subtitle)
        field("by", item.creator)
        field("published", item.published.map { Self.when($0) })
        field("duration", item.duration.map(Self.duration))
        field("url", item.url)
        field("artwork", item.artwork)
        field("feed", item.feed)
        if let stats = item.stats, !stats.isEmpty {
            field(
                "stats",
                stats.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.groupedThousands)" }.joined(separator: " · "))
        }
        if let enclosure = item.enclosure {
            field(
                "media",
                [enclosure.url, enclosure.type, enclosure.length.map { Self.bytes($0) }].compactMap { $0 }.joined(separator: "  ")
            )
        }
        // Content warnings and sensitive media have their own lines below.
        for (key, value) in (item.extra ?? [:]).sorted(by: { $0.key < $1.key })
        where !Self.isLink(value) && key != "contentWarning" && key != "sensitive" {
            switch key {
            case "chapters": field(key, Self.chaptersField(value))
            case "transcript" where value.hasPrefix("http"): field(key, "yes (`transcript <n>` shows it)")
            default: field(key, value)
            }
        }
        if let namespace = item.namespace { podcastFields(namespace, field) }
        if item.played == true {
            field("played", "yes")
        } else if let position = item.position {
            field("played", "stopped at \(Self.duration(position))" + (item.duration.map { " of \(Self.duration($0))" } ?? ""))
        }
        if let download = item.download {
            field(
                "download",
                [download.state, download.path.map { fit == nil ? $0 : Self.home($0) }].compactMap { $0 }.joined(separator: " "))
        }
        if item.favorite == true { field("favorite", "★ yes", style: star) } else { field("favorite", "no") }
        if let lists = item.lists, !lists.isEmpty { field("lists", lists.joined(separator: ", ")) }
        if item.extra?["sensitive"] == "true" { field("media", "sensitive: not previewed", style: red) }
        var hidden = false
        if let warning = item.extra?["contentWarning"] {
            lines.append("")
            lines.append("  " + red("content warning: ") + Self.clean(warning))
            if !reveal, item.summary?.isEmpty == false {
                hidden = true
                lines.append("  " + dim("the text is hidden: `show \(item.id) --reveal` shows it"))
            }
        }
        if !hidden, let summary = item.summary, !summary.isEmpty {
            lines.append("")
            if let entities = item.entities, !entities.isEmpty {
                // Wrapping would move entity offsets: posts are short, keep their own lines.
                lines.append(
                    highlighted(summary, entities: entities).split(separator: "\n", omittingEmptySubsequences: false).map {
                        "  " + $0
                    }.joined(separator: "\n"))
            } else {
                lines.append(Self.wrap(Self.clean(summary, keepNewlines: true), width: min(fit ?? width, 100), indent: "  "))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A post's text with its entities coloured (hashtags cyan, mentions magenta, links blue and
    /// underlined) and media markers after it.
    func highlighted(_ text: String, entities: [TextEntity]) -> String {
        let scalars = Array(text.unicodeScalars)
        var out = ""
        var position = 0
        func plain(_ range: Range<Int>) -> String {
            Self.clean(String(String.UnicodeScalarView(scalars[range.clamped(to: 0..<scalars.count)])), keepNewlines: true)
        }
        for entity in entities.filter({ $0.type != .media }).sorted(by: { $0.start < $1.start })
        where entity.start >= position && entity.end <= scalars.count {
            out += plain(position..<entity.start)
            let span = plain(entity.start..<entity.end)
            switch entity.type {
            case .hashtag: out += style("36", span)
            case .mention: out += style("35", span)
            case .url: out += style("34;4", span)
            case .media: out += span
            }
            position = entity.end
        }
        out += plain(position..<scalars.count)
        let markers = entities.filter { $0.type == .media }.map { Self.clean($0.text) }
        if !markers.isEmpty { out += "\n" + markers.joined(separator: " ") }
        return out
    }

    static let sectionHeadings: [(TextEntity.EntityType, String)] = [
        (.media, "Media"), (.url, "URLs"), (.hashtag, "Hashtags"), (.mention, "Users"),
    ]

    /// A post's entities in the order its sections number them: row n is element n - 1.
    static func sectionRows(_ entities: [TextEntity]) -> [TextEntity] {
        sectionHeadings.flatMap { type, _ in entities.filter { $0.type == type } }
    }

    /// How many chapters an item says it has: a count (a feed's Podlove chapters), the lines of
    /// a video's chapters, or a chapters file not fetched yet.
    static func chaptersField(_ value: String) -> String {
        if let count = Int(value) { return "\(count) (`chapters <n>` lists them)" }
        if value.hasSuffix(Self.withinLength) { return "\(value) (`chapters <n>` lists them)" }
        if value.hasPrefix("http") { return "in a chapters file (`chapters <n>` lists them)" }
        let count = value.split(whereSeparator: \.isNewline).count
        return "\(count) (`chapters <n>` lists them)"
    }

    static let withinLength = "within its length"

    /// How many chapters a chapters file has (as `show` says it): "9", or "9 in its file, 4
    /// within its length" when some start past the end of the media.
    static func chapterCount(_ chapters: MediaChapters.Response, duration: Double?) -> String {
        let all = chapters.contents.count
        guard let duration, duration > 0 else { return String(all) }
        let within = chapters.contents.filter { $0.start < duration }.count
        return within == all ? String(all) : "\(all) in its file, \(within) \(withinLength)"
    }

    /// Whether an extra value names other items (a trailer, "youtube:video:a youtube:video:b").
    static func isLink(_ value: String) -> Bool {
        let words = value.split(separator: " ")
        return !words.isEmpty && words.allSatisfy { (try? ItemID(parsing: String($0))) != nil }
    }

    /// The items an item links to, from its extra fields, each once: "trailer", "trailer 2", "channel".
    static func links(of item: MediaItem) -> [(label: String, id: ItemID)] {
        var seen = Set<ItemID>()
        var links: [(label: String, id: ItemID)] = []
        for (key, value) in (item.extra ?? [:]).sorted(by: { $0.key < $1.key }) where isLink(value) {
            let label = key.hasSuffix("s") && value.contains(" ") ? String(key.dropLast()) : key
            for word in value.split(separator: " ") {
                guard let id = try? ItemID(parsing: String(word)), seen.insert(id).inserted else { continue }
                let count = links.filter { $0.label == label || $0.label.hasPrefix(label + " ") }.count
                links.append((count == 0 ? label : "\(label) \(count + 1)", id))
            }
        }
        return links
    }

    /// The numbered rows under details, counting from `first`: linked items, then a post's
    /// sections (media, links, hashtags, users).
    func rows(links: [(label: String, id: ItemID)], entities: [TextEntity], from first: Int = 1) -> String {
        var lines: [String] = []
        var number = first - 1
        if !links.isEmpty {
            lines.append(bold("Linked"))
            let width = links.map(\.label.count).max() ?? 0
            for link in links {
                number += 1
                lines.append(
                    String(printf: "%3d  ", number) + link.label.padded(toLength: width) + "  "
                        + dim(link.id.description))
            }
        }
        for (type, heading) in Self.sectionHeadings {
            let matching = entities.filter { $0.type == type }
            guard !matching.isEmpty else { continue }
            lines.append(bold(heading))
            for entity in matching {
                number += 1
                let text = type == .media || type == .url ? entity.value : entity.text
                lines.append(String(printf: "%3d  ", number) + Self.clean(text))
            }
        }
        return lines.joined(separator: "\n")
    }

    func categories(_ categories: [MediaCategory]) -> String {
        guard !categories.isEmpty else { return dim("(no categories)") }
        return categories.enumerated().map { i, category in
            String(printf: "%3d  ", i + 1) + Self.clean(category.name) + dim("  " + category.id)
        }.joined(separator: "\n")
    }

    func providers(_ providers: [ProvidersList.ProviderInfo]) -> String {
        guard !providers.isEmpty else {
            return dim("(no providers are registered in this build)")
        }
        // The id is what is typed: never cut ("podcastindex" is 12 long).
        let idWidth = max(10, providers.map(\.id.count).max() ?? 0)
        return providers.enumerated().map { i, p in
            var line =
                String(printf: "%3d  ", i + 1) + bold(p.id.padded(toLength: idWidth)) + " " + p.name
            line += dim("  " + p.kinds.map(\.rawValue).joined(separator: ", "))
            line += p.configured ? "" : "  " + red("not configured: ") + (p.configure ?? "")
            if let notes = p.notes { line += "\n       " + dim(notes) }
            return line
        }.joined(separator: "\n")
    }

    func history(_ records: [SearchRecord]) -> String {
        guard !records.isEmpty else { return dim("(no searches yet)") }
        return records.enumerated().map { i, record in
            var line = String(printf: "%3d  ", i + 1) + Self.clean(record.query)
            let scope = [record.provider ?? "all providers", record.kind?.rawValue].compactMap { $0 }.joined(separator: ", ")
            line += dim("  \(scope) · \(Self.when(record.at))")
            return line
        }.joined(separator: "\n")
    }

    /// Seconds east of UTC of the local time zone at `date`.
    static func localUTCOffset(_ date: Date) -> Int {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return 0 }
        return parts.tm_gmtoff
    }

    /// A stored time (ISO 8601, UTC) for a person: relative when recent ("3 min ago"), else the
    /// local date and time.
    static func when(_ iso: String, now: Date = Date(), utcOffset: (Date) -> Int = localUTCOffset) -> String {
        guard let date = ISODate.parse(iso) else { return iso }
        let seconds = now.timeIntervalSince(date)
        switch seconds {
        case ..<(-60): break
        case ..<60: return "just now"
        case ..<3600: return "\(Int(seconds / 60)) min ago"
        case ..<(12 * 3600): return "\(Int(seconds / 3600)) h ago"
        default: break
        }
        // Local time as the C library keeps it (TZ, /etc/localtime): FoundationEssentials knows
        // only GMT.
        func local(_ date: Date) -> (year: Int, month: Int, day: Int, minutes: Int) {
            let seconds = Int(date.timeIntervalSince1970.rounded(.down)) + utcOffset(date)
            let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
            let (year, month, day) = HTTPDate.civil(fromDays: days)
            return (year, month, day, (seconds - days * 86_400) / 60)
        }
        let parts = local(date)
        let today = local(now)
        let time = String(printf: "%02d:%02d", parts.minutes / 60, parts.minutes % 60)
        if parts.year == today.year, parts.month == today.month, parts.day == today.day { return "today " + time }
        return String(printf: "%04d-%02d-%02d ", parts.year, parts.month, parts.day) + time
    }

    func config(_ entries: [ConfigEntry]) -> String {
        guard !entries.isEmpty else { return dim("(no settings)") }
        return entries.map { entry in
            var line = bold(entry.key) + " = " + (entry.value ?? dim("(unset)")) + dim("  [\(entry.source.rawValue)]")
            let summary =
                entry.summary + (entry.environment.isEmpty ? "" : " (env: \(entry.environment.joined(separator: ", ")))")
            line += "\n" + dim(fit.map { Self.wrap(summary, width: $0, indent: "    ") } ?? "    " + summary)
            if let note = entry.note { line += "\n" + (fit.map { Self.wrap(note, width: $0, indent: "    ") } ?? "    " + note) }
            return line
        }.joined(separator: "\n")
    }

    /// A path with the home folder as "~", which shortens most paths to fit a terminal.
    static func home(_ path: String, home: String? = ProcessInfo.processInfo.environment["HOME"]) -> String {
        guard let home, home.count > 1, path.hasPrefix(home + "/") else { return path }
        return "~" + path.dropFirst(home.count)
    }

    /// An error line on a terminal: wrapped at word boundaries, continuation lines indented.
    func message(_ text: String, labelColumns: Int) -> String {
        guard let columns = fit, labelColumns + Self.columns(text) > columns else { return text }
        let indent = String(repeating: " ", count: min(labelColumns, 20))
        let wrapped = Self.wrap(indent + text, width: columns, indent: indent)
        return String(wrapped.dropFirst(indent.count))
    }

    /// A message under a row, wrapped at word boundaries on a terminal.
    private func wrapped(_ text: String) -> String {
        guard let columns = fit else { return text }
        return Self.wrap(text, width: columns, indent: "       ").dropFirst(7).description
    }

    func downloads(_ downloads: [Download]) -> String {
        guard !downloads.isEmpty else { return dim("(no downloads)") }
        // The rate has a column of its own when any row has one, so titles line up.
        func rate(_ download: Download) -> String {
            guard download.state == .running, let speed = download.rate, speed > 0 else { return "" }
            return "\(Self.bytes(Int64(Int(finite: speed) ?? 0)))/s"
        }
        let rateWidth = downloads.map { Self.columns(rate($0)) }.max() ?? 0
        return downloads.enumerated().map { i, download in
            var line = String(printf: "%3d  ", i + 1) + download.state.rawValue.padded(toLength: 10)
            let size = download.total.map { Self.bytes($0) } ?? "?"
            let percent =
                download.total.map { $0 > 0 ? "\(Int(min(100, max(0, Double(download.bytes) * 100 / Double($0)))))%" : "" } ?? ""
            line +=
                " " + percent.padded(toLength: 5)
                + size.padded(toLength: 10)
            if rateWidth > 0 { line += " " + Self.pad(rate(download), rateWidth) }
            let title = Self.clean(download.title)
            line += "  " + (fit.map { Self.fit(title, max(10, $0 - Self.columns(line) - 2)) } ?? truncate(title, 50))
            if let error = download.error { line += "\n       " + red(wrapped(Self.clean(error))) }
            if download.state == .completed { line += "\n       " + dim(fit == nil ? download.path : Self.home(download.path)) }
            if let note = download.note { line += "\n       " + dim(wrapped(note)) }
            return line
        }.joined(separator: "\n")
    }

    func downloadLine(_ download: Download) -> String {
        var line = "\(download.state.rawValue): \(Self.clean(download.title))"
        if download.state == .completed { line += " → \(fit == nil ? download.path : Self.home(download.path))" }
        if let error = download.error { line += " (\(error))" }
        return line
    }

    static func duration(_ seconds: Double) -> String {
        let total = Int(finite: seconds.rounded()) ?? 0
        let (h, m, s) = (total / 3600, total / 60 % 60, total % 60)
        return h > 0 ? String(printf: "%d:%02d:%02d", h, m, s) : String(printf: "%d:%02d", m, s)
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(printf: "%.1f ", value) + units[unit]
    }

    static func wrap(_ text: String, width: Int, indent: String) -> String {
        var out: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = indent
            for word in paragraph.split(separator: " ") {
                if columns(line) + columns(String(word)) + 1 > width, line.count > indent.count {
                    out.append(line)
                    line = indent
                }
                line += (line.count > indent.count ? " " : "") + word
            }
            out.append(line)
        }
        return out.joined(separator: "\n")
    }
}
