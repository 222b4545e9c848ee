import JSONRPC
import MediaKit

/// The queue ("up next"), in order: what plays after what plays now. Kept in the store, so it is
/// one queue for every front end and outlives the player, the service and a reboot.
public struct QueueList: APIMethod {
    public static let method = "queue.list"
    public static let effect = MethodEffect(.reads)
    public typealias Response = Page
    /// Items per page, 1 to 500; 50 when omitted.
    public var limit: Int?
    /// The `next` of an earlier page.
    public var cursor: Cursor?

    public init(limit: Int? = nil, cursor: Cursor? = nil) {
        self.limit = limit
        self.cursor = cursor
    }
}

/// Queues items, in the order given (or a list's, in its order): at the end, or first (`next`).
/// An item queued already moves there (an item is in the queue once).
public struct QueueAdd: APIMethod {
    public static let method = "queue.add"
    public static let effect = MethodEffect(.changes, library: .queue, reachesOut: true)
    public var ids: [ItemID]?
    /// Instead of `ids`: every item of this list (`favorites` too), in the list's order.
    public var list: String?
    /// First in the queue (it plays when what plays now ends) instead of last.
    public var next: Bool?

    public init(ids: [ItemID]? = nil, list: String? = nil, next: Bool? = nil) {
        self.ids = ids
        self.list = list
        self.next = next
    }

    public struct Response: Codable, Sendable, Equatable {
        /// The items queued, as they are kept.
        public var added: [MediaItem]
        /// How many items the queue holds now.
        public var count: Int

        public init(added: [MediaItem], count: Int) {
            self.added = added
            self.count = count
        }
    }
}

/// Moves the item at `from` to `to` (positions count from 1, as `queue.list` shows them; past
/// the end: last).
public struct QueueMove: APIMethod {
    public static let method = "queue.move"
    public static let effect = MethodEffect(.changes, idempotent: false, library: .queue)
    public var from: Int
    public var to: Int

    public init(from: Int, to: Int) {
        self.from = from
        self.to = to
    }

    public struct Response: Codable, Sendable, Equatable {
        public var count: Int

        public init(count: Int) { self.count = count }
    }
}

/// Takes items out of the queue (their downloads and positions stay).
public struct QueueRemove: APIMethod {
    public static let method = "queue.remove"
    public static let effect = MethodEffect(.removes, library: .queue)
    public var ids: [ItemID]

    public init(ids: [ItemID]) { self.ids = ids }

    public struct Response: Codable, Sendable, Equatable {
        /// How many of them were queued.
        public var removed: Int
        public var count: Int

        public init(removed: Int, count: Int) {
            self.removed = removed
            self.count = count
        }
    }
}

/// Empties the queue.
public struct QueueClear: APIMethod {
    public static let method = "queue.clear"
    public static let effect = MethodEffect(.removes, library: .queue)

    public init() {}

    public struct Response: Codable, Sendable, Equatable {
        public var removed: Int

        public init(removed: Int) { self.removed = removed }
    }
}
