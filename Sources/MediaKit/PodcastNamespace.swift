import FoundationEssentials

/// What a feed says in the Podcasting 2.0 namespace (podcastindex.org/namespace/1.0) beyond
/// chapters and transcripts, on a show (`guid`, `funding`, `podroll`, `trailers`, `locked`…) or
/// an episode (`soundbites`, `alternateEnclosures`, `live`…); `people`, `images`, `license`,
/// `location` and `value` on either. Each element read alone: a malformed one is left out and
/// costs nothing else.
public struct PodcastNamespace: Codable, Sendable, Equatable {
    /// `<podcast:guid>`: the show's stable id (a UUIDv5 of its feed URL, or the publisher's),
    /// the same across changes of its address.
    public var guid: String?
    /// `<podcast:person>`: hosts, guests and crew.
    public var people: [Person]?
    /// `<podcast:season name>`: the season's name (its number is the episode's `season`).
    public var seasonName: String?
    /// `<podcast:episode display>`: how the episode is named instead of its number ("Bonus").
    public var episodeDisplay: String?
    /// `<podcast:funding>`: where to support the show.
    public var funding: [Link]?
    /// `<podcast:podroll>`'s `<podcast:remoteItem>`s: shows the show recommends.
    public var podroll: [RemoteItem]?
    /// `<podcast:soundbite>`: clips of the episode worth hearing alone.
    public var soundbites: [Soundbite]?
    /// `<podcast:liveItem>`: a live stream, pending, live or ended.
    public var live: Live?
    /// `<podcast:trailer>`: the show's trailers.
    public var trailers: [Trailer]?
    /// `<podcast:alternateEnclosure>`: other files of the episode (another type, bitrate, language).
    public var alternateEnclosures: [AlternateEnclosure]?
    /// `<podcast:images srcset>`: the artwork in several sizes.
    public var images: [Image]?
    /// `<podcast:locked>`: whether the show may be imported elsewhere, and its owner's address.
    public var locked: Locked?
    /// `<podcast:license>`: its name (an SPDX id or a name) and a link to its text.
    public var license: Link?
    /// `<podcast:location>`: what the show or episode is about or where it was made.
    public var location: Location?
    /// `<podcast:value>`: the payments it asks for (said, never made).
    public var value: Value?

    public init() {}

    public var isEmpty: Bool { self == PodcastNamespace() }

    public struct Person: Codable, Sendable, Equatable {
        public var name: String
        /// host, guest, producer… (the namespace's taxonomy; "host" when not said).
        public var role: String
        /// cast, writing, audio post-production… ("cast" when not said).
        public var group: String
        public var image: String?
        public var link: String?

        public init(name: String, role: String = "host", group: String = "cast", image: String? = nil, link: String? = nil) {
            self.name = name
            self.role = role
            self.group = group
            self.image = image
            self.link = link
        }
    }

    public struct Link: Codable, Sendable, Equatable {
        public var text: String
        public var url: String?

        public init(text: String, url: String? = nil) {
            self.text = text
            self.url = url
        }
    }

    public struct RemoteItem: Codable, Sendable, Equatable {
        /// The recommended show's `podcast:guid`.
        public var feedGuid: String
        public var feedURL: String?
        public var itemGuid: String?
        public var medium: String?
        public var title: String?

        public init(
            feedGuid: String, feedURL: String? = nil, itemGuid: String? = nil, medium: String? = nil, title: String? = nil
        ) {
            self.feedGuid = feedGuid
            self.feedURL = feedURL
            self.itemGuid = itemGuid
            self.medium = medium
            self.title = title
        }
    }

    public struct Soundbite: Codable, Sendable, Equatable {
        public var start: Double
        public var duration: Double
        public var title: String?

        public init(start: Double, duration: Double, title: String? = nil) {
            self.start = start
            self.duration = duration
            self.title = title
        }
    }

    public struct Live: Codable, Sendable, Equatable {
        /// pending, live or ended.
        public var status: String
        /// ISO 8601, as the feed gives them (normalised to UTC).
        public var start: String?
        public var end: String?

        public init(status: String, start: String? = nil, end: String? = nil) {
            self.status = status
            self.start = start
            self.end = end
        }
    }

    public struct Trailer: Codable, Sendable, Equatable {
        public var title: String
        public var url: String
        public var published: String?
        public var type: String?
        public var length: Int64?
        public var season: Int?

        public init(
            title: String, url: String, published: String? = nil, type: String? = nil, length: Int64? = nil, season: Int? = nil
        ) {
            self.title = title
            self.url = url
            self.published = published
            self.type = type
            self.length = length
            self.season = season
        }
    }

    public struct AlternateEnclosure: Codable, Sendable, Equatable {
        public var type: String
        /// Its sources, the first preferred (http(s); ipfs: and others are kept as said).
        public var sources: [String]
        public var length: Int64?
        /// Bits per second.
        public var bitrate: Double?
        public var height: Int?
        public var language: String?
        public var title: String?
        public var rel: String?
        /// The feed's `default="true"`: the same file as the enclosure.
        public var isDefault: Bool

