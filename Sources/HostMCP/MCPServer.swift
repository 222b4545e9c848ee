import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import Pictures
import Synchronization

/// The Model Context Protocol on top of the host's methods (`mediahost mcp`): tools made from
/// rpc-spec.json, `mediahost://` resources with subscriptions, progress of downloads against the
/// caller's token, and cancellation by `notifications/cancelled` (the connection does that).
///
/// It is a JSON-RPC handler, served by the same `RPCConnection` as `mediahost rpc`.
public final class MCPServer: RPCHandler, Sendable {
    public static let protocolVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    /// MCP's "resource not found", which is also the host's "not found".
    static let resourceNotFound = -32002

    /// Where the tools' calls go: the host in this process or the service (the API's connection).
    let connection: any HostConnection
    let catalog: MCPToolCatalog
    let name: String
    let version: String
    /// Sends a notification to the client (the connection's `notify`).
    let notify: Mutex<(@Sendable (String, JSONValue?) -> Void)?> = Mutex(nil)

    private struct State {
        var subscribed: Set<String> = []
        /// Downloads followed for a caller's progress token: item id -> watchers.
        var following: [String: [UUID: @Sendable (String, JSONValue?) -> Void]] = [:]
        var lastDownloadsUpdate = ContinuousClock.now - .seconds(10)
    }
    private let state = Mutex(State())

    /// A method's result as a JSON value (made from the host's answer, never parsed back from text).
    func call(_ method: String, _ params: JSONValue?) async -> Result<JSONValue, RPCError> {
        do throws(RPCError) {
            return .success(try await connection.value(method, params: params))
        } catch {
            return .failure(error)
        }
    }

    public init(connection: any HostConnection, catalog: MCPToolCatalog, name: String, version: String) {
        self.connection = connection
        self.catalog = catalog
        self.name = name
        self.version = version
    }

    /// Where notifications go once the connection exists.
    public func connect(_ send: @escaping @Sendable (String, JSONValue?) -> Void) { notify.withLock { $0 = send } }

    private func send(_ method: String, _ params: JSONValue?) { notify.withLock { $0 }?(method, params) }

    public func handle(method: String, params: JSONValue?) async -> Result<[UInt8], RPCError> {
        do {
            let result: JSONValue
            switch method {
            case "initialize": result = initialize(params)
            case "ping": result = .object([:])
            // (`notifications/cancelled` is the connection's: it never reaches here.)
            case "notifications/initialized", "notifications/roots/list_changed":
                return .success(Array("null".utf8))
            case "logging/setLevel": result = .object([:])
            case "tools/list": result = ["tools": .array(catalog.tools.map(\.definition))]
            case "tools/call": result = try await callTool(params)
            case "resources/list": result = try await listResources()
            case "resources/templates/list": result = ["resourceTemplates": .array(Self.templates)]
            case "resources/read": result = try await readResource(params?["uri"]?.stringValue)
            case "resources/subscribe":
                try await subscribe(params?["uri"]?.stringValue)
                result = .object([:])
            case "resources/unsubscribe":
                guard let uri = params?["uri"]?.stringValue, uri.hasPrefix("mediahost://") else {
                    throw RPCError.invalidParams("uri must be a mediahost:// resource")
                }
                _ = state.withLock { $0.subscribed.remove(uri) }
                result = .object([:])
            case "prompts/list": result = ["prompts": []]
            default:
                throw RPCError(code: -32601, message: "Method not found: \(method)")
            }
            return .success(JSONWriter.bytes(result))
        } catch let error as RPCError {
            return .failure(error)
        } catch {
            return .failure(RPCError(code: -32603, message: "\(error)"))
        }
    }

    // MARK: Lifecycle

