import MediaKit

/// A YouTube video's SponsorBlock segments, asked the privacy-preserving way: only the first
/// four hex digits of the video id's SHA-256 go to the server, which answers for every video
/// that shares them; this host picks its own. Each category's action comes from the settings
/// (`sponsorblock.skip`, `sponsorblock.mute`; everything else is marked).
public struct MediaSegments: APIMethod {
    public static let method = "media.segments"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public var id: ItemID

    public init(id: ItemID) { self.id = id }

    public struct Response: Codable, Sendable, Equatable {
        public var id: ItemID
        public var segments: [MediaSegment]
        /// The category the whole video is labelled with (SponsorBlock's `full`), if any.
        public var full: String?

        public init(id: ItemID, segments: [MediaSegment], full: String? = nil) {
            self.id = id
            self.segments = segments
            self.full = full
        }
    }

    public static let categories = [
        "sponsor", "selfpromo", "interaction", "intro", "outro", "preview", "music_offtopic", "filler", "poi_highlight",
        "exclusive_access",
    ]

}

/// A stretch of a video that people marked (SponsorBlock): a sponsor read, an intro, a
/// reminder to subscribe, and what this host does with it.
public struct MediaSegment: Codable, Sendable, Equatable {
    /// sponsor, selfpromo, interaction, intro, outro, preview, music_offtopic, filler,
    /// poi_highlight, exclusive_access.
    public var category: String
    /// skip, mute or mark (as the sponsorblock.* settings say for the category); `highlight`
    /// for the point to jump to, `full` for a label of the whole video.
    public var action: String
    public var start: Double
    public var end: Double
    public var uuid: String?

    public init(category: String, action: String, start: Double, end: Double, uuid: String? = nil) {
        self.category = category
        self.action = action
        self.start = start
        self.end = end
        self.uuid = uuid
    }
}
