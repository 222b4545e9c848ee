import Basics
import FoundationEssentials
import HostAPI
import JSONRPC
import MediaHost
import MediaKit
import MediaStore

/// Podcast sync with the devices people already use: subscriptions and play positions through a
/// gpodder.net-compatible server or Nextcloud's gpoddersync app.
public enum SyncModule: HostModule {
    public static let methods: [any RPCMethod.Type] = [SyncLogin.self, SyncLogout.self, SyncStatus.self, SyncNow.self]

    /// The REPL or an editor's session starts: what other devices did since comes in (in the
    /// background: the prompt does not wait for the server). A session attached to the
    /// background service asks it for the round, so every client hears what it changes.
    public static func sessionWillStart(_ host: HostRuntime) async {
        guard SyncAccount.load(host) != nil else { return }
        let engine = host.component(SyncEngine.self)
        if let service = host.attachedService {
            Task { await engine.runQuietly("at start", via: service) }
            return
        }
        Task {
            await engine.runQuietly("at start")
            // Shows followed by a one-shot `call sync.now` (which ends before their feeds are
            // read) get their titles now.
            if let ids = try? await host.store.followsTitledByURL(SyncEngine.placeholderTitle), !ids.isEmpty {
                engine.refreshTitles(ids)
            }
        }
    }

    /// The service syncs every `sync.interval_minutes`.
    public static func serviceWillStart(_ host: HostRuntime) async {
        host.component(SyncEngine.self).syncPeriodically()
    }

    /// `doctor`: the account, what waits and the last error; `--online`: the server answers and
    /// takes the password.
    public static func healthChecks(_ host: HostRuntime, online: Bool) async -> [HealthCheck] {
        guard let account = SyncAccount.load(host) else {
            return [
                HealthCheck(
                    area: "sync", name: "account", status: .skipped, detail: "no sync server",
                    fix: "optional: `login sync` to sync podcasts and positions with your phone")
            ]
        }
        var checks: [HealthCheck] = []
        let name = "\(account.username) on \(account.server.absoluteString) (\(account.dialect.rawValue))"
        let state: SyncState
        do {
            state = try await SyncState.read(host)
        } catch {
            return [
                HealthCheck(
                    area: "sync", name: "account", status: .failed,
                    detail: "\(name): the sync state cannot be read: \(error)", fix: "`doctor` checks the store")
            ]
        }
        if let error = state.lastError {
            checks.append(
                HealthCheck(
                    area: "sync", name: "account", status: .warning,
                    detail: "\(name): the last sync failed: \(error); \(state.queued) changes wait",
                    fix: "`sync` to try again"))
        } else {
            checks.append(
                HealthCheck(
                    area: "sync", name: "account", status: .ok,
                    detail: "\(name), last synced \(state.lastSync ?? "never")"))
        }
        if let problem = state.lastReportError {
            checks.append(HealthCheck(area: "sync", name: "report", status: .warning, detail: problem, fix: "`sync`"))
        }
        guard online else {
            checks.append(
                HealthCheck(area: "sync", name: "server", status: .skipped, detail: "not reached", fix: "doctor --online"))
            return checks
        }
        do {
            try await SyncServer.of(account, host: host).login()
            checks.append(HealthCheck(area: "sync", name: "server", status: .ok, detail: "answers and takes the password"))
        } catch {
            let message = (error as? ProviderFailure)?.error.message ?? "\(error)"
            checks.append(
                HealthCheck(area: "sync", name: "server", status: .failed, detail: message, fix: "`login sync` again"))
        }
        return checks
    }

    /// `quit`: what changed here goes out now, not at the next start.
    public static func sessionWillEnd(_ host: HostRuntime) async {
        guard SyncAccount.load(host) != nil else { return }
        await host.component(SyncEngine.self).runQuietly("at quit", via: host.attachedService)
    }
}

