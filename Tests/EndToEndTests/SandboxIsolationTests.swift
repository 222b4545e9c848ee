import Foundation
import JSONRPC
import TestSupport
import Testing

/// The sandbox is a try-out: whatever a person does in it (favorites, logins everywhere, a sync
/// account and a round, settings, a download) stays in its own data dir, and the real one's
/// files are byte for byte what they were.
@Suite struct SandboxIsolationTests {
    /// Every file under `root`, by its path below it, with its bytes.
    static func files(under root: String) -> [String: Data] {
        var files: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return files }
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let full = root + "/" + path
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue else {
                files[path + "/"] = Data()
                continue
            }
            files[path] = FileManager.default.contents(atPath: full) ?? Data("unreadable".utf8)
        }
        return files
    }

    @Test func aSandboxSessionLeavesTheRealLibraryByteForByte() async throws {
        let home = try makeTemporaryDirectory()
        // The real locations, as a person has them: nothing named but HOME.
        let environment = [
            "HOME": home, "MEDIAHOST_DATA_DIR": "", "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": "", "XDG_DATA_HOME": "",
            "MEDIAHOST_SANDBOX_MEDIA_RATE": "0", "MEDIAHOST_HOST_BACKGROUND": "never",
        ]
        // A library with something in it: a setting, a list.
        for (method, params) in [
            ("config.set", #"{"key":"downloads.concurrency","value":2}"#), ("lists.create", #"{"name":"Road trip"}"#),
        ] {
            let made = try await runMediahost(["call", method, params], environment: environment, ownSandbox: true)
            #expect(made.status == 0, "\(made.stderr)")
        }
        let before = Self.files(under: home)
        try #require(before.keys.contains(".local/share/mediahost/mediahost.sqlite"), "\(before.keys.sorted())")

        let server = try await PodcastSyncTests.Server.nextcloud()
        defer { server.stop() }
        let script = """
            search podcasts kitchen
            fav 1
            config downloads.concurrency 3
            config repl.images off
            call auth.login {"provider":"tmdb","username":"ada","password":"lovelace"}
            call auth.login {"provider":"bluesky","username":"alice.test","password":"sand-box1-test-pass"}
            login youtube
            call sync.login {"server":"\(server.base)","username":"alice","password":"app-pass","dialect":"nextcloud"}
            sync
            open podcasts:podcast:1999999997
            download 1
            """
        let session = try await runMediahost(["--sandbox"], input: script + "\n", environment: environment, ownSandbox: true)
        #expect(session.status == 0, "\(session.stdout)\n\(session.stderr)")
        #expect(session.stdout.contains("is a favorite"))

        let after = Self.files(under: home)
        for (path, bytes) in before {
            #expect(after[path] == bytes, "\(path) changed in the real library")
        }
        let added = after.keys.filter { before[$0] == nil && !$0.hasPrefix(".local/share/mediahost-sandbox/") }
            .filter { !$0.hasPrefix(".cache/mediahost-sandbox/") }
        #expect(added.isEmpty, "the sandbox wrote \(added.sorted()) outside its own folders")

        // What it did is in its own data dir, for the next sandbox; the library has none of it.
        let sandboxDir = home + "/.local/share/mediahost-sandbox"
        #expect(FileManager.default.fileExists(atPath: sandboxDir + "/auth/sync.json"))
        #expect(FileManager.default.fileExists(atPath: sandboxDir + "/auth/bluesky.json"))
        let downloads = (try? FileManager.default.contentsOfDirectory(atPath: sandboxDir + "/downloads")) ?? []
        #expect(!downloads.isEmpty, "\(session.stdout)")
        let realFavorites = try await runMediahost(
            ["call", "favorites.list"], environment: environment, ownSandbox: true)
        #expect(try JSONValue(parsing: realFavorites.stdout)["items"]?.arrayValue?.isEmpty == true, "\(realFavorites.stdout)")
        let sandboxFavorites = try await runMediahost(
            ["--sandbox", "call", "favorites.list"], environment: environment, ownSandbox: true)
        #expect(try JSONValue(parsing: sandboxFavorites.stdout)["items"]?.arrayValue?.count == 1, "\(sandboxFavorites.stderr)")
    }

    /// A login kept by one sandbox works in the next (same port, tokens the replica still takes);
    /// one whose server moved is dropped with a line that says why and what to do.
    @Test func aLoginKeptBySandboxIsUsableNextOrDroppedWithWhy() async throws {
        let dataDir = try makeTemporaryDirectory()
        let login = try await runMediahost(
            [
                "--sandbox", "call", "auth.login",
                #"{"provider":"bluesky","username":"alice.test","password":"sand-box1-test-pass"}"#,
            ],
            dataDir: dataDir)
        #expect(login.status == 0, "\(login.stderr)")
        let port = try #require(
            (try? String(contentsOfFile: dataDir + "/sandbox.port", encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines))
        // The next sandbox listens there again, and the session goes on: a search needing it works.
        let search = try await runMediahost(
            ["--sandbox", "call", "media.search", #"{"provider":"bluesky","query":"cat"}"#], dataDir: dataDir)
        #expect(search.status == 0, "\(search.stderr)")
        #expect(!search.stderr.contains("login"), "\(search.stderr)")
        #expect(try String(contentsOfFile: dataDir + "/sandbox.port", encoding: .utf8).contains(port))

        // Its port taken by another program: the sandbox listens elsewhere, and the login made on
        // the old one is dropped, saying so, instead of failing every call.
        let blocker = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(blocker) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port) ?? 0).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var one: Int32 = 1
        setsockopt(blocker, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(blocker, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(bound == 0 && listen(blocker, 1) == 0, "cannot hold port \(port)")
        let moved = try await runMediahost(
            ["--sandbox", "call", "auth.status", #"{"provider":"bluesky"}"#], dataDir: dataDir)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(
            moved.stderr.contains("bluesky: the login made on http://127.0.0.1:\(port)/bluesky is forgotten"), "\(moved.stderr)")
        #expect(moved.stderr.contains("`login bluesky` again"), "\(moved.stderr)")
        #expect(try JSONValue(parsing: moved.stdout).arrayValue?.first?["loggedIn"] == false, "\(moved.stdout)")
    }
}
