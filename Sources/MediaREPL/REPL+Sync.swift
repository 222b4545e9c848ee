import Basics
import FoundationEssentials
import HostAPI
import JSONRPC

extension REPL {
    /// `login sync`: the server, user and password (without echo) are asked for when not given.
    func syncLogin(server: String?, username: String?) -> Call {
        Call(method: SyncLogin.method) { repl throws(RPCError) in
            let cancelled = RPCError(code: RPCError.requestCancelledCode, message: "login cancelled")
            guard let ask = repl.ask else {
                throw RPCError(
                    code: RPCError.invalidParamsCode,
                    message: "in scripts: call sync.login {\"server\": …, \"username\": …, \"password\": …}")
            }
            var server = server
            if server == nil {
                guard let text = await ask("sync server (gpodder.net, or your Nextcloud's address): ", false), !text.isEmpty
                else { throw cancelled }
                server = text
            }
            var username = username
            if username == nil {
                guard let name = await ask("user name: ", false), !name.isEmpty else { throw cancelled }
                username = name
            }
            // `here`: this machine's own sync server, whose accounts need no password at the desk.
            let here = server?.trimming(.whitespaces).lowercased() == "here"
            guard let password = here ? "" : await ask("password (for Nextcloud an app password): ", true),
                here || !password.isEmpty
            else { throw cancelled }
            let state = try await repl.dispatch(SyncLogin(server: server ?? "", username: username ?? "", password: password))
            try repl.printJSON(SyncLogin.self, state)
            repl.present(sync: state)
            repl.display("`sync` syncs now; the background service syncs every sync.interval_minutes")
        }
    }

    func present(sync state: SyncState) {
        guard state.configured, let server = state.server else {
            display("no sync server; `login sync` sets one (gpodder.net, mygpo, opodsync or Nextcloud's gpoddersync)")
            return
        }
        display("\(state.username ?? "") on \(server) (\(state.dialect?.rawValue ?? "")), this machine is \(state.device ?? "")")
        var last = state.lastSync.map { "last synced " + Renderer.when($0) } ?? "not synced yet"
        if state.queued > 0 { last += "; \(state.queued) change\(state.queued == 1 ? "" : "s") waiting" }
        display(last)
        if let error = state.lastError { fail(error, label: "last sync failed") }
        if let problem = state.lastReportError { fail(problem, label: "note") }
    }

    func present(sync report: SyncReport) {
        var parts: [String] = []
        if report.followed > 0 { parts.append("followed \(report.followed)") }
        if report.unfollowed > 0 { parts.append("unfollowed \(report.unfollowed)") }
        if report.subscriptionsSent > 0 {
            parts.append("sent \(report.subscriptionsSent) subscription change\(report.subscriptionsSent == 1 ? "" : "s")")
        }
        if report.actionsNewer > 0 {
            parts.append("\(report.actionsNewer) newer position\(report.actionsNewer == 1 ? "" : "s") from other devices")
        }
        if report.actionsSent > 0 { parts.append("sent \(report.actionsSent) position\(report.actionsSent == 1 ? "" : "s")") }
        display("synced with \(report.server)" + (parts.isEmpty ? ": nothing new" : ": " + parts.joined(separator: ", ")))
        for line in report.skipped { display("note: " + line) }
        if report.queued > 0 { display("\(report.queued) change\(report.queued == 1 ? "" : "s") still waiting") }
    }
}
