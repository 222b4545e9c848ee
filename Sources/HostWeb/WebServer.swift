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
import SyncHub

#if canImport(Glibc)
    import Glibc
#endif

/// What a request of the web remote carries: the WebSocket upgrade's handler and who asks.
struct WebContext: RequestContext, WebSocketRequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let remoteAddress: SocketAddress?
    /// The connection: a page unpaired is cut off here, whatever its client does with a Close.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        remoteAddress = source.channel.remoteAddress
        channel = source.channel
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
        router.add(middleware: SyncHubRoutes(remote: remote))
        router.get("/") { request, context in
            guard let device = remote.device(of: request, context: context) else {
                var page = asset(.pairHTML, "text/html; charset=utf-8")
                // A token no longer paired (revoked) is forgotten by the browser: it counts no
                // more wrong guesses against its address.
                if request.cookies[tokenCookie] != nil, remote.devices.problem == nil { page.setCookie(remote.tokenCookie("")) }
                return page
            }
            remote.devices.markSeen(device.id)
            return asset(.indexHTML, "text/html; charset=utf-8")
        }
        router.head("/") { _, _ in Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"]) }
        // Who the page is paired as: a read-only page shows no control it may not use.
        router.get("/me") { request, context in
            guard let device = remote.device(of: request, context: context) else { throw HTTPError(.unauthorized) }
            return json(["name": .string(device.name), "access": .string(device.access.rawValue)])
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
                    let paired: (device: WebDevice, token: String)
                    do {
                        paired = try remote.devices.add(name: name, access: access)
                    } catch {
                        remote.pairing.uncollected(secret: secret)
                        throw error
                    }
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
        // A link shows a button, and only its press (a POST from this page) pairs: a chat
        // app's preview of the link, fetching it, pairs nothing.
        router.get("/pair/link/:secret") { request, context in
            guard let secret = context.parameters.get("secret"),
                secret.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            else { throw HTTPError(.notFound) }
            if remote.device(of: request, context: context) != nil {
                return Response(status: .seeOther, headers: [.location: "/"])
            }
            let page = """
                <!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">\
                <meta name="color-scheme" content="light dark"><title>Pair with mediahost</title>\
                <link rel="icon" href="/icon.svg"><link rel="stylesheet" href="/app.css"><main class="notice"><h1>Pair this browser</h1>\
                <p>This link pairs the browser that presses the button with mediahost, once.</p>\
                <form method="post" action="/pair/link/\(secret)"><button type="submit" class="play">Pair this browser</button></form></main>
                """
            return Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: page)))
        }
        router.post("/pair/link/:secret") { request, context in
            // Only the link's own page pairs: another site's form would only count guesses
            // against the visitor's address.
            try sameOrigin(request, required: true)
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
            // The size it is drawn at, in pixels: of a feed's sizes, the one that fits.
            let width = request.uri.queryParameters.get("w").flatMap(Int.init).map { min(max($0, 1), 10_000) }
            let artwork: MediaArtwork.Response
            do {
                artwork = try await remote.calls.call(MediaArtwork(id: id, image: image, width: image == nil ? width : nil))
            } catch {
                throw HTTPError(.notFound, message: "\(error)")
            }
            guard let bytes = FileManager.default.contents(atPath: artwork.path) else { throw HTTPError(.notFound) }
            // What a feed's server calls its picture is not believed: only a picture's bytes go
            // out, under the type they are, never as a page or a script of this origin.
            guard let type = imageType(Array(bytes.prefix(64))) else {
                throw HTTPError(.unsupportedMediaType, message: "the artwork is not a picture")
            }
            var headers: HTTPFields = [.contentType: type, .cacheControl: "private, max-age=86400"]
            headers[.contentSecurityPolicy] = inertPolicy
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
        }
        let serveStream: @Sendable (Request, WebContext) async throws -> Response = { request, context in
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
        router.get("/stream", use: serveStream)
        router.head("/stream", use: serveStream)

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
            (try? admit(request, context: context, remote: remote)) == nil ? .dontUpgrade : .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            guard let first = remote.device(of: context.request, context: context.requestContext) else { return }
            let id = remote.sockets.add(device: first.id, outbound: outbound, channel: context.requestContext.channel)
            defer { remote.sockets.remove(id) }
            // Asked again once registered: a revocation in between closes it either way.
            guard let device = remote.device(of: context.request, context: context.requestContext) else { return }
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

    /// What a file served as it is (a picture, a download) may do when opened on its own: nothing.
    static let inertPolicy = "default-src 'none'; style-src 'unsafe-inline'; sandbox"

    /// A picture's type by its first bytes (PNG, JPEG, GIF, WebP, AVIF, BMP, ICO); nil for
    /// anything else, SVG included (a document that can carry scripts).
    static func imageType(_ head: [UInt8]) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + prefix.count && Array(head[offset..<offset + prefix.count]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "image/gif" }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        if starts(Array("ftypavif".utf8), at: 4) || starts(Array("ftypavis".utf8), at: 4) { return "image/avif" }
        if starts(Array("BM".utf8)) { return "image/bmp" }
        if starts([0, 0, 1, 0]) { return "image/x-icon" }
        return nil
    }

    /// A file with Range requests (`bytes=a-b`, `bytes=a-`, `bytes=-n`): what a browser's audio
    /// element asks to seek without fetching the whole file.
    static func stream(path: String, size: Int, request: Request, context: WebContext) async throws -> Response {
        var headers: HTTPFields = [
            .contentType: mediaType(path), .acceptRanges: "bytes", .cacheControl: "private, no-transform",
            .contentSecurityPolicy: inertPolicy,
        ]
        let fileIO = FileIO()
        let answer = request.headers[.range].map { byteRange($0, size: size) } ?? .whole
        let (start, end): (Int, Int)
        switch answer {
        case .whole:
            headers[.contentLength] = "\(size)"
            let body = request.head.method == .head ? ResponseBody() : try await fileIO.loadFile(path: path, context: context)
            return Response(status: .ok, headers: headers, body: body)
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .range(let first, let last):
            (start, end) = (first, last)
        }
        headers[.contentRange] = "bytes \(start)-\(end)/\(size)"
        headers[.contentLength] = "\(end - start + 1)"
        let body =
            request.head.method == .head
            ? ResponseBody() : try await fileIO.loadFile(path: path, range: start...end, context: context)
        return Response(status: .partialContent, headers: headers, body: body)
    }

    /// What a `Range` header asks of `size` bytes (RFC 9110 §14): one range (several are
    /// answered as their first), nothing it can read (another unit, bad syntax: the whole file,
    /// as the header were absent), or a range past the end (416).
    enum RangeAnswer: Equatable {
        case whole
        case range(Int, Int)
        case unsatisfiable
    }

    static func byteRange(_ header: String, size: Int) -> RangeAnswer {
        guard header.hasPrefix("bytes=") else { return .whole }
        let first = header.dropFirst(6).split(separator: ",").first.map { $0.trimming(.whitespaces) } ?? ""
        let parts = first.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
            !(parts[0].isEmpty && parts[1].isEmpty)
        else { return .whole }
        // Digits past Int's range are as large as can be.
        func number(_ digits: Substring) -> Int { Int(digits) ?? Int.max }
        guard size > 0 else { return .unsatisfiable }
        if parts[0].isEmpty {
            let count = number(parts[1])
            guard count > 0 else { return .unsatisfiable }
            return .range(max(0, size - min(count, size)), size - 1)
        }
        let start = number(parts[0])
        guard start < size else { return .unsatisfiable }
        if parts[1].isEmpty { return .range(start, size - 1) }
        let end = number(parts[1])
        guard end >= start else { return .whole }
        return .range(start, min(end, size - 1))
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
            <title>mediahost</title><link rel="icon" href="/icon.svg"><link rel="stylesheet" href="/app.css">\
            <main class="notice"><p>\(escaped)</p></main>
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
        } catch {
            // Said in the service's log and to the page, never an empty 500.
            Descriptor.standardError("web remote: \(request.method) \(request.uri.path) failed: \(error)\n")
            response = WebRoutes.json(["error": .string("the web remote failed: \(error)")], .internalServerError)
        }
        // A file served as it is keeps its own, stricter policy.
        if response.headers[.contentSecurityPolicy] == nil { response.headers[.contentSecurityPolicy] = Self.policy }
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.xFrameOptions] = "DENY"
        // None to other sites (where pictures come from); same-origin, not no-referrer, which
        // would make a browser send `Origin: null` with the pairing link's form.
        response.headers[.referrerPolicy] = "same-origin"
        return response
    }
}

