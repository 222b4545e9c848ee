import FoundationEssentials
import JSONRPC
import MediaKit
import MediaStore

/// A YouTube channel someone subscribed to in another app, as its export names it.
struct SubscribedChannel: Equatable, Sendable {
    /// The channel's id: "UC" and 22 more characters.
    var id: String
    /// Empty when the export gave none.
    var title: String
    var artwork: String?

    /// The channel's Atom feed, as YouTube publishes one for every channel.
    var feed: String { "https://www.youtube.com/feeds/videos.xml?channel_id=\(id)" }

    /// The channel as the provider that knows its feed makes it (`itemID(forFeed:)`; the runtime
    /// names no provider), with its page and its feed (which `lists.export` writes as OPML), so
    /// a list works before the channel is fetched.
    func item(as itemID: ItemID) -> MediaItem {
        var item = MediaItem(
            id: itemID, title: title.isEmpty ? id : title, url: "https://www.youtube.com/channel/\(id)", artwork: artwork)
        item.feed = feed
        return item
    }

    /// `text` when it is a channel id: "UC" and 22 letters, digits, `-` or `_`.
    static func id(_ text: some StringProtocol) -> String? {
        let utf8 = text.utf8
        guard utf8.count == 24, utf8.starts(with: "UC".utf8),
            utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == 0x2D || $0 == 0x5F })
        else { return nil }
        return String(text)
    }

    /// The channel id of a YouTube channel address (`http(s)://(www.|m.)youtube.com/channel/UC…`).
    static func id(inURL text: String) -> String? {
        guard let components = URLComponents(string: DisplayText.trimmed(text)),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host?.lowercased(), host == "youtube.com" || host.hasSuffix(".youtube.com")
        else { return nil }
        let parts = components.path.split(separator: "/")
        guard parts.count >= 2, parts[0] == "channel" else { return nil }
        return id(parts[1])
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (0x30...0x39).contains(self) || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }
}

/// What a subscription export held: its channels, each once in the order the file lists them
/// (the first title kept), and what was left out and why.
struct SubscriptionImport {
    private(set) var channels: [SubscribedChannel] = []
    /// The first reasons why entries were left out (`maxReasons` of them), and how many more.
    private(set) var skipped: [String] = []
    private(set) var moreSkipped = 0
    private var seen = Set<String>()
    /// Whether the file has more channels than a list holds (reading then stops).
    private(set) var tooMany = false

    /// The reasons an answer gives: a file of a million bad rows is not a million reasons.
    static let maxReasons = 20

    mutating func skip(_ reason: String) {
        if skipped.count < Self.maxReasons { skipped.append(reason) } else { moreSkipped += 1 }
    }

    /// What was left out and why, with how many more like it.
    var reasons: [String] { skipped + (moreSkipped > 0 ? ["and \(moreSkipped) more entries left out"] : []) }

    mutating func add(id: String, title: String?, artwork: String? = nil) {
        guard !tooMany else { return }
        guard channels.count < MediaStore.listLimit || seen.contains(id) else {
            tooMany = true
            return
        }
        guard seen.insert(id).inserted else { return }
        let title = title.map { DisplayText.trimmed(DisplayText.clean($0)) } ?? ""
        channels.append(SubscribedChannel(id: id, title: title, artwork: artwork))
    }
}

/// The subscription exports of the apps people leave, read into YouTube channels: Google
/// Takeout's (`takeout`), NewPipe's (`newpipe`) and FreeTube's (`freetube`). Everything in them is
/// untrusted: an entry that names no channel is skipped and said why; a file that is not the
/// export at all is refused with what was expected.
enum SubscriptionExport {
    static func read(_ bytes: [UInt8], as format: ListImportFormat) throws -> SubscriptionImport {
        guard bytes.count <= OPMLReader.maxSize else { throw HostError.invalidArgument("the file is larger than 16 MB") }
        var result = SubscriptionImport()
        switch format {
        case .takeout: try takeout(bytes, into: &result)
        case .newpipe: try newPipe(bytes, into: &result)
        case .freetube: try freeTube(bytes, into: &result)
        case .opml, .json, .m3u: throw HostError.invalidArgument("\(format.rawValue) is not an app's subscriptions export")
        }
        guard !result.tooMany else {
            throw HostError.invalidArgument(
                "the file has more than \(MediaStore.listLimit) channels; a list holds \(MediaStore.listLimit) at most")
        }
        return result
    }

    /// `bytes` without a byte order mark and the white space around them.
    static func content(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        var content = bytes[...]
        if content.starts(with: [0xEF, 0xBB, 0xBF]) { content = content.dropFirst(3) }
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        while let first = content.first, isSpace(first) { content = content.dropFirst() }
        while let last = content.last, isSpace(last) { content = content.dropLast() }
        return content
    }

