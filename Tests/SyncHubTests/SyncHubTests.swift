import Foundation
import JSONRPC
import MediaHost
import MediaKit
import MediaStore
import SyncHub
import TestSupport
import Testing

@testable import HostSync

/// A server with accounts, and requests to it as a client makes them.
struct Household {
    let hub: SyncHub
    let dataDir: String

    init(_ users: [String: String] = ["alice": "alice-secret", "bob": "bob-secret"]) async throws {
        dataDir = try makeTemporaryDirectory()
        hub = try SyncHub(dataDir: dataDir)
        for (name, password) in users {
            let hash = try await Yescrypt.hash(password)
            try hub.store.addUser(name, passwordHash: hash)
        }
    }

    static func basic(_ user: String, _ password: String) -> [String: String] {
        ["Authorization": "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()]
    }

    @discardableResult
    func send(
        _ method: String, _ path: String, query: String = "", user: String = "alice", password: String? = nil,
        headers: [String: String]? = nil, body: JSONValue? = nil, raw: [UInt8]? = nil, address: String = "192.168.1.20"
    ) async -> (status: Int, json: JSONValue?, headers: [String: String], text: String) {
        let credentials = headers ?? Self.basic(user, password ?? "\(user)-secret")
        let bytes = raw ?? body.map { JSONWriter.bytes($0) } ?? []
        let answer = await hub.handle(
            HubRequest(method: method, path: path, query: query, headers: credentials, body: bytes, address: address))
        return (answer.status, try? JSONParser.parse(answer.body), answer.headers, String(decoding: answer.body, as: UTF8.self))
    }
}

@Suite struct YescryptTests {
    @Test func aHashChecksItsPasswordAndNoOther() async throws {
        let hash = try await Yescrypt.hash("correct horse")
        #expect(hash.hasPrefix("$y$"))
        #expect(await Yescrypt.verify("correct horse", against: hash))
        #expect(!(await Yescrypt.verify("correct hors", against: hash)))
        #expect(!(await Yescrypt.verify("correct horse", against: "$y$nonsense")))
        #expect(!(await Yescrypt.verify("correct horse", against: "plain")))
        // Salted: the same password twice is two hashes.
        #expect(try await Yescrypt.hash("correct horse") != hash)
    }
}

@Suite struct GpodderAPITests {
    @Test func subscriptionsGoFromOneDeviceToTheAccountAndBack() async throws {
        let house = try await Household()
        let up = await house.send(
            "POST", "/api/2/subscriptions/alice/phone.json",
            body: ["add": ["https://example.com/feed.xml", "feed://Example.ORG/Podcast.xml"], "remove": []])
        #expect(up.status == 200, "\(up.text)")
        // mygpo's normalisation, said back as update_urls.
        #expect(up.json?["update_urls"] == [["feed://Example.ORG/Podcast.xml", "http://example.org/Podcast.xml"]])
        let timestamp = try #require(up.json?["timestamp"]?.intValue)
        let first = await house.send("GET", "/api/2/subscriptions/alice/phone.json", query: "since=0")
        #expect(
            Set(first.json?["add"]?.arrayValue?.compactMap(\.stringValue) ?? [])
                == ["https://example.com/feed.xml", "http://example.org/Podcast.xml"])
        #expect(first.json?["remove"] == [])
        // Removed later: the change comes with a cursor at or after the last answer.
        _ = await house.send(
            "POST", "/api/2/subscriptions/alice/phone.json", body: ["add": [], "remove": ["https://example.com/feed.xml"]])
        let later = await house.send("GET", "/api/2/subscriptions/alice/phone.json", query: "since=\(timestamp)")
        #expect(later.json?["remove"] == ["https://example.com/feed.xml"])
        // Another device sees nothing of it until linked; the account's list has it.
        let other = await house.send("GET", "/api/2/subscriptions/alice/laptop.json", query: "since=0")
        #expect(other.json?["add"] == [])
        let all = await house.send("GET", "/subscriptions/alice.json")
        #expect(all.json?.arrayValue?.compactMap { $0["url"]?.stringValue } == ["http://example.org/Podcast.xml"])
        let text = await house.send("GET", "/subscriptions/alice/phone.txt")
        #expect(text.text == "http://example.org/Podcast.xml\n")
        // Added and removed at once: 400, as mygpo.
        let both = await house.send(
            "POST", "/api/2/subscriptions/alice/phone.json",
            body: ["add": ["https://a.example/x"], "remove": ["https://a.example/x"]])
        #expect(both.status == 400)
        #expect(await house.send("GET", "/api/2/subscriptions/alice/phone.json").status == 400, "since is required")
    }

