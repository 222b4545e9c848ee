import Basics
import FoundationEssentials
import Glibc
import JSONRPC
import MediaHost
import MediaKit
import MediaStore
import Synchronization

/// One episode action as the sync APIs carry it.
struct EpisodeAction: Sendable, Equatable {
    var podcast: String
    var episode: String
    var guid: String?
    var action: String
    var at: Date
    var started: Int?
    var position: Int?
    var total: Int?
    var device: String?

    /// Matches an action the server sent back with one sent: same episode, action, second and
    /// position (how a sync interrupted after the server took it finds what not to send again).
    var key: String { "\(episode)\u{1}\(action)\u{1}\(Int(at.timeIntervalSince1970))\u{1}\(position ?? -1)" }
}

/// Subscription changes of one device (or, on Nextcloud, the account) since a cursor.
struct SubscriptionChanges: Sendable {
    var add: [String]
    var remove: [String]
    var timestamp: Int64
}

/// The HTTP side of a sync server, in either dialect. Every request carries HTTP Basic (both
/// accept it on every call); on gpodder.net the session cookie from `login.json` goes too, as
/// its clients do.
final class SyncServer: Sendable {
    let account: SyncAccount
    let http: any HTTPClient
    private let cookie = Mutex<String?>(nil)

    /// The largest answer read: 10,000 actions are 3 MB; far beyond is a server gone wrong.
    static let maxBody = 64 << 20
    /// Actions per upload: mygpo handles more than 100 in the background and then answers
    /// without `update_urls`.
    static let uploadChunk = 100
    /// mygpo's page of episode actions.
    static let pageSize = 1000
    /// The longest URL taken from a server (a feed's is a few hundred bytes).
    static let maxURL = 4096

    init(account: SyncAccount, http: any HTTPClient) {
        self.account = account
        self.http = http
        secrets = Redactor()
        secrets.update(SecretForms.password(account.password, user: account.username))
    }

    // MARK: Requests

    private func url(_ path: String, query: [String: String] = [:]) throws -> URL {
        var base = account.server.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var text = base + path
        if !query.isEmpty {
            text +=
                "?"
                + query.sorted { $0.key < $1.key }.map { "\($0.key)=\(QueryEncoding.encode($0.value))" }
                .joined(separator: "&")
        }
        guard let url = URL(string: text) else { throw failure(.invalidArgument("the sync server's URL \(base) is not valid")) }
        return url
    }

    private var userPath: String { account.username.percentEncoded(allowing: .urlPathSegment) }

    /// The password in every form it travels in (itself, the Basic header's base64; each also
    /// JSON- and percent-encoded): masked in whatever the server says back.
    private let secrets: Redactor

    /// A failure to report; a server that echoes the password back (in an error page, in any
    /// of its forms) does not get it on the screen, in a log or in the store.
    private func failure(_ error: ProviderError) -> ProviderFailure {
        ProviderFailure(provider: "sync", error: error.redacting { secrets.redact($0) })
    }