    func initialize(_ params: JSONValue?) -> JSONValue {
        let asked = params?["protocolVersion"]?.stringValue ?? ""
        // The client's revision when it is one we speak, else our newest (the client decides).
        let version = Self.protocolVersions.contains(asked) ? asked : Self.protocolVersions[0]
        return [
            "protocolVersion": .string(version),
            "capabilities": [
                "tools": ["listChanged": false], "resources": ["subscribe": true, "listChanged": true], "logging": [:],
            ],
            "serverInfo": ["name": .string(name), "title": "mediahost", "version": .string(self.version)],
            "instructions": """
            mediahost reaches podcasts, YouTube, movies (TMDB), Mastodon, Bluesky and X through one set of tools. \
            Find things with media_search (all providers when provider is left out), open them with media_children \
            (episodes, videos, replies) and media_get (details). Item ids look like provider:kind:native-id; pass \
            them as they are. favorites_latest gives what is new from the user's favorites. Downloads and playback \
            happen on the user's machine.
            """,
        ]
    }

    // MARK: Tools

    func callTool(_ params: JSONValue?) async throws -> JSONValue {
        guard let name = params?["name"]?.stringValue else { throw RPCError.invalidParams("name is required") }
        guard let tool = catalog.tool(named: name) else { throw RPCError.invalidParams("Unknown tool: \(name)") }
        let arguments = params?["arguments"]
        switch arguments {
        case nil, .null?, .object?: break
        default: throw RPCError.invalidParams("arguments must be an object")
        }
        let given = arguments == .null ? nil : arguments
        let token = params?["_meta"]?["progressToken"]
        let outcome = await call(tool.method, given ?? .object([:]))
        let value: JSONValue
        switch outcome {
        case .failure(let error):
            if error.code == -32800 || Task.isCancelled { throw error }
            // The host's refusal is the tool's answer: the model reads why and can try otherwise.
            return ["content": [["type": "text", "text": .string(error.message)]], "isError": true]
        case .success(let result):
            value = result
        }
        var final = value
        if tool.method == DownloadsStart.method, let token, let id = value["id"]?.stringValue,
            value["state"]?.stringValue != "completed", let progress = RPCRequestContext.current?.notify
        {
            final = try await follow(download: id, token: token, progress: progress) ?? value
        }
        let structured: JSONValue = tool.wrapsResult ? ["result": final] : final
        var content: [JSONValue] = [["type": "text", "text": .string(MCPText.summary(final))]]
        if let picture = await picture(for: tool.method, final) { content.append(picture) }
        return ["content": .array(content), "structuredContent": structured, "isError": false]
    }

    /// The longest side of a picture given to an assistant: a thumbnail, not the original.
    static let pictureSide = 384

    /// The picture of what `media.get` or `media.artwork` answered, as MCP image content (a PNG
    /// thumbnail), so an assistant that sees images sees the poster or thumbnail; when it cannot
    /// be had, a line saying why (the answer itself stands).
    func picture(for method: String, _ value: JSONValue) async -> JSONValue? {
        let path: String
        switch method {
        case MediaArtwork.method:
            guard let given = value["path"]?.stringValue else { return nil }
            path = given
        case "media.get":
            guard value["artwork"]?.stringValue != nil, let id = value["id"] else { return nil }
            switch await call(MediaArtwork.method, ["id": id]) {
            case .success(let artwork):
                guard let given = artwork["path"]?.stringValue else { return nil }
                path = given
            case .failure(let error):
                return ["type": "text", "text": .string("(no picture: \(error.message))")]
            }
        default: return nil
        }
        let side = Self.pictureSide
        let made = await Task.detached { () -> Result<[UInt8], PictureError> in
            do throws(PictureError) {
                return .success(try Picture(path: path, maxWidth: side, maxHeight: side).png())
            } catch {
                return .failure(error)
            }
        }.value
        switch made {
        case .success(let png):
            return ["type": "image", "data": .string(Data(png).base64EncodedString()), "mimeType": "image/png"]
        case .failure(let error):
            return ["type": "text", "text": .string("(no picture: \(error))")]
        }
    }

