import MediaKit

/// Every list with its number of items, oldest first.
public struct ListsList: APIMethod {
    public static let method = "lists.list"
    public static let effect = MethodEffect(.reads)
    public typealias Response = [ListInfo]
    public init() {}
}

public struct ListsCreate: APIMethod {
    public static let method = "lists.create"
    public static let effect = MethodEffect(.changes, idempotent: false, library: .lists)
    public typealias Response = ListInfo
    public var name: String
    public init(name: String) { self.name = name }
}

public struct ListsRename: APIMethod {
    public static let method = "lists.rename"
    public static let effect = MethodEffect(.changes, idempotent: false, library: .lists)
    public typealias Response = ListInfo
    public var name: String
    public var to: String
    public init(name: String, to: String) {
        self.name = name
        self.to = to
    }
}

public struct ListsDelete: APIMethod {
    public static let method = "lists.delete"
    public static let effect = MethodEffect(.removes, library: .lists)
    public var name: String
    public init(name: String) { self.name = name }
    public struct Response: Codable, Sendable, Equatable {
        public var name: String
        public var deleted: Bool

        public init(name: String, deleted: Bool) {
            self.name = name
            self.deleted = deleted
        }
    }
}

/// Appends an item to a list with a snapshot of it (so the list works offline).
public struct ListsAdd: APIMethod {
    public static let method = "lists.add"
    public static let effect = MethodEffect(.changes, library: .lists, reachesOut: true)
    public var name: String
    public var id: ItemID
    public init(name: String, id: ItemID) {
        self.name = name
        self.id = id
    }
    public struct Response: Codable, Sendable, Equatable {
        public var name: String
        public var item: MediaItem
        /// False when it was in the list already (its place is kept).
        public var added: Bool

        public init(name: String, item: MediaItem, added: Bool) {
            self.name = name
            self.item = item
            self.added = added
        }
    }
}

public struct ListsRemove: APIMethod {
    public static let method = "lists.remove"
    public static let effect = MethodEffect(.removes, library: .lists)
    public var name: String
    public var id: ItemID
    public init(name: String, id: ItemID) {
        self.name = name
        self.id = id
    }
    public struct Response: Codable, Sendable, Equatable {
        public var name: String
        public var id: ItemID
        public var removed: Bool

        public init(name: String, id: ItemID, removed: Bool) {
            self.name = name
            self.id = id
            self.removed = removed
        }
    }
}

/// Moves an item to a place in its list (0 first).
public struct ListsMove: APIMethod {
    public static let method = "lists.move"
    public static let effect = MethodEffect(.changes, library: .lists)
    public typealias Response = ListInfo
    public var name: String
    public var id: ItemID
    public var to: Int
    public init(name: String, id: ItemID, to: Int) {
        self.name = name
        self.id = id
        self.to = to
    }
}

/// A page of a list's items, in order, from their snapshots (or the favorites).
public struct ListsItems: APIMethod {
    public static let method = "lists.items"
    public static let effect = MethodEffect(.reads)
    public typealias Response = Page
    public var name: String
    public var cursor: Cursor?
    public var limit: Int?
    public init(name: String, cursor: Cursor? = nil, limit: Int? = nil) {
        self.name = name
        self.cursor = cursor
        self.limit = limit
    }
}

/// Downloads a list: every episode and video in it, and with `new`, the newest episode of each
/// show (or channel) in it that is neither downloaded nor played.
public struct ListsDownload: APIMethod {
    public static let method = "lists.download"
    public static let effect = MethodEffect(.changes, idempotent: false, reachesOut: true)
    public var name: String
    public var new: Bool?
    public init(name: String, new: Bool? = nil) {
        self.name = name
        self.new = new
    }
    public struct Skipped: Codable, Sendable, Equatable {
        public var id: ItemID
        public var reason: String

        public init(id: ItemID, reason: String) {
            self.id = id
            self.reason = reason
        }
    }
    public struct Response: Codable, Sendable, Equatable {
        public var started: [Download]
        public var skipped: [Skipped]

        public init(started: [Download], skipped: [Skipped]) {
            self.started = started
            self.skipped = skipped
        }
    }
}

/// A list (or the favorites) as OPML, JSON or M3U: returned as text, or written to `path`.
public struct ListsExport: APIMethod {
    public static let method = "lists.export"
    public static let effect = MethodEffect(.reads)
    public static let aliases = ["list": "name", "file": "path"]
    /// The list (`list` is accepted for it too).
    public var name: String
    public var format: ListFormat
    /// A file to write (replaced if it exists; `file` is accepted for it too); without it the
    /// text is in the answer.
    public var path: String?
    public init(name: String, format: ListFormat, path: String? = nil) {
        self.name = name
        self.format = format
        self.path = path
    }

