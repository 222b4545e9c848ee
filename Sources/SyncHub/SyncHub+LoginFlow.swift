import Basics
import FoundationEssentials
import JSONRPC
import MediaKit
import Synchronization

/// Nextcloud's Login Flow v2, which AntennaPod's Nextcloud option signs in with: the app asks
/// for a flow, opens its page in the browser, and polls until the person has signed in there;
/// it then gets an app password of its own (`mediahost users app-password NAME --list` shows it).
extension SyncHub {
    struct LoginFlow {
        var id: String
        var token: String
        var agent: String
        var created: ContinuousClock.Instant
        var granted: (name: String, password: String)?
    }

    /// Flows waiting: 20 minutes each, 64 at most.
    static let flowLifetime: Duration = .seconds(1200)
    static let maxFlows = 64

    static func isLoginFlow(_ path: String) -> Bool {
        path.hasPrefix("/index.php/login/v2") || path.hasPrefix("/login/v2")
    }

    static func randomToken(_ count: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }

    func loginFlow(_ request: HubRequest) async -> HubResponse {
        let path = request.path.hasPrefix("/index.php") ? String(request.path.dropFirst("/index.php".count)) : request.path
        let host = request.headers["host"] ?? "localhost"
        let scheme =
            request.headers["x-forwarded-proto"] == "https" || request.headers["x-mediahost-tls"] == "1" ? "https" : "http"
        let base = "\(scheme)://\(host)"
        let now = ContinuousClock.now
        flows.withLock { flows in flows = flows.filter { now - $0.value.created < Self.flowLifetime } }
        switch (request.method, path) {
        case ("POST", "/login/v2"):
            // As many sign-ins from one address as pairings: 5 in 10 minutes.
            let allowed = flowStarts.withLock { starts -> Bool in
                let recent = (starts[request.address] ?? []).filter { now - $0 < Self.flowLifetime / 2 }
                if starts.count > 10_000 { starts = starts.filter { $0.value.contains { now - $0 < Self.flowLifetime / 2 } } }
                guard recent.count < 5 else { return false }
                starts[request.address] = recent + [now]
                return true
            }
            guard allowed else {
                return Self.nextcloudJSON(["message": "too many sign-ins from this address; try again later"], status: 429)
            }
            let flow = LoginFlow(
                id: Self.randomToken(16), token: Self.randomToken(),
                agent: String((request.headers["user-agent"] ?? "an app").prefix(80)),
                created: now)
            let added = flows.withLock { flows -> Bool in
                guard flows.count < Self.maxFlows else { return false }
                flows[flow.id] = flow
                return true
            }
            guard added else {
                return Self.nextcloudJSON(["message": "too many sign-ins wait; try again in a few minutes"], status: 503)
            }
            return Self.nextcloudJSON([
                "poll": ["token": .string(flow.token), "endpoint": .string(base + "/index.php/login/v2/poll")],
                "login": .string(base + "/index.php/login/v2/flow/" + flow.id),
            ])
        case ("POST", "/login/v2/poll"):
            let form = Self.query(String(decoding: request.body.prefix(4096), as: UTF8.self))
            let token = form["token"] ?? Self.query(request.query)["token"] ?? ""
            let granted = flows.withLock { flows -> (String, String)? in
                guard let (id, flow) = flows.first(where: { constantTimeEqual(Array($0.value.token.utf8), Array(token.utf8)) }),
                    let granted = flow.granted
                else { return nil }
                // Collected once.
                flows[id] = nil
                return granted
            }
            guard let (name, password) = granted else { return Self.nextcloudJSON([], status: 404) }
            return Self.nextcloudJSON(["server": .string(base), "loginName": .string(name), "appPassword": .string(password)])
        default:
            break
        }
        guard path.hasPrefix("/login/v2/flow/") else { return HubResponse(status: 404) }
        let id = String(path.dropFirst("/login/v2/flow/".count))
        guard let flow = flows.withLock({ $0[id] }) else {
            return Self.page("This sign-in has expired", "Start again from the app.", status: 404)
        }
        if request.method == "GET" {
            return Self.page(
                "Sign in to sync",
                "\(flow.agent) asks to sync with your account on this mediahost.",
                form: "/index.php/login/v2/flow/\(id)")
        }
        guard request.method == "POST" else { return HubResponse(status: 405) }
        // Only this page's own form (a page of another site cannot grant an app password).
        if let origin = request.headers["origin"], origin != base {
            return Self.page("Refused", "This form was sent from another site.", status: 403)
        }
        if let wait = lockedOut(request.address) {
            return Self.page("Too many tries", "Try again in \(wait.components.seconds / 60 + 1) minutes.", status: 429)
        }
        guard flow.granted == nil else { return Self.page("Signed in", "This sign-in is done; go back to the app.") }
        let form = Self.query(String(decoding: request.body.prefix(4096), as: UTF8.self))
        let name = form["user"] ?? ""
        var check = request
        check.headers["authorization"] = "Basic " + Data("\(name):\(form["password"] ?? "")".utf8).base64EncodedString()
        check.headers["cookie"] = nil
        // The account's own password only: an app password (perhaps one leaked) makes no other.
        let outcome = await authenticate(check, cookies: false, passwordOnly: true)
        if case .unavailable(let why) = outcome {
            return Self.page("Not signed in", "The server cannot read its accounts: \(why)", status: 503)
        }
        guard case .user(_, let user, _) = outcome else {
            return Self.page(
                "Sign in to sync", "Wrong user name or password.", form: "/index.php/login/v2/flow/\(id)", status: 401)
        }
        let password = Self.randomToken(24)
        do {
            let hash = try await Yescrypt.hash(password)
            _ = try await store.addAppPassword(
                user, label: "\(flow.agent) (signed in \(ISODate.string(from: Date())))", passwordHash: hash)
        } catch {
            return Self.page("Not signed in", "The server could not make an app password: \(error)", status: 500)
        }
        let kept = flows.withLock { flows -> Bool in
            guard flows[id] != nil, flows[id]?.granted == nil else { return false }
            flows[id]?.granted = (user, password)
            return true
        }
        guard kept else { return Self.page("Signed in", "This sign-in is done; go back to the app.") }
        return Self.page("Signed in", "You can go back to the app: it syncs as \(user) now.")
    }

    static func page(_ title: String, _ text: String, form: String? = nil, status: Int = 200) -> HubResponse {
        var html = """
            <!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1"><title>\(escapeXML(title))</title>
            <link rel="stylesheet" href="/app.css"></head><body><main><h1>\(escapeXML(title))</h1><p>\(escapeXML(text))</p>
            """
        if let form {
            html += """
                <form method="post" action="\(escapeXML(form))">
                <p><label>User name <input name="user" autocomplete="username" required autocapitalize="none"></label></p>
                <p><label>Password <input name="password" type="password" autocomplete="current-password" required></label></p>
                <p><button type="submit">Sign in</button></p></form>
                """
        }
        html += "</main></body></html>\n"
        return HubResponse(status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: Array(html.utf8))
    }
}
