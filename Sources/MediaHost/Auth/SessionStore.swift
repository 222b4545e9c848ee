import Foundation
import MediaKit

#if canImport(Glibc)
    import Glibc
#endif

/// Login sessions, one file per provider under `<data dir>/auth/`, mode 0600 in a 0700 folder
/// (the seeds kept them in the Keychain). Written whole and renamed, so never half a token.
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
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        chmod(folder, 0o700)
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(session)
        let temporary = path(session.provider) + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw HostError.storage("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        fchmod(fd, 0o600)
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        fsync(fd)
        close(fd)
        guard written == data.count, rename(temporary, path(session.provider)) == 0 else {
            unlink(temporary)
            throw HostError.storage("cannot save the \(session.provider) session")
        }
    }

    func delete(_ provider: String) { unlink(path(provider)) }
}
