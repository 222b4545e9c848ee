import Basics
import FoundationEssentials
import JSONRPC
import MediaKit
import Synchronization

/// One HTTP request to the sync server, as the web server (or the desk's own sync round) hands
/// it over.
public struct HubRequest: Sendable {
    public var method: String
    /// The path without its query, percent-encoded as it came.
    public var path: String
    /// The query, as it came (`since=0&aggregated=true`).
    public var query: String
    /// Header names in lower case.
    public var headers: [String: String]
    public var body: [UInt8]
    /// The client's address (failed logins are counted per address).
    public var address: String
    /// The desk itself, a device of this account: let in without a password (it reads the
    /// server's file, which only the data dir's owner can).
    public var trustedUser: String?

    public init(
        method: String, path: String, query: String = "", headers: [String: String] = [:], body: [UInt8] = [],
        address: String, trustedUser: String? = nil
    ) {
        self.method = method.uppercased()
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
        self.address = address
        self.trustedUser = trustedUser
    }
}

public struct HubResponse: Sendable {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    static func json(_ value: JSONValue, status: Int = 200) -> HubResponse {
        HubResponse(status: status, headers: ["Content-Type": "application/json"], body: JSONWriter.bytes(value))
    }

    static func text(_ text: String, status: Int) -> HubResponse {
        HubResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(text.utf8))
    }
}

/// The household's sync server: gpodder.net's API v2 (and its simple API) and Nextcloud
/// gpoddersync's four routes, on the web remote's port, for the accounts `mediahost users`
/// keeps. Written from mygpo's views and the gpoddersync app's controllers, and tested with the
/// clients that call them (mygpoclient, gPodder, AntennaPod's and Kasts' request sequences).
public final class SyncHub: Sendable {
    public let store: HubStore

    /// A request body beyond this is refused (413) before it is read: 100,000 subscriptions are
    /// about 6 MB, 100,000 actions about 25 MB.
    public static let maxBody = 32 << 20

    public init(dataDir: String) throws {
        store = try HubStore(dataDir: dataDir)
    }

    public init(store: HubStore) { self.store = store }

    /// Whether `path` is one of the sync server's (the web server sends those here).
    public static func handles(path: String) -> Bool {
        path.hasPrefix("/api/2/") || path.hasPrefix("/subscriptions/") || path == "/clientconfig.json"
            || path.hasPrefix("/index.php/apps/gpoddersync/") || path.hasPrefix("/apps/gpoddersync/") || isLoginFlow(path)
    }

