import Basics
import MediaKit

/// Opens an item in the configured player: the downloaded file when there is one, else the
/// stream (the media URL, or the page URL for players that resolve it, like mpv with YouTube).
/// An item that is not media itself plays what a person means by it: a movie its first trailer,
/// a show its newest episode, a channel its newest video, a playlist its first. The player is
/// watched for a moment, so one that fails at once (a bad URL, no audio device) is an error.
///
/// With mpv as `player.command`, the host controls the playback (`player.*`): an item starts
/// where it was left, and while something plays a new item is queued unless `now` is set.
public struct PlayerOpen: APIMethod {
    public static let method = "player.open"
    public static let effect = MethodEffect(.changes, idempotent: false, reachesOut: true)
    public var id: ItemID
    /// Replace what plays instead of queueing after it (mpv only).
    public var now: Bool?
    /// Seconds to start at, instead of where it was left (mpv only; 0 starts over).
    public var start: Double?
    /// Start at this chapter (1 first, as `media.chapters` lists the table of contents).
    public var chapter: Int?
    /// Play just this soundbite (1 first, of the item's `namespace.soundbites`), from its start
    /// for its duration; where the episode was left stays as it was (mpv only).
    public var soundbite: Int?

    public init(id: ItemID, now: Bool? = nil, start: Double? = nil, chapter: Int? = nil, soundbite: Int? = nil) {
        self.id = id
        self.now = now
        self.start = start
        self.chapter = chapter
        self.soundbite = soundbite
    }

    public struct Response: Codable, Sendable, Equatable {
        public var id: ItemID
        /// The program and its arguments, as run.
        public var command: [String]
        /// The file or URL handed over.
        public var target: String
        /// Whether `target` is a downloaded file.
        public var local: Bool
        public var pid: Int
        /// The item played, when `id` stands for another (a movie's trailer, a show's episode).
        public var played: ItemID?
        /// What was chosen, in words ("the first trailer", "the newest episode").
        public var note: String?
        /// The title of what plays, when known: a person is told which episode, not its id.
        public var title: String?
        /// Queued after what plays, rather than started (mpv): put at the end of the queue.
        public var queued: Bool?
        /// How many items the queue holds, when it was queued.
        public var queueLength: Int?
        /// Where it starts, in seconds, when not at the beginning (mpv).
        public var resumedAt: Double?
        /// For a show, channel or playlist: how many more of it (not played yet, in its order)
        /// were queued after what plays (mpv).
        public var filled: Int?

        public init(
            id: ItemID, command: [String], target: String, local: Bool, pid: Int, played: ItemID? = nil, note: String? = nil,
            title: String? = nil, queued: Bool? = nil, queueLength: Int? = nil, resumedAt: Double? = nil, filled: Int? = nil
        ) {
            self.id = id
            self.command = command
            self.target = target
            self.local = local
            self.pid = pid
            self.played = played
            self.note = note
            self.title = title
            self.queued = queued
            self.queueLength = queueLength
            self.resumedAt = resumedAt
            self.filled = filled
        }
    }

}

/// What plays: the item, position, duration, pause, volume and the queue.
public struct PlayerStatusGet: APIMethod {
    public static let method = "player.status"
    public static let effect = MethodEffect(.reads)
    public typealias Response = PlayerStatus
    public init() {}
}

public struct PlayerPause: APIMethod {
    public static let method = "player.pause"
    public static let effect = MethodEffect(.changes)
    public typealias Response = PlayerStatus
    public init() {}
}

public struct PlayerResume: APIMethod {
    public static let method = "player.resume"
    public static let effect = MethodEffect(.changes)
    public typealias Response = PlayerStatus
    public init() {}
}

/// Seeks to `seconds` in, or by `seconds` (negative: back) when `relative`.
public struct PlayerSeek: APIMethod {
    public static let method = "player.seek"
    public static let effect = MethodEffect(.changes, idempotent: false)
    public typealias Response = PlayerStatus
    public var seconds: Double
    public var relative: Bool?

    public init(seconds: Double, relative: Bool? = nil) {
        self.seconds = seconds
        self.relative = relative
    }
}

/// Stops playing; the position and the queue are kept.
public struct PlayerStop: APIMethod {
    public static let method = "player.stop"
    public static let effect = MethodEffect(.changes)
    public typealias Response = PlayerStatus
    public init() {}
}

/// Goes back to the item played before what plays now, where it was left; what plays now goes
/// back to the front of the queue. With nothing played before, starts what plays over.
public struct PlayerPrevious: APIMethod {
    public static let method = "player.previous"
    public static let effect = MethodEffect(.changes, idempotent: false, library: .queue, reachesOut: true)
    public typealias Response = PlayerStatus
    public init() {}
}

/// Pauses what plays later, fading out over its last seconds: after `minutes`, at the end of
/// what plays (`at: end`), or at the end of its chapter (`at: chapter`); `off` cancels it. Every
/// front end sees it in `player.state`'s `sleep`. Kept by the process that plays (the service, or
/// a REPL or editor session), not by a one-shot call.
public struct PlayerSleep: APIMethod {
    public static let method = "player.sleep"
    public static let effect = MethodEffect(.changes)
    public typealias Response = PlayerStatus
    public var minutes: Double?
    /// `end` or `chapter`.
    public var at: String?
    public var off: Bool?

    public init(minutes: Double? = nil, at: String? = nil, off: Bool? = nil) {
        self.minutes = minutes
        self.at = at
        self.off = off
    }
}