    @Test func actionsComeBackAsTheyWereSentOnceEach() async throws {
        let house = try await Household()
        let play: JSONValue = [
            "podcast": "https://example.com/feed.xml", "episode": "https://example.com/e1.mp3", "action": "play",
            "timestamp": "2026-01-02T03:04:05", "started": 0, "position": 754, "total": 3600, "device": "phone",
            "guid": "e1-guid",
        ]
        let download: JSONValue = [
            "podcast": "https://example.com/feed.xml", "episode": "https://example.com/e1.mp3", "action": "download",
            "timestamp": "2026-01-02T03:00:00Z",
        ]
        let up = await house.send("POST", "/api/2/episodes/alice.json", body: [play, download])
        #expect(up.status == 200, "\(up.text)")
        #expect(up.json?["update_urls"] == [])
        // Sent again (its answer lost): not stored twice.
        _ = await house.send("POST", "/api/2/episodes/alice.json", body: [play])
        let down = await house.send("GET", "/api/2/episodes/alice.json", query: "since=0")
        let actions = try #require(down.json?["actions"]?.arrayValue)
        #expect(actions.count == 2)
        let last = try #require(actions.last)
        #expect(last["action"] == "play")
        #expect(last["position"]?.intValue == 754 && last["total"]?.intValue == 3600 && last["started"]?.intValue == 0)
        #expect(last["timestamp"] == "2026-01-02T03:04:05")
        #expect(last["device"] == "phone" && last["guid"] == "e1-guid")
        #expect(actions.first?["position"] == nil, "a download has no position")
        let aggregated = await house.send("GET", "/api/2/episodes/alice.json", query: "since=0&aggregated=true")
        #expect(aggregated.json?["actions"]?.arrayValue?.map { $0["action"] } == ["play"])
        let byDevice = await house.send("GET", "/api/2/episodes/alice.json", query: "since=0&device=phone")
        #expect(byDevice.json?["actions"]?.arrayValue?.count == 1)
        // A cursor from the future sees nothing, and the answer's cursor is now.
        let future = await house.send("GET", "/api/2/episodes/alice.json", query: "since=99999999999")
        #expect(future.json?["actions"] == [])
        let now = Int(Date().timeIntervalSince1970)
        #expect(abs((future.json?["timestamp"]?.intValue ?? 0) - now) < 120)
    }

    @Test func nothingOfOneAccountReachesAnother() async throws {
        let house = try await Household()
        _ = await house.send(
            "POST", "/api/2/subscriptions/alice/phone.json", body: ["add": ["https://alice.example/feed"], "remove": []])
        // bob's password for alice's data, and alice's path with bob's name: refused alike.
        let asBob = await house.send("GET", "/api/2/subscriptions/alice/phone.json", query: "since=0", user: "bob")
        #expect(asBob.status == 401)
        #expect(asBob.headers["WWW-Authenticate"]?.contains("realm") == true, "mygpoclient needs a realm to send its password")
        let bobs = await house.send("GET", "/api/2/subscriptions/bob/phone.json", query: "since=0", user: "bob")
        #expect(bobs.json?["add"] == [])
        #expect(await house.send("GET", "/subscriptions/alice.json", user: "bob").status == 401)
        #expect(await house.send("GET", "/api/2/devices/alice.json", headers: [:]).status == 401)
        let nextcloud = await house.send("GET", "/index.php/apps/gpoddersync/subscriptions", user: "bob")
        #expect(nextcloud.json?["add"] == [])
    }