    /// The label of an entry in a reason: its name and its address, as much as it has.
    static func label(_ name: String?, _ url: String?) -> String {
        let name = name.map { DisplayText.trimmed(DisplayText.clean($0)) }.flatMap { $0.isEmpty ? nil : $0 }
        let url = url.map { URLRedaction.redact(DisplayText.clean($0)) }.flatMap { $0.isEmpty ? nil : $0 }
        switch (name, url) {
        case (let name?, let url?): return "\(name) (\(url))"
        case (let name?, nil): return name
        case (nil, let url?): return url
        case (nil, nil): return "an entry with no name"
        }
    }

    // MARK: Google Takeout

    static func takeoutError(_ problem: String) -> HostError {
        .invalidArgument(
            "this is not Google Takeout's YouTube subscriptions (\(problem)): give subscriptions.csv from the Takeout's "
                + "'YouTube and YouTube Music/subscriptions' folder (Channel Id, Channel Url, Channel Title, in your "
                + "language) or the older subscriptions.json")
    }

    /// Takeout's subscriptions.csv (since 2021), or the subscriptions.json it wrote before (YouTube
    /// API `youtube#subscription` objects); FreeTube's CSV and JSON exports are the same shapes.
    static func takeout(_ bytes: [UInt8], into result: inout SubscriptionImport) throws {
        let content = content(bytes)
        guard let first = content.first else { throw takeoutError("the file is empty") }
        if first == UInt8(ascii: "[") {
            try takeoutJSON(content, into: &result)
        } else if first == UInt8(ascii: "{") || first == UInt8(ascii: "<") {
            throw takeoutError(
                first == UInt8(ascii: "{") ? "it is a JSON object, as NewPipe's and FreeTube's exports are" : "it is XML")
        } else {
            try takeoutCSV(bytes, into: &result)
        }
    }

    /// The channel of a Takeout row: its first column, else the address in its second.
    static func channel(in row: CSVRow) -> String? {
        guard let first = row.fields.first else { return nil }
        return SubscribedChannel.id(DisplayText.trimmed(first))
            ?? row.fields.dropFirst().first.flatMap(SubscribedChannel.id(inURL:))
    }

    static func takeoutCSV(_ bytes: [UInt8], into result: inout SubscriptionImport) throws {
        // Row by row: a file of a million rows is never held whole.
        var first = true
        var rows = 0
        try CSVReader.forEachRow(bytes) { row in
            if first {
                first = false
                // The header is in the language of the account (`Channel Id`, `ID del canal`,
                // `Kanal-ID`), so columns are read by their place and the first row is passed over
                // whatever it says, unless it names a channel itself (a header taken off).
                if channel(in: row) == nil {
                    guard row.fields.count >= 3 else {
                        throw takeoutError(
                            "its first row has \(row.fields.count) column\(row.fields.count == 1 ? "" : "s"), not three")
                    }
                    return true
                }
            }
            rows += 1
            guard let id = channel(in: row) else {
                let text = DisplayText.clean(row.fields.joined(separator: ","))
                result.skip("line \(row.line) (\(text.prefix(80))): no YouTube channel id (UC…) in it")
                return true
            }
            result.add(id: id, title: row.fields.count > 2 ? row.fields[2] : nil)
            return !result.tooMany
        }
        if first { throw takeoutError("the file is empty") }
        if result.channels.isEmpty, rows > 0 { throw takeoutError("no row of it names a YouTube channel") }
    }

    static func takeoutJSON(_ content: ArraySlice<UInt8>, into result: inout SubscriptionImport) throws {
        let value: JSONValue
        do { value = try JSONParser.parse(Array(content)) } catch { throw takeoutError("it is not JSON: \(error)") }
        guard let entries = value.arrayValue else { throw takeoutError("it is not a list") }
        for (number, entry) in zip(1..., entries) {
            let snippet = entry["snippet"]
            let title = snippet?["title"]?.stringValue
            guard let raw = snippet?["resourceId"]?["channelId"]?.stringValue else {
                result.skip("entry \(number) (\(label(title, nil))): no snippet.resourceId.channelId")
                continue
            }
            guard let id = SubscribedChannel.id(raw) else {
                result.skip(
                    "entry \(number) (\(label(title, nil))): \(DisplayText.clean(raw)) is not a YouTube channel id")
                continue
            }
            let thumbnails = snippet?["thumbnails"]
            let artwork = ["high", "medium", "default"].lazy.compactMap { thumbnails?[$0]?["url"]?.stringValue }.first
            result.add(id: id, title: title, artwork: artwork)
        }
        if result.channels.isEmpty, !entries.isEmpty {
            let none = entries.count == 1 ? "its one entry has no channel" : "none of its \(entries.count) entries has a channel"
            throw takeoutError("\(none) at snippet.resourceId.channelId")
        }
    }

    // MARK: NewPipe

    /// NewPipe's services by `service_id` (NewPipeExtractor's ServiceList); 0 is YouTube.
    static let newPipeServices = [1: "SoundCloud", 2: "media.ccc.de", 3: "PeerTube", 4: "Bandcamp"]

    static func newPipeError(_ problem: String) -> HostError {
        .invalidArgument(
            "this is not NewPipe's subscriptions export (\(problem)): expected JSON like {\"app_version\":…,"
                + "\"subscriptions\":[{\"service_id\":0,\"url\":…,\"name\":…}]}; export it again from NewPipe "
                + "(Subscriptions, ⋮, Export to), or give the format this file is in")
    }

