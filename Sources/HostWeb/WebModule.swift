import Basics
import FoundationEssentials
import HostAPI
import JSONRPC
import MediaHost
import MediaKit

/// The web remote: with `web.listen` set, the service also answers HTTP on that port (the page,
/// JSON-RPC over WebSocket at /rpc, artwork, streams), for browsers paired at the desk.
public enum WebModule: HostModule {
    public static let methods: [any RPCMethod.Type] = [
        WebStatus.self, WebPair.self, WebLink.self, WebDevices.self, WebRevoke.self,
    ]

    public static func serviceWillStart(_ host: HostRuntime) async {
        let listen = host.config.string(HostSettings.webListen).trimming(.whitespaces)
        guard !listen.isEmpty else { return }
        let remote: WebRemote = host.component()
        await remote.start(listen: listen)
        if remote.isListening {
            Descriptor.standardError("web remote on \(remote.urls.joined(separator: " "))\n")
            if remote.devices.all().isEmpty {
                let link = remote.pairing.makeLink(access: .full, minutes: 10)
                let urls = remote.urls.map { $0 + "pair/link/" + link.secret }
                Descriptor.standardError(
                    "no browser is paired yet: open \(urls.first ?? "") on your phone within 10 minutes, "
                        + "or open the page and confirm its code with `mediahost pair CODE`\n")
            }
        } else if let problem = remote.status.problem {
            Descriptor.standardError("web remote: \(problem)\n")
        }
    }

    public static func healthChecks(_ host: HostRuntime, online: Bool) async -> [HealthCheck] {
        let listen = host.config.string(HostSettings.webListen).trimming(.whitespaces)
        guard !listen.isEmpty else { return [] }
        let devices = WebDeviceStore(path: host.paths.authDir + "/web-devices.json").all().count
        if let problem = host.existingComponent(WebRemote.self)?.status.problem {
            return [
                HealthCheck(
                    area: "web", name: "remote", status: .failed, detail: problem, fix: "`config web.listen 0.0.0.0:8733`")
            ]
        }
        return [
            HealthCheck(
                area: "web", name: "remote", status: .ok,
                detail: "web.listen \(listen): the service serves the page; \(devices) browser\(devices == 1 ? "" : "s") paired")
        ]
    }
}

extension HostRuntime {
    /// The web remote, when this process serves it.
    var webRemote: WebRemote? { existingComponent(WebRemote.self).flatMap { $0.isListening ? $0 : nil } }

    var webDevices: WebDeviceStore {
        existingComponent(WebRemote.self)?.devices ?? WebDeviceStore(path: paths.authDir + "/web-devices.json")
    }

    func requireWebRemote() throws -> WebRemote {
        guard let remote = webRemote else {
            let listen = config.string(HostSettings.webListen)
            throw HostError.invalidArgument(
                listen.isEmpty
                    ? "the web remote is off: `config web.listen 0.0.0.0:8733`, then start the service (`mediahost serve`)"
                    : "the web remote runs in the background service only: start it with `mediahost serve`")
        }
        return remote
    }
}

extension WebStatus: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        if let remote = host.existingComponent(WebRemote.self) { return remote.status }
        let listen = host.config.string(HostSettings.webListen)
        return Response(
            listening: false, listen: listen, urls: [], waiting: [], devices: host.webDevices.all().count,
            problem: listen.isEmpty ? nil : "the web remote runs in the background service only (`mediahost serve`)")
    }
}

extension WebPair: RPCMethod {
    public func run(on host: HostRuntime) async throws -> WebDevice {
        let remote = try host.requireWebRemote()
        guard let request = remote.pairing.confirm(code: code, name: name, access: access ?? .full) else {
            let waiting = remote.pairing.waiting.map(\.code)
            throw RPCError(
                code: AppErrorCode.notFound,
                message: waiting.isEmpty
                    ? "no browser waits with code \(code): open the page on the device to get one"
                    : "no browser waits with code \(code) (waiting: \(waiting.joined(separator: ", ")))")
        }
        // The browser collects its token at its next wait (within a second): answered with the
        // device it became.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let device = remote.pairing.device(confirmedAs: request.code) { return device }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HostError.invalidArgument(
            "confirmed \(request.code), but the browser did not come back for it within 30 s: is its page still open?")
    }
}

extension WebLink: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let remote = try host.requireWebRemote()
        let minutes = minutes ?? 10
        guard minutes > 0, minutes <= 1440 else { throw HostError.invalidArgument("minutes is from 0 to 1440") }
        let access = access ?? .full
        let link = remote.pairing.makeLink(access: access, minutes: minutes)
        return Response(
            urls: remote.urls.map { $0 + "pair/link/" + link.secret }, access: access,
            expires: ISODate.string(from: link.expires))
    }
}

extension WebDevices: RPCMethod {
    public func run(on host: HostRuntime) async throws -> [WebDevice] { host.webDevices.all().map(\.device) }
}

extension WebRevoke: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let gone: [WebDevice]
        if let remote = host.existingComponent(WebRemote.self) {
            gone = try await remote.revoke(id)
        } else {
            gone = try host.webDevices.revoke(id)
        }
        guard !gone.isEmpty || id == "all" else {
            throw RPCError(
                code: AppErrorCode.notFound, message: "no paired browser has id \(id) (`mediahost pair --list` lists them)")
        }
        return Response(revoked: gone)
    }
}