    /// Sends a request; any answer but 2xx is an error that says what to do.
    @discardableResult
    private func send(_ method: String, _ url: URL, body: JSONValue? = nil) async throws -> JSONValue? {
        let credentials = Array("\(account.username):\(account.password)".utf8)
        var headers = [
            "Authorization": "Basic " + Data(credentials).base64EncodedString(), "Accept": "application/json",
            "User-Agent": "mediahost (+https://github.com/mediahost)",
        ]
        if let cookie = cookie.withLock({ $0 }) { headers["Cookie"] = cookie }
        var data: Data?
        if let body {
            headers["Content-Type"] = "application/json"
            data = Data(JSONWriter.bytes(body))
        }
        let response: HTTPResponse
        do {
            response = try await http.send(
                HTTPRequest(method: method, url: url, headers: headers, body: data, maxBodySize: Self.maxBody))
        } catch let error as HTTPClientError {
            throw failure(
                error.kind == .bodyTooLarge
                    ? .invalidResponse("the sync server's answer is larger than \(Self.maxBody >> 20) MB")
                    : .network("cannot reach the sync server: \(error.detail)"))
        }
        switch response.status {
        case 200..<300:
            break
        case 401, 403:
            throw failure(
                .unauthorized(
                    "the sync server refused \(account.username)'s password (\(response.status)); run `login sync` again"
                        + (account.dialect == .nextcloud ? " with an app password (Nextcloud: Settings, Security)" : "")))
        case 404 where account.dialect == .nextcloud:
            throw failure(
                .notFound("\(account.server.absoluteString) has no gpoddersync app (404); install it in Nextcloud's apps"))
        case 429:
            throw failure(.rateLimited(retryAfter: response.retryAfter))
        default:
            throw failure(.upstream(response))
        }
        if let setCookie = response.header("set-cookie"), let session = setCookie.split(separator: ";").first,
            session.hasPrefix("sessionid=")
        {
            cookie.withLock { $0 = String(session) }
        }
        guard !response.body.isEmpty else { return nil }
        do {
            return try JSONParser.parse(Array(response.body))
        } catch {
            throw failure(.invalidResponse("the sync server's answer is not JSON: \(error)"))
        }
    }

    // MARK: The account

    /// Checks the account: gpodder.net's login (which also starts a session), or a Nextcloud
    /// call that reads nothing.
    func login() async throws {
        switch account.dialect {
        case .gpodder:
            try await send("POST", url("/api/2/auth/\(userPath)/login.json"))
        case .nextcloud:
            let answer = try await send(
                "GET", url(Self.nextcloudBase + "/subscriptions", query: ["since": String(Int64(Date().timeIntervalSince1970))]))
            guard answer?["timestamp"]?.intValue != nil else {
                throw failure(
                    .invalidResponse("\(account.server.absoluteString) answered, but not as Nextcloud's gpoddersync app"))
            }
        }
    }

    static let nextcloudBase = "/index.php/apps/gpoddersync"

    /// Makes this machine a device of the account (gpodder.net), named for people.
    func registerDevice() async throws {
        guard account.dialect == .gpodder else { return }
        try await send(
            "POST", url("/api/2/devices/\(userPath)/\(account.device).json"),
            body: .object([
                "caption": .string("mediahost on \(SyncAccount.defaultDevice().dropFirst(10))"), "type": .string("desktop"),
            ]))
    }

    /// The other devices of the account (gpodder.net), whose subscription changes are followed.
    func otherDevices() async throws -> [String] {
        guard account.dialect == .gpodder else { return [] }
        let answer = try await send("GET", url("/api/2/devices/\(userPath).json"))
        guard let list = answer?.arrayValue else { throw failure(.invalidResponse("the device list is not a list")) }
        return list.compactMap { $0["id"]?.stringValue }.filter { $0 != account.device && SyncAccount.isValidDevice($0) }
    }

    // MARK: Subscriptions

    /// Subscription changes since `since`: of `device` on gpodder.net, of the account on Nextcloud.
    func subscriptionChanges(device: String?, since: Int64) async throws -> SubscriptionChanges {
        let answer: JSONValue?
        switch account.dialect {
        case .gpodder:
            answer = try await send(
                "GET", url("/api/2/subscriptions/\(userPath)/\(device ?? account.device).json", query: ["since": String(since)]))
        case .nextcloud:
            answer = try await send("GET", url(Self.nextcloudBase + "/subscriptions", query: ["since": String(since)]))
        }
        guard let answer, let timestamp = answer["timestamp"]?.intValue else {
            throw failure(.invalidResponse("the subscription changes have no timestamp"))
        }
        func urls(_ key: String) -> [String] { (answer[key]?.arrayValue ?? []).compactMap(\.stringValue) }
        return SubscriptionChanges(add: urls("add"), remove: urls("remove"), timestamp: Int64(timestamp))
    }

