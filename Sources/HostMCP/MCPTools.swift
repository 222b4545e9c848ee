import JSONRPC

/// The host's methods seen as MCP tools: names, descriptions, schemas and hints all come from the
/// OpenRPC document (rpc-spec.json), so each method is described once. Methods for people at a
/// terminal (logins, settings, sharing, the cache) are not tools.
public struct MCPToolCatalog: Sendable {
    public struct Tool: Sendable {
        public var name: String
        public var method: String
        public var readOnly: Bool
        public var destructive: Bool
        /// The result schema was not an object: results are wrapped as `{"result": …}`.
        public var wrapsResult: Bool
        /// The MCP `Tool` object.
        public var definition: JSONValue
    }

    /// The methods that are tools, and what a model should know to pick each beyond the spec's
    /// words. What each does to the user's things (its hints) is the spec's `x-effect`.
    static let exposed: [(method: String, hint: String)] = [
        (
            "providers.list",
            "Start here to learn which sources exist (podcasts, youtube, tmdb, mastodon, twitter, bluesky...) and what each can do."
        ),
        ("providers.categories", "The categories (genres, charts, feeds) of one provider, to pass to media_browse."),
        ("media.browse", "Items in one category of a provider (a genre's top podcasts, a feed's posts)."),
        (
            "media.search",
            "Find items by words, #tag or @user: in one provider, or in all of them when provider is left out. Use this first when asked to find something."
        ),
        (
            "media.get",
            "Full details of one item by its id (as returned by other tools): description, dates, stats, links."
        ),
        (
            "media.children",
            "What is inside an item: a podcast's episodes, a channel's videos, a post's replies, a user's posts."
        ),
        (
            "media.chapters",
            "An episode's or video's chapters (start in seconds, title, link): where each part begins. Play from one with player_open and chapter: n."
        ),
        (
            "media.transcript",
            "What was said in an episode: each line with its time in seconds and its speaker. Reading one also makes it searchable with transcripts_search."
        ),
        (
            "transcripts.search",
            "Find where words were said, in every transcript read so far (across shows): each hit with its episode, the time in seconds and the words around. Answer 'where did they talk about X?' with this, then player_open with start to play from there."
        ),
        (
            "media.segments",
            "A YouTube video's SponsorBlock segments (sponsor reads, intros…) with start and end in seconds, and whether the player skips, mutes or marks each."
        ),
        (
            "media.artwork",
            "The picture of an item (a video's thumbnail, a movie's poster, a show's cover, a post's photo with image: n) as an image you can see, and where its file is."
        ),
        ("favorites.list", "The user's favorites (podcasts, channels, people and items they follow or keep)."),
        (
            "favorites.latest",
            "What is new from the user's favorites: newest episodes, videos and posts first. Use for 'what's new from my shows'."
        ),
        ("favorites.add", "Keep an item as a favorite (and on the account when logged in)."),
        ("favorites.remove", "Stop keeping an item as a favorite."),
        ("favorites.sync", "Put the favorites kept here on the provider's account."),
        ("history.list", "Past searches, newest first."),
        ("history.clear", "Forget past searches."),
        ("lists.list", "The user's named lists (playlists, queues, reading lists)."),
        ("lists.items", "The items of one list, in order."),
        ("lists.create", "Make a new empty list."),
        ("lists.add", "Add items to a list (made when missing)."),
        ("lists.remove", "Take an item out of a list."),
        ("lists.move", "Move an item to another position in a list."),
        ("lists.rename", "Rename a list."),
        ("lists.delete", "Delete a list (not its items' downloads)."),
        ("lists.download", "Download every downloadable item of a list."),
        ("lists.export", "A list as text (JSON, M3U or OPML) to save or share."),
        ("lists.import", "Make a list from text (JSON, M3U or OPML)."),
        ("queue.list", "The user's queue (up next): what plays after what plays now, in order."),
        ("queue.add", "Queue episodes or videos to play: at the end, or next (first) with next: true."),
        ("queue.move", "Move an item of the queue to another place (positions count from 1)."),
        ("queue.remove", "Take items out of the queue."),
        ("queue.clear", "Empty the queue."),
        (
            "new.list",
            "What arrived from the user's shows and channels since they last looked (their inbox), newest first. Listing marks it seen unless keep: true; use keep: true when only telling them."
        ),
        ("new.seen", "Mark inbox items seen (or all: true) without listing them."),
        (
            "refresh.run",
            "Fetch new episodes of everything the user follows now, then apply each show's download and tidy rules. dryRun: true only says what would arrive, be downloaded and deleted."
        ),
        (
            "rules.list",
            "Each followed show's rules: what a refresh downloads (auto_download, include, exclude, min/max minutes), what it tidies (keep_downloads, delete_played_after_days) and how it plays (speed, skip_intro, skip_outro, loudnorm, volume_boost_db)."
        ),
        ("rules.set", "Set one rule of a followed show, or of every show when no show is given."),
        ("rules.unset", "Take back a show's rule (or all of them): the default applies again."),
        (
            "downloads.start",
            "Download an item's media file to the user's disk. Give a progress token to follow it to the end."
        ),
        ("downloads.list", "Downloads and their state, progress and file paths."),
        ("downloads.pause", "Pause a running download (its partial file is kept)."),
        ("downloads.resume", "Resume a paused or failed download."),
        ("downloads.cancel", "Cancel a download and delete its partial file."),
        ("downloads.remove", "Forget a download and delete its file."),
        ("player.open", "Play an item in the user's media player (mpv), or queue it."),
        ("player.status", "What is playing, where, and what is queued."),
        ("player.pause", "Pause playback."),
        ("player.resume", "Resume playback."),
        ("player.seek", "Jump within what is playing."),
        ("player.stop", "Stop playback (the position is kept)."),
        ("player.volume", "Set the player's volume."),
        ("player.next", "Skip to the next queued item."),
        ("player.previous", "Go back to the item played before (what plays goes back to the front of the queue)."),
        (
            "player.sleep",
            "A sleep timer: pause later, fading out (after minutes, at the end of what plays, or of its chapter); off cancels it."
        ),
        ("player.chapter", "Move to the next or previous chapter of what plays, or to chapter n."),
        ("player.mark", "Mark an item played or unplayed."),
        ("host.info", "Version, providers and where mediahost keeps its files."),
        (
            "host.doctor",
            "What works on the user's machine and what does not (yt-dlp and its JavaScript runtime, the player, each provider's settings), each with the command or setting that fixes it."
        ),
    ]

