import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaHost
import MediaKit
import MediaStore
import Synchronization

/// Sharing: a list offered to nearby machines (`share.*`, HTTP with a pairing code, announced
/// with DNS-SD through Avahi) and received from them, built on the runtime.
public enum ShareModule: HostModule {
    public static let methods: [any RPCMethod.Type] = [
        ShareStart.self, ShareStop.self, ShareStatus.self, ShareBrowse.self, ShareReceive.self,
    ]
}

/// The lists this process offers to nearby machines, by name.
final class ShareRegistry: HostComponent {
    init(host: HostRuntime) {}

    struct Offer: Sendable {
        let server: ShareServer
        let announcement: DNSSDAnnouncement?
    }
    private let offers = Mutex<[String: Offer]>([:])
    /// Why each offer that ended here ended, by name.
    private let endings = Mutex<[String: ShareServer.Ending]>([:])

    func add(_ offer: Offer) { offers.withLock { $0[offer.server.name.lowercased()] = offer } }
    func remove(_ name: String) -> Offer? {
        let offer = offers.withLock { $0.removeValue(forKey: name.lowercased()) }
        if let offer { endings.withLock { $0[name.lowercased()] = offer.server.ending ?? .stopped } }
        return offer
    }
    var all: [Offer] { offers.withLock { Array($0.values) }.filter { !$0.server.isStopped } }
    func ending(_ name: String) -> ShareServer.Ending? { endings.withLock { $0[name.lowercased()] } }
}

extension HostRuntime {
    /// Why the offer of list `name` ended ("its time is up", "20 wrong codes were tried..."), once
    /// it has.
    public func shareEnding(_ name: String) -> String? { existingComponent(ShareRegistry.self)?.ending(name)?.rawValue }

    /// The lists on offer.
    var shares: ShareRegistry { component() }

    /// Ends every offer at once, withdrawing their announcements (the process is exiting).
    public func endShares() {
        guard let shares = existingComponent(ShareRegistry.self) else { return }
        for offer in shares.all {
            _ = shares.remove(offer.server.name)
            offer.server.stop()
            offer.announcement?.withdraw()
        }
    }
}

extension ShareRegistry.Offer {
    var info: ShareOffer {
        ShareOffer(
            name: server.name, code: server.code, port: server.port,
            addresses: ShareServer.addresses().map { "\($0):\(server.port)" }, expires: ISODate.string(from: server.expires),
            announced: announcement != nil, note: nil, served: server.served)
    }
}

/// DNS-SD service type of mediahost offers.
let shareServiceType = "_mediahost._tcp"

extension ShareStart: RPCMethod {
    public func run(on host: HostRuntime) async throws -> ShareOffer {
        let minutes = minutes ?? 10
        guard minutes > 0, minutes <= 120 else { throw HostError.invalidArgument("minutes is from 0 to 120") }
        guard (0...65535).contains(port ?? 0) else { throw HostError.invalidArgument("port is from 1 to 65535") }
        let items = try await host.listContents(name)
        let shownName =
            name.lowercased() == favoritesList ? favoritesList : (try await host.store.list(named: name))?.name ?? name
        if let old = host.shares.remove(shownName) {
            old.server.stop()
        }
        // What another machine receives carries no secret of this one (see ListsExport).
        let document = Array(host.redactor.redact(try ListWriter.json(name: shownName, items: items)).utf8)
        let registry = host.shares
        let server = try ShareServer(name: shownName, document: document, minutes: minutes, port: port ?? 0) {
            registry.remove(shownName)?.announcement?.withdraw()
        }
        var note: String?
        var announcement: DNSSDAnnouncement?
        do {
            let instance = "\(shownName) on \(ProcessInfo.processInfo.hostName)"
            let port = server.port
            announcement = try await BlockingWork.run("dnssd-publish") {
                try DNSSD.publish(
                    name: String(instance.prefix(63)), type: shareServiceType, port: port, txt: ["list=\(shownName)", "v=1"])
            }
        } catch {
            note = "\(error); give the receiver an address and the code instead"
        }
        let offer = ShareRegistry.Offer(server: server, announcement: announcement)
        registry.add(offer)
        var info = offer.info
        info.note = note
        return info
    }
}

extension ShareStop: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        guard let offer = host.shares.remove(name) else { return Response(name: name, stopped: false) }
        offer.server.stop()
        offer.announcement?.withdraw()
        return Response(name: offer.server.name, stopped: true)
    }
}

extension ShareStatus: RPCMethod {
    public func run(on host: HostRuntime) async throws -> [ShareOffer] { host.shares.all.map(\.info) }
}

