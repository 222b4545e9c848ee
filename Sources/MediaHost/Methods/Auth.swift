import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit

extension AuthStatus: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let ids = try provider.map { [try host.registry.registration($0).descriptor.id] } ?? host.providerIDs
        return ids.compactMap { host.authStatus($0) }
    }
}

extension AuthLogin: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let account = try host.accountProvider(provider)
        let events = host.events
        var session: AuthSession
        // A password login is bounded as a whole, like any call (a server that accepts the
        // connection and never answers once held it for 90 s); a device login waits for a
        // person between requests, so each of its requests is bounded instead.
        let seconds = host.config.seconds(HostSettings.httpTimeout)
        let waitsForPerson = (try? host.registry.registration(provider).descriptor.auth) == .oauthDevice
        do {
            session = try await CallDeadline.$perRequest.withValue(waitsForPerson ? seconds : nil) {
                try await host.withDeadline(!waitsForPerson) {
                    try await host.tagging(provider) {
                        try await account.login(LoginCredentials(username: username, password: password)) { prompt in
                            events.publish(HostEvent(prompt))
                        }
                    }
                }
            }
        } catch let failure as ProviderFailure {
            // The password is no setting the redactor knows: a server echoing it back in its
            // error message must not put it on the screen or in a log.
            guard let password else { throw failure }
            throw ProviderFailure(provider: failure.provider, error: failure.error.masking(password))
        }
        // A server that names the account with the password (echoing what it was sent) must not
        // have it kept in the session file, nor shown as the account's name.
        if let password, password.utf8.count >= 4 {
            session.account = session.account?.replacing(password, with: Redactor.mask)
            session.values = session.values.mapValues { $0.replacing(password, with: Redactor.mask) }
        }
        session.endpoints = host.endpoints(of: provider)
        try host.sessions.save(session)
        host.refreshSecrets()
        var status = try host.requireAuthStatus(provider)
        if (try? host.registry.registration(provider).descriptor.capabilities.contains(.remoteFavorites)) == true {
            do {
                status.unsyncedFavorites = try await host.withDeadline(true) {
                    try await host.favoritesMissingFromAccount(provider).count
                }
            } catch {
                host.logger.notice("\(provider): cannot compare favorites with the account: \(error)")
            }
        }
        return status
    }
}

extension AuthLogout: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let account = try host.accountProvider(provider)
        if let session = host.sessions.load(provider) {
            do {
                try await account.logout(session)
            } catch {
                host.logger.notice("\(provider): revoking the session failed (\(error)); forgetting it anyway")
            }
        }
        host.sessions.delete(provider)
        host.refreshSecrets()
        return try host.requireAuthStatus(provider)
    }
}

extension HostRuntime {
    /// Accounts kept by modules rather than providers (the podcast sync server), in the same
    /// 0600 files; their secrets are redacted like the providers'.
    static let moduleSessions = ["sync"]

    /// A module's account (`moduleSessions`), as kept.
    public func moduleSession(_ name: String) -> AuthSession? {
        precondition(Self.moduleSessions.contains(name), "\(name) is not a module's account")
        return sessions.load(name)
    }

    /// Keeps (or, with nil, forgets) a module's account; its secrets are redacted from then on.
    public func setModuleSession(_ name: String, _ session: AuthSession?) throws {
        precondition(Self.moduleSessions.contains(name), "\(name) is not a module's account")
        if var session {
            session.provider = name
            try sessions.save(session)
        } else {
            sessions.delete(name)
        }
        refreshSecrets()
    }

    /// Whether logging in to `provider` takes a username and password.
    public func needsPassword(_ provider: String) -> Bool {
        (try? registry.registration(provider).descriptor.auth) == .sessionLogin
    }

    var sessions: SessionStore { SessionStore(folder: paths.authDir) }

    /// A provider's server settings in effect (those whose values are http or https URLs).
    func endpoints(of provider: String) -> [String: String] {
        guard let descriptor = try? registry.registration(provider).descriptor else { return [:] }
        var endpoints: [String: String] = [:]
        for key in descriptor.configKeys where !key.secret {
            guard let value = config["providers.\(provider).\(key.name)"] ?? key.defaultValue,
                value.hasPrefix("http://") || value.hasPrefix("https://")
            else { continue }
            endpoints[key.name] = value
        }
        return endpoints
    }

    /// Forgets the logins made against other servers than the providers' now (a sandbox's on
    /// another port, an instance changed in the settings), each with a line that says why: their
    /// tokens mean nothing there, and are not sent there.
    func dropSessionsMadeElsewhere() {
        for id in registry.ids {
            guard let made = sessions.load(id)?.endpoints else { continue }
            let now = endpoints(of: id)
            guard let key = made.keys.sorted().first(where: { made[$0] != now[$0] }) else { continue }
            sessions.delete(id)
            logger.warning(
                "\(id): the login made on \(made[key] ?? "?") is forgotten: \(id) now uses \(now[key] ?? "another server"); `login \(id)` again"
            )
        }
    }

    func authStatus(_ provider: String) -> AuthStatusEntry? {
        guard let descriptor = try? registry.registration(provider).descriptor,
            descriptor.capabilities.contains(.login)
        else { return nil }
        return authStatus(provider, descriptor: descriptor)
    }

    /// The status of a provider that was just logged in or out (it has accounts, whatever its
    /// descriptor says).
    func requireAuthStatus(_ provider: String) throws -> AuthStatusEntry {
        let descriptor = try registry.registration(provider).descriptor
        return authStatus(provider, descriptor: descriptor)
    }

    private func authStatus(_ provider: String, descriptor: ProviderDescriptor) -> AuthStatusEntry {
        let session = sessions.load(provider)
        return AuthStatusEntry(
            provider: provider, auth: descriptor.auth, loggedIn: session != nil, account: session?.account,
            expiresAt: session?.expiresAt.map { ISODate.string(from: $0) })
    }

    /// The provider, if it has accounts.
    /// - Throws: `unsupported` for providers without login.
    func accountProvider(_ id: String) throws -> any AccountProvider {
        guard let account = try provider(id) as? any AccountProvider else {
            throw ProviderFailure(provider: id, error: .unsupported("\(id) has no accounts to log in to"))
        }
        return account
    }

    /// The provider's session, refreshed when it is about to expire; nil when not logged in.
    func session(for id: String) async throws -> AuthSession? {
        guard var session = sessions.load(id) else { return nil }
        if session.needsRefresh(), session.refreshToken != nil {
            let account = try accountProvider(id)
            session = try await tagging(id) { try await account.refresh(session) }
            try sessions.save(session)
            refreshSecrets()
        }
        return session
    }

    /// Runs an account call with a fresh session, refreshing once more if the service says the
    /// token is no longer valid.
    func withAccount<T: Sendable>(_ id: String, _ body: (any AccountProvider, AuthSession) async throws -> T) async throws -> T {
        let account = try accountProvider(id)
        guard var session = try await session(for: id) else {
            throw ProviderFailure(provider: id, error: .unauthorized("not logged in to \(id); run `login \(id)` (auth.login)"))
        }
        do {
            return try await tagging(id) { try await body(account, session) }
        } catch let failure as ProviderFailure {
            guard case .unauthorized = failure.error, session.refreshToken != nil else { throw failure }
            session = try await tagging(id) { try await account.refresh(session) }
            try sessions.save(session)
            refreshSecrets()
            return try await tagging(id) { try await body(account, session) }
        }
    }
}