    public let tools: [Tool]
    private let byName: [String: Tool]

    /// - Parameters:
    ///   - spec: the OpenRPC document.
    ///   - served: the methods this host answers (a build without the player has no player tools).
    ///   - readOnlyOnly: only tools that change nothing.
    public init(spec: JSONValue, served: Set<String>, readOnlyOnly: Bool) {
        let methods = Dictionary(
            (spec["methods"]?.arrayValue ?? []).compactMap { m in m["name"]?.stringValue.map { ($0, m) } },
            uniquingKeysWith: { a, _ in a })
        let components = spec["components"]?["schemas"] ?? .object([:])
        var tools: [Tool] = []
        for (method, hint) in Self.exposed where served.contains(method) {
            guard let described = methods[method] else { continue }
            let effect = described["x-effect"]
            let access = effect?["access"]?.stringValue ?? "changes"
            let readOnly = access == "reads"
            if readOnlyOnly, !readOnly { continue }
            var properties: [String: JSONValue] = [:]
            var required: [JSONValue] = []
            for param in described["params"]?.arrayValue ?? [] {
                guard let name = param["name"]?.stringValue else { continue }
                var schema = Self.inline(param["schema"] ?? .object([:]), components)
                if let words = param["description"]?.stringValue, case .object(var members) = schema,
                    members["description"] == nil
                {
                    members["description"] = .string(words)
                    schema = .object(members)
                }
                properties[name] = schema
                if param["required"] == true { required.append(.string(name)) }
            }
            var input: [String: JSONValue] = ["type": "object", "properties": .object(properties)]
            if !required.isEmpty { input["required"] = .array(required) }
            let result = Self.inline(described["result"]?["schema"] ?? .object([:]), components)
            let wraps = result["type"]?.stringValue != "object"
            let output: JSONValue =
                wraps ? ["type": "object", "properties": ["result": result], "required": ["result"]] : result
            let summary = described["summary"]?.stringValue ?? ""
            let details = described["description"]?.stringValue.map { " " + $0 } ?? ""
            let name = method.replacing(".", with: "_")
            let title = summary.split(separator: ".").first.map(String.init) ?? name
            var annotations: [String: JSONValue] = [
                "title": .string(title), "readOnlyHint": .bool(readOnly),
                "openWorldHint": .bool(effect?["reachesOut"] == true),
            ]
            if !readOnly {
                annotations["destructiveHint"] = .bool(access == "removes")
                annotations["idempotentHint"] = .bool(effect?["idempotent"] == true)
            }
            let definition: JSONValue = [
                "name": .string(name), "title": .string(title),
                "description": .string(hint + " " + summary + details), "inputSchema": .object(input), "outputSchema": output,
                "annotations": .object(annotations),
            ]
            tools.append(
                Tool(
                    name: name, method: method, readOnly: readOnly, destructive: access == "removes",
                    wrapsResult: wraps, definition: definition))
        }
        self.tools = tools
        byName = Dictionary(tools.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    public func tool(named name: String) -> Tool? { byName[name] }

    /// `schema` with every `#/components/schemas/…` reference replaced by its definition (a tool's
    /// schema stands alone); a reference met again inside itself is left as an open object.
    static func inline(_ schema: JSONValue, _ components: JSONValue, seen: Set<String> = []) -> JSONValue {
        switch schema {
        case .object(let members):
            if let ref = members["$ref"]?.stringValue, ref.hasPrefix("#/components/schemas/") {
                let name = String(ref.dropFirst("#/components/schemas/".count))
                guard !seen.contains(name), let target = components[name] else { return ["type": "object"] }
                var resolved = inline(target, components, seen: seen.union([name]))
                if let words = members["description"], case .object(var inner) = resolved {
                    inner["description"] = words
                    resolved = .object(inner)
                }
                return resolved
            }
            return .object(members.mapValues { inline($0, components, seen: seen) })
        case .array(let elements):
            return .array(elements.map { inline($0, components, seen: seen) })
        default:
            return schema
        }
    }
}
