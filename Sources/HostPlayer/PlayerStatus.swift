import MediaHost
import MediaKit

/// `player.skipped`: a segment of what plays was skipped or muted (SponsorBlock), once each time
/// the file plays; a person sees "skipped sponsor 0:45-1:30".
public struct PlayerSkip: HostNotification, Equatable {
    public static let method = "player.skipped"
    public var id: ItemID
    public var category: String
    /// skipped, muted.
    public var action: String
    public var start: Double
    public var end: Double

    public init(id: ItemID, category: String, action: String, start: Double, end: Double) {
        self.id = id
        self.category = category
        self.action = action
        self.start = start
        self.end = end
    }
}

/// What plays, and where: `player.status`'s answer and the `player.state` notification
/// (registered by `PlayerModule`).
public struct PlayerStatus: HostNotification, Equatable {
    public static let method = "player.state"

    public enum State: String, Codable, Sendable { case playing, paused, stopped }

    public struct Entry: Codable, Sendable, Equatable {
        /// Nil for a file mpv was playing that this host did not start.
        public var id: ItemID?
        public var title: String
        /// The file or URL handed to mpv.
        public var target: String
        public var local: Bool

        public init(id: ItemID?, title: String, target: String, local: Bool) {
            self.id = id
            self.title = title
            self.target = target
            self.local = local
        }
    }

    public var state: State
    /// What plays (or is paused); absent when stopped.
    public var item: Entry?
    /// Seconds in.
    public var position: Double?
    public var duration: Double?
    public var paused: Bool
    /// 0-100 (mpv goes to 130).
    public var volume: Double?
    /// What plays next, in order.
    public var queue: [Entry]
    /// The player under control ("mpv"), or absent when `player.command` is another player.
    public var player: String?
    /// The title of the chapter playing, when the item has chapters.
    public var chapter: String?
    /// What is wrong with the player: it does not answer (stopped or stuck; the rest is then the
    /// last known), or, in the one notification sent when it happens, it could not play the item.
    public var problem: String?

    public init(
        state: State, item: Entry? = nil, position: Double? = nil, duration: Double? = nil, paused: Bool,
        volume: Double? = nil, queue: [Entry], player: String?, chapter: String? = nil, problem: String? = nil
    ) {
        self.state = state
        self.item = item
        self.position = position
        self.duration = duration
        self.paused = paused
        self.volume = volume
        self.queue = queue
        self.player = player
        self.chapter = chapter
        self.problem = problem
    }

    /// Where the files and streams are may name a secret (a signed URL, a token in a query).
    public func redacted(by redactor: Redactor) -> Self {
        var status = self
        status.item?.target = redactor.redact(item?.target ?? "")
        for index in status.queue.indices { status.queue[index].target = redactor.redact(queue[index].target) }
        return status
    }
}
