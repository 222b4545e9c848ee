import Basics
import BuiltinProviders
import Foundation
import JSONRPC
import MediaHost
import TestSupport
import Testing

/// The shipped binary with real providers against the sandbox: what `make run` shows a person.
@Suite struct SandboxEndToEndTests {
    @Test func callSearchesPodcastsOnTheSandbox() async throws {
        let result = try await runMediahost(["--sandbox", "call", "media.search", #"{"provider":"podcasts","query":"garden"}"#])
        #expect(result.status == 0, "\(result.stderr)")
        let value = try JSONValue(parsing: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        let items = value["items"]?.arrayValue ?? []
        #expect(!items.isEmpty)
        #expect(items.allSatisfy { $0["kind"] == "podcast" && $0["title"]?.stringValue?.contains("Garden") == true })
        // Options after the subcommand work too.
        #expect(try await runMediahost(["call", "providers.categories", #"{"provider":"podcasts"}"#, "--sandbox"]).status == 0)
    }

    @Test func podcastsSearchBrowseOpenShowFavoriteAndHistory() async throws {
        let dataDir = try makeTemporaryDirectory()
        let script = """
            search podcasts kitchen
            categories podcasts
            browse podcasts Comedy
            open 1
            open podcasts:podcast:1000000000
            next
            show 2
            fav 2
            favs
            history
            """
        let result = try await runMediahost(["--sandbox"], input: script + "\n", dataDir: dataDir)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("The Electric Kitchen 77"))
        #expect(result.stdout.contains("Society & Culture"))
        #expect(result.stdout.contains("Episode "))
        #expect(result.stdout.contains(" is a favorite"))
        #expect(result.stdout.contains("kitchen  podcasts"))

        // Favorites are snapshots: another process sees them with no sandbox and no network.
        let offline = try await runMediahost(["call", "favorites.list", #"{"provider":"podcasts"}"#], dataDir: dataDir)
        #expect(offline.status == 0)
        let favorites = try JSONValue(parsing: offline.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(favorites["items"]?.arrayValue?.count == 1)
        #expect(favorites["items"]?.arrayValue?.first?["kind"] == "episode")
    }

    /// Favorites made before `login youtube` become likes when the person says so.
    @Test func loginOffersToSyncFavoritesMadeLoggedOut() async throws {
        let dataDir = try makeTemporaryDirectory()
        let browse = try await runMediahost(["--sandbox", "call", "media.browse", #"{"provider":"youtube","category":"1"}"#])
        let video = try #require(try JSONValue(parsing: browse.stdout)["items"]?.arrayValue?.first?["id"]?.stringValue)
        let result = try await runMediahost(
            ["--sandbox"], input: "fav \(video)\nlogin youtube\nsync youtube\nfavs youtube --remote\n", dataDir: dataDir)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("1 favorite kept here is not on your youtube account; `sync youtube` adds it"))
        #expect(result.stdout.contains("added 1 favorite to your youtube account"))
        #expect(result.stdout.contains("1 in all"))
    }

    @Test func rpcDrivesTheSameFlow() async throws {
        let process = try MediahostProcess(["rpc", "--sandbox"])
        process.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"media.search","params":{"provider":"podcasts","query":"orbit"}}"#)
        let search = try #require(await process.messages(1).first)
        let podcast = try #require(search["result"]?["items"]?.arrayValue?.first?["id"])
        process.sendLine(#"{"jsonrpc":"2.0","id":2,"method":"media.children","params":{"id":\#(podcast.jsonString)}}"#)
        process.sendLine(#"{"jsonrpc":"2.0","id":3,"method":"favorites.add","params":{"id":\#(podcast.jsonString)}}"#)
        var (byID, notifications) = await process.replies([2, 3])
        #expect((byID[2]?["result"]?["items"]?.arrayValue?.count ?? 0) > 0, "\(byID)")
        #expect(byID[3]?["result"]?["favorite"] == true, "\(byID)")
        process.sendLine(#"{"jsonrpc":"2.0","id":4,"method":"media.search","params":{"query":"orbit"}}"#)
        let searched = await process.replies([4])
        notifications += searched.notifications
        let all = try #require(searched.byID[4])
        // Every client hears that the favorites changed.
        #expect(notifications.contains { $0["method"] == "library.changed" && $0["params"]?["what"] == "favorites" })
        #expect(all["result"]?["errors"] == [])
        #expect(all["result"]?["items"]?.arrayValue?.contains { $0["id"] == podcast && $0["favorite"] == true } == true)
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    /// `stream: true`: each provider's items arrive as a notification to this client as soon as
    /// that provider answers, before the final result, which has them all.
    @Test func streamedSearchSendsEachProvidersItemsBeforeTheResult() async throws {
        let process = try MediahostProcess(["rpc", "--sandbox"])
        process.sendLine(#"{"jsonrpc":"2.0","id":"s1","method":"media.search","params":{"query":"swift","stream":true}}"#)
        var parts: [JSONValue] = []
        var result: JSONValue?
        while result == nil, let message = await process.next(timeout: .seconds(20))?.value {
            if message["id"] == "s1" {
                result = message["result"]
            } else if message["method"] == "media.searchResults", let params = message["params"] {
                parts.append(params)
            }
        }
        let final = try #require(result)
        #expect(parts.allSatisfy { $0["request"] == "s1" && $0["query"] == "swift" })
        let providers = parts.compactMap { $0["provider"]?.stringValue }
        #expect(Set(providers).count == providers.count, "one notification per provider")
        #expect(providers.count >= 3, "\(providers)")
        let streamed = Set(parts.flatMap { $0["items"]?.arrayValue ?? [] }.compactMap { $0["id"]?.stringValue })
        let answered = Set(final["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
        #expect(!answered.isEmpty && streamed == answered)
        let failed = Set(final["errors"]?.arrayValue?.compactMap { $0["provider"]?.stringValue } ?? [])
        #expect(failed == Set(parts.filter { $0["error"] != nil }.compactMap { $0["provider"]?.stringValue }))
        // Without it, the result alone.
        process.sendLine(#"{"jsonrpc":"2.0","id":2,"method":"media.search","params":{"query":"swift"}}"#)
        let plain = await process.messages(1)
        #expect(plain.first?["id"] == 2, "\(plain)")
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    /// The second `make run` on the same data dir: the sandbox is on another port, and nothing
    /// kept from the first run (cached pages, their media links) points at the old one.
    @Test func aSecondSandboxRunOnTheSameDataDirDownloads() async throws {
        let dataDir = try makeTemporaryDirectory()
        let first = try await runMediahost(["--sandbox"], input: "open podcasts:podcast:1000007919\n", dataDir: dataDir)
        #expect(first.status == 0 && first.stdout.contains("Episode 26"), "\(first.stdout)\(first.stderr)")
        let second = try await runMediahost(
            ["--sandbox"], input: "open podcasts:podcast:1000007919\ndownload 1\n", dataDir: dataDir,
            environment: ["MEDIAHOST_SANDBOX_MEDIA_RATE": "0"])
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        #expect((second.stdout + second.stderr).contains("downloads this run: 1 completed"), "\(second.stderr)")
    }

    @Test func standaloneSandboxServesAnotherProcess() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let result = try await runMediahost(
            ["call", "providers.categories", #"{"provider":"podcasts"}"#], environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Technology"))
        // Faults can be switched from outside, as the sandbox's --help says.
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") {
            let curl = await runProgram(
                "/usr/bin/curl",
                [
                    "-s", "-X", "POST", "-d", #"{"path":"/podcasts/search","status":503}"#,
                    base.replacingOccurrences(of: "/podcasts", with: "/_sandbox/faults"),
                ])
            #expect(curl.status == 0)
            let failing = try await runMediahost(
                ["call", "media.search", #"{"provider":"podcasts","query":"x"}"#],
                environment: ["MEDIAHOST_PODCASTS_BASE_URL": base])
            #expect(failing.status == 1)
            #expect(failing.stderr.contains("503"))
        }
    }

    /// Every compiled-in provider has a replica in the sandbox: one missing would make
    /// `--sandbox` reach the real API without a word.
    @Test func everyCompiledProviderHasAReplica() async throws {
        let sandbox = try MediahostProcess(["sandbox", "--port", "0"])
        defer { sandbox.process.terminate() }
        var printed = ""
        while let line = await sandbox.next(timeout: .seconds(20)) {
            printed += String(decoding: line.raw, as: UTF8.self) + "\n"
            if printed.contains("other settings") { break }
        }
        for registration in BuiltinProviders.all {
            let id = registration.descriptor.id
            #expect(printed.contains("\(id): MEDIAHOST_\(id.uppercased())_BASE_URL="), "no replica for \(id): \(printed)")
        }
    }

    /// The binary serves what rpc-spec.json describes: the runtime's methods and its modules'
    /// (the player, sharing), which the executable registers as it registers the providers.
    @Test func theBinaryServesEveryMethodOfTheSpec() async throws {
        let result = try await runMediahost(["call", "host.info"])
        #expect(result.status == 0, "\(result.stderr)")
        let served = try JSONParser.parse(Array(result.stdout.utf8))["methods"]?.arrayValue?.compactMap(\.stringValue)
        let spec = try RPCDiscover.spec.get()
        #expect(served?.sorted() == (spec["methods"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }.sorted())
    }

    /// A result that cannot be written is a failed call (status 1), not silence with status 0.
    @Test func aResultThatCannotBeWrittenFailsTheCall() async throws {
        let shell = try MediahostProcess(
            ["-c", #""$0" call host.info > /dev/full; echo "status $?""#, mediahostBinary()], executable: "/bin/sh")
        defer { shell.process.terminate() }
        let line = await shell.next(timeout: .seconds(60))
        #expect(line.map { String(decoding: $0.raw, as: UTF8.self) } == "status 1")
    }

    @Test func standardProxyVariablesAreHonoured() async throws {
        // The sandbox answers absolute-form requests like a proxy would. The provider's host does
        // not resolve, so the call can only succeed through the proxy.
        let proxy = try MediahostProcess(["sandbox", "--port", "0"])
        defer { proxy.process.terminate() }
        var port: String?
        if let line = await proxy.next(timeout: .seconds(20)) {
            port = String(decoding: line.raw, as: UTF8.self).split(separator: ":").last.map(String.init)
        }
        let proxyPort = try #require(port)
        let through = try await runMediahost(
            ["call", "media.get", #"{"id":"podcasts:podcast:1000000000"}"#],
            environment: [
                "MEDIAHOST_PODCASTS_BASE_URL": "http://podcasts.invalid/podcasts", "http_proxy": "http://127.0.0.1:\(proxyPort)",
            ])
        #expect(through.status == 0, "\(through.stderr)")
        #expect(through.stdout.contains("The Swift Journal 0"))
        let without = try await runMediahost(
            ["call", "media.get", #"{"id":"podcasts:podcast:1000000000"}"#],
            environment: ["MEDIAHOST_PODCASTS_BASE_URL": "http://podcasts.invalid/podcasts", "http_proxy": ""])
        #expect(without.status == 1)
        #expect(without.stderr.contains("podcasts.invalid"))
    }

    @Test func youtubeBrowseSearchPageArtworkLoginAndRemoteFavorites() async throws {
        let dataDir = try makeTemporaryDirectory()
        let script = """
            categories youtube
            browse youtube Music
            next
            prev
            search youtube swift concurrency
            artwork 1
            search youtube --kind channel swift
            open 1
            show 1
            fav 1
            login youtube
            fav 2
            favs youtube
            favs youtube --remote
            """
        let result = try await runMediahost(["--sandbox"], input: script + "\n", dataDir: dataDir)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Science & Technology"))
        #expect(result.stdout.contains("240 in all · `prev` for the previous page · `next` for more"))
        #expect(result.stdout.contains("Swift Academy  channel"))
        #expect(result.stdout.contains("To sign in to youtube, open https://www.google.com/device and enter the code"))
        #expect(result.stdout.contains("logged in to youtube as Swift Academy"))
        #expect(result.stdout.contains("saved to your youtube account"))
        #expect(result.stdout.contains("https://www.youtube.com/watch?v="))
        // The sandbox keeps its pictures apart from the real cache too.
        #expect(result.stdout.contains(dataDir + "/cache/mediahost-sandbox/artwork/"))
        let favorites = try await runMediahost(["call", "favorites.list", #"{"provider":"youtube"}"#], dataDir: dataDir)
        #expect(
            try JSONValue(parsing: favorites.stdout.trimmingCharacters(in: .whitespacesAndNewlines))["items"]?.arrayValue?.count
                == 2)
    }

    @Test func rpcClientsGetTheAuthPrompt() async throws {
        let process = try MediahostProcess(["rpc", "--sandbox"])
        process.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"auth.login","params":{"provider":"youtube"}}"#)
        var prompt: JSONValue?
        var result: JSONValue?
        while result == nil, let message = await process.next(timeout: .seconds(20)) {
            if message.value?["method"] == "auth.prompt" { prompt = message.value?["params"] }
            if message.value?["id"] == 1 { result = message.value?["result"] }
        }
        #expect(prompt?["code"]?.stringValue?.hasPrefix("SBX-") == true)
        #expect(result?["loggedIn"] == true)
        process.closeInput()
        #expect(await process.waitForExit() == 0)
    }

    @Test func tmdbBrowseDetailsTrailerLoginFavoritesAndPlay() async throws {
        let dataDir = try makeTemporaryDirectory()
        let player = dataDir + "/player.sh"
        try "#!/bin/sh\necho \"$@\" > \(dataDir)/played\n".write(toFile: player, atomically: true, encoding: .utf8)
        chmod(player, 0o755)
        let script = """
            config player.command \(player)
            categories tmdb
            browse tmdb Comedy
            next
            search tmdb fight club
            show 1
            play 2
            play 1
            login tmdb ada lovelace
            fav 1
            favs tmdb
            favs tmdb --remote
            play youtube:video:Haq6TT5LPnT
            """
        let result = try await runMediahost(["--sandbox"], input: script + "\n", dataDir: dataDir)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Now Playing"))
        #expect(result.stdout.contains("`prev` for the previous page"))
        #expect(result.stdout.contains("Fight Club"))
        #expect(result.stdout.contains("Linked\n2  trailer    youtube:video:Haq6TT5LPnT"))
        // (Not the replica's "sandbox" account: its password is its name, and a password is never shown.)
        #expect(result.stdout.contains("logged in to tmdb as ada"))
        #expect(result.stdout.contains("saved to your tmdb account"))
        #expect(result.stdout.contains("playing the stream"))
        // What was chosen is named by its title, not its id.
        #expect(result.stdout.contains("playing the first trailer, Cat Compilation #0"), "\(result.stdout)")
        #expect(!result.stdout.contains("(youtube:video:Haq6TT5LPnT)"))
        // The stand-in player writes what it played on its own time: wait for it, generously.
        let url = "https://www.youtube.com/watch?v=Haq6TT5LPnT"
        let deadline = ContinuousClock.now + .seconds(10)
        var played = ""
        while ContinuousClock.now < deadline {
            played = (try? String(contentsOfFile: dataDir + "/played", encoding: .utf8)) ?? ""
            if played.contains(url) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(played.contains(url), "\(played)")
    }

    @Test func postsOfMastodonAndXWithTheirSections() async throws {
        let dataDir = try makeTemporaryDirectory()
        let script = """
            search mastodon #swift
            show 1
            open 25
            search twitter @swiftlang
            artwork 1
            show 1
            categories mastodon
            browse mastodon caturday
            history
            """
        let result = try await runMediahost(["--sandbox"], input: script + "\n", dataDir: dataDir)
        #expect(result.status == 0, "\(result.stderr)")
        // The mentions view: numbered sections, and the hashtag row opened as a search.
        for heading in ["Media", "URLs", "Hashtags", "Users"] { #expect(result.stdout.contains("\(heading)\n")) }
        #expect(result.stdout.contains("21  author  mastodon:user:"))
        #expect(result.stdout.contains("25  #Books\n"))
        #expect(result.stdout.contains("media      sensitive: not previewed"))
        // A person's posts: the rows drop the author and kind they all share; the heading says it.
        #expect(result.stdout.contains("@swiftlang · posts\n"), "\(result.stdout)")
        #expect(result.stdout.contains("url        https://x.com/swiftlang/status/"))
        #expect(result.stdout.contains("3  #caturday  caturday"))
        // The post's image, fetched into the artwork cache.
        let path = try #require(result.stdout.components(separatedBy: "\n").first { $0.hasPrefix("/") && $0.hasSuffix(".png") })
        #expect(path.hasPrefix(dataDir) && FileManager.default.fileExists(atPath: path))
        // Not a terminal: no colour codes reach the output.
        #expect(!result.stdout.contains("\u{1B}["))
        let history = result.stdout.components(separatedBy: "\n").suffix(4).joined(separator: "\n")
        #expect(history.contains("1  @swiftlang  twitter"))
        #expect(history.contains("2  #books  mastodon"))
        #expect(history.contains("3  #swift  mastodon"))
        let rpc = try await runMediahost(["call", "history.list", #"{"limit":100}"#], dataDir: dataDir)
        let searches = try JSONValue(parsing: rpc.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).arrayValue ?? []
        #expect(searches.map { $0["query"]?.stringValue ?? "" } == ["@swiftlang", "#books", "#swift"])
    }

    @Test func postProvidersTalkToAnotherServerByTheirVariables() async throws {
        let (sandbox, base) = try await startSandboxProcess()
        defer { sandbox.process.terminate() }
        let root = String(base.dropLast("/podcasts".count))
        let mastodon = try await runMediahost(
            ["call", "media.search", ##"{"provider":"mastodon","query":"#caturday"}"##],
            environment: ["MASTODON_INSTANCE": root + "/mastodon"])
        #expect(mastodon.status == 0, "\(mastodon.stderr)")
        #expect(mastodon.stdout.contains("#caturday"))
        let twitter = try await runMediahost(
            ["call", "media.search", #"{"provider":"twitter","query":"@swiftlang"}"#],
            environment: ["MEDIAHOST_TWITTER_BASE_URL": root + "/twitter", "TWITTER_BEARER_TOKEN": "token"])
        #expect(twitter.status == 0, "\(twitter.stderr)")
        #expect(twitter.stdout.contains("twitter:post:"))
        let unauthorized = try await runMediahost(
            ["call", "media.search", ##"{"provider":"twitter","query":"#swift"}"##],
            environment: ["MEDIAHOST_TWITTER_BASE_URL": root + "/twitter", "TWITTER_BEARER_TOKEN": "bad"])
        #expect(unauthorized.status == 1)
        #expect(unauthorized.stderr.contains("TWITTER_BEARER_TOKEN"))
    }
}

/// The README's REPL walkthrough, run as written on a fresh data dir: every `mediahost>` line of
/// it, in order, each of which must succeed (a script stops at the first command that fails).
@Suite struct ReadmeWalkthroughTests {
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../README.md").standardized.path

    /// The commands of the first block that starts with `$ make run`, comments cut off.
    static func walkthrough() throws -> [String] {
        let text = try String(contentsOfFile: readme, encoding: .utf8)
        let start = try #require(text.range(of: "```\n$ make run\n"))
        let block = try #require(text[start.upperBound...].components(separatedBy: "```").first)
        return block.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("mediahost> ") else { return nil }
            let command = line.dropFirst("mediahost> ".count)
            return String((command.range(of: "  #").map { command[..<$0.lowerBound] } ?? command)).trimmingCharacters(
                in: .whitespaces)
        }
    }

    @Test(.enabled(if: PlayerTests.mpv != nil, "mpv is not installed (`make test` installs it)"))
    func theREPLWalkthroughRunsAsWritten() async throws {
        let commands = try Self.walkthrough()
        try #require(commands.count >= 15, "\(commands)")
        #expect(commands.contains("seek +30") && commands.contains("favs"))
        let dataDir = try makeTemporaryDirectory()
        // Slow media, so `pause 3` finds its download running; mpv plays without a device. The
        // last line stops what plays.
        let result = try await runMediahost(
            ["--sandbox"], input: (commands + ["stop"]).joined(separator: "\n") + "\n", dataDir: dataDir,
            environment: ["MEDIAHOST_SANDBOX_MEDIA_RATE": "200000", "MEDIAHOST_PLAYER": "mpv --ao=null --vo=null"])
        #expect(result.status == 0, "\(result.stdout.suffix(1500))\n\(result.stderr)")
        #expect(!result.stderr.contains("error:"), "\(result.stderr)")
        #expect(result.stdout.contains("paused"), "\(result.stdout.suffix(1500))")
        #expect(result.stdout.contains("playing"), "\(result.stdout.suffix(1500))")
    }
}