    /// Follows a download to its end, sending `notifications/progress` against `token`; the
    /// download's record at the end (or when the caller cancels, nil: the download goes on).
    func follow(download id: String, token: JSONValue, progress: @escaping @Sendable (String, JSONValue?) -> Void)
        async throws -> JSONValue?
    {
        let key = UUID()
        let (events, continuation) = AsyncStream<(String, JSONValue?)>.makeStream()
        state.withLock { $0.following[id, default: [:]][key] = { method, params in continuation.yield((method, params)) } }
        defer {
            state.withLock { s in
                s.following[id]?[key] = nil
                if s.following[id]?.isEmpty == true { s.following[id] = nil }
            }
        }
        // The download may have ended between its start and this watch.
        if let record = await record(of: id), Self.isOver(record["state"]?.stringValue) { return record }
        // The caller's cancellation ends the wait (the download goes on).
        return try await withTaskCancellationHandler {
            for await (method, params) in events {
                switch method {
                case DownloadProgress.method:
                    var note: [String: JSONValue] = ["progressToken": token, "progress": params?["bytes"] ?? 0]
                    if let total = params?["total"] { note["total"] = total }
                    if let bytes = params?["bytes"]?.doubleValue {
                        note["message"] = .string(
                            MCPText.bytes(bytes) + (params?["total"]?.doubleValue.map { " of " + MCPText.bytes($0) } ?? ""))
                    }
                    progress("notifications/progress", .object(note))
                case DownloadStateChange.method where Self.isOver(params?["state"]?.stringValue):
                    return await record(of: id) ?? params
                default: break
                }
            }
            try Task.checkCancellation()
            return nil
        } onCancel: {
            continuation.finish()
        }
    }

    static func isOver(_ state: String?) -> Bool { ["completed", "failed", "cancelled", "paused"].contains(state ?? "") }

    private func record(of id: String) async -> JSONValue? {
        guard case .success(let answer) = await call(DownloadsList.method, nil), let list = answer.arrayValue
        else { return nil }
        return list.first { $0["id"]?.stringValue == id }
    }

    /// Host notifications (downloads' progress and states, library changes): followed downloads
    /// and subscribed resources hear of them.
    public func hostEvent(method: String, params: JSONValue?) {
        if method == LibraryChange.method { return libraryChanged(params) }
        guard method.hasPrefix("downloads.") else { return }
        let id = params?["id"]?.stringValue ?? ""
        let (watchers, update) = state.withLock { s -> ([@Sendable (String, JSONValue?) -> Void], Bool) in
            let watchers = Array((s.following[id] ?? [:]).values)
            guard s.subscribed.contains("mediahost://downloads") else { return (watchers, false) }
            // State changes always; progress at most once a second.
            let now = ContinuousClock.now
            guard method == DownloadStateChange.method || now - s.lastDownloadsUpdate >= .seconds(1) else {
                return (watchers, false)
            }
            s.lastDownloadsUpdate = now
            return (watchers, true)
        }
        for watcher in watchers { watcher(method, params) }
        if update { send("notifications/resources/updated", ["uri": "mediahost://downloads"]) }
    }

    /// Subscribed resources a change names (`library.changed`, from any client of the host).
    private func libraryChanged(_ params: JSONValue?) {
        var uris: [String] = []
        switch params?["what"]?.stringValue {
        case "favorites": uris = ["mediahost://favorites"]
        case "history": uris = ["mediahost://history"]
        case "queue": uris = ["mediahost://queue"]
        case "lists": uris = ["mediahost://lists"] + (params?["list"]?.stringValue.map { [Self.listURI($0)] } ?? [])
        default: return
        }
        let subscribed = state.withLock { s in uris.filter { s.subscribed.contains($0) } }
        for uri in subscribed { send("notifications/resources/updated", ["uri": .string(uri)]) }
        // A list made, renamed or deleted changes the resources listed.
        if params?["what"]?.stringValue == "lists" { send("notifications/resources/list_changed", nil) }
    }

