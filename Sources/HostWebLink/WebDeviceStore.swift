import Basics
import FoundationEssentials
import HostAPI
import MediaHost
import MediaKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The paired browsers, in `auth/web-devices.json` (0600 in the 0700 `auth/` folder, beside the
/// login sessions: never in the database, so a copied library pairs no one). A device's token
/// is kept only as its SHA-256: the file read by someone else pairs no browser.
/// Read again when another process of the data dir changed it (`mediahost pair --revoke`
/// without the service).
public final class WebDeviceStore: Sendable {
    public struct Stored: Codable, Sendable {
        public var device: WebDevice
        /// SHA-256 of the token, hex.
        var hash: String
    }

    public let path: String
    private let cache = Mutex<(stamp: String, devices: [Stored])?>(nil)
    /// Held while the file is read and written again, in this process (a page's `seen` written
    /// as the desk revokes it would otherwise bring it back) and, with `flock` on a file beside
    /// it, against the data dir's other processes.
    private let writing = Mutex(())
    /// `seen` is written at most this often per device.
    static let seenGranularity: TimeInterval = 3600

    public init(path: String) { self.path = path }

    /// The file of `dataDir`'s paired browsers.
    public convenience init(dataDir: String) { self.init(path: dataDir + "/auth/web-devices.json") }

    /// A token's text: 32 random bytes, base64url.
    public static func makeToken() -> String { randomText(bytes: 32) }

    public static func randomText(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let raw = (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(raw).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }

    public static func hash(_ token: String) -> String { SHA256.hex(Array(token.utf8)) }

    private var stamp: String {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return "" }
        let date = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return "\(date)/\(attributes[.size] as? Int ?? 0)"
    }

    /// Why the file cannot be read, while it cannot: it then pairs no one, and is not written
    /// over (what it held would be lost).
    public var problem: String? { _ = all(); return unreadable.withLock { $0 } }
    private let unreadable = Mutex<String?>(nil)

    /// Every paired device. A file that cannot be read pairs no one (and says so in `problem`).
    public func all() -> [Stored] {
        let stamp = stamp
        if let cached = cache.withLock({ $0 }), cached.stamp == stamp { return cached.devices }
        var devices: [Stored] = []
        var problem: String?
        if let data = FileManager.default.contents(atPath: path) {
            do {
                devices = try JSONDecoder().decode([Stored].self, from: data)
            } catch {
                problem = "\(path) cannot be read (\(error)): fix or remove it, then pair again"
            }
        }
        unreadable.withLock { $0 = problem }
        cache.withLock { $0 = (stamp, devices) }
        return devices
    }

    /// The device `id`, while it is paired.
    public func device(id: String) -> WebDevice? { all().first { $0.device.id == id }?.device }

    /// The device holding `token`, if any.
    public func device(token: String) -> WebDevice? {
        guard !token.isEmpty, token.utf8.count < 200 else { return nil }
        let hash = Self.hash(token)
        return all().first { $0.hash == hash }?.device
    }

    /// Runs `change` on the devices as the file holds them now, and keeps what it leaves.
    private func update<T>(_ change: (inout [Stored]) throws -> T) throws -> T {
        try writing.withLock { _ in
            try? FileManager.default.createDirectory(
                atPath: Path.directory(of: path), withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let fd = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            if fd >= 0 { flock(fd, LOCK_EX) }
            defer {
                if fd >= 0 {
                    flock(fd, LOCK_UN)
                    close(fd)
                }
            }
            cache.withLock { $0 = nil }
            var devices = all()
            if let problem = unreadable.withLock({ $0 }) { throw HostError.storage(problem) }
            let result = try change(&devices)
            try save(devices)
            return result
        }
    }

    private func save(_ devices: [Stored]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try PrivateFile.write(try encoder.encode(devices), to: path)
        cache.withLock { $0 = nil }
    }

    /// Pairs a new device; its token (shown to no one but the browser, in a cookie).
    public func add(name: String, access: WebAccess) throws -> (device: WebDevice, token: String) {
        let token = Self.makeToken()
        let device = try update { devices in
            var id = ""
            repeat {
                id = String(SHA256.hex(Array(Self.randomText(bytes: 8).utf8)).prefix(6))
            } while devices.contains { $0.device.id == id }
            let device = WebDevice(id: id, name: name, access: access, paired: ISODate.string(from: Date()))
            devices.append(Stored(device: device, hash: Self.hash(token)))
            return device
        }
        return (device, token)
    }

    /// Removes the device `id`, or every one for `all`.
    public func revoke(_ id: String) throws -> [WebDevice] {
        guard all().contains(where: { id == "all" || $0.device.id == id }) else { return [] }
        return try update { devices in
            let gone = devices.filter { id == "all" || $0.device.id == id }
            devices.removeAll { id == "all" || $0.device.id == id }
            return gone.map(\.device)
        }
    }

    /// Notes that `id` was seen now (at most once an hour: a page open all day writes nothing).
    public func markSeen(_ id: String) {
        let now = Date()
        guard let stored = all().first(where: { $0.device.id == id }) else { return }
        if let seen = stored.device.seen.flatMap(ISODate.parse), now.timeIntervalSince(seen) < Self.seenGranularity { return }
        // When a device was seen is worth no error to the page that was seen.
        _ = try? update { devices in
            if let index = devices.firstIndex(where: { $0.device.id == id }) {
                devices[index].device.seen = ISODate.string(from: now)
            }
        }
    }
}
