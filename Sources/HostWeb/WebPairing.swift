import Basics
import FoundationEssentials
import HostAPI
import HostWebLink
import MediaKit
import Synchronization

/// Browsers waiting to be paired and one-time pairing links, in the service's memory only: a
/// restart forgets them (a browser asks again; a link is made again).
///
/// A browser asks (`POST /pair/start`) and shows a short code; the person confirms that code at
/// the desk (`mediahost pair CODE`, `web.pair`). The browser waits with a secret of its own (a
/// cookie only it holds), so knowing the code, which is on its screen, pairs no one else: the
/// code is what a person compares, not a password. A link pairs the first browser that opens it.
final class WebPairing: Sendable {
    struct Waiting: Sendable {
        var request: WebPairRequest
        /// SHA-256 of the browser's waiting secret.
        var secretHash: String
        var expires: Date
        /// Set when the desk confirmed it: the browser's next wait collects its token.
        var confirmed: (name: String, access: WebAccess)?
        /// Set once the browser collected it (the desk's `web.pair` answers with the device).
        var device: WebDevice?
        /// Its browser is collecting it now: no second wait collects it, nor is it withdrawn.
        var collecting = false
    }

    struct Link: Sendable {
        var access: WebAccess
        var expires: Date
    }

    private struct State {
        var waiting: [Waiting] = []
        /// By the SHA-256 of the link's secret.
        var links: [String: Link] = [:]
        /// Wrong secrets, tokens and too many requests, per address: (count, window start).
        var failures: [String: (count: Int, since: Date)] = [:]
        var requests: [String: (count: Int, since: Date)] = [:]
    }
    private let state = Mutex(State())

    /// A code stays valid this long.
    static let lifetime: TimeInterval = 600
    /// Browsers waiting at once, in all; more are refused until one is paired or expires.
    static let maxWaiting = 64
    /// Pairing requests one address may make per window.
    static let requestsPerAddress = 5
    /// Wrong secrets or tokens one address may give per window before it is refused for the
    /// rest of it.
    static let failuresPerAddress = 10
    static let window: TimeInterval = 600
    /// Letters that cannot be misread for one another (no 0/O, 1/I/L).
    static let alphabet = Array("ABCDEFGHJKMNPQRSTUVWXYZ23456789")

    static func makeCode() -> String {
        var generator = SystemRandomNumberGenerator()
        let letters = (0..<6).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
        return String(letters[0..<3]) + "-" + String(letters[3...])
    }

    /// A code as typed: case, spaces and dashes do not matter.
    static func normalized(_ code: String) -> String {
        String(code.uppercased().filter { $0.isLetter || $0.isNumber })
    }

    private func prune(_ s: inout State, now: Date) {
        s.waiting.removeAll { $0.expires < now && $0.device == nil || $0.expires.addingTimeInterval(60) < now }
        s.links = s.links.filter { $0.value.expires >= now }
        s.failures = s.failures.filter { now.timeIntervalSince($0.value.since) < Self.window }
        s.requests = s.requests.filter { now.timeIntervalSince($0.value.since) < Self.window }
    }

    /// Whether `address` gave too many wrong secrets lately: everything but the page's own
    /// files is refused to it for the rest of the window.
    func isLockedOut(_ address: String) -> Bool {
        state.withLock { s in
            prune(&s, now: Date())
            return (s.failures[address]?.count ?? 0) >= Self.failuresPerAddress
        }
    }

    /// Counts a wrong secret or token from `address`.
    func fail(_ address: String) {
        state.withLock { s in
            let now = Date()
            let entry = s.failures[address] ?? (0, now)
            s.failures[address] = (entry.count + 1, entry.since)
        }
    }

    enum StartRefusal: Error {
        case tooMany(retryAfter: Int)
        case full
    }

    /// A browser at `address` asks to be paired: its code, and the secret it waits with.
    func start(device: String, address: String) throws(StartRefusal) -> (request: WebPairRequest, secret: String) {
        let secret = WebDeviceStore.randomText(bytes: 32)
        return try state.withLock { s throws(StartRefusal) in
            let now = Date()
            prune(&s, now: now)
            let asked = s.requests[address] ?? (0, now)
            guard asked.count < Self.requestsPerAddress else {
                throw .tooMany(retryAfter: max(1, Int(Self.window - now.timeIntervalSince(asked.since))))
            }
            guard s.waiting.filter({ $0.device == nil }).count < Self.maxWaiting else { throw .full }
            s.requests[address] = (asked.count + 1, asked.since)
            var code = Self.makeCode()
            while s.waiting.contains(where: { Self.normalized($0.request.code) == Self.normalized(code) }) {
                code = Self.makeCode()
            }
            let expires = now.addingTimeInterval(Self.lifetime)
            let request = WebPairRequest(
                code: code, device: device, address: address, expires: ISODate.string(from: expires))
            s.waiting.append(Waiting(request: request, secretHash: WebDeviceStore.hash(secret), expires: expires))
            return (request, secret)
        }
    }

