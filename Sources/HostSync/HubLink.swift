import FoundationEssentials
import MediaHost
import MediaKit
import SyncHub

/// The desk as a device of a household account on its own sync server (`login sync here
/// NAME`): its rounds are the same as with any server (the same rules, the same matching by URL
/// and guid), their requests answered in this process by the server's own code on its file,
/// with nothing in between, and no password (the file is the data dir owner's).
struct HubLink: HTTPClient {
    let hub: SyncHub
    let user: String

    /// The address an account on this machine's own server is kept with.
    static let server = URL(string: "mediahost://here")!
    static let keyword = "here"

    static func isHub(_ account: SyncAccount) -> Bool { account.server.scheme == "mediahost" }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var headers = request.headers
        headers["Authorization"] = nil
        let answer = await hub.handle(
            HubRequest(
                method: request.method, path: request.url.path(percentEncoded: true), query: request.url.query ?? "",
                headers: headers, body: request.body.map { Array($0) } ?? [], address: "desk", trustedUser: user))
        return HTTPResponse(
            status: answer.status,
            headers: Dictionary(answer.headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 }),
            body: Data(answer.body), url: request.url)
    }
}

extension SyncServer {
    /// The server an account names: its HTTP server, or this machine's own (a `HubLink`).
    static func of(_ account: SyncAccount, host: HostRuntime) throws -> SyncServer {
        guard HubLink.isHub(account) else { return SyncServer(account: account, http: host.http) }
        let hub: SyncHub
        do {
            hub = try SyncHub(dataDir: host.paths.dataDir)
        } catch {
            throw ProviderFailure(
                provider: "sync",
                error: .network("this machine's sync server cannot open \(host.paths.dataDir)/hub.sqlite: \(error)"))
        }
        // An accounts file that cannot be read is said as such, not taken for no account.
        let known: Bool
        do {
            known = try hub.store.hasUser(account.username)
        } catch {
            throw ProviderFailure(
                provider: "sync",
                error: .network("this machine's sync server cannot read \(host.paths.dataDir)/hub.sqlite: \(error)"))
        }
        guard known else {
            throw ProviderFailure(
                provider: "sync",
                error: .unauthorized(
                    "\(account.username) is no household account here; `mediahost users add \(account.username)`"))
        }
        return SyncServer(account: account, http: HubLink(hub: hub, user: account.username))
    }
}
