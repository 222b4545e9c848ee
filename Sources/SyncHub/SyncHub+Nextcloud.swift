import Basics
import FoundationEssentials
import JSONRPC

/// Nextcloud gpoddersync's four routes, answered as the app answers them (thrillfall/nextcloud-
/// gpodder 3.16): one list per account, one action per episode, only plays, the server's time
/// as the cursor, `-1` for a number not known, the action's name in capitals.
extension SyncHub {
    /// The device that stands for the Nextcloud-style clients of an account (their API names
    /// none), so gpodder.net clients see what those follow as another device's list.
    public static let nextcloudDevice = "gpoddersync"

    func nextcloud(_ request: HubRequest, _ path: [String]) async -> HubResponse {
        let route = path.joined(separator: "/")
        let routes = [
            "subscriptions": "GET", "subscription_change/create": "POST", "episode_action": "GET",
            "episode_action/create": "POST",
        ]
        // Authentication comes before routing, as in Nextcloud.
        let user: Int64
        switch await authenticate(request, cookies: false) {
        case .user(let id, _, _): user = id
        case .missing: return Self.nextcloudJSON(["message": "Current user is not logged in"], status: 401)
        case .wrong: return Self.nextcloudJSON(["message": .string("")], status: 401)
        case .unavailable(let why):
            return Self.nextcloudJSON(["message": .string("the sync server cannot read its accounts: \(why)")], status: 503)
        case .lockedOut(let wait):
            var response = Self.nextcloudJSON(["message": .string("too many failed logins from this address")], status: 429)
            response.headers["Retry-After"] = String(max(1, wait.components.seconds))
            return response
        }
        guard let method = routes[route] else {
            return HubResponse(
                status: 404, headers: ["Content-Type": "text/html; charset=utf-8"],
                body: Array("<!DOCTYPE html><html><body><h1>Page not found</h1></body></html>".utf8))
        }
        guard request.method == method else { return HubResponse(status: 405) }
        let since = Self.phpInt(Self.query(request.query)["since"] ?? "")
        do {
            switch route {
            case "subscriptions":
                let changes = try await store.subscriptionChanges(user: user, device: nil, since: since)
                return Self.nextcloudJSON([
                    "add": .array(changes.add.map(JSONValue.string)), "remove": .array(changes.remove.map(JSONValue.string)),
                    "timestamp": .number(String(changes.timestamp)),
                ])
            case "subscription_change/create":
                let body = try? JSONParser.parse(request.body)
                guard let add = body?["add"].flatMap(Self.strings), let remove = body?["remove"].flatMap(Self.strings) else {
                    // The app's controller fails on a missing list (PHP's TypeError: a 500).
                    return Self.nextcloudJSON(["message": .string("add and remove are lists of URLs")], status: 500)
                }
                guard add.count + remove.count <= HubStore.maxSubscriptions else {
                    return Self.nextcloudJSON(
                        ["message": .string("at most \(HubStore.maxSubscriptions) changes at once")], status: 413)
                }
                // What is no URL is passed over, as FILTER_VALIDATE_URL does there; a URL in both
                // lists ends removed.
                let removing = remove.filter { Self.normalize($0) != nil }
                let removed = Set(removing)
                let adding = add.filter { Self.normalize($0) != nil && !removed.contains($0) }
                let timestamp = try await store.changeSubscriptions(
                    user: user, device: Self.nextcloudDevice, add: adding, remove: removing)
                return Self.nextcloudJSON(["timestamp": .number(String(timestamp))])
            case "episode_action":
                let read = try await store.actions(user: user, since: since, podcast: nil, device: nil)
                let latest = Self.latest(read.actions.filter { $0.action == "play" }) { $0.guid ?? $0.episode }
                return Self.nextcloudJSON([
                    "actions": .array(latest.map(Self.nextcloudAction)), "timestamp": .number(String(read.timestamp)),
                ])
            default:  // episode_action/create
                guard let list = (try? JSONParser.parse(request.body))?.arrayValue else {
                    // An object or no JSON stores nothing, as the app (only array elements count).
                    return Self.nextcloudJSON(["timestamp": .number(String(HubStore.now()))])
                }
                guard list.count <= HubStore.maxActionsPerUpload else {
                    return Self.nextcloudJSON(
                        ["message": .string("at most \(HubStore.maxActionsPerUpload) actions at once")], status: 413)
                }
                var actions: [HubAction] = []
                for value in list where value.objectValue != nil {
                    guard let podcast = value["podcast"]?.stringValue, let episode = value["episode"]?.stringValue,
                        let kind = value["action"]?.stringValue, let time = value["timestamp"]?.stringValue,
                        Self.isStorable(podcast), Self.isStorable(episode)
                    else {
                        return Self.nextcloudJSON(
                            ["message": .string("an episode action needs podcast, episode, action and timestamp")], status: 500)
                    }
                    // Only plays are kept (3.13.3 and later).
                    guard kind.lowercased() == "play" else { continue }
                    let now = HubStore.now()
                    guard let at = time.isEmpty || time == "now" ? now : Self.seconds(time) else {
                        return Self.nextcloudJSON(["message": .string("timestamp \(time.prefix(40)) is no date")], status: 500)
                    }
                    func number(_ key: String) throws -> Int? {
                        guard let value = value[key], value != .null else { return nil }
                        guard case .number(let text) = value, let number = Int(text) else { throw Problem.bad(key) }
                        return number >= 0 && number < 1_000_000_000 ? number : nil
                    }
                    do {
                        actions.append(
                            HubAction(
                                device: nil, podcast: podcast, episode: episode,
                                guid: value["guid"]?.stringValue.flatMap { $0.isEmpty || $0.utf8.count > 500 ? nil : $0 },
                                action: "play", at: min(at, now), started: try number("started"),
                                position: try number("position"), total: try number("total")))
                    } catch {
                        return Self.nextcloudJSON(
                            ["message": .string("started, position and total are whole seconds")], status: 500)
                    }
                }
                let timestamp = try await store.addActions(user: user, actions)
                return Self.nextcloudJSON(["timestamp": .number(String(timestamp))])
            }
        } catch {
            return Self.nextcloudJSON(["message": .string("the server could not do that: \(error)")], status: 500)
        }
    }

    static func nextcloudJSON(_ value: JSONValue, status: Int = 200) -> HubResponse {
        HubResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: JSONWriter.bytes(value))
    }

    static func nextcloudAction(_ action: HubAction) -> JSONValue {
        [
            "podcast": .string(action.podcast), "episode": .string(action.episode),
            "timestamp": .string(naive(action.at) + "+00:00"), "guid": action.guid.map(JSONValue.string) ?? .null,
            "position": JSONValue(action.position ?? -1), "started": JSONValue(action.started ?? -1),
            "total": JSONValue(action.total ?? -1), "action": .string(action.action.uppercased()),
        ]
    }

    /// PHP's `(int)` of a query value: its leading digits, else 0.
    static func phpInt(_ text: String) -> Int64 {
        let digits = text.trimming(.whitespaces).prefix { $0.isASCII && $0.isNumber }
        return Int64(digits.prefix(18)) ?? 0
    }
}
