import MediaKit
import Synchronization

/// A concern built on the runtime in a module of its own (the player, sharing), as Hummingbird
/// keeps its router apart from its core: its methods join the dispatcher's, and the state it keeps
/// per host (`HostComponent`s) is made on first use. The executable chooses the modules of a
/// build, as it chooses the providers; the runtime imports none of them.
public protocol HostModule: Sendable {
    /// Its methods, served beside the runtime's own (rpc-spec.json describes them all).
    static var methods: [any RPCMethod.Type] { get }
    /// Its notifications, sent through the host's `EventHub` (rpc-spec.json lists them all).
    static var notifications: [any HostNotification.Type] { get }
    /// The host starts serving as the background service: take over what a front end handed
    /// on (the player follows an mpv the REPL started). Nothing by default.
    static func serviceWillStart(_ host: HostRuntime) async
    /// A person works with this host for a while in this process (the REPL, an editor's `rpc`,
    /// `mcp`; the service too): what lives beside the session starts (the media keys follow what
    /// plays here). Not for one-shot calls. Nothing by default.
    static func sessionWillStart(_ host: HostRuntime) async
    /// The person leaves the session (`quit` in the REPL): last work that should not wait for
    /// the next session (the sync server hears of what changed). Bounded by the caller; nothing
    /// by default.
    static func sessionWillEnd(_ host: HostRuntime) async
    /// What `doctor` checks of it (`online`: also reach the servers it talks to). None by default.
    static func healthChecks(_ host: HostRuntime, online: Bool) async -> [HealthCheck]
    /// A call changed this part of the library (its `MethodEffect.library`), in this process:
    /// what follows it catches up before the call is answered (mpv is handed the queue's next
    /// items), so a one-shot `call` leaves nothing behind. Nothing by default.
    static func libraryDidChange(_ host: HostRuntime, _ part: MethodEffect.Library) async
    /// A refresh of what is followed ended (not a dry run), in this process: what arrived can
    /// be told of (a desktop notification). Nothing by default.
    static func refreshDidFinish(_ host: HostRuntime, _ refresh: RefreshRun.Response) async
    /// Items whose files it uses now (the one playing, those handed to the player): a rule
    /// never deletes them. None by default.
    static func itemsInUse(_ host: HostRuntime) async -> Set<ItemID>
}

extension HostModule {
    public static var notifications: [any HostNotification.Type] { [] }
    public static func serviceWillStart(_ host: HostRuntime) async {}
    public static func sessionWillStart(_ host: HostRuntime) async {}
    public static func sessionWillEnd(_ host: HostRuntime) async {}
    public static func healthChecks(_ host: HostRuntime, online: Bool) async -> [HealthCheck] { [] }
    public static func libraryDidChange(_ host: HostRuntime, _ part: MethodEffect.Library) async {}
    public static func refreshDidFinish(_ host: HostRuntime, _ refresh: RefreshRun.Response) async {}
    public static func itemsInUse(_ host: HostRuntime) async -> Set<ItemID> { [] }
}

/// State a module keeps for one host (mpv's controller, the lists on offer): made from the host
/// the first time it is asked for, then kept as long as the host.
public protocol HostComponent: AnyObject, Sendable {
    /// Must not ask the host for other components (they are made under one lock).
    init(host: HostRuntime)
    /// The host is about to stop (the service got SIGTERM): keep what must outlive it (where
    /// playback got to). Nothing by default.
    func hostWillStop() async
}

extension HostComponent {
    public func hostWillStop() async {}
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

    var all: [any HostComponent] { made.withLock { Array($0.values) } }
}

extension HostRuntime {
    /// This host's `C`, made now if it is the first time.
    public func component<C: HostComponent>(_ type: C.Type = C.self) -> C { components.get(type, host: self) }

    /// This host's `C` if something made it already (for work at exit, which should not make one).
    public func existingComponent<C: HostComponent>(_ type: C.Type = C.self) -> C? { components.existing(type) }

    /// The host serves as the background service: each module takes over what it must.
    public func serviceWillStart() async {
        keepNewTranscripts()
        refreshPeriodically()
        for module in modules { await module.serviceWillStart(self) }
        await sessionWillStart()
    }

    /// A session starts in this process (a front end, or the service): each module starts what
    /// lives beside it.
    public func sessionWillStart() async {
        markSession()
        for module in modules { await module.sessionWillStart(self) }
    }

    /// The person leaves the session: each module does its last work, for at most `limit`
    /// (what is left waits for the next session).
    public func sessionWillEnd(limit: Duration = .seconds(10)) async {
        let modules = modules
        let work = Task { [self] in
            for module in modules { await module.sessionWillEnd(self) }
        }
        let timer = Task { try? await Task.sleep(for: limit) }
        // Whichever ends first: a task group would wait for the work even once cancelled.
        let gate = OnceGate()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            gate.arm(continuation)
            Task {
                await work.value
                gate.open()
            }
            Task {
                await timer.value
                gate.open()
            }
        }
        work.cancel()
        timer.cancel()
    }

    /// Before the process exits: every component made keeps what must outlive it, and
    /// downloads stop where they are, saved as queued for the next process to resume.
    public func stop() async {
        for component in components.all { await component.hostWillStop() }
        await downloads.handOver()
    }
}

/// Resumes a continuation once, whoever opens it first.
private final class OnceGate: Sendable {
    private let waiting = Mutex<CheckedContinuation<Void, Never>?>(nil)

    func arm(_ continuation: CheckedContinuation<Void, Never>) { waiting.withLock { $0 = continuation } }

    func open() { waiting.withLock { $0.take() }?.resume() }
}
