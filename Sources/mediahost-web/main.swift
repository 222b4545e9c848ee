import Basics
import FoundationEssentials
import HostAPI
import HostWeb
import JSONRPC
import Pictures

#if canImport(Glibc)
    import Glibc
#endif

/// `mediahost-web`: the web remote's HTTP and WebSocket server, run by `mediahost serve` when
/// `web.listen` is set (never by a person). It listens on `--listen`, sends each page's JSON-RPC
/// to the service's socket (`--socket`), keeps the paired browsers in `--data-dir`'s
/// `auth/web-devices.json`, and answers the desk's `web.*` calls on its standard input and
/// output. It ends when its input closes (the service stopped).
let usage =
    "usage: mediahost-web --data-dir DIR --listen HOST:PORT --socket PATH [--tls-cert PEM --tls-key PEM] (started by `mediahost serve`)"
var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst() {
    guard ["--data-dir", "--listen", "--socket", "--tls-cert", "--tls-key"].contains(name), let value = arguments.popFirst()
    else {
        Descriptor.standardError(usage + "\n")
        exit(2)
    }
    options[name] = value
}
guard let dataDir = options["--data-dir"], let listen = options["--listen"], let socket = options["--socket"] else {
    Descriptor.standardError(usage + "\n")
    exit(2)
}
signal(SIGPIPE, SIG_IGN)
// The service's SIGINT (Ctrl-C at its terminal) is the service's to handle: this one ends when
// the service closes its input.
signal(SIGINT, SIG_IGN)

let remote = WebRemote(dataDir: dataDir, serviceSocket: socket)
await remote.start(listen: listen, tls: options["--tls-cert"].map { ($0, options["--tls-key"] ?? "") })
let status = remote.status
if status.listening {
    Descriptor.standardError("web remote on \(status.urls.joined(separator: " "))\n")
    if status.devices == 0 {
        let link = remote.link(WebLink(access: .full, minutes: 10))
        Descriptor.standardError(
            "no browser is paired yet: open \(link.urls.first ?? "") on your phone within 10 minutes, "
                + "or open the page and confirm its code with `mediahost pair CODE`\n")
        if isatty(2) == 1, let url = link.urls.first, let code = QRCode.lines(url) {
            Descriptor.standardError("or scan it:\n" + code.joined(separator: "\n") + "\n")
        }
    }
} else if let problem = status.problem {
    Descriptor.standardError("web remote: \(problem)\n")
}

/// The desk's calls, told by the service.
struct Control: RPCHandler {
    let remote: WebRemote

    func handle(method: String, params: JSONValue?) async -> Result<[UInt8], RPCError> {
        do throws(RPCError) {
            switch method {
            case WebStatus.method: return try answer(remote.status)
            case WebPair.method: return try answer(try await remote.pair(try decode(WebPair.self, params)))
            case WebLink.method: return try answer(remote.link(try decode(WebLink.self, params)))
            case WebRevoke.method:
                let request = try decode(WebRevoke.self, params)
                do {
                    return try answer(WebRevoke.Response(revoked: try await remote.revoke(request.id)))
                } catch {
                    throw RPCError(code: RPCError.internalErrorCode, message: "cannot save the paired browsers: \(error)")
                }
            default: throw RPCError.methodNotFound(method)
            }
        } catch {
            return .failure(error)
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, _ params: JSONValue?) throws(RPCError) -> T {
        do {
            return try JSONValueDecoder().decode(T.self, from: params ?? .object([:]))
        } catch {
            throw RPCError.invalidParams("\(error)")
        }
    }

    private func answer<T: Encodable>(_ value: T) throws(RPCError) -> Result<[UInt8], RPCError> {
        do {
            return .success(JSONWriter.bytes(try JSONCoding.value(value)))
        } catch {
            throw RPCError(code: RPCError.internalErrorCode, message: "\(error)")
        }
    }
}

await RPCConnection(input: 0, output: 1, handler: Control(remote: remote), framing: .newline).run()
await remote.stop()
exit(0)
