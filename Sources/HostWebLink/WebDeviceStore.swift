import Basics
import FoundationEssentials
import HostAPI
import MediaHost
import MediaKit
import Synchronization

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

    /// Every paired device. A file that cannot be read pairs no one (and says so in `problem`).
    public func all() -> [Stored] {
        let stamp = stamp
        if let cached = cache.withLock({ $0 }), cached.stamp == stamp { return cached.devices }
        var devices: [Stored] = []
        if let data = FileManager.default.contents(atPath: path) {
            devices = (try? JSONDecoder().decode([Stored].self, from: data)) ?? []
        }
        cache.withLock { $0 = (stamp, devices) }
        return devices
    }

    /// The device holding `token`, if any.
    public func device(token: String) -> WebDevice? {
        guard !token.isEmpty, token.utf8.count < 200 else { return nil }
        let hash = Self.hash(token)
        return all().first { $0.hash == hash }?.device
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
        var devices = all()
        var id = ""
        repeat {
            id = String(SHA256.hex(Array(Self.randomText(bytes: 8).utf8)).prefix(6))
        } while devices.contains {
            $0.device.id == id
        }
        let device = WebDevice(id: id, name: name, access: access, paired: ISODate.string(from: Date()))
        devices.append(Stored(device: device, hash: Self.hash(token)))
        try save(devices)
        return (device, token)
    }

    /// Removes the device `id`, or every one for `all`.
    public func revoke(_ id: String) throws -> [WebDevice] {
        let devices = all()
        let gone = devices.filter { id == "all" || $0.device.id == id }
        guard !gone.isEmpty else { return [] }
        try save(devices.filter { id != "all" && $0.device.id != id })
        return gone.map(\.device)
    }

    /// Notes that `id` was seen now (at most once an hour: a page open all day writes nothing).
    public func markSeen(_ id: String) {
        var devices = all()
        guard let index = devices.firstIndex(where: { $0.device.id == id }) else { return }
        let now = Date()
        if let seen = devices[index].device.seen.flatMap(ISODate.parse), now.timeIntervalSince(seen) < Self.seenGranularity {
            return
        }
        devices[index].device.seen = ISODate.string(from: now)
        try? save(devices)
    }
}