        public init(
            type: String, sources: [String], length: Int64? = nil, bitrate: Double? = nil, height: Int? = nil,
            language: String? = nil, title: String? = nil, rel: String? = nil, isDefault: Bool = false
        ) {
            self.type = type
            self.sources = sources
            self.length = length
            self.bitrate = bitrate
            self.height = height
            self.language = language
            self.title = title
            self.rel = rel
            self.isDefault = isDefault
        }
    }

    public struct Image: Codable, Sendable, Equatable {
        public var url: String
        /// Pixels wide, when the srcset says (`1500w`).
        public var width: Int?

        public init(url: String, width: Int? = nil) {
            self.url = url
            self.width = width
        }
    }

    public struct Locked: Codable, Sendable, Equatable {
        public var locked: Bool
        public var owner: String?

        public init(locked: Bool, owner: String? = nil) {
            self.locked = locked
            self.owner = owner
        }
    }

    public struct Location: Codable, Sendable, Equatable {
        public var name: String
        /// `geo:37.786971,-122.399677`.
        public var geo: String?
        /// OpenStreetMap's `R113314`.
        public var osm: String?

        public init(name: String, geo: String? = nil, osm: String? = nil) {
            self.name = name
            self.geo = geo
            self.osm = osm
        }
    }

    public struct Value: Codable, Sendable, Equatable {
        /// lightning, …
        public var type: String
        /// keysend, …
        public var method: String
        public var suggested: String?
        public var recipients: [Recipient]

        public init(type: String, method: String, suggested: String? = nil, recipients: [Recipient] = []) {
            self.type = type
            self.method = method
            self.suggested = suggested
            self.recipients = recipients
        }

        public struct Recipient: Codable, Sendable, Equatable {
            public var name: String?
            public var type: String
            public var address: String
            /// Its share of each payment.
            public var split: Int

            public init(name: String? = nil, type: String, address: String, split: Int) {
                self.name = name
                self.type = type
                self.address = address
                self.split = split
            }
        }
    }

    /// The image best for drawing `width` pixels wide (`podcast:images`' srcset): the smallest at
    /// least that wide, else the largest.
    public func image(forWidth width: Int) -> String? {
        guard let images, !images.isEmpty else { return nil }
        let sized = images.filter { $0.width != nil }.sorted { ($0.width ?? 0) < ($1.width ?? 0) }
        if let fit = sized.first(where: { ($0.width ?? 0) >= width }) { return fit.url }
        return sized.last?.url ?? images.first?.url
    }

    /// The picture to fetch for `width` pixels: a size of the feed's at least that wide, else
    /// `artwork` (the item's own picture, usually the largest), else the widest size.
    public func artwork(forWidth width: Int, else artwork: String?) -> String? {
        let fits = (images ?? []).contains { ($0.width ?? 0) >= width }
        return fits ? image(forWidth: width) : artwork ?? image(forWidth: width)
    }
}

extension PodcastNamespace {
    /// The file an episode offered in several formats plays, when another than the feed's own
    /// `enclosure` fits better: of `kind`'s type ("audio" or "video"), the highest bitrate up to
    /// `maxBitrate` (bits per second; nil: no limit), else the lowest of that type. Nil when the
    /// feed's own file fits (it is of that kind and no limit is asked), or no other of the kind
    /// is offered: the feed's file plays. Only http(s) sources are taken.
    public func alternate(kind: String, maxBitrate: Double?, enclosure: Enclosure?) -> AlternateEnclosure? {
        let prefix = kind + "/"
        let offered = (alternateEnclosures ?? []).compactMap { alternate -> AlternateEnclosure? in
            guard alternate.type.lowercased().hasPrefix(prefix) else { return nil }
            var web = alternate
            web.sources = alternate.sources.filter { $0.hasPrefix("https://") || $0.hasPrefix("http://") }
            return web.sources.isEmpty ? nil : web
        }
        let feedFits = enclosure?.type?.lowercased().hasPrefix(prefix) ?? false
        guard !offered.isEmpty, !(feedFits && maxBitrate == nil) else { return nil }
        let rated = offered.filter { ($0.bitrate ?? 0) > 0 }
        guard let maxBitrate else {
            return rated.max { ($0.bitrate ?? 0) < ($1.bitrate ?? 0) } ?? offered.first
        }
        if let fitting = rated.filter({ ($0.bitrate ?? 0) <= maxBitrate }).max(by: { ($0.bitrate ?? 0) < ($1.bitrate ?? 0) }) {
            return fitting
        }
        if let lowest = rated.min(by: { ($0.bitrate ?? 0) < ($1.bitrate ?? 0) }) {
            // None fits: the lowest is the nearest to what was asked.
            return lowest
        }
        return feedFits ? nil : offered.first
    }
}
