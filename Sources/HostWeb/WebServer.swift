import Basics
import FoundationEssentials
import HTTPTypes
import HostAPI
import HostWebLink
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import JSONRPC
import Logging
import MediaKit
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// What a request of the web remote carries: the WebSocket upgrade's handler and who asks.
struct WebContext: RequestContext, WebSocketRequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's address, without its port.
    var address: String { remoteAddress?.ipAddress ?? "unknown" }
}

/// The web remote's routes on one port: the page (its files are in the binary), JSON-RPC over
/// WebSocket at `/rpc`, artwork, a downloaded file as a stream with Range requests, and pairing.
/// Nothing but the pairing page is served to a browser that is not paired.
enum WebRoutes {
    static let tokenCookie = "mediahost"
    static let waitCookie = "mediahost_pair"
    /// A paired browser keeps its cookie a year.
    static let tokenAge = 365 * 86400

    static func router(_ remote: WebRemote) -> Router<WebContext> {
        let router = Router(context: WebContext.self)
        router.add(middleware: SecurityHeaders())
        router.get("/") { request, context in
            guard let device = remote.device(of: request, context: context) else {
                var page = asset(.pairHTML, "text/html; charset=utf-8")
                // A token no longer paired (revoked) is forgotten by the browser: it counts no
                // more wrong guesses against its address.
                if request.cookies[tokenCookie] != nil { page.setCookie(remote.tokenCookie("")) }
                return page
            }
            remote.devices.markSeen(device.id)
            return asset(.indexHTML, "text/html; charset=utf-8")
        }
        router.get("/app.js") { request, context in
            guard remote.device(of: request, context: context) != nil else { throw HTTPError(.unauthorized) }
            return asset(.appJS, "text/javascript; charset=utf-8")
        }
        router.get("/app.css") { _, _ in asset(.appCSS, "text/css; charset=utf-8") }
        router.get("/pair.js") { _, _ in asset(.pairJS, "text/javascript; charset=utf-8") }
        router.get("/icon.svg") { _, _ in asset(.icon, "image/svg+xml") }

        router.post("/pair/start") { request, context in
            try sameOrigin(request)
            let agent = request.headers[.userAgent] ?? ""
            let started: (request: WebPairRequest, secret: String)
            do {
                started = try remote.pairing.start(device: describe(agent: agent), address: context.address)
            } catch let refusal as WebPairing.StartRefusal {
                switch refusal {
                case .tooMany(let retryAfter):
                    var response = json(
                        ["error": "too many pairing requests from this address; try again later"], .tooManyRequests)
                    response.headers[.retryAfter] = "\(retryAfter)"
                    return response
                case .full:
                    return json(
                        ["error": "too many browsers are waiting to be paired; try again in a few minutes"], .serviceUnavailable)
                }
            }
            var response = json(["code": .string(started.request.code), "expires": .string(started.request.expires)])
            response.setCookie(
                Cookie(
                    name: waitCookie, value: started.secret, maxAge: Int(WebPairing.lifetime), path: "/pair",
                    secure: remote.secure, httpOnly: true, sameSite: .strict))
            remote.log(
                "a browser asks to be paired (\(started.request.device), \(context.address)): code \(started.request.code)")
            return response
        }
        router.post("/pair/wait") { request, context in
            try sameOrigin(request)
            guard !remote.pairing.isLockedOut(context.address) else { throw HTTPError(.tooManyRequests) }
            guard let secret = request.cookies[waitCookie]?.value else {
                return json(["error": "this browser has not asked to be paired"], .badRequest)
            }
            // Up to 25 s: the page asks again at once, so it learns within a second.
            let deadline = ContinuousClock.now + .seconds(25)
            while true {
                switch remote.pairing.answer(secret: secret) {
                case .unknown:
                    remote.pairing.fail(context.address)
                    return json(["error": "the code expired; ask for a new one"], .gone)
                case .confirmed(let name, let access):
                    let paired = try remote.devices.add(name: name, access: access)
                    remote.pairing.collected(secret: secret, device: paired.device)
                    remote.log("paired \(paired.device.name) (\(paired.device.id), \(access.rawValue))")
                    var response = json(["paired": true, "access": .string(access.rawValue)])
                    response.setCookie(remote.tokenCookie(paired.token))
                    response.setCookie(
                        Cookie(name: waitCookie, value: "", maxAge: 0, path: "/pair", httpOnly: true, sameSite: .strict))
                    return response
                case .waiting:
                    guard ContinuousClock.now < deadline else { return json(["paired": false]) }
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
        }
        router.get("/pair/link/:secret") { request, context in
            // A link is opened by a person (a navigation), never loaded by another site's page
            // (a picture, a script): those would only count guesses against the visitor.
            if request.headers[.secFetchSite] == "cross-site", request.headers[.secFetchMode] != "navigate" {
                throw HTTPError(.forbidden, message: "a pairing link is opened, not loaded by another site")
            }
            guard !remote.pairing.isLockedOut(context.address) else { throw HTTPError(.tooManyRequests) }
            guard let secret = context.parameters.get("secret"), let access = remote.pairing.useLink(secret) else {
                remote.pairing.fail(context.address)
                return html(
                    "This pairing link was used or has expired. At the desk, `mediahost pair --link` makes a new one.",
                    .forbidden)
            }
            let agent = request.headers[.userAgent] ?? ""
            let paired = try remote.devices.add(name: describe(agent: agent), access: access)
            remote.log("paired \(paired.device.name) (\(paired.device.id), \(access.rawValue)) by a link")
            var response = Response(status: .seeOther, headers: [.location: "/"])
            response.setCookie(remote.tokenCookie(paired.token))
            return response
        }
        router.post("/unpair") { request, context in
            try sameOrigin(request)
            guard let device = remote.device(of: request, context: context) else { throw HTTPError(.unauthorized) }
            _ = try await remote.revoke(device.id)
            var response = json(["unpaired": true])
            response.setCookie(remote.tokenCookie(""))
            return response
        }

        router.get("/artwork") { request, context in
            guard remote.device(of: request, context: context) != nil else { throw HTTPError(.unauthorized) }
            guard let text = request.uri.queryParameters.get("id"), let id = try? ItemID(parsing: text) else {
                throw HTTPError(.badRequest, message: "give the item's id: /artwork?id=…")
            }
            let image = request.uri.queryParameters.get("image").flatMap(Int.init)
            let artwork: MediaArtwork.Response
            do {
                artwork = try await remote.calls.call(MediaArtwork(id: id, image: image))
            } catch {
                throw HTTPError(.notFound, message: "\(error)")
            }
            guard let bytes = FileManager.default.contents(atPath: artwork.path) else { throw HTTPError(.notFound) }
            var headers: HTTPFields = [.contentType: artwork.contentType ?? "application/octet-stream"]
            headers[.cacheControl] = "private, max-age=86400"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        router.get("/stream") { request, context in
            guard remote.device(of: request, context: context) != nil else { throw HTTPError(.unauthorized) }
            guard let text = request.uri.queryParameters.get("id"), let id = try? ItemID(parsing: text) else {
                throw HTTPError(.badRequest, message: "give the item's id: /stream?id=…")
            }
            let completed = try await remote.calls.call(DownloadsList(state: .completed))
            guard let record = completed.first(where: { $0.id == id }) else {
                throw HTTPError(.notFound, message: "not downloaded")
            }
            var info = stat()
            guard stat(record.path, &info) == 0, info.st_size > 0 else {
                throw HTTPError(.notFound, message: "the downloaded file is gone: download it again")
            }
            return try await stream(path: record.path, size: Int(info.st_size), request: request, context: context)
        }

        // What a WebSocket that was not let in is answered (the upgrade's router declined it).
        router.get("/rpc") { request, context -> Response in
            try admit(request, context: context, remote: remote)
            throw HTTPError(.upgradeRequired, message: "/rpc speaks JSON-RPC over a WebSocket")
        }
        return router
    }

    /// Who may open the WebSocket: a paired browser, from the page's own origin, while there is room.
    static func admit(_ request: Request, context: WebContext, remote: WebRemote, counting: Bool = true) throws {
        try sameOrigin(request, required: true)
        guard remote.device(of: request, context: context, counting: counting) != nil else { throw HTTPError(.unauthorized) }
        guard remote.sockets.count < WebRemote.maxSockets else {
            throw HTTPError(.serviceUnavailable, message: "too many pages are open")
        }
    }

    /// The WebSocket's own router: a request it declines goes on to `router`'s routes.
    static func webSocketRouter(_ remote: WebRemote) -> Router<WebContext> {
        let router = Router(context: WebContext.self)
        router.ws("/rpc") { request, context in
            (try? admit(request, context: context, remote: remote, counting: false)) == nil ? .dontUpgrade : .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            // Asked again: the device may have been revoked between the two.
            guard let device = remote.device(of: context.request, context: context.requestContext) else { return }
            let id = remote.sockets.add(device: device.id, outbound: outbound)
            defer { remote.sockets.remove(id) }
            await WebBridge(remote: remote, device: device).run(inbound: inbound, outbound: outbound)
        }
        return router
    }

    /// A request that changes something must come from the page itself: a browser sends the
    /// page's own origin with it, and another site's page cannot make it send ours. The
    /// WebSocket must say its origin; other requests may say none (not a browser's).
    static func sameOrigin(_ request: Request, required: Bool = false) throws {
        guard let origin = request.headers[.origin] else {
            if required { throw HTTPError(.forbidden, message: "no Origin") }
            return
        }
        let authority = request.head.authority ?? ""
        guard origin == "http://\(authority)" || origin == "https://\(authority)" else {
            throw HTTPError(.forbidden, message: "another site's page cannot use this one")
        }
    }

    /// A file with Range requests (`bytes=a-b`, `bytes=a-`, `bytes=-n`): what a browser's audio
    /// element asks to seek without fetching the whole file.
    static func stream(path: String, size: Int, request: Request, context: WebContext) async throws -> Response {
        var headers: HTTPFields = [
            .contentType: mediaType(path), .acceptRanges: "bytes", .cacheControl: "private, no-transform",
        ]
        let fileIO = FileIO()
        guard let range = request.headers[.range] else {
            headers[.contentLength] = "\(size)"
            let body = try await fileIO.loadFile(path: path, context: context)
            return Response(status: .ok, headers: headers, body: body)
        }
        guard let (start, end) = byteRange(range, size: size) else {
            headers[.contentRange] = "bytes */\(size)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
        headers[.contentRange] = "bytes \(start)-\(end)/\(size)"
        headers[.contentLength] = "\(end - start + 1)"
        let body = try await fileIO.loadFile(path: path, range: start...end, context: context)
        return Response(status: .partialContent, headers: headers, body: body)
    }

    /// The one range of a `Range` header, within `size` bytes; nil when it is not satisfiable
    /// (several ranges are answered as their first).
    static func byteRange(_ header: String, size: Int) -> (Int, Int)? {
        guard header.hasPrefix("bytes="), size > 0 else { return nil }
        let first = header.dropFirst(6).split(separator: ",").first.map { $0.trimming(.whitespaces) } ?? ""
        let parts = first.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard let count = Int(parts[1]), count > 0 else { return nil }
            return (max(0, size - count), size - 1)
        }
        guard let start = Int(parts[0]), start >= 0, start < size else { return nil }
        if parts[1].isEmpty { return (start, size - 1) }
        guard let end = Int(parts[1]), end >= start else { return nil }
        return (start, min(end, size - 1))
    }

    static func mediaType(_ path: String) -> String {
        switch path.split(separator: ".").last?.lowercased() ?? "" {
        case "mp3": "audio/mpeg"
        case "m4a", "m4b", "aac": "audio/mp4"
        case "ogg", "oga", "opus": "audio/ogg"
        case "mp4", "m4v": "video/mp4"
        case "webm": "video/webm"
        case "mkv": "video/x-matroska"
        case "wav": "audio/wav"
        case "flac": "audio/flac"
        default: "application/octet-stream"
        }
    }

    /// "Firefox on Android" from a User-Agent: what a person recognises in `pair --list`.
    static func describe(agent: String) -> String {
        let browsers = [
            ("Edg/", "Edge"), ("OPR/", "Opera"), ("Firefox/", "Firefox"), ("Chrome/", "Chrome"),
            ("Chromium/", "Chromium"), ("Safari/", "Safari"),
        ]
        let systems = [
            ("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad"), ("Windows", "Windows"),
            ("Mac OS X", "macOS"), ("CrOS", "ChromeOS"), ("Linux", "Linux"),
        ]
        let browser = browsers.first { agent.contains($0.0) }?.1 ?? "A browser"
        let system = systems.first { agent.contains($0.0) }?.1
        return system.map { "\(browser) on \($0)" } ?? browser
    }

    enum Asset {
        case indexHTML, appJS, appCSS, pairHTML, pairJS, icon
        var bytes: [UInt8] {
            switch self {
            case .indexHTML: PackageResources.index_html
            case .appJS: PackageResources.app_js
            case .appCSS: PackageResources.app_css
            case .pairHTML: PackageResources.pair_html
            case .pairJS: PackageResources.pair_js
            case .icon: PackageResources.icon_svg
            }
        }
    }

    static func asset(_ asset: Asset, _ type: String) -> Response {
        // The page is small and changes with the binary: never kept stale by a browser.
        Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-cache"],
            body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
    }

    static func json(_ value: JSONValue, _ status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: JSONWriter.bytes(value))))
    }

