import Basics
import Foundation
import HostPlugins
import JSONRPC
import MediaHost
import Synchronization
import TestSupport
import Testing

/// Providers as plugins, through the built binary: the example plugin in sh (Providers/Shelf),
/// and plugins that misbehave on purpose.
@Suite struct PluginTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A data dir whose plugins folder holds the Shelf example.
    static func dataDirWithShelf() throws -> String {
        let dataDir = try makeTemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dataDir + "/plugins", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: repository.appendingPathComponent("Providers/Shelf").path, toPath: dataDir + "/plugins/shelf")
        return dataDir
    }

    /// A plugin folder holding `script` as its program.
    static func addPlugin(_ id: String, to dataDir: String, script: String, extra: String = "") throws {
        let folder = dataDir + "/plugins/" + id
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try ("#!/bin/sh\n" + script).write(toFile: folder + "/run.sh", atomically: true, encoding: .utf8)
        chmod(folder + "/run.sh", 0o755)
        try """
        command = "./run.sh"
        kinds = ["movie"]
        capabilities = ["search", "item"]
        \(extra)
        """.write(toFile: folder + "/plugin.toml", atomically: true, encoding: .utf8)
    }

    /// A plugin program in sh: reads requests, answers `initialize` with its id (after
    /// `onInitialize`), and the others with the `case` arms given; `before` runs at its start,
    /// `each` for every line read.
    static func answering(before: String = "", each: String = "", onInitialize: String = "", _ arms: String) -> String {
        """
        \(before)
        while read -r line; do
          \(each)
          id=$(printf '%s' "$line" | jq -c '.id // empty')
          [ -z "$id" ] && continue
          case "$line" in
            *initialize*) \(onInitialize) printf '{"jsonrpc":"2.0","id":%s,"result":{"id":"%s"}}\\n' "$id" "$MEDIAHOST_PLUGIN_ID" ;;
        \(arms)
          esac
        done

        """
    }

    static func call(_ method: String, _ params: String, dataDir: String, environment: [String: String] = [:]) async throws -> (
        status: Int32, value: JSONValue?, stderr: String
    ) {
        let result = try await runMediahost(["call", method, params], dataDir: dataDir, environment: environment)
        let text = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return (result.status, text.isEmpty ? nil : try? JSONValue(parsing: text), result.stderr)
    }

    @Test func theShelfPluginWorksLikeABuiltInProvider() async throws {
        let dataDir = try Self.dataDirWithShelf()
        let list = try #require(try await Self.call("providers.list", "{}", dataDir: dataDir).value)
        let shelf = try #require(list.arrayValue?.first { $0["id"] == "shelf" })
        #expect(shelf["name"] == "Shelf (example plugin in sh)")
        #expect(shelf["notes"]?.stringValue?.contains("plugins/shelf/plugin.toml") == true)

        let search = try await Self.call("media.search", #"{"provider":"shelf","query":"murnau"}"#, dataDir: dataDir)
        #expect(search.status == 0, "\(search.stderr)")
        #expect(search.value?["items"]?.arrayValue?.map { $0["id"] } == ["shelf:movie:nosferatu"])
        let browse = try await Self.call("media.browse", #"{"provider":"shelf","category":"silent"}"#, dataDir: dataDir)
        #expect(browse.value?["items"]?.arrayValue?.count == 2)
        let added = try await Self.call("favorites.add", #"{"id":"shelf:movie:metropolis"}"#, dataDir: dataDir)
        #expect(added.value?["favorite"] == true, "\(added.stderr)")
        let favorites = try await Self.call("favorites.list", "{}", dataDir: dataDir)
        #expect(favorites.value?["items"]?.arrayValue?.first?["title"] == "Metropolis")
        let missing = try await Self.call("media.get", #"{"id":"shelf:movie:casablanca"}"#, dataDir: dataDir)
        #expect(missing.status == 1 && missing.stderr.contains("no such film") && missing.stderr.contains("-32002"))

        // Across providers, the plugin is one more source; in the REPL, one more provider.
        let all = try await Self.call("media.search", #"{"query":"nosferatu"}"#, dataDir: dataDir)
        #expect(all.value?["items"]?.arrayValue?.contains { $0["id"] == "shelf:movie:nosferatu" } == true)
        let repl = try await runMediahost([], input: "search shelf metropolis\nshow 1\n", dataDir: dataDir)
        #expect(repl.stdout.contains("Metropolis") && repl.stdout.contains("Fritz Lang"), "\(repl.stdout)")
    }

    @Test func brokenPluginsCostOnlyTheirOwnRequests() async throws {
        let dataDir = try Self.dataDirWithShelf()
        try Self.addPlugin("crashes", to: dataDir, script: "echo 'boom: the index is corrupt' >&2\nexit 3\n")
        try Self.addPlugin("hangs", to: dataDir, script: "while read -r line; do :; done\n")
        try Self.addPlugin("babbles", to: dataDir, script: "while read -r line; do echo 'hello there'; done\n")
        let half = #"{"jsonrpc":"2.0","id":%s,"result":{"items":[{"title":"half an item"}]}}"#
        try Self.addPlugin(
            "halfdone", to: dataDir,
            script: Self.answering(#"*) printf '\#(half)\n' "$id" ;;"#))
        // A manifest that names no program: listed with what is wrong, its calls answering it.
        try FileManager.default.createDirectory(atPath: dataDir + "/plugins/missing", withIntermediateDirectories: true)
        try #"command = "./nowhere.sh""#.write(
            toFile: dataDir + "/plugins/missing/plugin.toml", atomically: true, encoding: .utf8)
        // A relative command that climbs out of the folder, and one that cannot be run.
        try FileManager.default.createDirectory(atPath: dataDir + "/outside", withIntermediateDirectories: true)
        try "#!/bin/sh\n".write(toFile: dataDir + "/outside/escape.sh", atomically: true, encoding: .utf8)
        chmod(dataDir + "/outside/escape.sh", 0o755)
        try FileManager.default.createDirectory(atPath: dataDir + "/plugins/noexec", withIntermediateDirectories: true)
        try "#!/bin/sh\n".write(toFile: dataDir + "/plugins/noexec/run.sh", atomically: true, encoding: .utf8)
        for (id, manifest) in [
            ("hologram", "command = \"/bin/true\"\nkinds = [\"hologram\"]\n"), ("garbled", "command = [unterminated\n"),
            ("escape", "command = \"../../outside/escape.sh\"\n"), ("noexec", "command = \"./run.sh\"\n"),
        ] {
            try FileManager.default.createDirectory(atPath: dataDir + "/plugins/" + id, withIntermediateDirectories: true)
            try manifest.write(toFile: dataDir + "/plugins/\(id)/plugin.toml", atomically: true, encoding: .utf8)
        }
        let listed = try await Self.call("providers.list", "{}", dataDir: dataDir).value
        let missing = try #require(listed?.arrayValue?.first { $0["id"] == "missing" })
        #expect(missing["notes"]?.stringValue?.contains("cannot find './nowhere.sh'") == true, "\(missing)")
        #expect(missing["configured"] == false, "a broken plugin is not configured: \(missing)")
        let escape = try #require(listed?.arrayValue?.first { $0["id"] == "escape" })
        #expect(escape["notes"]?.stringValue?.contains("outside the plugin's folder") == true, "\(escape)")
        let noexec = try #require(listed?.arrayValue?.first { $0["id"] == "noexec" })
        #expect(noexec["notes"]?.stringValue?.contains("is not executable (chmod +x") == true, "\(noexec)")
        let hologram = try #require(listed?.arrayValue?.first { $0["id"] == "hologram" })
        #expect(hologram["notes"]?.stringValue?.contains("unknown kind 'hologram'") == true, "\(hologram)")
        let garbled = try #require(listed?.arrayValue?.first { $0["id"] == "garbled" })
        #expect(garbled["notes"]?.stringValue?.contains("cannot be read") == true, "\(garbled)")
        #expect(listed?.arrayValue?.contains { $0["id"] == "shelf" } == true, "the others are listed as ever")
        let environment = ["MEDIAHOST_HTTP_TIMEOUT": "2"]
        func search(_ provider: String) async throws -> String {
            let result = try await Self.call(
                "media.search", #"{"provider":"\#(provider)","query":"x"}"#, dataDir: dataDir, environment: environment)
            #expect(result.status == 1, "\(provider) should fail: \(result.stderr)")
            return result.stderr
        }
        let broken = try await search("missing")
        #expect(broken.contains("cannot find") && broken.contains("(-32009)") && !broken.contains("Internal error"), "\(broken)")
        let crashed = try await search("crashes")
        #expect(
            crashed.contains("crashes") && crashed.contains("exited") && crashed.contains("boom: the index is corrupt"),
            "\(crashed)")
        // The setting is named with its value, not what was left of the call when it ran out.
        let hung = try await search("hangs")
        #expect(hung.contains("did not answer initialize within 2 s (the call's http.timeout)"), "\(hung)")
        #expect(try await search("babbles").contains("not JSON"))
        let half2 = try await search("halfdone")
        #expect(half2.contains("halfdone") && half2.contains("without") && half2.contains("-32007"), "\(half2)")

        // Across providers each is one entry in errors; the shelf still answers.
        let all = try #require(
            try await Self.call("media.search", #"{"query":"metropolis"}"#, dataDir: dataDir, environment: environment).value)
        #expect(all["items"]?.arrayValue?.contains { $0["id"] == "shelf:movie:metropolis" } == true)
        let failed = Set(all["errors"]?.arrayValue?.compactMap { $0["provider"]?.stringValue } ?? [])
        #expect(failed.isSuperset(of: ["crashes", "hangs", "babbles", "halfdone"]), "\(failed)")
        // A broken plugin is not configured: a search of every provider leaves it out, as it
        // leaves out a provider missing its key.
        #expect(!failed.contains("missing"))
    }

    /// A plugin that exits while a child it forked holds its stdout: its call fails as an exit
    /// (not a timeout), and the child ends with it (the plugin's process group); a child of a
    /// plugin still running ends when the host exits.
    @Test func aPluginsForkedChildrenEndWithIt() async throws {
        let dataDir = try Self.dataDirWithShelf()
        let pids = dataDir + "/children"
        try Self.addPlugin(
            "forks", to: dataDir,
            script: Self.answering(
                before: "sleep 300 & echo $! >> '\(pids)'",
                #"*provider.search*) echo 'leaving my child behind' >&2; exit 4 ;;"#))
        let environment = ["MEDIAHOST_HTTP_TIMEOUT": "20"]
        let started = ContinuousClock.now
        let failed = try await Self.call(
            "media.search", #"{"provider":"forks","query":"x"}"#, dataDir: dataDir, environment: environment)
        #expect(
            failed.status == 1 && failed.stderr.contains("exited") && !failed.stderr.contains("did not answer"),
            "\(failed.stderr)")
        #expect(ContinuousClock.now - started < .seconds(15), "failed as an exit, long before the 20 s timeout")
        // The child of the plugin that exited, and of one that was running when the host exited.
        _ = try await Self.call("media.get", #"{"id":"forks:movie:x"}"#, dataDir: dataDir, environment: environment)
        let children = try String(contentsOfFile: pids, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
        try #require(children.count >= 1)
        let deadline = ContinuousClock.now + .seconds(20)
        while children.contains(where: { kill($0, 0) == 0 }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!children.contains { kill($0, 0) == 0 }, "children still running: \(children)")
    }

    /// Plugins whose id cannot be a provider's (a folder "Bad Name", one declaring
    /// "../../youtube", a folder named like a built-in, a `[plugins."../../evil"]` entry) do not
    /// vanish: host.info, the REPL's `providers` and `plugin list` say each and why.
    @Test func pluginsWithAnInvalidIdAreListedWithWhy() async throws {
        let dataDir = try Self.dataDirWithShelf()
        for (folder, manifest) in [
            ("Bad Name", "command = \"/bin/cat\"\n"), ("evil", "id = \"../../youtube\"\ncommand = \"/bin/cat\"\n"),
            ("youtube", "command = \"/bin/cat\"\n"),
        ] {
            try FileManager.default.createDirectory(atPath: dataDir + "/plugins/" + folder, withIntermediateDirectories: true)
            try manifest.write(toFile: dataDir + "/plugins/\(folder)/plugin.toml", atomically: true, encoding: .utf8)
        }
        let config = dataDir + "/config.toml"
        try "[plugins.\"../../evil\"]\ncommand = \"/bin/cat\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let environment = ["MEDIAHOST_CONFIG": config]
        let info = try await runMediahost(["--config", config, "call", "host.info"], dataDir: dataDir, environment: environment)
        let problems = try JSONValue(parsing: info.stdout)["pluginProblems"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(problems.count == 4, "\(problems)")
        #expect(problems.contains { $0.contains("Bad Name") && $0.contains("lower-case letters") }, "\(problems)")
        #expect(problems.contains { $0.contains("'../../youtube'") }, "\(problems)")
        #expect(problems.contains { $0.contains("plugin youtube") && $0.contains("built-in") }, "\(problems)")
        #expect(problems.contains { $0.contains("../../evil") }, "\(problems)")
        let repl = try await runMediahost(["--config", config], input: "providers\n", dataDir: dataDir)
        #expect(repl.stdout.contains("not loaded:") && repl.stdout.contains("plugin Bad Name ("), "\(repl.stdout)")
        let list = try await runMediahost(["plugin", "list", "--config", config], dataDir: dataDir)
        #expect(list.status == 1, "\(list.stdout)\(list.stderr)")
        #expect(list.stdout.contains("shelf  /") && list.stdout.contains("not loaded: plugin Bad Name"), "\(list.stdout)")
        // `plugin new` writes <dir>/<id>, and takes the data dir as every command does.
        let parent = try makeTemporaryDirectory()
        let made = try await runMediahost(["plugin", "new", "mine", "--dir", parent], dataDir: dataDir)
        #expect(made.status == 0 && FileManager.default.fileExists(atPath: parent + "/mine/plugin.toml"), "\(made.stderr)")
        let other = try makeTemporaryDirectory()
        let inDataDir = try await runMediahost(["--data-dir", other, "plugin", "new", "theirs"])
        #expect(
            inDataDir.status == 0 && FileManager.default.fileExists(atPath: other + "/plugins/theirs/plugin.toml"),
            "\(inDataDir.stderr)")
    }

    /// A plugin that answers `initialize` and then reads nothing more: 300 calls to it with long
    /// queries (more than its stdin pipe holds) on one `mediahost rpc`. The other calls are
    /// answered before any of its own has timed out, and each of its own fails by its deadline.
    @Test func aPluginThatStopsReadingFailsOnlyItsOwnCalls() async throws {
        let dataDir = try Self.dataDirWithShelf()
        try Self.addPlugin(
            "sleepy", to: dataDir,
            script: """
                read -r line
                id=$(printf '%s' "$line" | jq -c '.id')
                printf '{"jsonrpc":"2.0","id":%s,"result":{"id":"sleepy"}}\\n' "$id"
                exec sleep 600
                """)
        let process = try MediahostProcess(
            ["--no-service", "rpc"], dataDir: dataDir, environment: ["MEDIAHOST_HTTP_TIMEOUT": "10"])
        defer { process.process.terminate() }
        let query = String(repeating: "q", count: 480)
        var batch = ""
        for id in 0..<300 {
            batch += #"{"jsonrpc":"2.0","id":\#(id),"method":"media.search","params":{"provider":"sleepy","query":"\#(query)"}}"#
            batch += "\n"
        }
        process.send(batch)
        process.sendLine(#"{"jsonrpc":"2.0","id":"info","method":"host.info"}"#)
        process.sendLine(
            #"{"jsonrpc":"2.0","id":"shelf","method":"media.search","params":{"provider":"shelf","query":"murnau"}}"#)
        let answers = await process.messages(302, timeout: .seconds(60))
        try #require(answers.count == 302, "\(answers.suffix(3)) \(process.errors.suffix(500))")
        let firstFailure = try #require(answers.firstIndex { $0["error"] != nil })
        let info = try #require(answers.firstIndex { $0["id"] == "info" })
        let shelf = try #require(answers.firstIndex { $0["id"] == "shelf" })
        #expect(info < firstFailure && shelf < firstFailure, "nothing else waited for the stuck plugin")
        #expect(answers[shelf]["result"]?["items"]?.arrayValue?.count == 1)
        let failures = answers.filter { $0["error"] != nil }
        #expect(failures.count == 300)
        #expect(
            failures.allSatisfy { $0["error"]?["message"]?.stringValue?.contains("did not answer provider.search") == true },
            "\(failures.first ?? nil)")
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    @Test func aPluginSeesNoOtherProvidersSecretsAndRunsInItsFolder() async throws {
        let dataDir = try makeTemporaryDirectory()
        try Self.addPlugin(
            "nosy", to: dataDir,
            script: Self.answering(
                before: "env > seen-environment\npwd > seen-directory", each: #"printf '%s\n' "$line" >> seen-requests"#,
                #"*) printf '{"jsonrpc":"2.0","id":%s,"result":{"items":[]}}\n' "$id" ;;"#),
            extra: "[[config]]\nname = \"token\"\nsummary = \"its own token\"\nsecret = true\n")
        let result = try await Self.call(
            "media.search", #"{"provider":"nosy","query":"x"}"#, dataDir: dataDir,
            environment: [
                "TMDB_API_KEY": "tmdb-secret-1234", "MEDIAHOST_YOUTUBE_CLIENT_SECRET": "yt-secret-5678",
                "MEDIAHOST_NOSY_TOKEN": "nosy-own-9012",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let folder = dataDir + "/plugins/nosy"
        let environment = try String(contentsOfFile: folder + "/seen-environment", encoding: .utf8)
        #expect(!environment.contains("tmdb-secret-1234") && !environment.contains("yt-secret-5678"))
        #expect(!environment.contains("nosy-own-9012"), "its own settings come in initialize, not the environment")
        let requests = try String(contentsOfFile: folder + "/seen-requests", encoding: .utf8)
        #expect(requests.contains("nosy-own-9012"), "initialize carries its settings")
        #expect(!requests.contains("tmdb-secret-1234"))
        let directory = try String(contentsOfFile: folder + "/seen-directory", encoding: .utf8)
        #expect(
            URL(fileURLWithPath: directory.trimmingCharacters(in: .newlines)).resolvingSymlinksInPath().path
                == URL(fileURLWithPath: folder).resolvingSymlinksInPath().path)
    }

    /// Over RPC the plugin's process is kept between calls, stopped after `plugin.idle`, and
    /// started again by the next call.
    @Test func anIdlePluginIsStoppedAndStartedAgainWhenNeeded() async throws {
        let dataDir = try makeTemporaryDirectory()
        try Self.addPlugin(
            "counted", to: dataDir,
            script: Self.answering(
                before: "echo $$ >> starts", #"*) printf '{"jsonrpc":"2.0","id":%s,"result":{"items":[]}}\n' "$id" ;;"#))
        let process = try MediahostProcess(["rpc"], dataDir: dataDir, environment: ["MEDIAHOST_PLUGIN_IDLE": "1"])
        let search = #"{"jsonrpc":"2.0","id":%d,"method":"media.search","params":{"provider":"counted","query":"x"}}"#
        process.sendLine(String(format: search, 1))
        process.sendLine(String(format: search, 2))
        #expect(await process.messages(2).allSatisfy { $0["result"]?["items"] == [] })
        let starts = dataDir + "/plugins/counted/starts"
        func pids() -> [String] {
            ((try? String(contentsOfFile: starts, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        #expect(pids().count == 1, "one process for both calls")
        let first = try #require(pids().first)
        // Idle for longer than plugin.idle: the process goes.
        let deadline = ContinuousClock.now + .seconds(10)
        while FileManager.default.fileExists(atPath: "/proc/\(first)"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(first)"), "stopped when idle")
        process.sendLine(String(format: search, 3))
        #expect(await process.messages(1).first?["result"]?["items"] == [])
        #expect(pids().count == 2, "started again for the next call")
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    /// `plugin check` passes the examples and the skeletons `plugin new` writes, and fails a plugin
    /// that breaks the protocol, saying where.
    @Test func pluginCheckTellsAConformingPluginFromABrokenOne() async throws {
        let shelf = try await runMediahost(["plugin", "check", Self.repository.appendingPathComponent("Providers/Shelf").path])
        #expect(shelf.status == 0 && shelf.stdout.contains("conforms to provider-spec.json"), "\(shelf.stdout)\(shelf.stderr)")
        let folder = try makeTemporaryDirectory()
        for lang in ["python", "sh"] {
            let made = try await runMediahost([
                "plugin", "new", "made-\(lang)", "--lang", lang, "--dir", folder,
            ])
            #expect(made.status == 0, "\(made.stderr)")
            let checked = try await runMediahost(["plugin", "check", folder + "/made-\(lang)"])
            #expect(checked.status == 0, "\(lang): \(checked.stdout)\(checked.stderr)")
        }
        let dataDir = try makeTemporaryDirectory()
        try Self.addPlugin(
            "wrong", to: dataDir,
            script: Self.answering(
                #"""
                *provider.search*) printf '{"jsonrpc":"2.0","id":%s,"result":{"items":[{"id":"other:movie:1","provider":"other","kind":"movie"}]}}\n' "$id" ;;
                *) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"no"}}\n' "$id" ;;
                """#))
        let wrong = try await runMediahost(["plugin", "check", dataDir + "/plugins/wrong"])
        #expect(wrong.status == 1)
        #expect(
            wrong.stdout.contains("FAIL provider.search") && wrong.stdout.contains("missing required title"), "\(wrong.stdout)")
        #expect(wrong.stdout.contains("must be this plugin's"), "\(wrong.stdout)")
        #expect(wrong.stdout.contains("FAIL unknown method"), "\(wrong.stdout)")
    }

    /// A plugin that behaves like the built-ins (movies, which have nothing inside: children
    /// answers unsupported, though plugin.toml claims children) conforms; one that speaks another
    /// protocol version is refused with that reason.
    @Test func pluginCheckAcceptsUnsupportedChildrenOfALeafAndRefusesAnotherProtocol() async throws {
        let dataDir = try makeTemporaryDirectory()
        try Self.addPlugin(
            "films", to: dataDir,
            script: Self.answering(
                #"""
                *provider.categories*) printf '{"jsonrpc":"2.0","id":%s,"result":[{"id":"all","name":"All"}]}\n' "$id" ;;
                *provider.browse*|*provider.search*) printf '{"jsonrpc":"2.0","id":%s,"result":{"items":[{"id":"films:movie:1","provider":"films","kind":"movie","title":"One"}]}}\n' "$id" ;;
                *provider.item*) printf '{"jsonrpc":"2.0","id":%s,"result":{"id":"films:movie:1","provider":"films","kind":"movie","title":"One"}}\n' "$id" ;;
                *provider.children*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"a movie has nothing inside"}}\n' "$id" ;;
                *provider.downloadSource*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"nothing to download"}}\n' "$id" ;;
                *provider.*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}\n' "$id" ;;
                """#),
            extra: "")
        let manifest = dataDir + "/plugins/films/plugin.toml"
        try (try String(contentsOfFile: manifest, encoding: .utf8))
            .replacingOccurrences(
                of: #"capabilities = ["search", "item"]"#,
                with: #"capabilities = ["categories", "browse", "search", "item", "children"]"#
            )
            .write(toFile: manifest, atomically: true, encoding: .utf8)
        let checked = try await runMediahost(["plugin", "check", dataDir + "/plugins/films"])
        #expect(checked.status == 0, "\(checked.stdout)\(checked.stderr)")
        #expect(checked.stdout.contains("nothing inside"), "\(checked.stdout)")

        try Self.addPlugin(
            "future", to: dataDir,
            script: Self.answering(
                onInitialize:
                    #"printf '{"jsonrpc":"2.0","id":%s,"result":{"id":"future","protocolVersion":99}}\n' "$id"; continue;"#,
                "*) ;;"))
        let result = try await runMediahost(["call", "media.search", #"{"provider":"future","query":"x"}"#], dataDir: dataDir)
        #expect(result.status == 1 && result.stderr.contains("speaks protocol version 99"), "\(result.stderr)")
    }

    /// An item with a download source and no stream plays what a download would fetch; one with
    /// neither says so in the plugin's terms, not TMDB's.
    @Test func playingAPluginItemWithOnlyADownload() async throws {
        let dataDir = try makeTemporaryDirectory()
        try Self.addPlugin(
            "vault", to: dataDir,
            script: Self.answering(
                #"""
                *provider.item*'vault:movie:2'*|*'"vault:movie:2"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"id":"vault:movie:2","provider":"vault","kind":"movie","title":"Nothing"}}\n' "$id" ;;
                *provider.item*) printf '{"jsonrpc":"2.0","id":%s,"result":{"id":"vault:movie:1","provider":"vault","kind":"movie","title":"Reel"}}\n' "$id" ;;
                *provider.downloadSource*vault:movie:1*) printf '{"jsonrpc":"2.0","id":%s,"result":{"url":"https://vault.example/reel.mp4","suggestedName":"Reel"}}\n' "$id" ;;
                *) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"no"}}\n' "$id" ;;
                """#),
            extra: "")
        let script = dataDir + "/player.sh"
        let record = dataDir + "/played.txt"
        try "#!/bin/sh\nprintf '%s\\n' \"$@\" > \(record)\nsleep 3\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let environment = ["MEDIAHOST_PLAYER": script]
        let played = try await runMediahost(
            ["call", "player.open", #"{"id":"vault:movie:1"}"#], dataDir: dataDir, environment: environment)
        #expect(played.status == 0, "\(played.stderr)")
        #expect(played.stdout.contains("https://vault.example/reel.mp4"), "\(played.stdout)")
        let nothing = try await runMediahost(
            ["call", "player.open", #"{"id":"vault:movie:2"}"#], dataDir: dataDir, environment: environment)
        #expect(nothing.status == 1 && nothing.stderr.contains("Nothing has nothing to play"), "\(nothing.stderr)")
        #expect(!nothing.stderr.contains("trailer is listed"))
    }

    /// A plugin's show that lists its 45 episodes oldest first, 20 a page: `play` on the show plays
    /// its newest by date (it played the one listed first), and says which.
    @Test func aShowPlaysItsNewestEpisodeWhateverTheOrder() async throws {
        let dataDir = try makeTemporaryDirectory()
        let folder = dataDir + "/plugins/oldfirst"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
        import json, sys
        def episode(n):
            return {"id": "oldfirst:episode:%d" % n, "provider": "oldfirst", "kind": "episode",
                    "title": "Episode %d" % n, "published": "2020-01-%02dT00:00:00Z" % min(n, 28) if n <= 28
                    else "2020-02-%02dT00:00:00Z" % (n - 28),
                    "enclosure": {"url": "https://oldfirst.example/%d.mp3" % n, "type": "audio/mpeg"}}
        show = {"id": "oldfirst:podcast:1", "provider": "oldfirst", "kind": "podcast", "title": "Old First"}
        for line in sys.stdin:
            request = json.loads(line)
            method, params = request.get("method"), request.get("params") or {}
            if "id" not in request:
                continue
            if method == "initialize":
                result = {"id": "oldfirst"}
            elif method == "provider.item":
                wanted = params.get("id")
                result = show if wanted == show["id"] else episode(int(wanted.rsplit(":", 1)[1]))
            elif method == "provider.children":
                start = int(params.get("cursor") or 0)
                result = {"items": [episode(n) for n in range(start + 1, min(start + 20, 45) + 1)]}
                if start + 20 < 45:
                    result["next"] = str(start + 20)
            else:
                print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32001, "message": "no"}}), flush=True)
                continue
            print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
        """.write(toFile: folder + "/show.py", atomically: true, encoding: .utf8)
        try """
        command = "python3 show.py"
        kinds = ["podcast", "episode"]
        capabilities = ["item", "children"]
        """.write(toFile: folder + "/plugin.toml", atomically: true, encoding: .utf8)
        let script = dataDir + "/player.sh"
        try "#!/bin/sh\nsleep 3\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let played = try await runMediahost(
            ["call", "player.open", #"{"id":"oldfirst:podcast:1"}"#], dataDir: dataDir, environment: ["MEDIAHOST_PLAYER": script])
        #expect(played.status == 0, "\(played.stderr)")
        let answer = try JSONValue(parsing: played.stdout)
        #expect(answer["played"] == "oldfirst:episode:45", "\(played.stdout)")
        #expect(answer["target"] == "https://oldfirst.example/45.mp3")
        #expect(answer["note"] == "the newest episode")
    }

    /// A provider whose page past the end answers with the cursor it was asked for (yt-dlp's
    /// channel of hidden videos did): the host hands back no `next` that leads to the same page,
    /// so a client that pages on ends.
    @Test func aCursorNeverLeadsBackToItsPage() async throws {
        let dataDir = try makeTemporaryDirectory()
        let folder = dataDir + "/plugins/loops"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
        import json, sys
        for line in sys.stdin:
            request = json.loads(line)
            if "id" not in request:
                continue
            method, params = request.get("method"), request.get("params") or {}
            if method == "initialize":
                result = {"id": "loops"}
            elif method == "provider.children":
                cursor = params.get("cursor")
                if cursor is None:
                    result = {"items": [{"id": "loops:video:1", "provider": "loops", "kind": "video", "title": "One"}], "next": "2"}
                else:
                    result = {"items": [], "next": cursor, "prev": "1"}
            else:
                print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32001, "message": "no"}}), flush=True)
                continue
            print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}), flush=True)
        """.write(toFile: folder + "/loops.py", atomically: true, encoding: .utf8)
        try """
        command = "python3 loops.py"
        kinds = ["channel", "video"]
        capabilities = ["children"]
        """.write(toFile: folder + "/plugin.toml", atomically: true, encoding: .utf8)
        var cursor: String? = nil
        var pages = 0
        repeat {
            let params = cursor.map { #"{"id":"loops:channel:1","cursor":"\#($0)"}"# } ?? #"{"id":"loops:channel:1"}"#
            let result = try await runMediahost(["call", "media.children", params], dataDir: dataDir)
            #expect(result.status == 0, "\(result.stderr)")
            let page = try JSONValue(parsing: result.stdout)
            #expect(page["next"]?.stringValue != cursor || cursor == nil, "\(result.stdout)")
            cursor = page["next"]?.stringValue
            pages += 1
        } while cursor != nil && pages < 5
        #expect(pages == 2, "paged \(pages) times")
    }

    /// Providers/Local (Python): folders as categories, subfolders as playlists, search by name
    /// and by tags (a stand-in ffprobe on PATH), nothing outside the folders.
    @Test func theLocalPluginServesTheUsersFolders() async throws {
        let root = try makeTemporaryDirectory()
        let fm = FileManager.default
        for folder in ["Films/Classics", "Music"] {
            try fm.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        }
        for file in ["Films/Metropolis (1927).mp4", "Films/Classics/Nosferatu.mkv", "Music/track01.mp3", "Music/notes.txt"] {
            try Data("x".utf8).write(to: URL(fileURLWithPath: root + "/" + file))
        }
        // Tags as ffprobe reports them.
        let bin = root + "/bin"
        try fm.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try """
        #!/bin/sh
        case "$*" in
          *track01.mp3*) echo '{"format":{"duration":"421.5","tags":{"title":"Take Five","ARTIST":"Dave Brubeck","album":"Time Out"}}}' ;;
          *) echo '{"format":{}}' ;;
        esac

        """.write(toFile: bin + "/ffprobe", atomically: true, encoding: .utf8)
        chmod(bin + "/ffprobe", 0o755)
        let dataDir = root + "/data"
        try fm.createDirectory(atPath: dataDir + "/plugins", withIntermediateDirectories: true)
        try fm.copyItem(
            atPath: Self.repository.appendingPathComponent("Providers/Local").path, toPath: dataDir + "/plugins/local")
        try? fm.removeItem(atPath: dataDir + "/plugins/local/index.json")
        let environment = [
            "MEDIAHOST_LOCAL_FOLDERS": root + "/Films:" + root + "/Music",
            "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
        ]
        func call(_ method: String, _ params: String) async throws -> JSONValue? {
            try await Self.call(method, params, dataDir: dataDir, environment: environment).value
        }
        let categories = try await call("providers.categories", #"{"provider":"local"}"#)
        #expect(categories?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["Films", "Music"])
        let films = try await call("media.browse", #"{"provider":"local","category":"Films"}"#)
        #expect(films?["items"]?.arrayValue?.map { $0["title"] } == ["Classics", "Metropolis (1927)"])
        let classics = try #require(films?["items"]?.arrayValue?.first?["id"])
        let inside = try await call("media.children", #"{"id":\#(classics.jsonString)}"#)
        #expect(inside?["items"]?.arrayValue?.map { $0["title"] } == ["Nosferatu"])
        let music = try await call("media.browse", #"{"provider":"local","category":"Music"}"#)
        #expect(music?["items"]?.arrayValue?.count == 1, "notes.txt is not media")
        let byTag = try await call("media.search", #"{"provider":"local","query":"brubeck"}"#)
        let track = try #require(byTag?["items"]?.arrayValue?.first)
        #expect(track["title"] == "Take Five" && track["creator"] == "Dave Brubeck" && track["duration"]?.doubleValue == 421.5)
        #expect(track["enclosure"]?["url"]?.stringValue?.hasPrefix("file://") == true)
        let byName = try await call("media.search", #"{"provider":"local","query":"metropolis"}"#)
        #expect(byName?["items"]?.arrayValue?.count == 1)
        let outside = try await Self.call(
            "media.get", #"{"id":"local:video:/etc/passwd"}"#, dataDir: dataDir, environment: environment)
        #expect(outside.status == 1 && outside.stderr.contains("not in the configured folders"))
        #expect(fm.fileExists(atPath: dataDir + "/plugins/local/index.json"), "the index is kept in the plugin's folder")
        // `play` in the REPL plays the file itself.
        let player = root + "/player.sh"
        try "#!/bin/sh\necho \"$@\" > \(root)/played\n".write(toFile: player, atomically: true, encoding: .utf8)
        chmod(player, 0o755)
        let repl = try await runMediahost(
            [], input: "config player.command \(player)\nsearch local metropolis\nplay 1\n", dataDir: dataDir,
            environment: environment)
        #expect(repl.status == 0, "\(repl.stderr)")
        let deadline = ContinuousClock.now + .seconds(5)
        while !fm.fileExists(atPath: root + "/played"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let played = (try? String(contentsOfFile: root + "/played", encoding: .utf8)) ?? ""
        #expect(played.contains("file://") && played.contains("Films/Metropolis%20%281927%29.mp4"), "\(played) \(repl.stdout)")
        let check = try await runMediahost(
            ["plugin", "check", dataDir + "/plugins/local", "--set", "folders=" + root + "/Films"], environment: environment)
        #expect(check.status == 0, "\(check.stdout)")
    }

    /// Over RPC: a cancelled request is cancelled in the plugin too; a plugin that crashed is
    /// started again after a pause; one that floods its output loses only that request.
    @Test func cancellationRestartsAndFloodsOverRPC() async throws {
        let dataDir = try makeTemporaryDirectory()
        try Self.addPlugin(
            "slow", to: dataDir,
            script: Self.answering(each: #"printf '%s\n' "$line" >> seen"#, "*) ;;"))
        try Self.addPlugin(
            "flaky", to: dataDir,
            script: Self.answering(
                before: "echo start >> starts\n[ \"$(wc -l < starts)\" -gt 3 ] || { echo 'early starts fail' >&2; exit 1; }",
                #"*) printf '{"jsonrpc":"2.0","id":%s,"result":{"items":[]}}\n' "$id" ;;"#))
        try Self.addPlugin(
            "flood", to: dataDir,
            script: Self.answering(#"*) head -c 20000000 /dev/zero | tr '\0' 'a'; echo ;;"#))
        let process = try MediahostProcess(["rpc"], dataDir: dataDir)
        func search(_ id: Int, _ provider: String) {
            process.sendLine(
                #"{"jsonrpc":"2.0","id":\#(id),"method":"media.search","params":{"provider":"\#(provider)","query":"x"}}"#)
        }
        search(1, "slow")
        // Cancelled once the plugin has the request (started and initialized first).
        let seen = dataDir + "/plugins/slow/seen"
        let asked = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < asked,
            !((try? String(contentsOfFile: seen, encoding: .utf8))?.contains("provider.search") ?? false)
        {
            try await Task.sleep(for: .milliseconds(20))
        }
        process.sendLine(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
        #expect(await process.messages(1).first?["error"]?["code"] == -32800)
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline,
            !((try? String(contentsOfFile: seen, encoding: .utf8))?.contains("$/cancelRequest") ?? false)
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect((try? String(contentsOfFile: seen, encoding: .utf8))?.contains("$/cancelRequest") == true, "the plugin was told")

        // Three crashed starts: each failure names the plugin's last words, and between attempts
        // (0.5, 1, 2 s after each) the plugin is refused; then it starts and answers.
        var messages: [String] = []
        func crashes() -> Int { messages.filter { $0.contains("exited (status 1)") && $0.contains("early starts fail") }.count }
        for id in 10..<30 where crashes() < 3 {
            search(id, "flaky")
            messages.append(await process.messages(1).first?["error"]?["message"]?.stringValue ?? "")
            if messages.last?.contains("started again in") == true { try await Task.sleep(for: .milliseconds(300)) }
        }
        #expect(crashes() == 3, "\(messages)")
        let thirdCrash = ContinuousClock.now
        search(30, "flaky")
        let paused = await process.messages(1).first
        // Answered within the 2 s pause after the third crash, it must be refused; a machine too
        // busy to answer in time leaves nothing to check (the pause may have passed).
        if ContinuousClock.now - thirdCrash < .milliseconds(1500) {
            #expect(
                paused?["error"]?["message"]?.stringValue?.contains("started again in") == true,
                "\(String(describing: paused))")
        }
        try await Task.sleep(for: .milliseconds(2200))
        search(31, "flaky")
        #expect(await process.messages(1).first?["result"]?["items"] == [])

        search(5, "flood")
        let flooded = await process.messages(1, timeout: .seconds(30)).first
        #expect(
            flooded?["error"]?["message"]?.stringValue?.contains("over 16 MiB") == true,
            "\(String(describing: flooded).prefix(300))")
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    /// A plugin's item downloads through its downloadSource, like a built-in provider's.
    @Test func aPluginItemDownloads() async throws {
        let (sandbox, base) = try await startSandboxProcess(rate: 0)
        defer { sandbox.process.terminate() }
        let dataDir = try makeTemporaryDirectory()
        try Self.addPlugin(
            "fetch", to: dataDir,
            script: Self.answering(
                onInitialize: #"media=$(printf '%s' "$line" | jq -r '.params.settings.media');"#,
                #"""
                    *provider.item*) printf '{"jsonrpc":"2.0","id":%s,"result":{"id":"fetch:video:one","provider":"fetch","kind":"video","title":"One"}}\n' "$id" ;;
                    *provider.downloadSource*) printf '{"jsonrpc":"2.0","id":%s,"result":{"url":"%s","suggestedName":"One","collection":"Fetched","fileExtension":"mp3"}}\n' "$id" "$media" ;;
                    *) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"no"}}\n' "$id" ;;
                """#), extra: "[[config]]\nname = \"media\"\nsummary = \"the file\"\n")
        let process = try MediahostProcess(
            ["rpc"], dataDir: dataDir,
            // A generous bound: the suite runs many processes at once on two cores.
            environment: ["MEDIAHOST_FETCH_MEDIA": base + "/media/1999999999/3.mp3", "MEDIAHOST_HTTP_TIMEOUT": "120"])
        process.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"downloads.start","params":{"id":"fetch:video:one"}}"#)
        var path: String?
        let deadline = ContinuousClock.now + .seconds(30)
        while path == nil, ContinuousClock.now < deadline, let message = await process.next(timeout: .seconds(30))?.value {
            if message["method"] == "downloads.state", message["params"]?["state"] == "completed" {
                path = message["params"]?["path"]?.stringValue
            }
            #expect(message["params"]?["state"] != "failed", "\(message)")
            if message["error"] != nil { Issue.record("\(message)") }
        }
        let file = try #require(path)
        #expect(file.contains("Fetched") && file.hasSuffix(".mp3"))
        #expect(((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0) > 1000)
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    /// provider-spec.json and the host's client agree, and the example plugin's answers conform to it.
    @Test func theShelfConformsToProviderSpec() async throws {
        let spec = try JSONParser.parse(
            Array(try Data(contentsOf: Self.repository.appendingPathComponent("provider-spec.json"))))
        let methods = spec["methods"]?.arrayValue ?? []
        #expect(methods.compactMap { $0["name"]?.stringValue }.sorted() == PluginProtocol.methods.sorted())
        let plugin = try MediahostPluginProcess(Self.repository.appendingPathComponent("Providers/Shelf/shelf.sh").path)
        let validator = SchemaValidator(document: spec)
        let calls: [(String, JSONValue)] = [
            ("initialize", ["protocolVersion": 1, "provider": "shelf", "settings": [:]]),
            ("provider.categories", [:]),
            ("provider.browse", ["category": "silent", "cursor": nil]),
            ("provider.search", ["text": "lang", "kind": nil, "cursor": nil]),
            ("provider.item", ["id": "shelf:movie:metropolis"]),
            ("provider.downloadSource", ["id": "shelf:movie:nosferatu"]),
        ]
        for (method, params) in calls {
            let answer = try #require(await plugin.call(method, params), "\(method)")
            let schema = try #require(methods.first { $0["name"]?.stringValue == method }?["result"]?["schema"])
            let errors = validator.validate(try #require(answer["result"], "\(method): \(answer)"), against: schema)
            #expect(errors.isEmpty, "\(method): \(errors)")
        }
        await plugin.close()
    }
}

/// A plugin program driven directly, as the host would.
final class MediahostPluginProcess: @unchecked Sendable {
    let process: ChildProcess
    private let input: Mutex<Int32>
    private let output: Int32
    private var nextID = 0
    private var buffer: [UInt8] = []

    init(_ path: String) throws {
        process = try ChildProcess(
            path, directory: URL(fileURLWithPath: path).deletingLastPathComponent().path, standardInput: .pipe,
            standardOutput: .pipe)
        guard let input = process.standardInput, let output = process.standardOutput else {
            throw ChildProcess.SpawnError(code: EBADF)
        }
        self.input = Mutex(input)
        self.output = output
    }

    deinit {
        if process.isRunning { process.terminate() }
        input.withLock { if $0 >= 0 { Glibc.close($0) } }
        Glibc.close(output)
    }

    func call(_ method: String, _ params: JSONValue) async -> JSONValue? {
        nextID += 1
        let request: JSONValue = ["jsonrpc": "2.0", "id": JSONValue(nextID), "method": .string(method), "params": params]
        input.withLock { fd in _ = Descriptor.writeAll(fd, JSONWriter.bytes(request) + [0x0A]) }
        // Read on a thread of its own: a blocked cooperative thread would starve the other tests.
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread { [self] in continuation.resume(returning: readLine()) }
        }
    }

    private func readLine() -> JSONValue? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[..<newline]
                buffer.removeSubrange(...newline)
                return try? JSONParser.parse(Array(line))
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = read(output, &chunk, chunk.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return nil }
            buffer += chunk[..<count]
        }
    }

    func close() async {
        input.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
        while process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
    }
}
