import MediaKit

/// An item's chapters, from the best source there is: the service's (a podcast's chapters file
/// or its feed's Podlove chapters, a video's chapters), else the downloaded file's ID3 chapters,
/// else timestamps in its description. What could not be used is said in `notes`.
public struct MediaChapters: APIMethod {
    public static let method = "media.chapters"
    public static let effect = MethodEffect(.reads, reachesOut: true)
    public var id: ItemID

    public init(id: ItemID) { self.id = id }

    public struct Response: Codable, Sendable, Equatable {
        public var id: ItemID
        /// `podcast:chapters`, `psc`, `id3`, `service` or `description`; absent when there are none.
        public var source: String?
        /// In time order; `toc: false` ones (a picture change) are not seek targets.
        public var chapters: [Chapter]
        /// What was not usable, one sentence each.
        public var notes: [String]?

        /// The chapters a person moves between (the table of contents).
        public var contents: [Chapter] { chapters.filter(\.toc) }

        public init(id: ItemID, source: String? = nil, chapters: [Chapter], notes: [String]? = nil) {
            self.id = id
            self.source = source
            self.chapters = chapters
            self.notes = notes
        }
    }

}