    static func html(_ text: String, _ status: HTTPResponse.Status) -> Response {
        let escaped = text.replacing("&", with: "&amp;").replacing("<", with: "&lt;")
        let page = """
            <!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width">\
            <title>mediahost</title><link rel="stylesheet" href="/app.css"><main class="notice"><p>\(escaped)</p></main>
            """
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: page)))
    }
}

/// What every answer says to the browser: only this page's own scripts, styles and
/// connections; never framed by another site; no guessing of types; no referrer to the
/// places pictures come from.
struct SecurityHeaders: RouterMiddleware {
    typealias Context = WebContext
    static let policy =
        "default-src 'self'; img-src 'self' data:; media-src 'self' https: http:; connect-src 'self'; "
        + "style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response
    {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            response = WebRoutes.json(["error": .string(error.body ?? "\(error.status.reasonPhrase)")], error.status)
            for field in error.headers { response.headers.append(field) }
        }
        response.headers[.contentSecurityPolicy] = Self.policy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.xFrameOptions] = "DENY"
        response.headers[.referrerPolicy] = "no-referrer"
        return response
    }
}

extension HTTPField.Name {
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
    static let secFetchSite = Self("Sec-Fetch-Site")!
    static let secFetchMode = Self("Sec-Fetch-Mode")!
}