    @Test func aSessionCookieStandsForThePassword() async throws {
        let house = try await Household()
        let login = await house.send(
            "POST", "/api/2/auth/alice/login.json",
            headers: Household.basic("alice", "alice-secret").merging(["Content-Type": "plain/text; charset=utf-8"]) { $1 })
        #expect(login.status == 200)
        let cookie = try #require(login.headers["Set-Cookie"])
        #expect(cookie.contains("Path=/") && cookie.contains("HttpOnly"))
        let session = String(try #require(cookie.split(separator: ";").first))
        // AntennaPod sends only the cookie after its login.
        let devices = await house.send("GET", "/api/2/devices/alice.json", headers: ["Cookie": session])
        #expect(devices.status == 200)
        #expect(await house.send("GET", "/api/2/devices/bob.json", headers: ["Cookie": session]).status == 401)
        // A changed password ends its sessions.
        let newHash = try await Yescrypt.hash("new-password")
        try house.hub.store.setPassword("alice", passwordHash: newHash)
        #expect(await house.send("GET", "/api/2/devices/alice.json", headers: ["Cookie": session]).status == 401)
        #expect(await house.send("GET", "/api/2/devices/alice.json").status == 401, "the old password")
        #expect(await house.send("GET", "/api/2/devices/alice.json", password: "new-password").status == 200)
    }

    /// mygpo logs in every request that carries a password; gPodder's client library gives its
    /// password out three times only and counts on that cookie after (else gPodder turns its
    /// sync off): one session a password, however many requests.
    @Test func aPasswordedAnswerCarriesASessionAsMygpos() async throws {
        let house = try await Household()
        let first = await house.send("GET", "/api/2/devices/alice.json")
        let cookie = try #require(first.headers["Set-Cookie"])
        let second = await house.send("GET", "/api/2/episodes/alice.json", query: "since=0")
        #expect(second.headers["Set-Cookie"] == cookie, "the same session again")
        let session = String(try #require(cookie.split(separator: ";").first))
        for path in ["/api/2/devices/alice.json", "/subscriptions/alice.json"] {
            let answer = await house.send("GET", path, headers: ["Cookie": session])
            #expect(answer.status == 200 && answer.headers["Set-Cookie"] == nil)
        }
        #expect(await house.send("GET", "/api/2/devices/alice.json", password: "wrong").headers["Set-Cookie"] == nil)
    }

    @Test func anAppPasswordWorksUntilRevoked() async throws {
        let house = try await Household()
        let appHash = try await Yescrypt.hash("app-pass-1")
        let id = try house.hub.store.addAppPassword("alice", label: "phone", passwordHash: appHash)
        #expect(await house.send("GET", "/api/2/devices/alice.json", password: "app-pass-1").status == 200)
        #expect(try house.hub.store.appPasswords("alice").first?.used != nil)
        #expect(try house.hub.store.revokeAppPassword("alice", id: id))
        #expect(await house.send("GET", "/api/2/devices/alice.json", password: "app-pass-1").status == 401)
    }

    @Test func syncGroupsShareOneList() async throws {
        let house = try await Household()
        _ = await house.send(
            "POST", "/api/2/subscriptions/alice/a.json", body: ["add": ["https://one.example/feed"], "remove": []])
        _ = await house.send(
            "POST", "/api/2/subscriptions/alice/b.json", body: ["add": ["https://two.example/feed"], "remove": []])
        let linked = await house.send(
            "POST", "/api/2/sync-devices/alice.json", body: ["synchronize": [["a", "b"]], "stop-synchronize": []])
        #expect(linked.json?["synchronized"] == [["a", "b"]])
        let b = await house.send("GET", "/api/2/subscriptions/alice/b.json", query: "since=0")
        #expect(
            Set(b.json?["add"]?.arrayValue?.compactMap(\.stringValue) ?? []) == [
                "https://one.example/feed", "https://two.example/feed",
            ])
        _ = await house.send(
            "POST", "/api/2/subscriptions/alice/a.json", body: ["add": ["https://three.example/feed"], "remove": []])
        let again = await house.send("GET", "/api/2/subscriptions/alice/b.json", query: "since=0")
        #expect(again.json?["add"]?.arrayValue?.contains("https://three.example/feed") == true)
    }
}

/// What AntennaPod and Kasts send, read from their sources (`Clients/SOURCES.md`), replayed:
/// each step answers as the client needs (its status, the keys it reads).
@Suite struct RecordedClientTests {
    static func fixture(_ name: String) throws -> JSONValue {
        let url = try #require(Bundle.module.url(forResource: "Clients/\(name)", withExtension: "json"))
        return try JSONValue(parsing: try Data(contentsOf: url))
    }

