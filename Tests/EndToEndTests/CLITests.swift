import Foundation
import JSONRPC
import TestSupport
import Testing

@Suite struct CLITests {
    @Test func callPrintsTheResultAndFailsWithExitStatusOne() async throws {
        let ok = try await runMediahost(["call", "config.get", #"{"key":"log.level"}"#])
        #expect(ok.status == 0)
        let value = try JSONValue(parsing: ok.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(value.arrayValue?.first?["value"] == "warning")

        let unknown = try await runMediahost(["call", "no.such"])
        #expect(unknown.status == 1)
        #expect(unknown.stdout.isEmpty)
        #expect(unknown.stderr.contains("Method not found: no.such (-32601)"))

        let badJSON = try await runMediahost(["call", "host.info", "{nope"])
        #expect(badJSON.status != 0)
        #expect(badJSON.stderr.contains("params are not valid JSON"))
    }

    /// A call that may need the network loads libcurl on a thread of its own while it starts; one
    /// answered without the network (player.status with nothing playing) must not exit under
    /// that thread (1 in 30 crashed in OpenSSL's clean-up). 120 calls: the crash, were it back,
    /// shows in 98 runs of this test in 100.
    @Test func aQuickCallDoesNotExitWhileLibcurlLoads() async throws {
        let dataDir = try makeTemporaryDirectory()
        for attempt in 0..<120 {
            let run = try await runMediahost(["call", "player.status", "{}", "--no-service"], dataDir: dataDir)
            #expect(run.status == 0, "call \(attempt): status \(run.status)\n\(run.stderr.prefix(300))")
            if run.status != 0 { break }
        }
    }

    @Test func settingsMadeByOneProcessAreSeenByTheNext() async throws {
        let dataDir = try makeTemporaryDirectory()
        #expect(
            try await runMediahost(["call", "config.set", #"{"key":"log.level","value":"error"}"#], dataDir: dataDir).status == 0)
        let later = try await runMediahost(["call", "config.get", #"{"key":"log.level"}"#], dataDir: dataDir)
        #expect(later.stdout.contains(#""value":"error""#))
        #expect(later.stdout.contains(#""source":"store""#))
        let attributes = try FileManager.default.attributesOfItem(atPath: dataDir + "/mediahost.sqlite")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    /// A call that only reads neither writes nor syncs the database (a pool wrote at every opening
    /// and checkpointed at every close); a call that writes is seen by a process that has it open.
    @Test func aReadingCallLeavesTheDatabaseAsItWas() async throws {
        let dataDir = try makeTemporaryDirectory()
        let database = dataDir + "/mediahost.sqlite"
        #expect(try await runMediahost(["call", "host.info"], dataDir: dataDir).status == 0)
        func written() throws -> [String] {
            try [database, database + "-wal"].compactMap { path in
                guard FileManager.default.fileExists(atPath: path) else { return nil }
                var info = stat()
                guard stat(path, &info) == 0 else { throw POSIXError(.EIO) }
                return "\(path) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
            }
        }
        let before = try written()
        for method in ["host.info", "favorites.list", "history.list", "downloads.list", "config.get"] {
            #expect(try await runMediahost(["call", method], dataDir: dataDir).status == 0)
        }
        #expect(try written() == before, "a reading call wrote the database")

        let open = try MediahostProcess(["rpc"], dataDir: dataDir)
        open.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"lists.list"}"#)
        _ = await open.messages(1)
        #expect(try await runMediahost(["call", "lists.create", #"{"name":"Later"}"#], dataDir: dataDir).status == 0)
        open.sendLine(#"{"jsonrpc":"2.0","id":2,"method":"lists.list"}"#)
        open.closeInput()
        let answers = await open.messages(1)
        #expect(answers.first?["result"].map { "\($0)" }?.contains("Later") == true, "\(answers)")
        #expect(await open.waitForExit() == 0)
        #expect(try written() != before)
    }

    @Test func twoProcessesWriteOneDatabaseConcurrently() async throws {
        let dataDir = try makeTemporaryDirectory()
        let a = try MediahostProcess(["rpc"], dataDir: dataDir)
        let b = try MediahostProcess(["rpc"], dataDir: dataDir)
        for n in 0..<300 {
            let level = n % 2 == 0 ? "info" : "debug"
            a.sendLine(#"{"jsonrpc":"2.0","id":\#(n),"method":"config.set","params":{"key":"log.level","value":"\#(level)"}}"#)
            b.sendLine(#"{"jsonrpc":"2.0","id":\#(n),"method":"config.set","params":{"key":"log.level","value":"\#(level)"}}"#)
        }
        a.closeInput()
        b.closeInput()
        let fromA = await a.messages(300)
        let fromB = await b.messages(300)
        #expect(fromA.count == 300 && fromB.count == 300)
        #expect((fromA + fromB).allSatisfy { $0["error"] == nil }, "no 'database is locked' under concurrent writers")
        let exitA = await a.waitForExit()
        let exitB = await b.waitForExit()
        #expect(exitA == 0 && exitB == 0)
    }

    @Test func pipedREPLHasNoPromptOrEscapes() async throws {
        let result = try await runMediahost([], input: "providers\nhistory\nfavs\nhelp all\n")
        #expect(result.status == 0)
        #expect(!result.stdout.contains("mediahost>"))
        #expect(!result.stdout.contains("\u{1B}"))
        // Ids in a column as wide as the widest, never cut: it is what is typed.
        #expect(result.stdout.contains("podcasts     Podcasts"), "\(result.stdout)")
        #expect(result.stdout.contains("podcastindex Podcast Index"), "\(result.stdout)")
        #expect(result.stdout.contains("(no searches yet)"))
        #expect(result.stdout.contains("favorites.list"))
    }

    @Test func replJSONPrintsOneResultPerLine() async throws {
        let result = try await runMediahost(["--json"], input: "favs\nhistory\nconfig log.level\n")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 3, "\(result.stdout)\(result.stderr)")
        #expect(try JSONValue(parsing: lines[0]) == ["items": []])
        #expect(try JSONValue(parsing: lines[1]) == [])
    }

    @Test func runStopsAtTheFirstFailingCommand() async throws {
        let directory = try makeTemporaryDirectory()
        let script = directory + "/script.mh"
        try "# favorites then a typo\nfavs\nfrobnicate\nhistory\n".write(toFile: script, atomically: true, encoding: .utf8)
        let stopped = try await runMediahost(["run", script, "--json"])
        #expect(stopped.status == 1)
        #expect(stopped.stdout.split(separator: "\n").count == 1)
        #expect(stopped.stderr.contains("unknown command 'frobnicate'"))
        #expect(stopped.stderr.contains("stopped at line 3"))
        #expect(stopped.stderr.contains(script + ":3: error: unknown command 'frobnicate'"))
        let all = try await runMediahost(["run", "--keep-going", "--json", script])
        #expect(all.status == 1)
        #expect(all.stdout.split(separator: "\n").count == 2)
        #expect(all.stderr.contains(script + ":3: error:"), "every error names its line")
        let missing = try await runMediahost(["run", directory + "/nope.mh"])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("cannot read"))
    }

    /// A script that fails after starting a download still sees it through, and says so.
    @Test func aFailingScriptSaysWhatBecameOfItsDownloads() async throws {
        let directory = try makeTemporaryDirectory()
        let script = directory + "/dl.mh"
        try "browse podcasts Comedy\nopen 1\ndownload 1\nfrobnicate\n".write(toFile: script, atomically: true, encoding: .utf8)
        let result = try await runMediahost(
            ["run", script, "--sandbox"], dataDir: directory + "/data", environment: ["MEDIAHOST_SANDBOX_MEDIA_RATE": "0"])
        #expect(result.status == 1)
        #expect(result.stderr.contains(script + ":4: error: unknown command"))
        #expect(result.stderr.contains("downloads this run: 1 completed"), "\(result.stderr)")
        let list = try await runMediahost(["call", "downloads.list"], dataDir: directory + "/data")
        #expect(list.stdout.contains(#""state":"completed""#))
    }

    /// `call` and `--version` are read without argument-parser; every spelling it accepts still works,
    /// and what it would reject or explain still reaches it.
    @Test func callReadsItsOptionsWhereverTheyAre() async throws {
        let directory = try makeTemporaryDirectory()
        for arguments in [
            ["call", "host.info", "--data-dir", directory], ["--data-dir", directory, "call", "host.info"],
            ["call", "--data-dir=\(directory)", "host.info", "{}"],
            ["call", "host.info", "{}", "--log-level", "error", "--data-dir", directory],
        ] {
            let result = try await runMediahost(arguments)
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stdout.contains(#""dataDir":"\#(directory)""#), "\(arguments)")
        }
        #expect(try await runMediahost(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0.1.0")
        let help = try await runMediahost(["call", "host.info", "--help"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: mediahost call"))
        // Every global option the help names is read by the fast path too, before or after the
        // subcommand, and by argument-parser for any other subcommand: one definition each.
        let globalHelp = try await runMediahost(["repl", "--help"])
        let named = Set(globalHelp.stdout.matches(of: /--(config|data-dir|log-level|sandbox|no-service)\b/).map { String($0.0) })
        #expect(named == ["--config", "--data-dir", "--log-level", "--sandbox", "--no-service"], "\(globalHelp.stdout)")
        let config = directory + "/config.toml"
        for arguments in [
            ["--no-service", "--log-level", "error", "--config", config, "--data-dir", directory, "call", "host.info"],
            ["call", "host.info", "--no-service", "--log-level=error", "--config=\(config)", "--data-dir=\(directory)"],
        ] {
            let result = try await runMediahost(arguments)
            #expect(
                result.status == 0 && result.stdout.contains(#""configFile":"\#(config)""#)
                    && result.stdout.contains(#""dataDir":"\#(directory)""#), "\(arguments): \(result.stdout)\(result.stderr)")
        }
        let viaParser = try await runMediahost(
            ["--no-service", "--config", config, "--data-dir", directory, "run", "-"], input: "call host.info\n")
        #expect(viaParser.stdout.contains(#""dataDir": "\#(directory)""#), "\(viaParser.stdout)\(viaParser.stderr)")
        let extra = try await runMediahost(["call", "host.info", "{}", "more"])
        #expect(extra.status != 0 && extra.stderr.contains("Unexpected argument"))
        let badJSON = try await runMediahost(["call", "host.info", "{bad"])
        #expect(badJSON.status != 0 && badJSON.stderr.contains("params are not valid JSON"))
    }

    @Test func helpEverywhere() async throws {
        let root = try await runMediahost(["--help"])
        #expect(root.status == 0)
        for subcommand in ["repl", "rpc", "call", "run"] { #expect(root.stdout.contains(subcommand)) }
        for arguments in [["rpc", "--help"], ["call", "--help"], ["run", "--help"], ["repl", "--help"]] {
            let result = try await runMediahost(arguments)
            #expect(result.status == 0, "\(arguments)")
            #expect(result.stdout.contains("USAGE"), "\(arguments)")
            #expect(result.stdout.contains("--data-dir"), "\(arguments)")
        }
        let completion = try await runMediahost(["--generate-completion-script", "bash"])
        #expect(completion.status == 0)
        #expect(completion.stdout.contains("complete"))
        let version = try await runMediahost(["--version"])
        #expect(version.stdout.contains("0.1.0"))
    }

    @Test func badLogLevelAndUnreadableConfigAreClear() async throws {
        let level = try await runMediahost(["call", "host.info", "--log-level", "loud"])
        #expect(level.status != 0)
        // argument-parser's words, with every level the option takes.
        #expect(level.stderr.contains("invalid for '--log-level <level>'") && level.stderr.contains("- critical"))
        let directory = try makeTemporaryDirectory()
        try "not = [valid".write(toFile: directory + "/bad.toml", atomically: true, encoding: .utf8)
        let config = try await runMediahost(["call", "host.info", "--config", directory + "/bad.toml"])
        #expect(config.status != 0)
        #expect(config.stderr.contains("bad.toml") || config.stdout.contains("bad.toml"))
    }
}