    // MARK: Resources

    /// Subscriptions a client may hold at once: one per list is plenty; past this the
    /// subscription is refused (held ones are kept for the life of the connection).
    static let maxSubscriptions = 256

    /// Subscribes to a resource that can change: the five collections, and a list that exists.
    /// Anything else (an item, artwork, a list that is not there, a path that names nothing) is
    /// refused, so a client cannot make the server hold subscriptions no update will reach.
    func subscribe(_ uri: String?) async throws {
        guard let uri, uri.hasPrefix("mediahost://") else { throw RPCError.invalidParams("uri must be a mediahost:// resource") }
        let path = uri.dropFirst("mediahost://".count)
        var changing = ["favorites", "downloads", "history", "lists", "queue"].contains(path)
        if !changing, path.hasPrefix("lists/"), uri.utf8.count <= 1024,
            let name = path.dropFirst("lists/".count).percentDecoded, !name.isEmpty,
            case .success(let answer) = await call(ListsList.method, nil), let lists = answer.arrayValue
        {
            changing = lists.contains { $0["name"]?.stringValue == name }
        }
        guard changing else {
            throw RPCError(
                code: Self.resourceNotFound,
                message:
                    "No resource to subscribe to at \(uri.prefix(200)): favorites, downloads, history, lists, queue and lists/<name> change",
                data: ["uri": .string(String(uri.prefix(1024)))])
        }
        let full = state.withLock { s -> Bool in
            guard s.subscribed.contains(uri) || s.subscribed.count < Self.maxSubscriptions else { return true }
            s.subscribed.insert(uri)
            return false
        }
        if full {
            throw RPCError.invalidParams(
                "already \(Self.maxSubscriptions) subscriptions: unsubscribe from one (resources/unsubscribe) first")
        }
    }

    static let templates: [JSONValue] = [
        [
            "uriTemplate": "mediahost://item/{id}", "name": "item", "title": "An item's details",
            "description": "Any item by its id (provider:kind:native-id), as media_get gives it.", "mimeType": "application/json",
        ],
        [
            "uriTemplate": "mediahost://artwork/{id}", "name": "artwork", "title": "An item's artwork",
            "description": "The item's image (cover, thumbnail, poster, avatar).",
        ],
        [
            "uriTemplate": "mediahost://transcript/{id}", "name": "transcript", "title": "What was said in an episode or video",
            "description":
                "Its transcript as text, a line each: [m:ss] Speaker: words (as media_transcript reads it; searchable with transcripts_search after).",
            "mimeType": "text/plain",
        ],
        [
            "uriTemplate": "mediahost://lists/{name}", "name": "list", "title": "A list's items",
            "description": "The items of one of the user's lists, in order.", "mimeType": "application/json",
        ],
    ]

    static func listURI(_ name: String) -> String {
        "mediahost://lists/" + name.percentEncoded(allowing: .urlPathSegment)
    }

    func listResources() async throws -> JSONValue {
        var resources: [JSONValue] = [
            Self.resource("mediahost://favorites", "favorites", "The user's favorites"),
            Self.resource("mediahost://downloads", "downloads", "Downloads with their state and files"),
            Self.resource("mediahost://history", "history", "Past searches, newest first"),
            Self.resource("mediahost://lists", "lists", "The user's lists"),
            Self.resource("mediahost://queue", "queue", "What plays next, in order (up next)"),
        ]
        if case .success(let answer) = await call(ListsList.method, nil), let lists = answer.arrayValue {
            for list in lists {
                guard let name = list["name"]?.stringValue else { continue }
                resources.append(Self.resource(Self.listURI(name), "list: \(name)", "The items of the list \(name)"))
            }
        }
        return ["resources": .array(resources)]
    }

    static func resource(_ uri: String, _ name: String, _ description: String) -> JSONValue {
        ["uri": .string(uri), "name": .string(name), "description": .string(description), "mimeType": "application/json"]
    }