    @Test(arguments: ["antennapod-gpodder", "antennapod-nextcloud", "kasts-gpodder", "kasts-nextcloud"])
    func aClientsSequenceIsAnsweredAsItNeeds(_ name: String) async throws {
        let house = try await Household()
        let fixture = try Self.fixture(name)
        let device = fixture["placeholders"]?["device"]?.stringValue ?? "phone"
        var cookie: String?
        var replayed = 0
        for step in try #require(fixture["steps"]?.arrayValue) {
            guard let method = step["method"]?.stringValue, var path = step["path"]?.stringValue, path.hasPrefix("/") else {
                continue
            }
            path = path.replacing("{user}", with: "alice").replacing("{device}", with: device)
                .replacing("{otherdevice}", with: device)
            var query: [String] = []
            for (key, value) in step["query"]?.objectValue ?? [:] {
                let text = value.stringValue ?? ""
                query.append("\(key)=\(text.hasPrefix("{") || text.contains(" ") ? "0" : text)")
            }
            var headers: [String: String] = [:]
            for (key, value) in step["headers"]?.objectValue ?? [:] { headers[key] = value.stringValue }
            let auth = step["auth"]?.stringValue ?? "basic"
            if auth.contains("basic") { headers.merge(Household.basic("alice", "alice-secret")) { $1 } }
            if auth.contains("cookie"), let cookie { headers["Cookie"] = cookie }
            var raw: [UInt8]?
            if let text = step["body_raw"]?.stringValue {
                raw = Array(text.replacing("{device}", with: device).utf8)
            } else if let body = step["body"], body != .null, body != "" {
                raw = Array(String(decoding: JSONWriter.bytes(body), as: UTF8.self).replacing("{device}", with: device).utf8)
            }
            if path.hasPrefix("/index.php/login/v2") { continue }  // the browser's part: LoginFlowTests
            let answer = await house.send(method, path, query: query.joined(separator: "&"), headers: headers, raw: raw)
            replayed += 1
            let expected = step["expect"]?["status"]?.intValue ?? 200
            #expect(
                answer.status == expected,
                "\(name) \(step["name"]?.stringValue ?? path): \(answer.status) \(answer.text.prefix(300))")
            if let set = answer.headers["Set-Cookie"] { cookie = String(set.split(separator: ";").first ?? "") }
            for key in step["expect"]?["json_keys"]?.arrayValue?.compactMap(\.stringValue) ?? [] where !key.contains("[]") {
                #expect(
                    answer.json?[key] != nil,
                    "\(name) \(step["name"]?.stringValue ?? path): no \(key) in \(answer.text.prefix(300))")
            }
            if let timestamp = answer.json?["timestamp"] {
                // Kasts reads it with Qt's toInt(): whole seconds in 32 bits.
                #expect(timestamp.intValue.map { $0 > 0 && $0 < Int(Int32.max) } == true, "\(timestamp)")
            }
        }
        #expect(replayed >= 4)
        // What the client uploaded is there for the next device.
        let actions = await house.send("GET", "/api/2/episodes/alice.json", query: "since=0")
        #expect(actions.json?["actions"]?.arrayValue?.isEmpty == false, "\(name): \(actions.text.prefix(300))")
    }
}

@Suite struct NextcloudAPITests {
    @Test func answersAsTheGpoddersyncApp() async throws {
        let house = try await Household()
        let base = "/index.php/apps/gpoddersync"
        let up = await house.send(
            "POST", base + "/subscription_change/create",
            body: ["add": ["https://example.com/feed.xml", "not a url", "antennapod_local:x"], "remove": []])
        #expect(up.status == 200 && up.json?["timestamp"]?.intValue != nil)
        let subs = await house.send("GET", base + "/subscriptions", query: "since=0")
        #expect(subs.json?["add"] == ["https://example.com/feed.xml"])
        // A gpodder.net client sees it as the gpoddersync device's list.
        let device = await house.send("GET", "/api/2/subscriptions/alice/\(SyncHub.nextcloudDevice).json", query: "since=0")
        #expect(device.json?["add"] == ["https://example.com/feed.xml"])
        let actions: JSONValue = [
            [
                "podcast": "https://example.com/feed.xml", "episode": "https://example.com/e1.mp3", "guid": "g1",
                "action": "PLAY", "timestamp": "2026-01-02T03:04:05", "started": 0, "position": 100, "total": 3600,
            ],
            [
                "podcast": "https://example.com/feed.xml", "episode": "https://example.com/e1.mp3", "guid": "g1",
                "action": "play", "timestamp": "2026-01-02T04:00:00", "started": 100, "position": 754, "total": 3600,
            ],
            [
                "podcast": "https://example.com/feed.xml", "episode": "https://example.com/e2.mp3", "action": "download",
                "timestamp": "2026-01-02T04:00:00",
            ],
        ]
        #expect(await house.send("POST", base + "/episode_action/create", body: actions).status == 200)
        let down = await house.send("GET", base + "/episode_action", query: "since=0")
        let list = try #require(down.json?["actions"]?.arrayValue)
        // One row per episode, the newest; plays only; -1 for what is not known.
        #expect(list.count == 1)
        #expect(list.first?["position"]?.intValue == 754 && list.first?["action"] == "PLAY")
        #expect(list.first?["timestamp"] == "2026-01-02T04:00:00+00:00")
        // The app's answers to mistakes.
        #expect(
            await house.send("GET", base + "/subscriptions", headers: [:]).json?["message"] == "Current user is not logged in")
        #expect(await house.send("GET", base + "/subscriptions", password: "wrong").status == 401)
        #expect(await house.send("POST", base + "/subscriptions").status == 405)
        #expect(await house.send("GET", base + "/nothing").status == 404)
        #expect(await house.send("POST", base + "/subscription_change/create", body: ["add": []]).status == 500)
        let float: JSONValue = [
            [
                "podcast": "https://e.example/f", "episode": "https://e.example/1", "action": "play",
                "timestamp": "2026-01-02T04:00:00", "position": JSONValue(1.5),
            ]
        ]
        #expect(await house.send("POST", base + "/episode_action/create", body: float).status == 500)
        #expect(await house.send("GET", "/apps/gpoddersync/subscriptions", query: "since=12abc").status == 200)
    }
}