    /// Uploads subscription changes of this device.
    /// - Returns: the URLs the server rewrote (`update_urls`: gpodder.net normalises them).
    func uploadSubscriptions(add: [String], remove: [String]) async throws -> [(old: String, new: String)] {
        guard !add.isEmpty || !remove.isEmpty else { return [] }
        let body = JSONValue.object(["add": .array(add.map(JSONValue.string)), "remove": .array(remove.map(JSONValue.string))])
        switch account.dialect {
        case .gpodder:
            let answer = try await send("POST", url("/api/2/subscriptions/\(userPath)/\(account.device).json"), body: body)
            // A server rewrites only what it was sent, once each, into a feed's URL (not a
            // 1 MB one, nor javascript: or file:).
            var sent = Set(add)
            return (answer?["update_urls"]?.arrayValue ?? []).compactMap { pair in
                guard let pair = pair.arrayValue, pair.count == 2, let old = pair[0].stringValue, let new = pair[1].stringValue,
                    sent.remove(old) != nil, new.utf8.count <= Self.maxURL, ItemID.isFeedURL(new)
                else { return nil }
                return (old, new)
            }
        case .nextcloud:
            try await send("POST", url(Self.nextcloudBase + "/subscription_change/create"), body: body)
            return []
        }
    }

    // MARK: Episode actions

    /// The most pages of actions one round reads (100,000 actions): a server whose every page
    /// has more, each later than the last, is read on at the next round, not for ever.
    static let maxPages = 100

    /// Actions since `since`, page after page up to `maxPages`; the cursor for the next time,
    /// and whether the server has more than one round read.
    func actions(since: Int64) async throws -> (actions: [EpisodeAction], skipped: Int, cursor: Int64, more: Bool) {
        var all: [EpisodeAction] = []
        var skipped = 0
        var since = since
        var seen = Set<String>()
        var pages = 0
        while true {
            pages += 1
            let path = account.dialect == .gpodder ? "/api/2/episodes/\(userPath).json" : Self.nextcloudBase + "/episode_action"
            let answer = try await send("GET", url(path, query: ["since": String(since)]))
            guard let answer, let timestamp = answer["timestamp"]?.intValue, let list = answer["actions"]?.arrayValue else {
                throw failure(.invalidResponse("the episode actions have no list or no timestamp"))
            }
            var new = 0
            for value in list {
                guard let action = Self.action(value) else {
                    skipped += 1
                    continue
                }
                // mygpo's `since` is inclusive: the last action of a page comes again.
                if seen.insert(action.key + "\u{1}" + (action.device ?? "")).inserted {
                    all.append(action)
                    new += 1
                }
            }
            // mygpo answers a page at a time, its timestamp the last action's; a short page,
            // or one that brought nothing new, is the last.
            guard account.dialect == .gpodder, list.count >= Self.pageSize, new > 0, Int64(timestamp) > since else {
                return (all, skipped, max(since, Int64(timestamp)), false)
            }
            since = Int64(timestamp)
            if pages >= Self.maxPages { return (all, skipped, since, true) }
        }
    }

    /// Uploads actions in chunks; `sent` is told after each chunk the server took. A chunk the
    /// server refuses (a 4xx that is no matter of auth or rate) goes again one action at a
    /// time, and `refused` is told of each it refuses alone, with why: one action a server
    /// will never take does not hold the others back round after round.
    func upload(
        _ actions: [EpisodeAction], sent: (Range<Int>) async throws -> Void,
        refused: (Int, String) async throws -> Void = { _, _ in }
    ) async throws {
        let path =
            account.dialect == .gpodder ? "/api/2/episodes/\(userPath).json" : Self.nextcloudBase + "/episode_action/create"
        var start = 0
        while start < actions.count {
            let end = min(start + Self.uploadChunk, actions.count)
            do {
                try await send("POST", url(path), body: .array(actions[start..<end].map(json)))
                try await sent(start..<end)
            } catch let failure as ProviderFailure where Self.isRefusal(failure) {
                for index in start..<end {
                    do {
                        try await send("POST", url(path), body: .array([json(actions[index])]))
                        try await sent(index..<index + 1)
                    } catch let alone as ProviderFailure where Self.isRefusal(alone) {
                        try await refused(index, alone.error.message)
                    }
                }
            }
            start = end
        }
    }