    public func handle(_ request: HubRequest) async -> HubResponse {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            String($0).percentDecoded ?? String($0)
        }
        if Self.isLoginFlow(request.path) { return await loginFlow(request) }
        if segments.starts(with: ["index.php", "apps", "gpoddersync"]) {
            return await nextcloud(request, Array(segments.dropFirst(3)))
        }
        if segments.starts(with: ["apps", "gpoddersync"]) {
            return await nextcloud(request, Array(segments.dropFirst(2)))
        }
        do {
            var response = try await gpodder(request, segments)
            if (200..<300).contains(response.status), response.headers["Set-Cookie"] == nil,
                let cookie = await sessionCookie(for: request)
            {
                response.headers["Set-Cookie"] = cookie
            }
            return response
        } catch let problem as Problem {
            return problem.response
        } catch let refusal as HubStore.UserError {
            return .text(refusal.message, status: 400)
        } catch {
            return .text("the server could not do that: \(error)", status: 500)
        }
    }

    /// A request refused, with the status mygpo gives for it.
    struct Problem: Error {
        var response: HubResponse
        static func bad(_ why: String) -> Problem { Problem(response: .text(why, status: 400)) }
        static let notFound = Problem(response: .text("not found", status: 404))
        static let method = Problem(response: HubResponse(status: 405))
    }

    // MARK: Who asks

    /// Failed logins per address: 10 in 10 minutes lock the address out for the rest of them.
    private let failures = Mutex<[String: [ContinuousClock.Instant]]>([:])
    static let maxFailures = 10
    static let failureWindow: Duration = .seconds(600)
    /// Who was let in lately, by a keyed digest of name and password: yescrypt's 20 ms is paid
    /// once, not at every request (a phone's sync is a dozen).
    private let recent = Mutex<
        [String: (user: Int64, credential: Int64, hash: String, until: ContinuousClock.Instant, session: String?)]
    >([:])
    /// Nextcloud Login Flow v2 sign-ins under way, by their id, and when each address began its last.
    let flows = Mutex<[String: LoginFlow]>([:])
    let flowStarts = Mutex<[String: [ContinuousClock.Instant]]>([:])
    private let pepper: [UInt8] = {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }()

    /// How long the address is still locked out, or nil.
    func lockedOut(_ address: String) -> Duration? {
        failures.withLock { failures in Self.wait(&failures, address) }
    }

    private static func wait(_ failures: inout [String: [ContinuousClock.Instant]], _ address: String) -> Duration? {
        let now = ContinuousClock.now
        let recent = (failures[address] ?? []).filter { now - $0 < failureWindow }
        failures[address] = recent.isEmpty ? nil : recent
        guard recent.count >= maxFailures, let first = recent.first else { return nil }
        return failureWindow - (now - first)
    }

    func failed(_ address: String) {
        failures.withLock { failures in
            if failures.count > 10_000 {
                // Only what is past its window goes: a lockout is never wiped by new addresses.
                let now = ContinuousClock.now
                failures = failures.filter { entry in entry.value.contains { now - $0 < Self.failureWindow } }
            }
            failures[address, default: []].append(.now)
        }
    }

    enum Credentials {
        case none
        case basic(user: String, password: String)
        case session(String)
    }

    static func credentials(_ request: HubRequest, cookies: Bool) -> Credentials {
        if let header = request.headers["authorization"], header.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimming(.whitespaces)),
            let text = String(bytes: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":")
        {
            return .basic(user: String(text[..<colon]), password: String(text[text.index(after: colon)...]))
        }
        if cookies, let cookie = request.headers["cookie"] {
            for part in cookie.split(separator: ";") {
                let pair = part.trimming(.whitespaces)
                if pair.hasPrefix("sessionid=") { return .session(String(pair.dropFirst("sessionid=".count))) }
            }
        }
        return .none
    }

    enum AuthOutcome {
        /// `credential`: the password or app password checked for it (nil for a session or the desk).
        case user(id: Int64, name: String, credential: Int64?)
        case missing
        case wrong
        case lockedOut(Duration)
        /// The accounts' file could not be read: said as such, never as a wrong password.
        case unavailable(String)
    }

    /// Who the request is from: the desk, a session, or a name and one of its passwords.
    /// - Parameter passwordOnly: the account's own password, no app password (the sign-in page,
    ///   which makes app passwords).
    func authenticate(_ request: HubRequest, cookies: Bool, passwordOnly: Bool = false) async -> AuthOutcome {
        if let trusted = request.trustedUser {
            do {
                guard let id = try store.user(named: trusted) else { return .wrong }
                return .user(id: id, name: trusted, credential: nil)
            } catch {
                return .unavailable("\(error)")
            }
        }
        switch Self.credentials(request, cookies: cookies) {
        case .none:
            if let wait = lockedOut(request.address) { return .lockedOut(wait) }
            return .missing
        case .session(let token):
            // A session is let in even from an address locked out (behind a proxy all share
            // one); one that is no more (expired, its password changed) counts as no attempt.
            do {
                if let found = try store.session(hash: SHA256.hex(Array(token.utf8))) {
                    return .user(id: found.user, name: found.name, credential: nil)
                }
            } catch {
                return .unavailable("\(error)")
            }
            if let wait = lockedOut(request.address) { return .lockedOut(wait) }
            return .wrong
        case .basic(let name, let password):
            let key = SHA256.hex(pepper + Array(name.utf8) + [0] + Array(password.utf8))
            if !passwordOnly, let known = valid(key) { return .user(id: known.user, name: name, credential: known.credential) }
            if let wait = lockedOut(request.address) { return .lockedOut(wait) }
            // Checked in the yescrypt queue's turn, the lockout asked again then: guesses sent
            // all at once are counted one after the other.
            let address = request.address
            let admit: @Sendable () -> Bool = { [self] in lockedOut(address) == nil }
            let failed: @Sendable () -> Void = { [self] in self.failed(address) }
            let account: (user: Int64, hashes: [(id: Int64, kind: String, hash: String)])?
            do {
                account = try store.credentials(name)
            } catch {
                return .unavailable("\(error)")
            }
            guard !password.isEmpty, let found = account else {
                // As long as a wrong password: whether an account exists is not told by the time.
                if case .refused = await Yescrypt.match(password, among: [Self.decoy], admit: admit, failed: failed) {
                    return .lockedOut(lockedOut(address) ?? Self.failureWindow)
                }
                return .wrong
            }
            let candidates = found.hashes.filter { !passwordOnly || $0.kind == "password" }
            switch await Yescrypt.match(password, among: candidates.map(\.hash), admit: admit, failed: failed) {
            case .refused:
                return .lockedOut(lockedOut(address) ?? Self.failureWindow)
            case .none:
                return .wrong
            case .hash(let index):
                let credential = candidates[index]
                if !passwordOnly {
                    recent.withLock { recent in
                        if recent.count > 1024 {
                            let now = ContinuousClock.now
                            recent = recent.filter { now < $0.value.until }
                        }
                        recent[key] = (found.user, credential.id, credential.hash, .now + .seconds(600), nil)
                    }
                }
                try? await store.noteUsed(credential: credential.id)
                return .user(id: found.user, name: name, credential: credential.id)
            }
        }
    }

    /// A password let in lately whose credential is still as it was.
    private func valid(_ key: String) -> (user: Int64, credential: Int64, session: String?)? {
        guard let known = recent.withLock({ $0[key] }), ContinuousClock.now < known.until,
            (try? store.credentialHolds(id: known.credential, hash: known.hash)) == true
        else { return nil }
        return (known.user, known.credential, known.session)
    }

    /// A session for a request let in by its password, as mygpo logs in every request that
    /// carries one: gPodder's client library gives its password out only three times, then
    /// reads the fourth challenge as a wrong password and gPodder turns its sync off. One
    /// session per password while it is remembered (Kasts sends the password every time and
    /// keeps no cookie: it does not make a session a request).
    func sessionCookie(for request: HubRequest) async -> String? {
        guard request.trustedUser == nil, request.path != "/clientconfig.json", !request.path.hasSuffix("/logout.json"),
            case .basic(let name, let password) = Self.credentials(request, cookies: false),
            request.headers["cookie"]?.contains("sessionid=") != true
        else { return nil }
        let key = SHA256.hex(pepper + Array(name.utf8) + [0] + Array(password.utf8))
        // Only for a password checked and still valid (not one revoked or changed since).
        guard let known = valid(key) else { return nil }
        let token: String
        if let existing = known.session {
            token = existing
        } else {
            token = Self.randomToken()
            do {
                try await store.addSession(
                    hash: SHA256.hex(Array(token.utf8)), user: known.user, credential: known.credential,
                    expires: HubStore.now() + Self.sessionAge)
            } catch {
                return nil
            }
            recent.withLock { $0[key]?.session = token }
        }
        return Self.cookie(token, secure: request.headers["x-mediahost-tls"] == "1")
    }

    static func cookie(_ token: String, secure: Bool, age: Int64 = sessionAge) -> String {
        "sessionid=\(token); Path=/; Max-Age=\(age); HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    static let sessionAge: Int64 = 14 * 86_400

    /// A hash no password matches, checked against when there is no such account.
    static let decoy = "$y$j9T$F5Jx5fExrKuPp53xLKQ..1$X3DX6M94c7o7TuC0aX4eoj8ywXZIUWN9TQuCWzxcPd2"

    // MARK: gpodder.net

    private func gpodder(_ request: HubRequest, _ path: [String]) async throws -> HubResponse {
        let query = Self.query(request.query)
        if path == ["clientconfig.json"] {
            guard request.method == "GET" else { throw Problem.method }
            let host = request.headers["host"] ?? "localhost"
            let scheme = request.headers["x-forwarded-proto"] == "https" ? "https" : "http"
            return .json([
                "mygpo": ["baseurl": .string("\(scheme)://\(host)/")], "mygpo-feedservice": ["baseurl": ""],
                "update_timeout": 604800,
            ])
        }
        // /api/2/auth/USER/login.json and logout.json: the session cookie.
        if path.count == 5, path[0] == "api", path[1] == "2", path[2] == "auth" {
            guard request.method == "POST" else { throw Problem.method }
            let user = path[3]
            switch path[4] {
            case "login.json":
                let (id, _, credential) = try await authorize(request, user: user)
                // The desk (in process) and a session logging in again need no new one.
                guard let credential else { return HubResponse(status: 200) }
                let text = Self.randomToken()
                try await store.addSession(
                    hash: SHA256.hex(Array(text.utf8)), user: id, credential: credential,
                    expires: HubStore.now() + Self.sessionAge)
                return HubResponse(
                    status: 200, headers: ["Set-Cookie": Self.cookie(text, secure: request.headers["x-mediahost-tls"] == "1")])
            case "logout.json":
                if case .session(let token) = Self.credentials(request, cookies: true) {
                    try await store.endSession(hash: SHA256.hex(Array(token.utf8)))
                }
                return HubResponse(status: 200, headers: ["Set-Cookie": Self.cookie("", secure: false, age: 0)])
            default: throw Problem.notFound
            }
        }
        if path.count >= 3, path[0] == "api", path[1] == "2" {
            return try await apiV2(request, Array(path.dropFirst(2)), query: query)
        }
        if path.count >= 2, path[0] == "subscriptions" {
            return try await simple(request, Array(path.dropFirst()))
        }
        throw Problem.notFound
    }

    /// The account named in the path, when the request is from it.
    @discardableResult
    private func authorize(_ request: HubRequest, user: String) async throws -> (Int64, String, Int64?) {
        switch await authenticate(request, cookies: true) {
        case .user(let id, let name, let credential) where name == user:
            return (id, name, credential)
        case .lockedOut(let wait):
            throw Problem(
                response: HubResponse(
                    status: 429, headers: ["Retry-After": String(max(1, wait.components.seconds))],
                    body: Array("too many failed logins from this address; try again later".utf8)))
        case .unavailable(let why):
            throw Problem(response: .text("the sync server cannot read its accounts (hub.sqlite): \(why)", status: 503))
        default:
            throw Problem(
                response: HubResponse(
                    status: 401, headers: ["WWW-Authenticate": #"Basic realm="mediahost""#, "Content-Type": "text/plain"],
                    body: Array("wrong user name or password".utf8)))
        }
    }

    /// `NAME.json` → ("NAME", "json").
    static func split(_ file: String) -> (name: String, format: String)? {
        guard let dot = file.lastIndex(of: ".") else { return nil }
        return (String(file[..<dot]), String(file[file.index(after: dot)...]))
    }

    static func device(_ file: String) throws -> String {
        guard let (name, format) = split(file), format == "json" else { throw Problem.notFound }
        guard HubStore.isValidDevice(name) else {
            throw Problem.bad("invalid device id: 1 to 64 letters, digits, '.', '-' or '_'")
        }
        return name
    }

    static func since(_ query: [String: String], required: Bool = false) throws -> Int64 {
        guard let text = query["since"], !text.isEmpty else {
            if required { throw Problem.bad("since is required") }
            return 0
        }
        guard let value = Int64(text), value >= 0 else { throw Problem.bad("since must be a whole number of seconds") }
        return value
    }

    static func body(_ request: HubRequest) throws -> JSONValue {
        guard !request.body.isEmpty else { throw Problem.bad("the request has no body") }
        do {
            return try JSONParser.parse(request.body)
        } catch {
            throw Problem.bad("the body is not JSON: \(error)")
        }
    }

    private func apiV2(_ request: HubRequest, _ path: [String], query: [String: String]) async throws -> HubResponse {
        switch (path[0], path.count) {
        case ("devices", 2):
            guard request.method == "GET" else { throw Problem.method }
            guard let (name, format) = Self.split(path[1]), format == "json" else { throw Problem.notFound }
            let (user, _, _) = try await authorize(request, user: name)
            let devices = try await store.devices(user: user)
            return .json(
                .array(
                    devices.map {
                        [
                            "id": .string($0.name), "caption": .string($0.caption), "type": .string($0.type),
                            "subscriptions": JSONValue($0.subscriptions),
                        ]
                    }))
        case ("devices", 3):
            guard request.method == "POST" else { throw Problem.method }
            let (user, _, _) = try await authorize(request, user: path[1])
            let device = try Self.device(path[2])
            let body = request.body.isEmpty ? JSONValue.object([:]) : try Self.body(request)
            guard body.objectValue != nil else { throw Problem.bad("the device's settings are an object") }
            let caption = body["caption"]?.stringValue.map { String($0.prefix(200)) }
            let type = body["type"]?.stringValue
            if let type, !["desktop", "laptop", "mobile", "server", "other"].contains(type) {
                throw Problem.bad("type is one of desktop, laptop, mobile, server, other")
            }
            try await store.saveDevice(user: user, name: device, caption: caption, type: type)
            return HubResponse(status: 200)
        case ("subscriptions", 3):
            let (user, _, _) = try await authorize(request, user: path[1])
            let device = try Self.device(path[2])
            switch request.method {
            case "GET":
                let since = try Self.since(query, required: true)
                let changes = try await store.subscriptionChanges(user: user, device: device, since: since)
                return .json([
                    "add": .array(changes.add.map(JSONValue.string)), "remove": .array(changes.remove.map(JSONValue.string)),
                    "timestamp": .number(String(changes.timestamp)),
                ])
            case "POST":
                let body = try Self.body(request)
                guard let add = body["add"].map(Self.strings) ?? [], let remove = body["remove"].map(Self.strings) ?? [] else {
                    throw Problem.bad("add and remove are lists of URLs")
                }
                guard add.count + remove.count <= HubStore.maxSubscriptions else {
                    throw Problem.bad("at most \(HubStore.maxSubscriptions) changes at once")
                }
                var updates: [JSONValue] = []
                func clean(_ urls: [String]) -> [String] {
                    urls.compactMap { url in
                        let normal = Self.normalize(url)
                        if normal != url { updates.append([.string(url), .string(normal ?? "")]) }
                        return normal
                    }
                }
                let adding = clean(add)
                let removing = clean(remove)
                guard Set(adding).isDisjoint(with: removing) else {
                    throw Problem.bad("a URL cannot be added and removed at once")
                }
                let timestamp = try await store.changeSubscriptions(user: user, device: device, add: adding, remove: removing)
                return .json(["timestamp": .number(String(timestamp)), "update_urls": .array(updates)])
            default: throw Problem.method
            }
        case ("episodes", 2):
            guard let (name, format) = Self.split(path[1]), format == "json" else { throw Problem.notFound }
            let (user, _, _) = try await authorize(request, user: name)
            switch request.method {
            case "GET":
                let since = try Self.since(query)
                if let device = query["device"], !HubStore.isValidDevice(device) { throw Problem.bad("invalid device id") }
                let read = try await store.actions(
                    user: user, since: since, podcast: query["podcast"], device: query["device"])
                let actions = query["aggregated"] == "true" ? Self.latest(read.actions) { $0.episode } : read.actions
                return .json([
                    "actions": .array(actions.map(Self.gpodderJSON)), "timestamp": .number(String(read.timestamp)),
                ])
            case "POST":
                let body = try Self.body(request)
                guard let list = body.arrayValue else { throw Problem.bad("the body is a list of episode actions") }
                guard list.count <= HubStore.maxActionsPerUpload else {
                    throw Problem.bad("at most \(HubStore.maxActionsPerUpload) actions at once")
                }
                var actions: [HubAction] = []
                actions.reserveCapacity(list.count)
                for (index, value) in list.enumerated() {
                    do {
                        actions.append(try Self.action(value))
                    } catch let problem as Problem {
                        let why = String(decoding: problem.response.body, as: UTF8.self)
                        throw Problem.bad("action \(index + 1): \(why)")
                    }
                }
                let timestamp = try await store.addActions(user: user, actions)
                return .json(["timestamp": .number(String(timestamp)), "update_urls": []])
            default: throw Problem.method
            }
        case ("sync-devices", 2):
            guard let (name, format) = Self.split(path[1]), format == "json" else { throw Problem.notFound }
            let (user, _, _) = try await authorize(request, user: name)
            if request.method == "POST" {
                let body = try Self.body(request)
                let link = (body["synchronize"]?.arrayValue ?? []).compactMap { Self.strings($0) }
                let unlink = body["stop-synchronize"].map(Self.strings) ?? []
                guard let unlink, (link + [unlink]).joined().allSatisfy(HubStore.isValidDevice) else {
                    throw Problem.bad("synchronize is a list of lists of device ids, stop-synchronize a list of ids")
                }
                try await store.synchronize(user: user, link: link, unlink: unlink)
            } else if request.method != "GET" {
                throw Problem.method
            }
            let devices = try await store.devices(user: user)
            var groups: [Int64: [String]] = [:]
            var alone: [String] = []
            for device in devices {
                if let group = device.group { groups[group, default: []].append(device.name) } else { alone.append(device.name) }
            }
            return .json([
                "synchronized": .array(groups.keys.sorted().map { .array((groups[$0] ?? []).map(JSONValue.string)) }),
                "not-synchronized": .array(alone.map(JSONValue.string)),
            ])
        case ("updates", 3):
            guard request.method == "GET" else { throw Problem.method }
            let (user, _, _) = try await authorize(request, user: path[1])
            let device = try Self.device(path[2])
            let since = try Self.since(query, required: true)
            let changes = try await store.subscriptionChanges(user: user, device: device, since: since)
            return .json([
                "add": .array(changes.add.map(Self.podcastJSON)), "rem": .array(changes.remove.map(JSONValue.string)),
                "updates": [], "timestamp": .number(String(changes.timestamp)),
            ])
        default:
            throw Problem.notFound
        }
    }

    /// The simple API: a device's whole list (`/subscriptions/USER/DEVICE.json|txt|opml`), or
    /// the account's (`/subscriptions/USER.json`).
    private func simple(_ request: HubRequest, _ path: [String]) async throws -> HubResponse {
        if path.count == 1 {
            guard request.method == "GET" else { throw Problem.method }
            guard let (name, format) = Self.split(path[0]) else { throw Problem.notFound }
            let (user, _, _) = try await authorize(request, user: name)
            let urls = try await store.subscriptions(user: user, device: nil) ?? []
            return try Self.list(urls, format: format, objects: true)
        }
        guard path.count == 2, let (device, format) = Self.split(path[1]) else { throw Problem.notFound }
        let (user, _, _) = try await authorize(request, user: path[0])
        guard HubStore.isValidDevice(device) else { throw Problem.bad("invalid device id") }
        switch request.method {
        case "GET":
            guard let urls = try await store.subscriptions(user: user, device: device) else { throw Problem.notFound }
            return try Self.list(urls, format: format, objects: false)
        case "PUT":
            let wanted: [String]
            switch format {
            case "json":
                guard let list = Self.strings(try Self.body(request)) else {
                    throw Problem.bad("the body is a list of URLs")
                }
                wanted = list
            case "txt":
                wanted = String(decoding: request.body, as: UTF8.self).split(whereSeparator: \.isNewline).map {
                    $0.trimming(.whitespaces)
                }.filter { !$0.isEmpty }
            default: throw Problem.bad("a list is put as json or txt")
            }
            guard wanted.count <= HubStore.maxSubscriptions else {
                throw Problem.bad("at most \(HubStore.maxSubscriptions) subscriptions")
            }
            let now = Set(wanted.compactMap(Self.normalize))
            let before = Set(try await store.subscriptions(user: user, device: device) ?? [])
            _ = try await store.changeSubscriptions(
                user: user, device: device, add: now.subtracting(before).sorted(), remove: before.subtracting(now).sorted())
            return HubResponse(status: 200)
        default: throw Problem.method
        }
    }

    static func list(_ urls: [String], format: String, objects: Bool) throws -> HubResponse {
        switch format {
        case "json": return .json(.array(objects ? urls.map(podcastJSON) : urls.map(JSONValue.string)))
        case "txt": return .text(urls.map { $0 + "\n" }.joined(), status: 200)
        case "opml":
            var text =
                #"<?xml version="1.0" encoding="utf-8"?>"#
                + "\n<opml version=\"2.0\">\n<head><title>mediahost</title></head>\n<body>\n"
            for url in urls {
                let escaped = Self.escapeXML(url)
                text += #"<outline text="\#(escaped)" type="rss" xmlUrl="\#(escaped)"/>"# + "\n"
            }
            text += "</body>\n</opml>\n"
            return HubResponse(status: 200, headers: ["Content-Type": "text/x-opml; charset=utf-8"], body: Array(text.utf8))
        default: throw Problem.bad("the formats are json, txt and opml")
        }
    }

    static func escapeXML(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            default: out.append(character)
            }
        }
        return out
    }

    static func podcastJSON(_ url: String) -> JSONValue {
        [
            "url": .string(url), "title": "", "description": "", "website": "", "subscribers": 0, "logo_url": .null,
            "mygpo_link": "",
        ]
    }

    static func strings(_ value: JSONValue) -> [String]? {
        guard let list = value.arrayValue else { return nil }
        var out: [String] = []
        out.reserveCapacity(list.count)
        for element in list {
            guard let text = element.stringValue else { return nil }
            out.append(text)
        }
        return out
    }

    /// A feed's URL as mygpo keeps it: `feed://` and `itpc://` as `http://`, the scheme and host
    /// in lower case, no user or password; nil for what is no feed's URL.
    static func normalize(_ url: String) -> String? {
        var text = url.trimming(.whitespacesAndNewlines)
        guard text.utf8.count <= 4096, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == " " }) else {
            return nil
        }
        for prefix in ["feed://", "itpc://", "pcast://", "itms-pcast://"] where text.lowercased().hasPrefix(prefix) {
            text = "http://" + text.dropFirst(prefix.count)
        }
        if text.lowercased().hasPrefix("feed:http") { text.removeFirst(5) }
        guard let schemeEnd = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        var rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd]
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        guard !authority.isEmpty else { return nil }
        rest = rest[authorityEnd...]
        return scheme + "://" + authority.lowercased() + rest
    }

    /// One action from a client (gpodder.net's fields), or why it is none.
    static func action(_ value: JSONValue) throws -> HubAction {
        guard value.objectValue != nil else { throw Problem.bad("not an object") }
        guard let podcast = value["podcast"]?.stringValue, let episode = value["episode"]?.stringValue,
            Self.isStorable(podcast), Self.isStorable(episode)
        else { throw Problem.bad("podcast and episode are URLs") }
        guard let kind = value["action"]?.stringValue?.lowercased(),
            ["download", "delete", "play", "new", "flattr"].contains(kind)
        else { throw Problem.bad("action is one of download, delete, play, new, flattr") }
        var at = HubStore.now()
        switch value["timestamp"] {
        case nil, .null?: break
        case .string(let text)?:
            guard let seconds = Self.seconds(text) else { throw Problem.bad("timestamp \(text.prefix(40)) is no date and time") }
            // A clock ahead (a phone set to 2030) does not put its actions after every later one.
            at = min(seconds, at)
        default: throw Problem.bad("timestamp is a date and time (2024-01-02T03:04:05)")
        }
        // Kasts sends an empty device.
        let device = value["device"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        if let device, !HubStore.isValidDevice(device) { throw Problem.bad("invalid device id") }
        func seconds(_ key: String) -> Int? {
            // A position no episode has (negative, NaN, 1e40) is left out, not stored.
            guard kind == "play", let number = value[key]?.doubleValue, number.isFinite, number >= 0, number < 1e9 else {
                return nil
            }
            return Int(number.rounded())
        }
        let guid = value["guid"]?.stringValue.flatMap { $0.isEmpty || $0.utf8.count > 500 ? nil : $0 }
        return HubAction(
            device: device, podcast: podcast, episode: episode, guid: guid, action: kind, at: at,
            started: seconds("started"), position: seconds("position"), total: seconds("total"))
    }

    static func isStorable(_ url: String) -> Bool {
        !url.isEmpty && url.utf8.count <= 4096 && !url.unicodeScalars.contains { $0.value < 0x20 }
    }

    /// `2024-01-02T03:04:05` (UTC), with fractions, `Z` or an offset, or a space for the `T`;
    /// seconds since 1970.
    static func seconds(_ text: String) -> Int64? {
        var bytes = Array(text.utf8)
        guard bytes.count >= 19, bytes.count <= 40 else { return nil }
        if bytes[10] == UInt8(ascii: " ") { bytes[10] = UInt8(ascii: "T") }
        guard bytes[10] == UInt8(ascii: "T") else { return nil }
        let tail = bytes[19...]
        let zoned = tail.contains { $0 == UInt8(ascii: "Z") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }
        let normal = String(decoding: bytes, as: UTF8.self)
        guard let date = ISODate.parse(zoned ? normal : normal + "Z"), date.timeIntervalSince1970 >= 0 else { return nil }
        return Int64(date.timeIntervalSince1970)
    }

    static func naive(_ seconds: Int64) -> String {
        String(ISODate.string(from: Date(timeIntervalSince1970: Double(seconds))).dropLast())
    }

    static func gpodderJSON(_ action: HubAction) -> JSONValue {
        var object: [String: JSONValue] = [
            "podcast": .string(action.podcast), "episode": .string(action.episode), "action": .string(action.action),
            "timestamp": .string(naive(action.at)),
        ]
        if let device = action.device { object["device"] = .string(device) }
        if let guid = action.guid { object["guid"] = .string(guid) }
        if action.action == "play" {
            if let started = action.started { object["started"] = JSONValue(started) }
            if let position = action.position { object["position"] = JSONValue(position) }
            if let total = action.total { object["total"] = JSONValue(total) }
        }
        return .object(object)
    }

    /// The newest action of each key, in the order of their times.
    static func latest(_ actions: [HubAction], key: (HubAction) -> String) -> [HubAction] {
        var index: [String: Int] = [:]
        var out: [HubAction] = []
        for action in actions {
            let name = key(action)
            if let at = index[name] {
                if out[at].at <= action.at { out[at] = action }
            } else {
                index[name] = out.count
                out.append(action)
            }
        }
        return out.sorted { $0.at < $1.at }
    }

    static func query(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                let plus = String(part.replacing("+", with: " "))
                return plus.percentDecoded ?? plus
            }
            guard let name = parts.first else { continue }
            out[decode(name)] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return out
    }
}