@Suite struct LoginFlowTests {
    /// AntennaPod's Nextcloud sign-in: the app asks, the person signs in on the page, the app
    /// polls and gets an app password of its own.
    @Test func anAppSignsInThroughThePage() async throws {
        let house = try await Household()
        let host = ["Host": "192.168.1.5:8733", "User-Agent": "AntennaPod/3.8"]
        let start = await house.send("POST", "/index.php/login/v2", headers: host)
        let login = try #require(start.json?["login"]?.stringValue)
        let token = try #require(start.json?["poll"]?["token"]?.stringValue)
        #expect(start.json?["poll"]?["endpoint"] == "http://192.168.1.5:8733/index.php/login/v2/poll")
        let pagePath = String(login.dropFirst("http://192.168.1.5:8733".count))
        #expect(
            await house.send("POST", "/index.php/login/v2/poll", headers: host, raw: Array("token=\(token)".utf8)).status == 404)
        let page = await house.send("GET", pagePath, headers: host)
        #expect(page.status == 200 && page.text.contains("AntennaPod/3.8") && page.text.contains("<form"))
        // Another site's form is refused; a wrong password is said on the page.
        let foreign = await house.send(
            "POST", pagePath, headers: host.merging(["Origin": "https://evil.example"]) { $1 },
            raw: Array("user=alice&password=alice-secret".utf8))
        #expect(foreign.status == 403)
        let wrong = await house.send("POST", pagePath, headers: host, raw: Array("user=alice&password=nope".utf8))
        #expect(wrong.status == 401 && wrong.text.contains("Wrong"))
        let signed = await house.send(
            "POST", pagePath, headers: host.merging(["Origin": "http://192.168.1.5:8733"]) { $1 },
            raw: Array("user=alice&password=alice-secret".utf8))
        #expect(signed.status == 200, "\(signed.text)")
        let polled = await house.send("POST", "/index.php/login/v2/poll", headers: host, raw: Array("token=\(token)".utf8))
        #expect(polled.json?["loginName"] == "alice" && polled.json?["server"] == "http://192.168.1.5:8733")
        let password = try #require(polled.json?["appPassword"]?.stringValue)
        #expect(await house.send("GET", "/index.php/apps/gpoddersync/subscriptions", password: password).status == 200)
        #expect(try house.hub.store.appPasswords("alice").count == 1)
        // Collected once.
        #expect(
            await house.send("POST", "/index.php/login/v2/poll", headers: host, raw: Array("token=\(token)".utf8)).status == 404)
    }
}