    /// The server refuses what it was sent (not who sent it, nor how often).
    static func isRefusal(_ failure: ProviderFailure) -> Bool {
        guard case .upstream(let status, _) = failure.error else { return false }
        return (400..<500).contains(status) && ![401, 403, 404, 408, 429].contains(status)
    }

    private func json(_ action: EpisodeAction) -> JSONValue {
        var object: [String: JSONValue] = [
            "podcast": .string(action.podcast), "episode": .string(action.episode), "action": .string(action.action),
            "timestamp": .string(Self.naive(action.at)),
        ]
        if let guid = action.guid { object["guid"] = .string(guid) }
        if account.dialect == .gpodder { object["device"] = .string(account.device) }
        if action.action == "play" {
            // mygpo wants started and total only beside a position.
            // mygpo takes started and total only together (an action with one of them it drops,
            // answering 200).
            let position = action.position ?? 0
            object["position"] = JSONValue(Double(position))
            if let total = action.total, total > 0 {
                object["started"] = JSONValue(Double(min(action.started ?? position, position)))
                object["total"] = JSONValue(Double(total))
            }
        }
        return .object(object)
    }

    /// One action from the server, or nil when it is not one (what is missing, a URL of another
    /// scheme, a date that is none): hostile or broken answers are skipped, not stored.
    static func action(_ value: JSONValue) -> EpisodeAction? {
        guard let podcast = value["podcast"]?.stringValue, let episode = value["episode"]?.stringValue,
            let kind = value["action"]?.stringValue?.lowercased(), ["play", "new", "download", "delete"].contains(kind),
            podcast.utf8.count <= 2048, episode.utf8.count <= 2048, ItemID.isFeedURL(podcast), ItemID.isFeedURL(episode),
            let text = value["timestamp"]?.stringValue, let at = date(text)
        else { return nil }
        func seconds(_ key: String) -> Int? {
            guard let number = value[key]?.doubleValue, number.isFinite, number >= 0, number < 1e9 else { return nil }
            return Int(number)
        }
        let guid = value["guid"]?.stringValue.flatMap { $0.isEmpty || $0.utf8.count > 500 ? nil : $0 }
        return EpisodeAction(
            podcast: podcast, episode: episode, guid: guid, action: kind, at: at, started: seconds("started"),
            position: seconds("position"), total: seconds("total"), device: value["device"]?.stringValue)
    }

    /// `2024-01-02T03:04:05` (UTC by convention, as mygpo writes it), with or without fractions,
    /// `Z` or an offset (Nextcloud writes `+00:00` since 3.11).
    static func date(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 19, bytes.count <= 40, bytes[10] == UInt8(ascii: "T") else { return nil }
        var zoned = bytes.count > 19 && bytes[19] != UInt8(ascii: ".")
        if bytes.count > 19, bytes[19] == UInt8(ascii: ".") {
            zoned = bytes[20...].contains { $0 == UInt8(ascii: "Z") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }
        }
        guard let date = ISODate.parse(zoned ? text : text + "Z") else { return nil }
        // Before 2000 or more than a day ahead is a clock gone wrong, not an action.
        let seconds = date.timeIntervalSince1970
        guard seconds >= 946_684_800, seconds <= Date().timeIntervalSince1970 + 86_400 else { return nil }
        return date
    }

    /// `2024-01-02T03:04:05`: UTC without a zone, which mygpoclient and every server read.
    static func naive(_ date: Date) -> String { String(ISODate.string(from: date).dropLast()) }
}
