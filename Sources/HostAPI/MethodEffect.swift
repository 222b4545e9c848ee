import JSONRPC

/// What a method does to the user's things, said once beside the method: MCP's tool hints come
/// from it (through rpc-spec.json's `x-effect`, which a test keeps equal to it), a fallback
/// connection runs a call again only when it is idempotent, and a front end can tell a
/// harmless call from one to confirm.
public struct MethodEffect: Sendable, Equatable {
    /// What the call does to what the user keeps.
    public enum Access: String, Sendable {
        /// Changes nothing.
        case reads
        /// Adds or changes something.
        case changes
        /// Takes something away (a favorite, a file, a list).
        case removes
    }

    /// The part of the library a method changes, as `library.changed` names it.
    public enum Library: String, Sendable {
        case favorites, lists, history, queue, new, rules
    }

    public var access: Access
    /// Calling it twice with the same params leaves things as calling it once.
    public var idempotent: Bool
    /// The part of the library it changes (`library.changed` is told by the store's writes,
    /// whoever makes them: this says which a call may make).
    public var library: Library?
    /// It reaches services outside this machine (a provider, a feed, a login server).
    public var reachesOut: Bool

    public init(_ access: Access, idempotent: Bool = true, library: Library? = nil, reachesOut: Bool = false) {
        self.access = access
        self.idempotent = idempotent
        self.library = library
        self.reachesOut = reachesOut
    }

    /// As rpc-spec.json's `x-effect` says it.
    public var described: JSONValue {
        var members: [String: JSONValue] = [
            "access": .string(access.rawValue), "idempotent": .bool(idempotent), "reachesOut": .bool(reachesOut),
        ]
        if let library { members["library"] = .string(library.rawValue) }
        return .object(members)
    }
}