extension SyncLogin: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        if server.trimming(.whitespaces).lowercased() == HubLink.keyword {
            return try await linkToHub(host)
        }
        var text = server.trimming(.whitespaces)
        if !text.contains("://") { text = "https://" + text }
        if let range = text.firstRange(of: SyncServer.nextcloudBase) { text = String(text[..<range.lowerBound]) }
        while text.hasSuffix("/") { text.removeLast() }
        if text.hasSuffix("/index.php") { text.removeLast("/index.php".count) }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url.host?.isEmpty == false
        else {
            throw HostError.invalidArgument("that is not a server address; give one like https://gpodder.net")
        }
        // A password in the address would be kept and shown with it.
        guard url.user == nil, url.password == nil else {
            throw HostError.invalidArgument("give the server without a user or password in it; they are asked apart")
        }
        guard !username.isEmpty, !password.isEmpty else {
            throw HostError.invalidArgument("give the user name and the password (for Nextcloud an app password)")
        }
        let device = device ?? SyncAccount.defaultDevice()
        guard SyncAccount.isValidDevice(device) else {
            throw HostError.invalidArgument("a device id is 1 to 64 letters, digits, '.', '-' or '_'")
        }
        var tried: [any Error] = []
        for candidate in dialect.map({ [$0] }) ?? [.nextcloud, .gpodder] {
            let account = SyncAccount(dialect: candidate, server: url, username: username, password: password, device: device)
            do {
                try await SyncServer(account: account, http: host.http).login()
                // Not in the middle of another process's round (it would write the old
                // account's cursors after the switch).
                let lock = try await DataDirLock.acquire(host.paths.dataDir + "/run/sync.lock")
                defer { lock.release() }
                try host.setModuleSession(SyncAccount.sessionName, account.session)
                try await host.store.beginSync(account: account.storeName)
                return try await SyncState.read(host)
            } catch let failure as ProviderFailure {
                // A refused password is the answer whatever the dialect; anything else may be
                // the other dialect's server.
                if case .unauthorized = failure.error { throw failure }
                tried.append(failure)
            }
        }
        guard dialect == nil else { throw tried[0] }
        // Neither answered at all: that is the news, not the dialects.
        if let first = tried.first as? ProviderFailure, case .network = first.error,
            tried.allSatisfy({ error in
                if case .network = (error as? ProviderFailure)?.error { return true }
                return false
            })
        {
            throw first
        }
        throw ProviderFailure(
            provider: "sync",
            error: .notFound(
                "\(url.absoluteString) answers neither as a gpodder.net server nor as Nextcloud's gpoddersync: \(tried.last.map(SyncEngine.text) ?? "")"
            ))
    }
}

extension SyncLogin {
    /// `login sync here NAME`: the desk becomes a device of NAME's account on this machine's
    /// own sync server (`mediahost users`); no password, the account's file is the desk's.
    func linkToHub(_ host: HostRuntime) async throws -> SyncState {
        let device = device ?? SyncAccount.defaultDevice()
        guard SyncAccount.isValidDevice(device) else {
            throw HostError.invalidArgument("a device id is 1 to 64 letters, digits, '.', '-' or '_'")
        }
        let account = SyncAccount(dialect: .gpodder, server: HubLink.server, username: username, password: "", device: device)
        try await SyncServer.of(account, host: host).login()
        let lock = try await DataDirLock.acquire(host.paths.dataDir + "/run/sync.lock")
        defer { lock.release() }
        try host.setModuleSession(SyncAccount.sessionName, account.session)
        try await host.store.beginSync(account: account.storeName)
        return try await SyncState.read(host)
    }
}

extension SyncLogout: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let lock = try await DataDirLock.acquire(host.paths.dataDir + "/run/sync.lock")
        defer { lock.release() }
        try host.setModuleSession(SyncAccount.sessionName, nil)
        try await host.store.endSync()
        return try await SyncState.read(host)
    }
}

extension SyncStatus: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response { try await SyncState.read(host) }
}

extension SyncNow: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        try await host.component(SyncEngine.self).run()
    }
}

extension SyncState {
    static func read(_ host: HostRuntime) async throws -> SyncState {
        let account = SyncAccount.load(host)
        let store = host.store
        var report: SyncReport?
        var reportError: String?
        if let text = try await store.syncValue("lastReport") {
            do {
                report = try JSONDecoder().decode(SyncReport.self, from: Data(text.utf8))
            } catch {
                reportError = "the last round's figures cannot be read (\(error)); the next round writes them again"
            }
        }
        let error = try await store.syncValue("lastError")
        let lastSync = try await store.syncValue("lastSync")
        let queued = try await store.syncOutboxCount()
        let remote = try await store.remoteEpisodeCount()
        return SyncState(
            configured: account != nil, server: account?.server.absoluteString, dialect: account?.dialect,
            username: account?.username, device: account?.device, lastSync: lastSync,
            lastError: error?.isEmpty == false ? error : nil, queued: queued, remoteEpisodes: remote, lastReport: report,
            lastReportError: reportError)
    }
}