    private enum CodingKeys: String, CodingKey { case name, list, format, path, file }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard
            let name = try container.decodeIfPresent(String.self, forKey: .name)
                ?? container.decodeIfPresent(String.self, forKey: .list)
        else {
            throw DecodingError.keyNotFound(
                CodingKeys.name, .init(codingPath: decoder.codingPath, debugDescription: "name (or list) is required"))
        }
        self.name = name
        format = try container.decode(ListFormat.self, forKey: .format)
        path = try container.decodeIfPresent(String.self, forKey: .path) ?? container.decodeIfPresent(String.self, forKey: .file)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .name)
        try container.encode(format, forKey: .format)
        try container.encodeIfPresent(path, forKey: .path)
    }
    public struct Response: Codable, Sendable, Equatable {
        public var name: String
        public var format: ListFormat
        /// Entries written (OPML: what has a feed; M3U: what can be played).
        public var count: Int
        public var text: String?
        public var path: String?

        public init(name: String, format: ListFormat, count: Int, text: String? = nil, path: String? = nil) {
            self.name = name
            self.format = format
            self.count = count
            self.text = text
            self.path = path
        }
    }
}

/// Reads a list from OPML, mediahost's JSON or another app's subscriptions export (Google
/// Takeout, NewPipe, FreeTube; a file, or the text) into a list, made if it does not exist, or
/// into the favorites. Podcasts from OPML are kept by their feed URL (opened through the feed, no
/// directory needed), the exports' YouTube channels as `youtube:channel:<id>`; everything is
/// checked as untrusted input.
public struct ListsImport: APIMethod {
    public static let method = "lists.import"
    public static let effect = MethodEffect(.changes, idempotent: false, library: .lists, reachesOut: true)
    public static let aliases = ["list": "name", "file": "path"]

    /// The list to add to (default: the name in a JSON file, else the OPML's title, else
    /// "imported"; someone's "favorites" go to "received favorites"); "favorites" makes the items
    /// favorites.
    public var name: String?
    public var path: String?
    public var text: String?
    public var format: ListImportFormat?
    public init(name: String? = nil, path: String? = nil, text: String? = nil, format: ListImportFormat? = nil) {
        self.name = name
        self.path = path
        self.text = text
        self.format = format
    }

    private enum CodingKeys: String, CodingKey { case name, list, path, file, text, format }

    /// `list` and `file` are accepted for `name` and `path`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? container.decodeIfPresent(String.self, forKey: .list)
        path = try container.decodeIfPresent(String.self, forKey: .path) ?? container.decodeIfPresent(String.self, forKey: .file)
        text = try container.decodeIfPresent(String.self, forKey: .text)
        format = try container.decodeIfPresent(ListImportFormat.self, forKey: .format)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(path, forKey: .path)
        try container.encodeIfPresent(text, forKey: .text)
        try container.encodeIfPresent(format, forKey: .format)
    }
    public struct Response: Codable, Sendable, Equatable {
        public var name: String
        public var format: ListImportFormat
        /// New to the list.
        public var added: Int
        /// In the file and in the list already.
        public var present: Int
        /// Entries left out, and why.
        public var skipped: [String]

        public init(name: String, format: ListImportFormat, added: Int, present: Int, skipped: [String]) {
            self.name = name
            self.format = format
            self.added = added
            self.present = present
            self.skipped = skipped
        }
    }

    /// The list a file or offer of someone's favorites goes to when no list is named.
    public static let receivedFavorites = "received favorites"
}

/// The formats lists go out as (and come in as, among `ListImportFormat`'s): OPML 2.0 (podcast
/// subscriptions, as podcast apps exchange them), mediahost's own JSON (ids and snapshots of any
/// provider, exact round trip) and M3U (what a player plays: downloaded files, else stream URLs).
public enum ListFormat: String, Codable, Sendable, CaseIterable {
    case opml, json, m3u
}

/// What `lists.import` reads: OPML and mediahost's JSON, and the subscription exports people
/// bring from the apps they leave, whose YouTube channels become `youtube:channel:<id>`: Google
/// Takeout's (`takeout`: subscriptions.csv, or the older subscriptions.json; FreeTube's CSV is
/// the same table), NewPipe's subscriptions.json (`newpipe`) and FreeTube's `.db` (`freetube`).
/// Lists are written only as `ListFormat`s, so these are a type of their own. M3U is here to be
/// refused with why.
public enum ListImportFormat: String, Codable, Sendable, CaseIterable {
    case opml, json, m3u, takeout, newpipe, freetube
}

/// A named list as clients see it.
public struct ListInfo: Codable, Sendable, Equatable {
    public var name: String
    public var count: Int
    /// ISO 8601.
    public var created: String

    public init(name: String, count: Int, created: String) {
        self.name = name
        self.count = count
        self.created = created
    }
}