    /// Browsers waiting for their code to be confirmed.
    var waiting: [WebPairRequest] {
        state.withLock { s in
            prune(&s, now: Date())
            return s.waiting.filter { $0.confirmed == nil }.map(\.request)
        }
    }

    /// The desk confirms `code`. Nil when no browser waits with it.
    func confirm(code: String, name: String?, access: WebAccess) -> WebPairRequest? {
        state.withLock { s in
            prune(&s, now: Date())
            let wanted = Self.normalized(code)
            guard !wanted.isEmpty,
                let index = s.waiting.firstIndex(where: {
                    Self.normalized($0.request.code) == wanted && $0.confirmed == nil
                })
            else { return nil }
            s.waiting[index].confirmed = (name ?? s.waiting[index].request.device, access)
            return s.waiting[index].request
        }
    }

    /// What a waiting browser learns: still waiting, confirmed (pair it now, once), or unknown
    /// (expired, or a secret that was never given).
    enum Answer {
        case waiting
        case confirmed(name: String, access: WebAccess)
        case unknown
    }

    /// What a wait with `secret` learns; `.confirmed` once only (that wait then pairs the
    /// browser and calls `collected`, or `uncollected` when it could not).
    func answer(secret: String) -> Answer {
        let hash = WebDeviceStore.hash(secret)
        return state.withLock { s in
            prune(&s, now: Date())
            guard let index = s.waiting.firstIndex(where: { $0.secretHash == hash && $0.device == nil }) else {
                return .unknown
            }
            guard let confirmed = s.waiting[index].confirmed, !s.waiting[index].collecting else { return .waiting }
            s.waiting[index].collecting = true
            return .confirmed(name: confirmed.name, access: confirmed.access)
        }
    }

    /// The browser waiting with `secret` was paired as `device`.
    func collected(secret: String, device: WebDevice) {
        let hash = WebDeviceStore.hash(secret)
        state.withLock { s in
            if let index = s.waiting.firstIndex(where: { $0.secretHash == hash }) {
                s.waiting[index].device = device
                s.waiting[index].collecting = false
            }
        }
    }

    /// Pairing the browser waiting with `secret` failed: its confirmation stands for another try.
    func uncollected(secret: String) {
        let hash = WebDeviceStore.hash(secret)
        state.withLock { s in
            if let index = s.waiting.firstIndex(where: { $0.secretHash == hash }) { s.waiting[index].collecting = false }
        }
    }

    enum Withdrawal {
        /// Its browser collected it meanwhile.
        case paired(WebDevice)
        /// Its browser is collecting it this moment: ask again.
        case collecting
        case withdrawn
    }

    /// Takes a confirmation back before its browser collected it.
    func withdraw(code: String) -> Withdrawal {
        state.withLock { s in
            guard let index = s.waiting.firstIndex(where: { Self.normalized($0.request.code) == Self.normalized(code) })
            else { return .withdrawn }
            if let device = s.waiting[index].device { return .paired(device) }
            if s.waiting[index].collecting { return .collecting }
            s.waiting[index].confirmed = nil
            return .withdrawn
        }
    }

    /// The device the browser confirmed as `code` became, once it collected its token.
    func device(confirmedAs code: String) -> WebDevice? {
        state.withLock { s in
            s.waiting.first { Self.normalized($0.request.code) == Self.normalized(code) && $0.device != nil }?.device
        }
    }

    /// A new one-time link's secret.
    func makeLink(access: WebAccess, minutes: Double) -> (secret: String, expires: Date) {
        let secret = WebDeviceStore.randomText(bytes: 24)
        let expires = Date().addingTimeInterval(minutes * 60)
        state.withLock { s in s.links[WebDeviceStore.hash(secret)] = Link(access: access, expires: expires) }
        return (secret, expires)
    }

    /// Uses up the link with `secret`: its access, or nil when there is none (used, expired, or
    /// never made).
    func useLink(_ secret: String) -> WebAccess? {
        let hash = WebDeviceStore.hash(secret)
        return state.withLock { s in
            prune(&s, now: Date())
            return s.links.removeValue(forKey: hash)?.access
        }
    }
}