extension ShareBrowse: RPCMethod {
    /// Whether a mediahost offer answers at `address` (its `/`, which needs no code).
    static func stillOffers(_ address: String, http: any HTTPClient) async -> Bool {
        guard let url = URL(string: "http://\(address)/") else { return false }
        var request = HTTPRequest(url: url)
        request.timeout = 2
        request.maxBodySize = 4096
        guard let response = try? await http.send(request), response.status == 200,
            let body = try? JSONParser.parse(Array(response.body))
        else { return false }
        return body["app"]?.stringValue == "mediahost"
    }

    public func run(on host: HostRuntime) async throws -> [SharePeer] {
        let seconds = min(max(seconds ?? 2, 0.2), 30)
        let found: [DNSSDService]
        do {
            found = try await BlockingWork.run("dnssd-browse") { try DNSSD.browse(type: shareServiceType, timeout: seconds) }
        } catch {
            throw HostError.invalidArgument("cannot look for offers nearby: \(error)")
        }
        // One offer is seen on every interface: once, by the address another machine can use.
        var peers: [SharePeer] = []
        for service in found.sorted(by: { !$0.address.hasPrefix("127.") && $1.address.hasPrefix("127.") }) {
            guard !peers.contains(where: { $0.name == service.name }) else { continue }
            let list = service.txt.first { $0.hasPrefix("list=") }.map { String($0.dropFirst(5)) }
            peers.append(
                SharePeer(name: service.name, list: list, host: service.host, address: "\(service.address):\(service.port)"))
        }
        // The daemon's cache still holds an offer for a while after it ended (or its process
        // was killed): each is asked whether it still offers, all at once, briefly.
        return await withTaskGroup(of: (Int, Bool).self) { group in
            for (index, peer) in peers.enumerated() {
                group.addTask {
                    let offers = await Self.stillOffers(peer.address, http: host.http)
                    return (index, offers)
                }
            }
            var live = Set<Int>()
            for await (index, offers) in group where offers { live.insert(index) }
            return peers.indices.filter(live.contains).map { peers[$0] }
        }
    }
}

extension ShareReceive: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let address = try await resolve()
        guard var components = URLComponents(string: "http://\(address)/list") else {
            throw HostError.invalidArgument("'\(peer)' is not an address (host:port) or an announced name")
        }
        components.queryItems = [URLQueryItem(name: "code", value: ShareServer.normalized(code))]
        guard let url = components.url, components.host?.isEmpty == false, components.port != nil else {
            throw HostError.invalidArgument("'\(peer)' is not an address: give host:port, as `mediahost share` prints it")
        }
        var request = HTTPRequest(url: url)
        request.maxBodySize = ListsImport.maxSize
        request.timeout = 20
        let response: HTTPResponse
        do {
            response = try await host.http.send(request)
        } catch let error as HTTPClientError where error.kind == .bodyTooLarge {
            throw HostError.invalidArgument("\(address) sent more than \(ListsImport.maxSize >> 20) MB: not a list to take")
        } catch let error as HTTPClientError where error.kind == .timedOut {
            throw HostError.invalidArgument("\(address) did not answer in time (the sender may be busy; try again): \(error)")
        } catch {
            throw HostError.invalidArgument(
                "cannot reach \(address) (the offer may have ended, or the address is wrong): \(error)")
        }
        switch response.status {
        case 200: break
        case 503: throw HostError.invalidArgument("\(address) is busy (too many connections at once); try again in a moment")
        case 403: throw HostError.invalidArgument("\(address) refused the code: check it (it is shown where the list is shared)")
        case 429: throw HostError.invalidArgument("\(address) refuses codes from here for a minute after too many wrong ones")
        case 410: throw HostError.invalidArgument("the offer at \(address) has ended; ask for it again")
        default: throw HostError.invalidArgument("\(address) answered HTTP \(response.status): not a mediahost offer")
        }
        let result = try await ListsImport(name: into, text: String(decoding: response.body, as: UTF8.self), format: .json)
            .run(on: host)
        return Response(name: result.name, added: result.added, present: result.present, skipped: result.skipped)
    }

    /// host:port as given, or the address of the announced offer of that name.
    private func resolve() async throws -> String {
        let trimmed = peer.hasPrefix("http://") ? String(peer.dropFirst(7)) : peer
        if let colon = trimmed.lastIndex(of: ":"), Int(trimmed[trimmed.index(after: colon)...]) != nil { return trimmed }
        let found: [DNSSDService]
        do {
            found = try await BlockingWork.run("dnssd-browse") { try DNSSD.browse(type: shareServiceType, timeout: 2) }
        } catch {
            throw HostError.invalidArgument("cannot look for '\(trimmed)' nearby (\(error)); give host:port")
        }
        guard
            let match = found.first(where: {
                $0.name.equalsIgnoringCase(trimmed)
                    || $0.txt.contains("list=\(trimmed)")
            })
        else {
            throw HostError.invalidArgument("no offer named '\(trimmed)' nearby (`mediahost peers` lists them); give host:port")
        }
        return "\(match.address):\(match.port)"
    }
}