extension HTTPField.Name {
    static let xFrameOptions = Self("X-Frame-Options")!
    static let referrerPolicy = Self("Referrer-Policy")!
}

/// The household's sync server on the web remote's port: gpodder.net's and Nextcloud
/// gpoddersync's paths go to `SyncHub`, with their own accounts (HTTP Basic or a session), never
/// the pairing of browsers.
struct SyncHubRoutes: RouterMiddleware {
    typealias Context = WebContext
    let remote: WebRemote

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response
    {
        let path = request.uri.path
        guard SyncHub.handles(path: path) else { return try await next(request, context) }
        guard let hub = remote.hub else {
            return WebRoutes.json(
                ["error": .string("the sync server cannot open its data: \(remote.hubProblem ?? "")")], .serviceUnavailable)
        }
        if let length = request.headers[.contentLength].flatMap(Int.init), length > SyncHub.maxBody {
            return WebRoutes.json(["error": .string("the request is larger than \(SyncHub.maxBody >> 20) MB")], .contentTooLarge)
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: SyncHub.maxBody)
        } catch {
            return WebRoutes.json(["error": .string("the request is larger than \(SyncHub.maxBody >> 20) MB")], .contentTooLarge)
        }
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        // Addresses the server gives out (Nextcloud's sign-in) are https when it serves TLS.
        headers["x-mediahost-tls"] = remote.secure ? "1" : nil
        let answer = await hub.handle(
            HubRequest(
                method: request.method.rawValue, path: path, query: request.uri.query ?? "", headers: headers,
                body: Array(body.readableBytesView), address: context.address))
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        return Response(
            status: HTTPResponse.Status(code: answer.status), headers: fields,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}
