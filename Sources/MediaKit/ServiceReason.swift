import Basics
import FoundationEssentials
import Glibc

/// The service's own reason for an error, from whichever error shape it used, so a person reads
/// "query must be provided" instead of "HTTP 422". Every provider's `error(for:)` starts here.
public enum ServiceReason {
    /// The reason in an error body, or nil when the body has none (empty, or not text).
    ///
    /// Shapes read: Google's `{"error":{"message"}}`, TMDB's `{"status_message"}` and
    /// `{"errors":["…"]}`, OAuth's and Mastodon's `{"error":"…","error_description"}`, X's
    /// problem details `{"detail","title"}` and `{"errors":[{"message"|"detail"}]}`, iTunes's
    /// `{"errorMessage"}`, a bare `{"message"}`; otherwise plain text or HTML, tags removed.
    public static func from(_ body: Data) -> String? {
        guard !body.isEmpty else { return nil }
        // Raw control characters make JSON invalid; a hostile or sloppy server sends them anyway.
        let json = Data(body.prefix(1 << 20).map { $0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D ? 0x20 : $0 })
        if let object = (try? JSONValue(parsing: json))?.plainValue as? [String: Any] {
            return fromJSON(object)
        }
        var text = String(decoding: body.prefix(16384), as: UTF8.self)
        guard !text.contains("\u{FFFD}") else { return nil }
        // An HTML page says why in its body; its head's title is often only the status.
        if let head = text.rangeIgnoringASCIICase(of: "<head"),
            let end = text.rangeIgnoringASCIICase(of: "</head>", from: head.upperBound)
        {
            text.removeSubrange(head.lowerBound..<end.upperBound)
        }
        text = String(text.prefix(2000))
        // A tag cut in two by that is no reason.
        if let open = text.lastIndex(of: "<"), !text[open...].contains(">") { text = String(text[..<open]) }
        let plain = HTMLText.plain(text).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        return shorten(plain)
    }

    private static func fromJSON(_ object: [String: Any]) -> String? {
        func text(_ value: Any?) -> String? {
            guard let string = value as? String else { return nil }
            let trimmed = string.trimming(.whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : shorten(HTMLText.plain(trimmed))
        }
        if let error = object["error"] as? [String: Any] {
            if let message = text(error["message"]) { return message }
            if let details = error["errors"] as? [[String: Any]],
                let message = details.lazy.compactMap({ text($0["message"]) }).first
            {
                return message
            }
        }
        if let description = text(object["error_description"]) {
            return text(object["error"]).map { "\($0): \(description)" } ?? description
        }
        for key in ["status_message", "errorMessage", "detail", "message", "error", "title"] {
            if let found = text(object[key]) { return found }
        }
        if let errors = object["errors"] as? [Any] {
            let messages = errors.compactMap { element -> String? in
                if let string = text(element) { return string }
                guard let entry = element as? [String: Any] else { return nil }
                return text(entry["message"]) ?? text(entry["detail"]) ?? text(entry["title"])
            }
            if !messages.isEmpty { return messages.prefix(3).joined(separator: "; ") }
        }
        return nil
    }

    private static func shorten(_ text: String) -> String? {
        let trimmed = text.trimming(.whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return nil }
        return DisplayText.cut(trimmed, to: 300)
    }
}

extension ProviderError {
    /// An answer with an error status the provider has no better word for: the service's own
    /// reason, never just the status again.
    public static func upstream(_ response: HTTPResponse) -> ProviderError {
        var reason = ServiceReason.from(response.body) ?? "no reason given"
        // A body that only repeats the status ("HTTP 500", "500 Internal Server Error") says nothing more.
        for prefix in ["HTTP/1.1 \(response.status)", "HTTP \(response.status)", "\(response.status)"]
        where reason.hasPrefix(prefix) {
            let rest = reason.dropFirst(prefix.count).drop { $0 == " " || $0 == ":" || $0 == "-" }
            reason = rest.isEmpty ? "no reason given" : String(rest)
            break
        }
        return .upstream(status: response.status, message: reason)
    }

    /// What an error status means from any service, as yt-dlp's `_download_json` makes an HTTP
    /// error its extractor's: 429 is a rate limit (its Retry-After, else `reset`), 401 and 403 a
    /// refusal, 404 a missing thing, anything else the service's failure; each with the service's
    /// own reason (`reason`, else what its body says). A provider says only what differs.
    public static func from(_ response: HTTPResponse, reason: String? = nil, reset: Double? = nil) -> ProviderError {
        let said = reason ?? ServiceReason.from(response.body) ?? "no reason given"
        switch response.status {
        case 429: return .rateLimited(retryAfter: response.retryAfter ?? reset)
        case 401, 403: return .unauthorized(said)
        case 404: return .notFound(said)
        default: return reason.map { .upstream(status: response.status, message: $0) } ?? .upstream(response)
        }
    }
}