/// Sets the volume, 0-100 (mpv allows up to 130).
public struct PlayerVolume: APIMethod {
    public static let method = "player.volume"
    public static let effect = MethodEffect(.changes)
    public typealias Response = PlayerStatus
    public var level: Double

    public init(level: Double) { self.level = level }
}

/// The speed of what plays (mpv keeps the pitch), 0.25 to 4; a show's `speed` rule sets it
/// again at its next episode when it differs.
public struct PlayerSpeed: APIMethod {
    public static let method = "player.speed"
    public static let effect = MethodEffect(.changes)
    public typealias Response = PlayerStatus
    public var rate: Double

    public init(rate: Double) { self.rate = rate }
}

/// Moves between the chapters of what plays: `next`, `previous`, or a chapter's number (1 first).
public struct PlayerChapter: APIMethod {
    public static let method = "player.chapter"
    public static let effect = MethodEffect(.changes, idempotent: false)
    public typealias Response = PlayerStatus
    /// `next`, `previous` (`prev`), or a number.
    public var to: String

    public init(to: String) { self.to = to }
}

/// Plays what is queued next (stops when nothing is); the skipped item keeps its position.
public struct PlayerNext: APIMethod {
    public static let method = "player.next"
    public static let effect = MethodEffect(.changes, idempotent: false)
    public typealias Response = PlayerStatus
    public init() {}
}

/// Marks items played or not played (not played forgets the position too).
public struct PlayerMark: APIMethod {
    public static let method = "player.mark"
    public static let effect = MethodEffect(.changes)
    public var ids: [ItemID]
    public var played: Bool
    /// With `played: false` and one id: where it was left, in seconds (a player of its own, as
    /// the web remote's "listen here", keeps its place in the library as mpv's does).
    public var position: Double?
    /// With `position`: how long it is, when known.
    public var duration: Double?

    public init(ids: [ItemID], played: Bool, position: Double? = nil, duration: Double? = nil) {
        self.ids = ids
        self.played = played
        self.position = position
        self.duration = duration
    }

    public struct Response: Codable, Sendable, Equatable {
        public var ids: [ItemID]
        public var played: Bool

        public init(ids: [ItemID], played: Bool) {
            self.ids = ids
            self.played = played
        }
    }
}

/// What plays, and where: `player.status`'s answer and the `player.state` notification
/// (registered by `PlayerModule`).
public struct PlayerStatus: HostNotification, Equatable {
    public static let method = "player.state"

    public enum State: String, Codable, Sendable, CaseIterable { case playing, paused, stopped }

    public struct Entry: Codable, Sendable, Equatable {
        /// Nil for a file mpv was playing that this host did not start.
        public var id: ItemID?
        public var title: String
        /// The file or URL handed to mpv.
        public var target: String
        public var local: Bool
        /// Only this stretch of it plays (a soundbite): where it was left stays as it was.
        public var clip: Clip?
        /// The episode's file as its feed gives it, when another of its formats plays
        /// (`player.format`): what sync servers know the episode by.
        public var source: String?

        public init(id: ItemID?, title: String, target: String, local: Bool, clip: Clip? = nil, source: String? = nil) {
            self.id = id
            self.title = title
            self.target = target
            self.local = local
            self.clip = clip
            self.source = source
        }
    }

    /// A stretch of an item, in seconds from its start.
    public struct Clip: Codable, Sendable, Equatable {
        public var start: Double
        public var end: Double

        public init(start: Double, end: Double) {
            self.start = start
            self.end = end
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
    /// How fast it plays (1: as recorded).
    public var speed: Double?
    /// What plays next, in order.
    public var queue: [Entry]
    /// The player under control ("mpv"), or absent when `player.command` is another player.
    public var player: String?
    /// The title of the chapter playing, when the item has chapters.
    public var chapter: String?
    /// What is wrong with the player: it does not answer (stopped or stuck; the rest is then the
    /// last known), or, in the one notification sent when it happens, it could not play the item.
    public var problem: String?
    /// The sleep timer, while one is set (`player.sleep`).
    public var sleep: Sleep?

    /// When playback pauses by itself.
    public struct Sleep: Codable, Sendable, Equatable {
        /// `time`, `end` or `chapter`.
        public var at: String
        /// For `time`: when (ISO 8601).
        public var deadline: String?
        /// For `end` and `chapter`: the position in what plays where it pauses, in seconds.
        public var position: Double?

        public init(at: String, deadline: String? = nil, position: Double? = nil) {
            self.at = at
            self.deadline = deadline
            self.position = position
        }
    }

    public init(
        state: State, item: Entry? = nil, position: Double? = nil, duration: Double? = nil, paused: Bool,
        volume: Double? = nil, speed: Double? = nil, queue: [Entry], player: String?, chapter: String? = nil,
        problem: String? = nil, sleep: Sleep? = nil
    ) {
        self.state = state
        self.item = item
        self.position = position
        self.duration = duration
        self.paused = paused
        self.volume = volume
        self.speed = speed
        self.queue = queue
        self.player = player
        self.chapter = chapter
        self.problem = problem
        self.sleep = sleep
    }

    /// Where the files and streams are may name a secret (a signed URL, a token in a query).
    public func redacted(by redactor: any Redacting) -> Self {
        var status = self
        status.item?.target = redactor.redact(item?.target ?? "")
        for index in status.queue.indices { status.queue[index].target = redactor.redact(queue[index].target) }
        return status
    }
}

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

extension PlayerStatus {
    /// Whether a `player.command` is mpv (which the host drives and follows; another player is
    /// only started).
    public static func isMPV(_ command: [String]) -> Bool {
        guard let program = command.first else { return false }
        return Path.name(of: program) == "mpv"
    }
}
