import Basics
import FoundationEssentials
import Glibc
import JSONRPC

/// The short text beside a tool's structured result: what a model can quote (title, by, date,
/// id), a line an item; other results as their JSON.
enum MCPText {
    static func summary(_ value: JSONValue) -> String {
        if let items = value["items"]?.arrayValue ?? value.arrayValue, items.allSatisfy(isItem) {
            var lines = items.prefix(100).map(line)
            if items.count > 100 { lines.append("… and \(items.count - 100) more") }
            if items.isEmpty { lines.append("nothing") }
            for error in value["errors"]?.arrayValue ?? [] {
                lines.append("(\(error["provider"]?.stringValue ?? "?") failed: \(error["message"]?.stringValue ?? ""))")
            }
            if let next = value["next"]?.stringValue { lines.append("more: call again with cursor \"\(next)\"") }
            return lines.joined(separator: "\n")
        }
        if isItem(value) {
            let podcast = value["namespace"].map(podcastLines) ?? []
            return ([line(value)] + podcast).joined(separator: "\n")
                + (value["summary"]?.stringValue.map { "\n\n" + String($0.prefix(2000)) } ?? "")
        }
        return String(decoding: JSONWriter.bytes(value), as: UTF8.self)
    }

    static func isItem(_ value: JSONValue) -> Bool { value["id"]?.stringValue != nil && value["title"]?.stringValue != nil }

    /// `Title — by (date) [id]`, with a download's state when it has one.
    static func line(_ item: JSONValue) -> String {
        var text = item["title"]?.stringValue ?? ""
        if let by = item["creator"]?.stringValue ?? item["subtitle"]?.stringValue, !by.isEmpty { text += " — " + by }
        if let date = item["published"]?.stringValue { text += " (\(date.prefix(10)))" }
        text += " [\(item["id"]?.stringValue ?? "")]"
        if let state = item["download"]?["state"]?.stringValue ?? item["state"]?.stringValue { text += " " + state }
        return text
    }

    /// What a feed says in the Podcasting 2.0 namespace, a line each: who speaks, the season,
    /// the soundbites (`play` with `soundbite`), where to support the show, what it recommends.
    static func podcastLines(_ namespace: JSONValue) -> [String] {
        var lines: [String] = []
        func list(_ name: String, _ values: [String]) {
            guard !values.isEmpty else { return }
            lines.append(
                "\(name): " + values.prefix(20).joined(separator: "; ")
                    + (values.count > 20 ? "; and \(values.count - 20) more" : ""))
        }
        if let live = namespace["live"], let status = live["status"]?.stringValue {
            lines.append(
                "live: "
                    + ([status]
                    + [live["start"]?.stringValue.map { "from " + $0 }, live["end"]?.stringValue.map { "to " + $0 }]
                    .compactMap { $0 }).joined(separator: " "))
        }
        if let name = namespace["seasonName"]?.stringValue { lines.append("season: " + name) }
        list(
            "people",
            (namespace["people"]?.arrayValue ?? []).compactMap { person in
                person["name"]?.stringValue.map { "\($0) (\(person["role"]?.stringValue ?? "host"))" }
            })
        list(
            "soundbites (player.open with soundbite K)",
            (namespace["soundbites"]?.arrayValue ?? []).enumerated().map { index, bite in
                let start = bite["start"]?.doubleValue ?? 0
                let length = bite["duration"]?.doubleValue ?? 0
                return "\(index + 1). \(clock(start))–\(clock(start + length))"
                    + (bite["title"]?.stringValue.map { " " + $0 } ?? "")
            })
        list(
            "funding",
            (namespace["funding"]?.arrayValue ?? []).compactMap { link in
                link["url"]?.stringValue.map { url in (link["text"]?.stringValue).map { "\($0) \(url)" } ?? url }
            })
        list(
            "recommends",
            (namespace["podroll"]?.arrayValue ?? []).compactMap { show in
                show["title"]?.stringValue ?? show["feedURL"]?.stringValue
                    ?? show["feedGuid"]?.stringValue.map { "podcast:guid " + $0 }
            })
        if let guid = namespace["guid"]?.stringValue { lines.append("podcast guid: " + guid) }
        return lines
    }

    /// 1:02:03 or 2:03.
    static func clock(_ seconds: Double) -> String {
        let total = Int(max(0, seconds).rounded())
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(printf: "%d:%02d:%02d", hours, minutes, rest) : String(printf: "%d:%02d", minutes, rest)
    }

    static func bytes(_ count: Double) -> String {
        count >= 1_000_000 ? String(printf: "%.1f MB", count / 1_000_000) : String(printf: "%.0f kB", count / 1000)
    }

    static func imageType(_ data: Data) -> String {
        let head = [UInt8](data.prefix(12))
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if head.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if head.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if head.count >= 12, head[0..<4] == [0x52, 0x49, 0x46, 0x46], head[8..<12] == [0x57, 0x45, 0x42, 0x50] {
            return "image/webp"
        }
        return "application/octet-stream"
    }
}