/// An adversary on the home network.
@Suite struct SyncHubAttackTests {
    /// A revoked app password ends its sessions, and mints none (not even through an answer
    /// that needs no password).
    @Test func aRevokedAppPasswordEndsItsSessionsAndMakesNoMore() async throws {
        let house = try await Household()
        let hash = try await Yescrypt.hash("app-pass-1")
        let id = try house.hub.store.addAppPassword("alice", label: "phone", passwordHash: hash)
        let first = await house.send("GET", "/api/2/devices/alice.json", password: "app-pass-1")
        let session = String(try #require(first.headers["Set-Cookie"]?.split(separator: ";").first))
        #expect(try house.hub.store.revokeAppPassword("alice", id: id))
        #expect(await house.send("GET", "/api/2/devices/alice.json", headers: ["Cookie": session]).status == 401)
        let again = await house.send("GET", "/clientconfig.json", password: "app-pass-1")
        #expect(again.status == 200 && again.headers["Set-Cookie"] == nil)
        #expect(await house.send("GET", "/api/2/devices/alice.json", password: "app-pass-1").status == 401)
    }

    /// A file that cannot be read is said as such (503), never as a wrong password (which would
    /// count against the address and send a phone to its settings).
    @Test func anUnreadableAccountsFileIsNoWrongPassword() async throws {
        let dataDir = try makeTemporaryDirectory()
        let path = dataDir + "/hub.sqlite"
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        let opened = try? SyncHub(dataDir: dataDir)
        #expect(opened == nil, "a file that is no database is not opened as one")
        // A server whose file is overwritten under it (in place: its open connections read it).
        let house = try await Household()
        for suffix in ["", "-wal"] {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: house.dataDir + "/hub.sqlite" + suffix))
            try handle.write(contentsOf: Data(repeating: 0x41, count: 1 << 16))
            try handle.close()
        }
        let answer = await house.send("GET", "/api/2/devices/alice.json")
        #expect(answer.status == 503, "an unreadable file is no wrong password: \(answer.status) \(answer.text)")
        #expect(answer.text.contains("cannot read its accounts"))
        let nextcloud = await house.send("GET", "/index.php/apps/gpoddersync/subscriptions")
        #expect(nextcloud.status == 503, "\(nextcloud.text)")
    }

    /// Guesses sent all at once count as many: no more than ten are checked.
    @Test func guessesAtOnceCountEachOne() async throws {
        let house = try await Household()
        let statuses = await withTaskGroup(of: Int.self) { group in
            for n in 0..<20 {
                group.addTask {
                    await house.send("GET", "/api/2/devices/alice.json", password: "guess\(n)", address: "10.9.9.9").status
                }
            }
            var all: [Int] = []
            for await status in group { all.append(status) }
            return all
        }
        #expect(statuses.filter { $0 == 401 }.count <= 10, "\(statuses)")
        #expect(statuses.filter { $0 == 429 }.count >= 10, "\(statuses)")
    }

    /// Twenty phones behind one address signing in at once are twenty right passwords, not a
    /// guessing run.
    @Test func rightPasswordsAtOnceAreNoGuesses() async throws {
        let house = try await Household()
        let statuses = await withTaskGroup(of: Int.self) { group in
            for n in 0..<20 {
                let user = n % 2 == 0 ? "alice" : "bob"
                group.addTask {
                    await house.send("POST", "/api/2/auth/\(user)/login.json", user: user, address: "10.2.2.2").status
                }
            }
            var all: [Int] = []
            for await status in group { all.append(status) }
            return all
        }
        #expect(statuses.allSatisfy { $0 == 200 }, "\(statuses)")
    }

    /// A locked-out address (behind a proxy, everyone's) still lets in a session and a password
    /// checked before; a stale session counts as no guess.
    @Test func aLockoutSparesWhoWasLetInBefore() async throws {
        let house = try await Household()
        let proxy = "127.0.0.1"
        let login = await house.send("GET", "/api/2/devices/alice.json", address: proxy)
        let session = String(try #require(login.headers["Set-Cookie"]?.split(separator: ";").first))
        for _ in 0..<12 {
            _ = await house.send("GET", "/api/2/devices/bob.json", headers: ["Cookie": "sessionid=stale"], address: proxy)
        }
        #expect(
            await house.send("GET", "/api/2/devices/bob.json", user: "bob", address: proxy).status == 200,
            "stale sessions are no guesses")
        for n in 0..<10 {
            _ = await house.send("GET", "/api/2/devices/bob.json", user: "bob", password: "guess\(n)", address: proxy)
        }
        #expect(await house.send("GET", "/api/2/devices/alice.json", headers: ["Cookie": session], address: proxy).status == 200)
        #expect(await house.send("GET", "/api/2/devices/alice.json", address: proxy).status == 200, "a password let in before")
    }

    @Test func theSignInPageTakesTheAccountsPasswordOnceOnly() async throws {
        let house = try await Household()
        let hash = try await Yescrypt.hash("app-pass-1")
        _ = try house.hub.store.addAppPassword("alice", label: "leaked", passwordHash: hash)
        let host = ["Host": "192.168.1.5:8733"]
        let start = await house.send("POST", "/index.php/login/v2", headers: host)
        let page = String(try #require(start.json?["login"]?.stringValue).dropFirst("http://192.168.1.5:8733".count))
        let withApp = await house.send("POST", page, headers: host, raw: Array("user=alice&password=app-pass-1".utf8))
        #expect(withApp.status == 401, "an app password makes no other")
        #expect(await house.send("POST", page, headers: host, raw: Array("user=alice&password=alice-secret".utf8)).status == 200)
        _ = await house.send("POST", page, headers: host, raw: Array("user=bob&password=bob-secret".utf8))
        #expect(try house.hub.store.appPasswords("bob").isEmpty, "a granted sign-in is not granted again")
        #expect(try house.hub.store.appPasswords("alice").count == 2)
        // Sign-ins asked from one address are bounded.
        var statuses: [Int] = []
        for _ in 0..<6 {
            statuses.append(await house.send("POST", "/index.php/login/v2", headers: host, address: "10.1.1.1").status)
        }
        #expect(statuses.contains(429))
    }

    @Test func groupsDoNotMergeByAccidentAndTheAccountKeepsWhatADeviceFollows() async throws {
        let house = try await Household()
        for (device, feed) in [("a", "https://a.example/f"), ("b", "https://b.example/f"), ("c", "https://c.example/f")] {
            _ = await house.send(
                "POST", "/api/2/subscriptions/alice/\(device).json", body: ["add": [.string(feed)], "remove": []])
        }
        _ = await house.send(
            "POST", "/api/2/sync-devices/alice.json", body: ["synchronize": [["a", "b"]], "stop-synchronize": []])
        _ = await house.send("POST", "/api/2/sync-devices/alice.json", body: ["synchronize": [], "stop-synchronize": ["a"]])
        let linked = await house.send(
            "POST", "/api/2/sync-devices/alice.json", body: ["synchronize": [["a", "c"]], "stop-synchronize": []])
        #expect(linked.json?["synchronized"] == [["a", "c"]], "\(linked.text)")
        #expect(linked.json?["not-synchronized"] == ["b"])
        // b followed a's show while linked; dropping it there leaves it on the account's list (a
        // and c follow it).
        _ = await house.send("POST", "/api/2/subscriptions/alice/b.json", body: ["add": [], "remove": ["https://a.example/f"]])
        let all = await house.send("GET", "/subscriptions/alice.json")
        #expect(all.json?.arrayValue?.contains { $0["url"] == "https://a.example/f" } == true)
    }

    @Test func wrongPasswordsInALoopLockTheAddressOutNotTheAccount() async throws {
        let house = try await Household()
        for _ in 0..<10 {
            #expect(await house.send("GET", "/api/2/devices/alice.json", password: "guess", address: "10.0.0.66").status == 401)
        }
        let locked = await house.send("GET", "/api/2/devices/alice.json", address: "10.0.0.66")
        #expect(locked.status == 429, "even the right password, from the guessing address")
        #expect(Int(locked.headers["Retry-After"] ?? "") ?? 0 > 0)
        #expect(await house.send("GET", "/api/2/devices/alice.json", address: "10.0.0.7").status == 200)
        // A name that is no account takes as long to refuse and counts the same.
        #expect(await house.send("GET", "/api/2/devices/mallory.json", user: "mallory", address: "10.0.0.8").status == 401)
    }

    @Test(arguments: ["..%2F..%2Fetc", "a%2Fb", "a b", "%00", String(repeating: "d", count: 65), "", "dev%C3%A9"])
    func aDeviceNameWithPathCharactersIsRefused(_ name: String) async throws {
        let house = try await Household()
        let answer = await house.send("POST", "/api/2/devices/alice/\(name).json", body: ["caption": "x", "type": "mobile"])
        #expect(answer.status == 400 || answer.status == 404, "\(name): \(answer.status)")
        let devices = await house.send("GET", "/api/2/devices/alice.json")
        #expect(devices.json == [])
    }

    @Test func aHundredThousandSubscriptionsInOneUpload() async throws {
        let house = try await Household()
        let urls = (0..<100_000).map { JSONValue.string("https://feeds.example/\($0).xml") }
        let up = await house.send("POST", "/api/2/subscriptions/alice/phone.json", body: ["add": .array(urls), "remove": []])
        #expect(up.status == 200, "\(up.text.prefix(200))")
        let down = await house.send("GET", "/api/2/subscriptions/alice/phone.json", query: "since=0")
        #expect(down.json?["add"]?.arrayValue?.count == 100_000)
        let more = await house.send(
            "POST", "/api/2/subscriptions/alice/phone.json", body: ["add": ["https://one.more.example/feed"], "remove": []])
        #expect(more.status == 400, "a device follows at most 100,000 shows")
    }

    @Test func absurdActionsCostNothingButThemselves() async throws {
        let house = try await Household()
        let base: [String: JSONValue] = [
            "podcast": "https://example.com/feed.xml", "episode": "https://example.com/e1.mp3", "action": "play",
        ]
        func with(_ extra: [String: JSONValue]) -> JSONValue { .object(base.merging(extra) { $1 }) }
        // Positions no episode has are left out; a clock in 2099 counts as now.
        let odd = await house.send(
            "POST", "/api/2/episodes/alice.json",
            body: [
                with(["timestamp": "2099-01-01T00:00:00", "position": -5, "total": .number("1e40"), "started": "x"]),
                with(["timestamp": "2026-01-01T00:00:00", "position": JSONValue(12.6)]),
            ])
        #expect(odd.status == 200, "\(odd.text)")
        let down = await house.send("GET", "/api/2/episodes/alice.json", query: "since=0")
        let actions = try #require(down.json?["actions"]?.arrayValue)
        #expect(actions.count == 2)
        #expect(actions.contains { $0["position"]?.intValue == 13 })
        let now = Date().timeIntervalSince1970
        for action in actions {
            let text = try #require(action["timestamp"]?.stringValue)
            let time = try #require(ISODate.parse(text + "Z"))
            #expect(time.timeIntervalSince1970 <= now + 5)
            #expect(action["total"] == nil || action["total"]?.intValue == 13)
        }
        // What is no action is refused whole, nothing of it stored.
        for bad: JSONValue in [
            [with(["action": "explode"])], [with(["timestamp": "yesterday"])], [with(["timestamp": 12345])], ["nope"],
            [with(["episode": ""])], ["podcast": "x"], [with(["device": "../etc"])],
        ] {
            let answer = await house.send("POST", "/api/2/episodes/alice.json", body: bad)
            #expect(answer.status == 400, "\(bad)")
        }
        #expect(await house.send("GET", "/api/2/episodes/alice.json", query: "since=0").json?["actions"]?.arrayValue?.count == 2)
        #expect(await house.send("POST", "/api/2/episodes/alice.json", raw: Array("{\"a\":".utf8)).status == 400)
        #expect(await house.send("GET", "/api/2/episodes/alice.json", query: "since=-1").status == 400)
        #expect(await house.send("GET", "/api/2/episodes/alice.json", query: "since=abc").status == 400)
    }
}

