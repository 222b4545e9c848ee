import Basics
import FoundationEssentials
import Glibc
import MediaHost
import MediaKit

/// The sync server's account, kept like a provider's login (`<data dir>/auth/sync.json`, 0600):
/// the password never leaves that file but in the Authorization header.
public struct SyncAccount: Sendable, Equatable {
    public typealias Dialect = SyncDialect

    public var dialect: Dialect
    /// The server's base URL (for Nextcloud, where `/index.php` lives).
    public var server: URL
    public var username: String
    public var password: String
    /// This machine's device id on a gpodder.net server.
    public var device: String

    static let sessionName = "sync"

    init(dialect: Dialect, server: URL, username: String, password: String, device: String) {
        self.dialect = dialect
        self.server = server
        self.username = username
        self.password = password
        self.device = device
    }

    init?(_ session: AuthSession) {
        guard let dialect = session.values["dialect"].flatMap(Dialect.init), let text = session.values["server"],
            let server = URL(string: text), let username = session.account, let device = session.values["device"]
        else { return nil }
        self.init(dialect: dialect, server: server, username: username, password: session.accessToken, device: device)
    }

    var session: AuthSession {
        AuthSession(
            provider: Self.sessionName, account: username, accessToken: password,
            values: ["dialect": dialect.rawValue, "server": server.absoluteString, "device": device])
    }

    /// Names the account in the store: another account's cursors and queue are not this one's.
    var storeName: String { "\(dialect.rawValue) \(username)@\(server.absoluteString) \(device)" }

    static func load(_ host: HostRuntime) -> SyncAccount? {
        host.moduleSession(sessionName).flatMap(SyncAccount.init)
    }

    /// A device id for this machine: `mediahost-<host name>`, in the characters gpodder.net
    /// allows (letters, digits, dot, dash, underscore).
    static func defaultDevice() -> String {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0 ? String(cString: name) : "computer"
        let cleaned = String(
            String.UnicodeScalarView(
                host.unicodeScalars.map { scalar in
                    scalar.isASCII
                        && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                            || "._-".unicodeScalars.contains(scalar))
                        ? scalar : "-"
                }))
        return "mediahost-" + (cleaned.isEmpty ? "computer" : String(cleaned.prefix(40)))
    }

    /// Whether `device` is an id gpodder.net accepts.
    static func isValidDevice(_ device: String) -> Bool {
        !device.isEmpty && device.utf8.count <= 64
            && device.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0))
            }
    }
}
