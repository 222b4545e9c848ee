import JSONRPC
import MediaKit

/// An item's transcript: the one kept from before, else the service's (an episode's
/// `<podcast:transcript>` in the person's language when it has several, JSON, WebVTT, SRT or
/// HTML preferred in that order), read and kept for `transcripts.search`.
public struct MediaTranscript: APIMethod {
    public static let method = "media.transcript"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public var id: ItemID
    /// Fetch it again even when one is kept.
    public var refresh: Bool?

    public init(id: ItemID, refresh: Bool? = nil) {
        self.id = id
        self.refresh = refresh
    }

    public struct Response: Codable, Sendable, Equatable {
        public var id: ItemID
        /// vtt, srt, json, html or text.
        public var format: String
        /// Whether the lines have times (plain text has none).
        public var timed: Bool
        public var cues: [TranscriptCue]
        public var notes: [String]?
        /// Served from what was kept, without a transfer.
        public var cached: Bool

        public init(id: ItemID, format: String, timed: Bool, cues: [TranscriptCue], notes: [String]? = nil, cached: Bool) {
            self.id = id
            self.format = format
            self.timed = timed
            self.cues = cues
            self.notes = notes
            self.cached = cached
        }
    }
}

/// Finds words in every transcript fetched so far, across providers, best first: each hit with
/// its item, where in it (seconds), and the words around.
public struct TranscriptsSearch: APIMethod {
    public static let method = "transcripts.search"
    public static let effect = MethodEffect(.reads)
    public var text: String
    public var limit: Int?

    public init(text: String, limit: Int? = nil) {
        self.text = text
        self.limit = limit
    }

    public struct Response: Codable, Sendable, Equatable {
        public var hits: [TranscriptHit]
        /// How many transcripts were searched.
        public var transcripts: Int

        public init(hits: [TranscriptHit], transcripts: Int) {
            self.hits = hits
            self.transcripts = transcripts
        }
    }
}

/// A passage of a transcript a search found.
public struct TranscriptHit: Codable, Sendable, Equatable {
    public var id: ItemID
    public var title: String
    /// The show or channel.
    public var show: String?
    /// Seconds in, where the passage starts.
    public var start: Double
    public var speaker: String?
    /// The words around the match, the matched words in [brackets].
    public var text: String
    /// Higher is better (SQLite's bm25, negated).
    public var score: Double

    public init(
        id: ItemID, title: String, show: String? = nil, start: Double, speaker: String? = nil, text: String, score: Double
    ) {
        self.id = id
        self.title = title
        self.show = show
        self.start = start
        self.speaker = speaker
        self.text = text
        self.score = score
    }
}