    func readResource(_ uri: String?) async throws -> JSONValue {
        guard let uri, uri.hasPrefix("mediahost://") else { throw RPCError.invalidParams("uri must be a mediahost:// resource") }
        let path = String(uri.dropFirst("mediahost://".count))
        let (method, params): (String, JSONValue?)
        switch path {
        case "favorites": (method, params) = (FavoritesList.method, ["limit": 500])
        case "downloads": (method, params) = (DownloadsList.method, nil)
        case "history": (method, params) = ("history.list", nil)
        case "lists": (method, params) = (ListsList.method, nil)
        case "queue": (method, params) = (QueueList.method, ["limit": 500])
        default:
            let parts = path.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2, let value = parts[1].percentDecoded, !value.isEmpty else {
                throw RPCError(code: Self.resourceNotFound, message: "Resource not found: \(uri)", data: ["uri": .string(uri)])
            }
            switch parts[0] {
            case "item": (method, params) = ("media.get", ["id": .string(value)])
            case "lists": (method, params) = (ListsItems.method, ["name": .string(value), "limit": 500])
            case "artwork": return try await artwork(uri: uri, id: value)
            case "transcript": return try await transcript(uri: uri, id: value)
            default:
                throw RPCError(code: Self.resourceNotFound, message: "Resource not found: \(uri)", data: ["uri": .string(uri)])
            }
        }
        switch await call(method, params) {
        case .success(let result):
            return [
                "contents": [
                    [
                        "uri": .string(uri), "mimeType": "application/json",
                        "text": .string(String(decoding: JSONWriter.bytes(result), as: UTF8.self)),
                    ]
                ]
            ]
        case .failure(let error):
            // The host's not found, unknown provider and malformed id are MCP's resource not found.
            guard [Self.resourceNotFound, -32010, -32602].contains(error.code) else { throw error }
            throw RPCError(code: Self.resourceNotFound, message: error.message, data: ["uri": .string(uri)])
        }
    }

    /// A transcript as text an assistant reads: `[0:31] Ada: Listen for…`, a line each.
    func transcript(uri: String, id: String) async throws -> JSONValue {
        switch await call(MediaTranscript.method, ["id": .string(id)]) {
        case .success(let result):
            let timed = result["timed"]?.boolValue ?? true
            let lines = (result["cues"]?.arrayValue ?? []).map { cue -> String in
                let seconds = Int(cue["start"]?.doubleValue ?? 0)
                let time = timed ? "[\(seconds / 60):\(seconds % 60 < 10 ? "0" : "")\(seconds % 60)] " : ""
                let speaker = cue["speaker"]?.stringValue.map { $0 + ": " } ?? ""
                return time + speaker + (cue["text"]?.stringValue ?? "")
            }
            return [
                "contents": [["uri": .string(uri), "mimeType": "text/plain", "text": .string(lines.joined(separator: "\n"))]]
            ]
        case .failure(let error):
            guard [Self.resourceNotFound, -32010, -32602, -32001].contains(error.code) else { throw error }
            throw RPCError(code: Self.resourceNotFound, message: error.message, data: ["uri": .string(uri)])
        }
    }

    /// The artwork's bytes as a blob (the host caches the image and says where).
    func artwork(uri: String, id: String) async throws -> JSONValue {
        let answer = await call(MediaArtwork.method, ["id": .string(id)])
        guard case .success(let result) = answer, let path = result["path"]?.stringValue,
            let data = FileManager.default.contents(atPath: path)
        else {
            let message = if case .failure(let error) = answer { error.message } else { "no artwork for \(id)" }
            throw RPCError(code: Self.resourceNotFound, message: message, data: ["uri": .string(uri)])
        }
        return [
            "contents": [
                ["uri": .string(uri), "mimeType": .string(MCPText.imageType(data)), "blob": .string(data.base64EncodedString())]
            ]
        ]
    }
}