    /// NewPipe's subscriptions.json (and FreeTube's "Export NewPipe"): YouTube's channels (service
    /// 0) are taken, other services' are skipped with their name.
    static func newPipe(_ bytes: [UInt8], into result: inout SubscriptionImport) throws {
        let content = content(bytes)
        guard !content.isEmpty else { throw newPipeError("the file is empty") }
        let value: JSONValue
        do { value = try JSONParser.parse(Array(content)) } catch { throw newPipeError("it is not JSON: \(error)") }
        try newPipe(value, into: &result)
    }

    static func newPipe(_ value: JSONValue, into result: inout SubscriptionImport) throws {
        guard value.objectValue != nil else { throw newPipeError("it is not a JSON object") }
        guard let entries = value["subscriptions"]?.arrayValue else { throw newPipeError("it has no \"subscriptions\" list") }
        for (number, entry) in zip(1..., entries) {
            let name = entry["name"]?.stringValue
            let url = entry["url"]?.stringValue
            let service = entry["service_id"]?.intValue
            if let service, service != 0 {
                let what = newPipeServices[service].map { "a \($0) channel" } ?? "a channel of NewPipe's service \(service)"
                result.skip("\(label(name, url)): \(what); only YouTube channels are imported")
                continue
            }
            guard let url else {
                result.skip("entry \(number) (\(label(name, nil))): no url")
                continue
            }
            guard let id = SubscribedChannel.id(inURL: url) else {
                result.skip(
                    "\(label(name, url)): not a YouTube channel address (https://www.youtube.com/channel/UC…); find the channel "
                        + "with search and add it")
                continue
            }
            result.add(id: id, title: name)
        }
    }

    // MARK: FreeTube

    static func freeTubeError(_ problem: String) -> HostError {
        .invalidArgument(
            "this is not a FreeTube subscriptions export (\(problem)): give the .db that FreeTube's Settings, Data "
                + "Settings, Export Subscriptions writes (a JSON profile a line), or its YouTube CSV or NewPipe export")
    }

    /// FreeTube's subscriptions: the profiles export (`freetube-subscriptions-….db`, one profile a
    /// line, the main one `_id` "allChannels"; every profile's channels, each once, the main
    /// profile's first), the older one-channel-a-line `.db`, and its other exports (YouTube CSV and
    /// JSON, NewPipe), which are read as what they copy.
    static func freeTube(_ bytes: [UInt8], into result: inout SubscriptionImport) throws {
        let content = content(bytes)
        guard let first = content.first else { throw freeTubeError("the file is empty") }
        if first == UInt8(ascii: "[") { return try takeoutJSON(content, into: &result) }
        guard first == UInt8(ascii: "{") else {
            let rows = CSVReader.rows(Array(content))
            guard rows.prefix(3).contains(where: { channel(in: $0) != nil }) else {
                throw freeTubeError("it is neither JSON nor a CSV of channels")
            }
            return try takeoutCSV(Array(content), into: &result)
        }
        // A file of one line is one JSON value: a profile, or FreeTube's NewPipe export.
        if let whole = try? JSONParser.parse(Array(content)), whole["_id"] == nil, whole["subscriptions"] != nil {
            return try newPipe(whole, into: &result)
        }
        var main: [JSONValue] = []
        var others: [JSONValue] = []
        var read = 0
        let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
        for (number, line) in zip(1..., text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)) {
            let line = Self.content(Array(line))
            guard !line.isEmpty else { continue }
            guard let value = try? JSONParser.parse(Array(line)), value.objectValue != nil else {
                result.skip("line \(number): not a JSON object")
                continue
            }
            if let subscriptions = value["subscriptions"]?.arrayValue {
                if value["_id"]?.stringValue == "allChannels" { main += subscriptions } else { others += subscriptions }
                read += 1
            } else if let id = value["channelId"] {
                // The format before profiles: the line is the channel.
                var channel: [String: JSONValue] = ["id": id]
                channel["name"] = value["channelName"]
                channel["thumbnail"] = value["channelThumbnail"]
                others.append(.object(channel))
                read += 1
            } else {
                result.skip("line \(number): neither a profile (subscriptions) nor a channel (channelId)")
            }
        }
        guard read > 0 else { throw freeTubeError("no line of it is a profile or a channel") }
        // A channel in several profiles is one channel, and one bad id one reason.
        var refused = Set<String>()
        for entry in main + others {
            let raw = entry["id"]?.stringValue
            guard let id = raw.flatMap({ SubscribedChannel.id($0) }) else {
                let name = entry["name"]?.stringValue
                guard refused.insert("\(raw ?? "")\u{0}\(name ?? "")").inserted else { continue }
                let shown = raw.map { "\(DisplayText.clean($0).prefix(80))" } ?? "none"
                result.skip("\(label(name, nil)): its id (\(shown)) is not a YouTube channel id")
                continue
            }
            result.add(id: id, title: entry["name"]?.stringValue, artwork: entry["thumbnail"]?.stringValue)
        }
    }
}
