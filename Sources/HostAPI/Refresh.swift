import JSONRPC
import MediaKit

/// Reads every followed show and channel again (the service does it every
/// `refresh.interval_minutes`; `mediahost refresh` once, for cron): conditional requests, a few at
/// a time per host; what arrived goes into the inbox (`new.list`), then each show's rules download
/// and tidy. A show that fails keeps its episodes and is reported with why. One refresh runs at a
/// time on a data dir (a second, from the service or cron, is refused while it runs).
public struct RefreshRun: APIMethod {
    public static let method = "refresh.run"
    public static let effect = MethodEffect(.removes, library: .new, reachesOut: true)
    /// A refresh of many feeds takes as long as it takes (each request has its own timeout).
    public static let hasDeadline = false
    /// Only this followed show or channel.
    public var show: ItemID?
    /// Only this provider's.
    public var provider: String?
    /// Read the feeds and say what would arrive, be downloaded and be deleted, and why, keeping
    /// nothing and changing nothing.
    public var dryRun: Bool?

    public init(show: ItemID? = nil, provider: String? = nil, dryRun: Bool? = nil) {
        self.show = show
        self.provider = provider
        self.dryRun = dryRun
    }

    public struct Response: Codable, Sendable, Equatable {
        /// How many followed shows and channels were read.
        public var shows: Int
        /// What arrived (or would), newest first; each names its show in `subtitle`.
        public var arrived: [MediaItem]
        /// The shows that could not be read, each with why (their episodes are kept).
        public var failed: [Failure]
        /// Downloads the rules started (or would).
        public var downloads: [Action]
        /// Downloaded files the rules deleted (or would).
        public var deletions: [Action]
        /// What arrived of a show that downloads by its rules but was not downloaded, and why
        /// (its filters, beyond the newest N).
        public var skipped: [Action]?
        /// True when nothing was kept or changed.
        public var dryRun: Bool?
        /// How long it took.
        public var seconds: Double

        public init(
            shows: Int, arrived: [MediaItem], failed: [Failure], downloads: [Action], deletions: [Action],
            skipped: [Action]? = nil, dryRun: Bool? = nil, seconds: Double
        ) {
            self.shows = shows
            self.arrived = arrived
            self.failed = failed
            self.downloads = downloads
            self.deletions = deletions
            self.skipped = skipped
            self.dryRun = dryRun
            self.seconds = seconds
        }
    }

    public struct Failure: Codable, Sendable, Equatable {
        public var id: ItemID
        public var title: String
        public var code: Int
        public var message: String
        /// When it began failing (ISO 8601), when it failed before too.
        public var since: String?

        public init(id: ItemID, title: String, code: Int, message: String, since: String? = nil) {
            self.id = id
            self.title = title
            self.code = code
            self.message = message
            self.since = since
        }
    }

    /// A download a rule started or a file it deleted, and why.
    public struct Action: Codable, Sendable, Equatable {
        public var id: ItemID
        public var title: String
        /// The show's title.
        public var show: String?
        /// The rule, as a person reads it ("newest 2 of each new", "played 30 days ago").
        public var reason: String
        /// The file deleted.
        public var path: String?
        public var bytes: Int64?

        public init(id: ItemID, title: String, show: String? = nil, reason: String, path: String? = nil, bytes: Int64? = nil) {
            self.id = id
            self.title = title
            self.show = show
            self.reason = reason
            self.path = path
            self.bytes = bytes
        }
    }
}

/// What arrived from followed shows since it was last looked at (the inbox), newest first; listed
/// items are marked seen unless `keep` is true.
public struct NewList: APIMethod {
    public static let method = "new.list"
    public static let effect = MethodEffect(.changes, library: .new)
    /// Items at most, 1 to 500; 100 when omitted.
    public var limit: Int?
    /// Leave what is listed in the inbox.
    public var keep: Bool?

    public init(limit: Int? = nil, keep: Bool? = nil) {
        self.limit = limit
        self.keep = keep
    }

    public struct Response: Codable, Sendable, Equatable {
        public var items: [MediaItem]
        /// How many the inbox held before this listing.
        public var total: Int
        /// When the followed shows were last refreshed (ISO 8601), if ever.
        public var refreshed: String?

        public init(items: [MediaItem], total: Int, refreshed: String? = nil) {
            self.items = items
            self.total = total
            self.refreshed = refreshed
        }
    }
}

/// Takes items out of the inbox (or all of it) without listing them.
public struct NewSeen: APIMethod {
    public static let method = "new.seen"
    public static let effect = MethodEffect(.changes, library: .new)
    public var ids: [ItemID]?
    /// Every item in the inbox.
    public var all: Bool?

    public init(ids: [ItemID]? = nil, all: Bool? = nil) {
        self.ids = ids
        self.all = all
    }

    public struct Response: Codable, Sendable, Equatable {
        /// How many were in the inbox.
        public var marked: Int
        /// How many it holds now.
        public var left: Int

        public init(marked: Int, left: Int) {
            self.marked = marked
            self.left = left
        }
    }
}
