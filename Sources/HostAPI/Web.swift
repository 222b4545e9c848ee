import JSONRPC
import MediaKit

/// The web remote (`web.listen`): whether it listens, where, and the browsers waiting to be
/// paired. Its other methods are the desk's: a browser can call none of `web.*`.
public struct WebStatus: APIMethod {
    public static let method = "web.status"
    public static let effect = MethodEffect(.reads)
    public init() {}

    public struct Response: Codable, Sendable, Equatable {
        /// Whether this process serves the web remote now.
        public var listening: Bool
        /// `web.listen` as set ("" when off).
        public var listen: String
        /// The page's addresses, one per interface it answers on (with the port it got).
        public var urls: [String]
        /// Browsers that asked to pair and wait for their code to be confirmed.
        public var waiting: [WebPairRequest]
        /// Paired browsers.
        public var devices: Int
        /// Why it does not listen, when it should.
        public var problem: String?

        public init(
            listening: Bool, listen: String, urls: [String], waiting: [WebPairRequest], devices: Int, problem: String? = nil
        ) {
            self.listening = listening
            self.listen = listen
            self.urls = urls
            self.waiting = waiting
            self.devices = devices
            self.problem = problem
        }
    }
}

/// A browser waiting for its pairing code to be confirmed at the desk.
public struct WebPairRequest: Codable, Sendable, Equatable {
    public var code: String
    /// What the browser says it is ("Firefox on Android").
    public var device: String
    /// Its address.
    public var address: String
    /// When the code stops being accepted (ISO 8601).
    public var expires: String

    public init(code: String, device: String, address: String, expires: String) {
        self.code = code
        self.device = device
        self.address = address
        self.expires = expires
    }
}

/// What a paired browser may do: every method (`full`), or only those that change nothing
/// (`read`: x-effect `reads`).
public enum WebAccess: String, Codable, Sendable, CaseIterable {
    case full
    case read
}

/// A paired browser. Its token is never shown again: the store keeps only its hash.
public struct WebDevice: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var access: WebAccess
    /// When it was paired (ISO 8601).
    public var paired: String
    /// When it was last seen (ISO 8601).
    public var seen: String?

    public init(id: String, name: String, access: WebAccess, paired: String, seen: String? = nil) {
        self.id = id
        self.name = name
        self.access = access
        self.paired = paired
        self.seen = seen
    }
}

/// Confirms the code a browser shows: that browser is paired (its page goes on by itself).
public struct WebPair: APIMethod {
    public static let method = "web.pair"
    public static let effect = MethodEffect(.changes, idempotent: false)
    public typealias Response = WebDevice
    /// The code the browser shows (case and dashes do not matter).
    public var code: String
    /// Default full.
    public var access: WebAccess?
    /// Default: what the browser says it is.
    public var name: String?

    public init(code: String, access: WebAccess? = nil, name: String? = nil) {
        self.code = code
        self.access = access
        self.name = name
    }
}

/// A one-time link that pairs the first browser to open it, for `minutes` (default 10).
public struct WebLink: APIMethod {
    public static let method = "web.link"
    public static let effect = MethodEffect(.changes, idempotent: false)
    public var access: WebAccess?
    public var minutes: Double?

    public init(access: WebAccess? = nil, minutes: Double? = nil) {
        self.access = access
        self.minutes = minutes
    }

    public struct Response: Codable, Sendable, Equatable {
        /// One per interface the remote answers on.
        public var urls: [String]
        public var access: WebAccess
        public var expires: String

        public init(urls: [String], access: WebAccess, expires: String) {
            self.urls = urls
            self.access = access
            self.expires = expires
        }
    }
}

/// The paired browsers.
public struct WebDevices: APIMethod {
    public static let method = "web.devices"
    public static let effect = MethodEffect(.reads)
    public typealias Response = [WebDevice]
    public init() {}
}

/// Unpairs a browser: its token stops working at once, its open pages are closed.
public struct WebRevoke: APIMethod {
    public static let method = "web.revoke"
    public static let effect = MethodEffect(.removes)
    /// A device's id, or `all`.
    public var id: String

    public init(id: String) { self.id = id }

    public struct Response: Codable, Sendable, Equatable {
        public var revoked: [WebDevice]
        public init(revoked: [WebDevice]) { self.revoked = revoked }
    }
}
