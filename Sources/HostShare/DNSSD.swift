import Basics
import CAvahi
import FoundationEssentials
import Glibc
import MediaHost
import MediaKit
import Synchronization

/// A service announced on the local network until withdrawn.
final class DNSSDAnnouncement: Sendable {
    /// The C publication's address (0 once withdrawn): an integer, which is Sendable.
    private let publication: Mutex<UInt>

    fileprivate init(_ publication: OpaquePointer) { self.publication = Mutex(UInt(bitPattern: Int(bitPattern: publication))) }

    func withdraw() {
        let address = publication.withLock { value -> UInt in
            defer { value = 0 }
            return value
        }
        if let pointer = OpaquePointer(bitPattern: Int(bitPattern: address)) { mh_avahi_withdraw(pointer) }
    }

    deinit { withdraw() }
}

/// A service found on the local network.
struct DNSSDService: Sendable, Equatable {
    var name: String
    var host: String
    var address: String
    var port: Int
    var txt: [String]
}

/// DNS-SD through the system's Avahi daemon (libavahi-client, loaded at first use).
enum DNSSD {
    /// A C string written into `buffer`.
    static func text(_ buffer: [CChar]) -> String {
        String(nulTerminated: buffer)
    }

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// Announces a service.
    /// - Throws: `Unavailable` saying why (no Avahi library, no daemon, a refusal).
    static func publish(name: String, type: String, port: Int, txt: [String]) throws -> DNSSDAnnouncement {
        var error = [CChar](repeating: 0, count: 256)
        let strings = txt.map { strdup($0) }
        defer { strings.forEach { free($0) } }
        var pointers = strings.map { UnsafePointer<CChar>($0) }
        let publication = pointers.withUnsafeMutableBufferPointer { buffer in
            mh_avahi_publish(name, type, UInt16(port), buffer.baseAddress, Int32(buffer.count), 3000, &error, error.count)
        }
        guard let publication else { throw Unavailable(description: Self.text(error)) }
        return DNSSDAnnouncement(publication)
    }

    /// The services of `type` the daemon resolves within `timeout` seconds. Blocks: call it
    /// off the cooperative pool.
    static func browse(type: String, timeout: Double) throws -> [DNSSDService] {
        final class Found { var services: [DNSSDService] = [] }
        let found = Found()
        var error = [CChar](repeating: 0, count: 256)
        let status = mh_avahi_browse(
            type, Int32(timeout * 1000),
            { context, name, host, address, port, txt in
                let found = Unmanaged<Found>.fromOpaque(context!).takeUnretainedValue()
                let service = DNSSDService(
                    name: String(cString: name!), host: String(cString: host!), address: String(cString: address!),
                    port: Int(port), txt: String(cString: txt!).split(separator: "\n").map(String.init))
                if !found.services.contains(service) { found.services.append(service) }
            }, Unmanaged.passUnretained(found).toOpaque(), &error, error.count)
        guard status == 0 else { throw Unavailable(description: Self.text(error)) }
        return found.services
    }
}
