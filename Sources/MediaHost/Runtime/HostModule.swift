import Synchronization

/// A concern built on the runtime in a module of its own (the player, sharing), as Hummingbird
/// keeps its router apart from its core: its methods join the dispatcher's, and the state it keeps
/// per host (`HostComponent`s) is made on first use. The executable chooses the modules of a
/// build, as it chooses the providers; the runtime imports none of them.
public protocol HostModule: Sendable {
    /// Its methods, served beside the runtime's own (rpc-spec.json describes them all).
    static var methods: [any RPCMethod.Type] { get }
}

/// State a module keeps for one host (mpv's controller, the lists on offer): made from the host
/// the first time it is asked for, then kept as long as the host.
public protocol HostComponent: AnyObject, Sendable {
    /// Must not ask the host for other components (they are made under one lock).
    init(host: HostRuntime)
}

/// The components of one host, by type.
final class HostComponents: Sendable {
    private let made = Mutex<[ObjectIdentifier: any HostComponent]>([:])

    func get<C: HostComponent>(_ type: C.Type, host: HostRuntime) -> C {
        made.withLock { made in
            if let existing = made[ObjectIdentifier(type)] as? C { return existing }
            let created = C(host: host)
            made[ObjectIdentifier(type)] = created
            return created
        }
    }

    func existing<C: HostComponent>(_ type: C.Type) -> C? {
        made.withLock { $0[ObjectIdentifier(type)] as? C }
    }
}

extension HostRuntime {
    /// This host's `C`, made now if it is the first time.
    public func component<C: HostComponent>(_ type: C.Type = C.self) -> C { components.get(type, host: self) }

    /// This host's `C` if something made it already (for work at exit, which should not make one).
    public func existingComponent<C: HostComponent>(_ type: C.Type = C.self) -> C? { components.existing(type) }
}
