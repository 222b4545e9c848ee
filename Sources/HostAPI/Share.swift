import JSONRPC
import MediaKit

/// Offers a list (or the favorites) to nearby machines for `minutes` (default 10): served
/// read-only over HTTP to whoever gives the pairing code, announced with DNS-SD when Avahi runs.
public struct ShareStart: APIMethod {
    public static let method = "share.start"
    public static let effect = MethodEffect(.changes, idempotent: false)
    public typealias Response = ShareOffer
    public var name: String
    public var minutes: Double?
    /// A fixed port (default: any free one).
    public var port: Int?
    public init(name: String, minutes: Double? = nil, port: Int? = nil) {
        self.name = name
        self.minutes = minutes
        self.port = port
    }
}

public struct ShareStop: APIMethod {
    public static let method = "share.stop"
    public static let effect = MethodEffect(.changes)
    public var name: String
    public init(name: String) { self.name = name }
    public struct Response: Codable, Sendable, Equatable {
        public var name: String
        public var stopped: Bool

        public init(name: String, stopped: Bool) {
            self.name = name
            self.stopped = stopped
        }
    }
}

/// What this process offers now.
public struct ShareStatus: APIMethod {
    public static let method = "share.status"
    public static let effect = MethodEffect(.reads)
    public typealias Response = [ShareOffer]
    public init() {}
}

/// The offers announced nearby (DNS-SD through Avahi), looking for `seconds` (default 2).
public struct ShareBrowse: APIMethod {
    public static let method = "share.browse"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public typealias Response = [SharePeer]
    public var seconds: Double?
    public init(seconds: Double? = nil) { self.seconds = seconds }

}

/// Fetches a list offered nearby with its code and merges it into a list here (made when
/// missing). The peer is host:port, or an announced name (`share.browse`). What arrives is
/// checked as untrusted: size, format, every id.
public struct ShareReceive: APIMethod {
    public static let method = "share.receive"
    public static let effect = MethodEffect(.changes, idempotent: false, reachesOut: true)
    public var peer: String
    public var code: String
    /// The list to merge into (default: the offer's name).
    public var into: String?
    public init(peer: String, code: String, into: String? = nil) {
        self.peer = peer
        self.code = code
        self.into = into
    }

    public struct Response: Codable, Sendable, Equatable {
        public var name: String
        public var added: Int
        public var present: Int
        public var skipped: [String]

        public init(name: String, added: Int, present: Int, skipped: [String]) {
            self.name = name
            self.added = added
            self.present = present
            self.skipped = skipped
        }
    }
}

/// A list on offer, as `share.start` and `share.status` say it.
public struct ShareOffer: Codable, Sendable, Equatable {
    public var name: String
    /// What the receiver types: `mediahost receive <address> <code>`.
    public var code: String
    public var port: Int
    /// host:port pairs this machine can be reached at, the local network's first.
    public var addresses: [String]
    /// ISO 8601.
    public var expires: String
    /// Whether it is announced on the local network (DNS-SD through Avahi).
    public var announced: Bool
    /// Why it is not announced, and what to do instead.
    public var note: String?
    /// How many receivers fetched it.
    public var served: Int

    public init(
        name: String, code: String, port: Int, addresses: [String], expires: String, announced: Bool, note: String? = nil,
        served: Int
    ) {
        self.name = name
        self.code = code
        self.port = port
        self.addresses = addresses
        self.expires = expires
        self.announced = announced
        self.note = note
        self.served = served
    }
}

/// An offer seen on the local network.
public struct SharePeer: Codable, Sendable, Equatable {
    /// The DNS-SD instance ("Road trip on laptop").
    public var name: String
    public var list: String?
    public var host: String
    /// host:port, what `share.receive` takes.
    public var address: String

    public init(name: String, list: String? = nil, host: String, address: String) {
        self.name = name
        self.list = list
        self.host = host
        self.address = address
    }
}
