import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit

extension CommandSpec {
    /// Accounts, the history, settings, any method, help and quit.
    static let account: [CommandSpec] = [
        CommandSpec(
            "login", usage: "login <provider> [<username> [<password>]] | login sync [<server> [<user>]]",
            method: "\(AuthLogin.method) / \(SyncLogin.method)",
            summary: "sign in: a device code to enter, or a username and password (asked without echo)",
            arguments: [[.accountProvider, .words(["sync"])]]
        ) { line, repl throws(CommandError) in
            let words = line.words
            if words.first == "sync" {
                guard words.count <= 3 else { throw CommandError.usage }
                return .call(repl.syncLogin(server: words.count > 1 ? words[1] : nil, username: words.count > 2 ? words[2] : nil))
            }
            guard let provider = words.first, words.count <= 3 else { throw CommandError.usage }
            var request = AuthLogin(provider: try repl.requireProvider(provider))
            if words.count > 1 { request.username = words[1] }
            if words.count > 2 { request.password = words[2] }
            return .call(repl.login(request))
        },
        CommandSpec(
            "sync", usage: "sync [status|<provider>]",
            method: "\(SyncNow.method) / \(SyncStatus.method) / \(FavoritesSync.method)",
            summary: "podcasts and positions with the sync server (`login sync`); or favorites kept here to a provider's account",
            arguments: [[.words(["status"]), .accountProvider]]
        ) { line, repl throws(CommandError) in
            let words = line.words
            if words.isEmpty {
                return .call(.run(SyncNow()) { repl, report in repl.present(sync: report) })
            }
            if words == ["status"] {
                return .call(.run(SyncStatus()) { repl, state in repl.present(sync: state) })
            }
            return .call(syncCall(try repl.requireProvider(try line.single())))
        },
        CommandSpec(
            "logout", usage: "logout <provider> | logout sync", method: "\(AuthLogout.method) / \(SyncLogout.method)",
            summary: "sign out and revoke the session", arguments: [[.accountProvider, .words(["sync"])]]
        ) { line, repl throws(CommandError) in
            if line.words == ["sync"] {
                return .call(.run(SyncLogout()) { repl, state in repl.present(sync: state) })
            }
            let provider = try repl.requireProvider(try line.single())
            return .call(.run(AuthLogout(provider: provider)) { repl, status in repl.present(auth: status) })
        },
        CommandSpec(
            "doctor", usage: "doctor [--online] [<provider>...]", method: HostDoctor.method,
            summary: "what works here and what does not, each with its fix (--online also reaches each service)",
            arguments: [[.provider]], options: [.flag("--online")]
        ) { line, repl throws(CommandError) in
            let named = try line.words.map { word throws(CommandError) in try repl.requireProvider(word) }
            let request = HostDoctor(online: line.has("--online") ? true : nil)
            return .call(
                .run(request) { repl, report in
                    let shown = DoctorReport.only(named, of: repl.providerIDs, in: report)
                    var text = DoctorReport.render(shown, width: repl.renderer.fit ?? 100)
                    while text.hasSuffix("\n") { text.removeLast() }
                    await repl.page(text)
                })
        },
        CommandSpec(
            "history", usage: "history [<provider>] | history clear [<provider>]",
            method: "\(HistoryList.method) / \(HistoryClear.method)",
            summary: "the last 100 searches, newest first", arguments: [[.provider, .words(["clear"])]],
            follows: ["clear": [.provider]]
        ) { line, repl throws(CommandError) in
            var words = line.words
            if words.first == "clear" {
                words.removeFirst()
                guard words.count <= 1 else { throw CommandError.usage }
                var request = HistoryClear()
                if let provider = words.first { request.provider = try repl.requireProvider(provider) }
                return .call(
                    .run(request) { repl, result in
                        repl.display("forgot \(result.cleared) search\(result.cleared == 1 ? "" : "es")")
                    })
            }
            guard words.count <= 1 else { throw CommandError.usage }
            var request = HistoryList()
            if let provider = words.first { request.provider = try repl.requireProvider(provider) }
            return .call(.run(request) { repl, records in repl.present(searches: records) })
        },
        CommandSpec(
            "config", usage: "config [<key> [<value>|--unset]]", method: "\(ConfigGet.method) / \(ConfigSet.method)",
            summary: "show or change settings", arguments: [[.configKey]], options: [.flag("--unset")]
        ) { line, _ throws(CommandError) in
            guard let key = line.words.first else {
                guard !line.has("--unset") else { throw CommandError.usage }
                return .call(.run(ConfigGet()) { repl, entries in repl.display(repl.renderer.config(entries)) })
            }
            // The value is the rest of the line, its quotes removed: config player.command "mpv --fs".
            let value = line.words.dropFirst().joined(separator: " ")
            if value.isEmpty, !line.has("--unset") {
                return .call(.run(ConfigGet(key: key)) { repl, entries in repl.display(repl.renderer.config(entries)) })
            }
            guard value.isEmpty || !line.has("--unset") else { throw CommandError.usage }
            let request = ConfigSet(key: key, value: line.has("--unset") ? .null : .string(value))
            return .call(
                .run(request) { repl, entry in
                    repl.display(repl.renderer.config([entry]))
                    // The REPL's own settings apply at once (pictures on or off), not at the next start.
                    if entry.key.hasPrefix("repl.") { await repl.pictureSettingsChanged() }
                })
        },
        CommandSpec(
            "call", usage: "call <method> [<json>]", method: "any", summary: "call any method with JSON params",
            arguments: [[.method]]
        ) { line, _ throws(CommandError) in
            guard let method = line.words.first else { throw CommandError.usage }
            // JSON is taken as typed; in quotes, as the words inside them.
            var json = line.raw.splitFirstWord().1
            if json.first == "'" || json.first == "\"" { json = line.words.dropFirst().joined(separator: " ") }
            let params: JSONValue
            do { params = json.isEmpty ? [:] : try JSONValue(parsing: json) } catch {
                throw CommandError.invalid("params are not JSON: \(error)")
            }
            return .call(
                Call(method: method) { repl throws(RPCError) in
                    let bytes = try await repl.dispatch(method, params: params)
                    repl.writeData(repl.options.json ? String(decoding: bytes, as: UTF8.self) : REPL.prettyJSON(Data(bytes)))
                })
        },
        CommandSpec(
            "help", aliases: ["?"], usage: "help [<command>|all]", method: "(local)",
            summary: "the commands by what they are for; one command's usage and examples; or all of them",
            arguments: [[.words(["all"] + CommandSpec.groups.flatMap(\.names))]]
        ) { line, _ in .help(line.words) },
        CommandSpec("quit", aliases: ["exit", "q"], usage: "quit", method: "(local)", summary: "leave (Ctrl-D too)") {
            _, _ in .quit
        },
    ]
}
