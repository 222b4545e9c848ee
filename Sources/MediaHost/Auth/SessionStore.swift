import Foundation
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
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try PrivateFile.write(try encoder.encode(session), to: path(session.provider))
    }

    func delete(_ provider: String) { unlink(path(provider)) }
}
