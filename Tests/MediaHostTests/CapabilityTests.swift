import Foundation
import JSONRPC
import MediaKit
import TestSupport
import Testing

@testable import MediaHost

/// An account provider whose descriptor forgets `login`: once a crash in auth.login/logout.
struct ForgetfulAccountProvider: AccountProvider, CompiledProvider {
    static let descriptor = ProviderDescriptor(
        id: "forgetful", name: "Forgets its capabilities", kinds: [.video], capabilities: [.search])
    init(context: ProviderContext) throws {}
    func item(_ id: ItemID) async throws -> MediaItem { throw ProviderError.notFound("\(id)") }
    func login(_ credentials: LoginCredentials, prompt: @escaping @Sendable (AuthPrompt) async -> Void) async throws
        -> AuthSession
    {
        AuthSession(provider: "forgetful", account: "ada", accessToken: "forgetful-token-0123456789")
    }
    func refresh(_ session: AuthSession) async throws -> AuthSession { session }
    func logout(_ session: AuthSession) async throws {}
    func setAccountFavorite(_ id: ItemID, _ favorite: Bool, session: AuthSession) async throws {}
    func accountFavorites(cursor: Cursor?, session: AuthSession) async throws -> Page { Page(items: []) }
}

/// A plain provider whose descriptor claims accounts it does not have.
struct BoastfulProvider: CompiledProvider {
    static let descriptor = ProviderDescriptor(
        id: "boastful", name: "Claims accounts", kinds: [.video], capabilities: [.search, .login, .remoteFavorites])
    init(context: ProviderContext) throws {}
    func item(_ id: ItemID) async throws -> MediaItem { throw ProviderError.notFound("\(id)") }
}

@Suite struct CapabilityTests {
    func host() throws -> HostRuntime {
        let directory = try makeTemporaryDirectory()
        return try HostRuntime(
            paths: HostPaths(
                configFile: directory + "/config.toml", dataDir: directory + "/data", cacheDir: directory + "/cache"),
            providers: [.of(ForgetfulAccountProvider.self), .of(BoastfulProvider.self)], http: NoNetwork(), environment: [:])
    }

    @Test func accountCapabilitiesFollowConformance() async throws {
        let host = try host()
        let login = try JSONParser.parse(try await host.dispatcher.call("auth.login", params: ["provider": "forgetful"]))
        #expect(login["loggedIn"] == true)
        #expect(login["account"] == "ada")
        let logout = try JSONParser.parse(try await host.dispatcher.call("auth.logout", params: ["provider": "forgetful"]))
        #expect(logout["loggedIn"] == false)
        let providers = try JSONParser.parse(try await host.dispatcher.call("providers.list"))
        let forgetful = providers.arrayValue?.first { $0["id"] == "forgetful" }
        #expect(forgetful?["capabilities"]?.arrayValue?.contains("login") == true)
        let boastful = providers.arrayValue?.first { $0["id"] == "boastful" }
        #expect(boastful?["capabilities"]?.arrayValue?.contains("login") == false)
        #expect(boastful?["capabilities"]?.arrayValue?.contains("remoteFavorites") == false)

        do {
            _ = try await host.dispatcher.call("auth.login", params: ["provider": "boastful"])
            Issue.record("a provider without accounts cannot log in")
        } catch {
            #expect(error.message.contains("no accounts"))
        }
        do {
            _ = try await host.dispatcher.call("favorites.list", params: ["provider": "boastful", "remote": true])
            Issue.record("a provider without accounts has no remote favorites")
        } catch {
            #expect(error.code != -32603, "\(error.message)")
        }
    }
}