/// The desk linked to an account of its own server: an accounts file it cannot read is said as
/// such, never as "no household account" (which sends a person to make the account again).
@Suite struct DeskLinkTests {
    @Test func anUnreadableAccountsFileIsSaidNotTakenForNoAccount() async throws {
        let fixture = try HostFixture()
        let dataDir = fixture.host.paths.dataDir
        let hub = try SyncHub(dataDir: dataDir)
        try hub.store.addUser("alice", passwordHash: "$y$j9T$salt$hash")
        let account = SyncAccount(dialect: .gpodder, server: HubLink.server, username: "alice", password: "", device: "desk")
        _ = try SyncServer.of(account, host: fixture.host)
        let nobody = SyncAccount(dialect: .gpodder, server: HubLink.server, username: "bob", password: "", device: "desk")
        #expect(throws: ProviderFailure.self) { try SyncServer.of(nobody, host: fixture.host) }
        do {
            _ = try SyncServer.of(nobody, host: fixture.host)
        } catch {
            #expect("\(error)".contains("no household account"), "\(error)")
        }
        // The accounts' table gone from under it: said, with the file.
        let pool = try DatabasePool(path: dataDir + "/hub.sqlite")
        try await pool.write { db in try db.execute(sql: "DROP TABLE users") }
        do {
            _ = try SyncServer.of(account, host: fixture.host)
            Issue.record("an unreadable accounts file let the desk in")
        } catch {
            #expect("\(error)".contains("cannot read") && "\(error)".contains("hub.sqlite"), "\(error)")
            #expect(!"\(error)".contains("no household account"), "\(error)")
        }
    }
}
