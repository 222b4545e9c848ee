import Basics
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// Files only the user may read (login sessions, secret settings) in the 0700 `auth/` folder:
/// created 0600 before a byte is written, written whole to a temporary name, fsynced and renamed,
/// so a reader never sees half a token and no one else ever sees any.
public enum PrivateFile {
    public static func write(_ data: Data, to path: String) throws {
        let folder = Path.directory(of: path)
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        chmod(folder, 0o700)
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw HostError.storage("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        fchmod(fd, 0o600)
        let written = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        fsync(fd)
        close(fd)
        guard written == data.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw HostError.storage("cannot save \(path)")
        }
    }
}

/// Secret settings made with `config.set` (API keys, tokens): kept in `auth/settings.json`
/// beside the login sessions, never in the database, so a copied or shared database carries none.
struct SecretSettings: Sendable {
    let path: String

    func load() -> [String: String] {
        guard let data = FileManager.default.contents(atPath: path),
            let values = try? JSONDecoder().decode([String: String].self, from: data)
        else { return [:] }
        return values
    }

    func set(_ key: String, _ value: String?) throws {
        var values = load()
        values[key] = value
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try PrivateFile.write(try encoder.encode(values), to: path)
    }
}
