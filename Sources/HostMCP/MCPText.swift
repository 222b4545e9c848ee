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
        if isItem(value) { return line(value) + (value["summary"]?.stringValue.map { "\n\n" + String($0.prefix(2000)) } ?? "") }
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
