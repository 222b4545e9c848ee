import Basics
import FoundationEssentials
import MediaKit

#if canImport(Glibc)
    import Glibc
#endif

/// Login sessions, one file per provider under `<data dir>/auth/`, mode 0600 in a 0700 folder
/// written through `PrivateFile` (whole, then renamed: never half a token).
struct SessionStore: Sendable {
    let folder: String

    func path(_ provider: String) -> String { "\(folder)/\(provider).json" }

    func load(_ provider: String) -> AuthSession? {
        guard let data = FileManager.default.contents(atPath: path(provider)) else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(AuthSession.self, from: data)
    }

    func save(_ session: AuthSession) throws {
        var session = session
        // A provider's refreshed session is new to it; where it was made stays the same.
        if session.endpoints == nil { session.endpoints = load(session.provider)?.endpoints }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try PrivateFile.write(try encoder.encode(session), to: path(session.provider))
    }

    func delete(_ provider: String) { unlink(path(provider)) }
}

/// One provider's session as the provider sees it (`ProviderContext.sessions`): the file
/// `auth.login` wrote; a save also tells the redactor the new tokens.
struct StoredSessions: SessionKeeper {
    let store: SessionStore
    let provider: String
    let saved: @Sendable () -> Void

    func load() -> AuthSession? { store.load(provider) }

    func save(_ session: AuthSession) throws {
        var session = session
        session.provider = provider
        try store.save(session)
        saved()
    }
}
