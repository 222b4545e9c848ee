import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit
import MediaStore

extension HostDoctor: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        var checks = host.localChecks()
        // With the host's own checks (the report groups checks by area as they come).
        let refresh = await host.refreshCheck()
        checks.insert(refresh, at: checks.lastIndex { $0.area == "host" }.map { $0 + 1 } ?? checks.count)
        let online = online ?? false
        for registration in host.registry.registrations {
            let descriptor = registration.descriptor
            let id = descriptor.id
            if let hint = host.configureHint(descriptor) {
                // Not configured is no failure: the provider waits to be set up.
                checks.append(HealthCheck(area: id, name: "settings", status: .skipped, detail: "not configured", fix: hint))
                continue
            }
            let provider: any MediaProvider
            do {
                provider = try host.provider(id)
            } catch {
                let message = host.outgoing(Dispatcher.rpcError(for: error, method: Self.method, logger: host.logger)).message
                checks.append(HealthCheck(area: id, name: "settings", status: .failed, detail: message))
                continue
            }
            checks.append(HealthCheck(area: id, name: "settings", status: .ok, detail: "configured"))
            if let diagnosable = provider as? any DiagnosableProvider {
                checks += await diagnosable.healthChecks(network: online)
            }
            if let status = host.authStatus(id) {
                checks.append(
                    HealthCheck(
                        area: id, name: "account", status: .ok,
                        detail: status.loggedIn ? "logged in as \(status.account ?? "?")" : "not logged in",
                        fix: status.loggedIn ? nil : "optional: `login \(id)` for account features"))
            }
            checks.append(await host.reach(provider, id: id, online: online))
        }
        for module in host.modules { checks += await module.healthChecks(host, online: online) }
        for problem in host.pluginProblems {
            checks.append(HealthCheck(area: "plugins", name: "plugin", status: .failed, detail: problem))
        }
        checks = checks.map { check in
            var check = check
            check.detail = host.redactor.scrub(check.detail, keepNewlines: false)
            check.fix = check.fix.map { host.redactor.scrub($0, keepNewlines: false) }
            return check
        }
        return Response(checks: checks, ok: !checks.contains { $0.status == .failed })
    }
}

extension HostRuntime {
    /// How long a feed fails before `doctor` warns of it (a server down for an afternoon is not news).
    static let failingFeedWarning: TimeInterval = 2 * 86_400

    /// The followed shows' feeds: when they were last refreshed, and those that fail, named, with
    /// why; a warning for those failing for days.
    func refreshCheck(now: Date = Date()) async -> HealthCheck {
        let followed: [MediaItem]
        let states: [ItemID: MediaStore.FeedState]
        do {
            followed = try await followedShows()
            states = try await store.feedStates(followed.map(\.id))
        } catch {
            return HealthCheck(
                area: "host", name: "refresh", status: .failed, detail: "the feeds' state cannot be read: \(error)")
        }
        guard !followed.isEmpty else {
            return HealthCheck(area: "host", name: "refresh", status: .ok, detail: "nothing followed yet")
        }
        let titles = Dictionary(followed.map { ($0.id, $0.title) }) { first, _ in first }
        let failing = states.values.filter { $0.failingSince != nil }.sorted { $0.failingSince! < $1.failingSince! }
        let old = failing.filter { now.timeIntervalSince($0.failingSince!) >= Self.failingFeedWarning }
        func named(_ states: [MediaStore.FeedState]) -> String {
            states.map { state in
                let days = Int(now.timeIntervalSince(state.failingSince!) / 86_400)
                let since = days >= 1 ? "for \(days) day\(days == 1 ? "" : "s")" : "since today"
                return "\(titles[state.show] ?? state.show.description) (\(since): \(state.lastError ?? "no reason kept"))"
            }.joined(separator: "; ")
        }
        let last = states.values.map(\.lastAttempt).max()
        let when =
            last.map { "last refreshed \(ISODate.string(from: $0))" } ?? "never refreshed (`mediahost refresh`, or the service)"
        if !old.isEmpty {
            return HealthCheck(
                area: "host", name: "refresh", status: .warning,
                detail: "\(old.count) of \(followed.count) followed feeds fail: \(named(old))",
                fix: "check each feed's address (`show` on it); a show that moved is followed again at its new feed")
        }
        let detail =
            failing.isEmpty
            ? "\(followed.count) followed, \(when)"
            : "\(followed.count) followed, \(when); \(failing.count) failed at the last refresh: \(named(failing))"
        return HealthCheck(area: "host", name: "refresh", status: .ok, detail: detail)
    }

    /// The host's own checks: the data dir, the background service, the player.
    func localChecks() -> [HealthCheck] {
        var checks: [HealthCheck] = []
        let probe = paths.dataDir + "/.doctor-\(ProcessInfo.processInfo.processIdentifier)"
        if FileManager.default.createFile(atPath: probe, contents: Data("x".utf8)) {
            try? FileManager.default.removeItem(atPath: probe)
            checks.append(HealthCheck(area: "host", name: "data dir", status: .ok, detail: "\(paths.dataDir) is writable"))
        } else {
            checks.append(
                HealthCheck(
                    area: "host", name: "data dir", status: .failed, detail: "\(paths.dataDir) cannot be written",
                    fix: "make it writable, or point MEDIAHOST_DATA_DIR (or --data-dir) at a folder that is"))
        }
        if let problem = configProblem {
            checks.append(
                HealthCheck(
                    area: "host", name: "settings", status: .failed,
                    detail: "\(problem); the settings before the change stay in effect",
                    fix: "fix the file (`mediahost config` shows what is in effect)"))
        }
        let socket = UnixSocket(path: paths.serviceSocket())
        checks.append(
            HealthCheck(
                area: "host", name: "service", status: .ok,
                detail: socket.isServing ? "running on \(socket.path)" : "not running (each front end works in its own process)",
                fix: socket.isServing
                    ? nil : "optional: `mediahost serve` (or the systemd user unit) shares downloads and playback"))
        let words = config.command(HostSettings.playerCommand)
        let program = words.first ?? ""
        let found = Path.findProgram(program)
        checks.append(
            HealthCheck(
                area: "player", name: program.isEmpty ? "player" : program, status: found == nil ? .warning : .ok,
                detail: found.map { "found at \($0)" + (program == "mpv" ? "" : " (only mpv is controlled: pause, seek, queue)") }
                    ?? "'\(program)' is not installed: play cannot start anything",
                fix: found == nil ? "install mpv (apt-get install mpv), or `config player.command <player>`" : nil))
        return checks
    }

    /// Whether the provider's service answers (online), or that this needs the network.
    func reach(_ provider: any MediaProvider, id: String, online: Bool) async -> HealthCheck {
        guard online else {
            return HealthCheck(
                area: id, name: "service", status: .skipped, detail: "needs the network",
                fix: "`mediahost doctor --online` reaches it")
        }
        let started = ContinuousClock.now
        do {
            _ = try await withDeadline(true) {
                try await tagging(id) {
                    if provider.descriptor.capabilities.contains(.categories) {
                        _ = try await provider.categories()
                    } else {
                        _ = try await provider.search(SearchQuery(text: "news"))
                    }
                }
            }
            return HealthCheck(
                area: id, name: "service", status: .ok,
                detail: "answered in \(HostRuntime.milliseconds(since: started)) ms")
        } catch {
            let message = outgoing(Dispatcher.rpcError(for: error, method: HostDoctor.method, logger: logger)).message
            return HealthCheck(area: id, name: "service", status: .failed, detail: message)
        }
    }

}
