import Foundation
import Sandbox

/// A deterministic catalogue of podcasts and episodes: the same seed gives the same shows.
struct PodcastCatalogue: Sendable {
    struct Genre: Sendable {
        var id: Int
        var name: String
        var subgenres: [(id: Int, name: String)]
    }

    struct Show: Sendable {
        var id: Int
        var title: String
        var author: String
        var genre: Genre
        var episodeCount: Int
        var summary: String
        /// Feeds come in RSS 2.0, Atom, and RSS declared as ISO-8859-1.
        var format: FeedFormat
        var releaseDate: Date
        /// Reachable by lookup only (not in search or charts): the benchmark show.
        var hidden = false
        /// Of `episodeCount`, how many were published on request (`POST /podcasts/_publish/<id>`):
        /// the newest, an hour apart after `releaseDate`. The others keep their dates.
        var published = 0
    }

    /// A show for benchmarks: episodes 1–20 are 50 MB, episode 21 is 1 GB.
    static let benchmarkShowID = 1_999_999_999
    /// A long-running show whose feed is about 60 MB (25,000 episodes with long notes), streamed
    /// as it is written: what 10-50 MB real feeds look like, and more.
    static let longShowID = 1_999_999_998
    /// A show whose episodes are WAV files of a tone (4 s, 2 min, 3 min) that real players play:
    /// the player's tests and demos (`open podcasts:podcast:1999999997`).
    static let radioShowID = 1_999_999_997
    static let radioDurations = [4, 120, 180]

    enum FeedFormat: Sendable { case rss, atom, latin1 }

    /// Apple's podcast genres (the top level, with some sub-genres), as the genres endpoint lists them.
    static let genres: [Genre] = [
        Genre(id: 1301, name: "Arts", subgenres: [(1306, "Food"), (1402, "Design"), (1482, "Books"), (1493, "Visual Arts")]),
        Genre(id: 1321, name: "Business", subgenres: [(1410, "Careers"), (1412, "Investing"), (1491, "Management")]),
        Genre(id: 1303, name: "Comedy", subgenres: [(1495, "Improv"), (1496, "Comedy Interviews"), (1497, "Stand-Up")]),
        Genre(id: 1304, name: "Education", subgenres: [(1498, "Language Learning"), (1499, "How To")]),
        Genre(id: 1483, name: "Fiction", subgenres: [(1484, "Drama"), (1486, "Science Fiction")]),
        Genre(id: 1511, name: "Government", subgenres: []),
        Genre(id: 1512, name: "Health & Fitness", subgenres: [(1513, "Alternative Health"), (1517, "Mental Health")]),
        Genre(id: 1487, name: "History", subgenres: []),
        Genre(id: 1305, name: "Kids & Family", subgenres: [(1521, "Parenting")]),
        Genre(id: 1502, name: "Leisure", subgenres: [(1503, "Automotive"), (1506, "Games")]),
        Genre(id: 1310, name: "Music", subgenres: [(1523, "Music Commentary"), (1525, "Music Interviews")]),
        Genre(id: 1489, name: "News", subgenres: [(1526, "Daily News"), (1528, "Tech News")]),
        Genre(id: 1314, name: "Religion & Spirituality", subgenres: [(1532, "Spirituality")]),
        Genre(id: 1533, name: "Science", subgenres: [(1534, "Natural Sciences"), (1538, "Mathematics")]),
        Genre(id: 1324, name: "Society & Culture", subgenres: [(1302, "Personal Journals"), (1320, "Places & Travel")]),
        Genre(id: 1545, name: "Sports", subgenres: [(1546, "Soccer"), (1549, "Running")]),
        Genre(id: 1318, name: "Technology", subgenres: []),
        Genre(id: 1488, name: "True Crime", subgenres: []),
        Genre(id: 1309, name: "TV & Film", subgenres: [(1561, "TV Reviews"), (1562, "Film History")]),
    ]

    static let adjectives = [
        "Curious", "Daily", "Weekly", "Late Night", "Honest", "Tiny", "Big", "Quiet", "Loud", "Swift", "Slow", "Deep",
        "Open", "Hidden", "Modern", "Ancient", "Electric", "Green", "Northern", "Friendly", "Brave", "Clever", "Wandering",
        "Café", "Über",
    ]
    static let nouns = [
        "Kitchen", "Code", "History", "Garden", "Orbit", "Notebook", "Frontier", "Library", "Workshop", "Studio",
        "Expedition", "Lab", "Hour", "Circle", "Signal", "Journal", "Voyage", "Table", "Engine", "Canvas",
    ]
    static let topics = [
        "swift concurrency", "sourdough", "black holes", "the Roman roads", "jazz standards", "marathon training",
        "startup finance", "tiny houses", "rust ownership", "urban birds", "film noir", "chess openings",
        "ocean currents", "medieval cooking", "type systems", "mountain weather", "vintage synths", "sleep science",
    ]
    static let hosts = [
        "Ada Park", "Ben Okafor", "Chloé Martin", "Dev Patel", "Eun-ji Kim", "Farah Haddad", "Gus Lindqvist", "Hana Sato",
    ]

    let shows: [Show]
    private let byID: [Int: Int]

    init(seed: UInt64 = 20_261_121, count: Int = 600) {
        var random = SplitMix64(seed: seed)
        var shows: [Show] = []
        for index in 0..<count {
            let genre = Self.genres[index % Self.genres.count]
            let adjective = Self.adjectives[Int(random.next() % UInt64(Self.adjectives.count))]
            let noun = Self.nouns[Int(random.next() % UInt64(Self.nouns.count))]
            let topic = Self.topics[Int(random.next() % UInt64(Self.topics.count))]
            let host = Self.hosts[index % Self.hosts.count]
            // Most shows are small; every 25th is long-running.
            let episodes = index % 25 == 0 ? 300 + Int(random.next() % 200) : 5 + Int(random.next() % 60)
            let format: FeedFormat = index % 15 == 7 ? .atom : index % 10 == 3 ? .latin1 : .rss
            shows.append(
                Show(
                    id: 1_000_000_000 + index * 7919, title: "The \(adjective) \(noun) \(index)", author: host,
                    genre: genre, episodeCount: episodes,
                    summary: "\(host) talks about \(topic) and \(genre.name.lowercased()) with curious guests.",
                    format: format, releaseDate: Date(timeIntervalSince1970: 1_760_000_000 - Double(index) * 3600)))
        }
        shows.append(
            Show(
                id: Self.benchmarkShowID, title: "Sandbox Benchmarks", author: "mediahost", genre: Self.genres[16],
                episodeCount: 21,
                summary: "Large files for download benchmarks.", format: .rss,
                releaseDate: Date(timeIntervalSince1970: 1_760_000_000),
                hidden: true))
        shows.append(
            Show(
                id: Self.longShowID, title: "The Long Runner", author: "mediahost", genre: Self.genres[16], episodeCount: 25_000,
                summary: "A show with a very long feed.", format: .rss, releaseDate: Date(timeIntervalSince1970: 1_760_000_000),
                hidden: true))
        shows.append(
            Show(
                id: Self.radioShowID, title: "Sandbox Radio", author: "mediahost", genre: Self.genres[16],
                episodeCount: Self.radioDurations.count, summary: "Short tones that real players play.", format: .rss,
                releaseDate: Date(timeIntervalSince1970: 1_760_000_000), hidden: true))
        self.shows = shows
        self.byID = Dictionary(uniqueKeysWithValues: shows.enumerated().map { ($1.id, $0) })
    }

    func show(_ id: Int) -> Show? { byID[id].map { shows[$0] } }

    /// Shows whose title, author or summary contain every word of `term`.
    func search(_ term: String) -> [Show] {
        let words = term.lowercased().split(separator: " ").map(String.init)
        guard !words.isEmpty else { return [] }
        return shows.filter { show in
            guard !show.hidden else { return false }
            let text = "\(show.title) \(show.author) \(show.summary)".lowercased()
            return words.allSatisfy { text.contains($0) }
        }
    }

    /// The chart of a genre (or all), most popular first: a stable shuffle.
    func top(genre: Int?) -> [Show] {
        let visible = shows.filter { !$0.hidden }
        let pool =
            genre.map { id in visible.filter { $0.genre.id == id || $0.genre.subgenres.contains { $0.id == id } } } ?? visible
        return pool.sorted { ($0.id &* 2_654_435_761) % 1_000_003 < ($1.id &* 2_654_435_761) % 1_000_003 }
    }

    /// Episode `n` (1 is the oldest) of a show.
    struct Episode {
        var number: Int
        var title: String
        var published: Date
        var duration: Int
        var size: Int
        var hasGUID: Bool
    }

    func episode(_ show: Show, _ number: Int) -> Episode {
        var random = SplitMix64(seed: UInt64(show.id) &* 31 &+ UInt64(number))
        // The catalogue's own episodes are dated back from the release date by their number from
        // the last of them; those published on request after it, an hour apart.
        let base = show.episodeCount - show.published
        func dated(_ spacing: Double) -> Date {
            number > base
                ? show.releaseDate.addingTimeInterval(Double(number - base) * 3600)
                : show.releaseDate.addingTimeInterval(-Double(base - number) * spacing)
        }
        let topic = Self.topics[Int(random.next() % UInt64(Self.topics.count))]
        if show.id == Self.benchmarkShowID {
            return Episode(
                number: number, title: number == 21 ? "One gigabyte" : "Fifty megabytes \(number)",
                published: dated(86_400), duration: 3600,
                size: number == 21 ? 1_000_000_000 : 50_000_000, hasGUID: true)
        }
        if show.id == Self.radioShowID {
            let seconds = Self.radioDurations[(number - 1) % Self.radioDurations.count]
            return Episode(
                number: number, title: "Tone \(number) (\(seconds) s)",
                published: dated(86_400),
                duration: seconds, size: 44 + seconds * 8000, hasGUID: true)
        }
        return Episode(
            number: number, title: "Episode \(number): \(topic.capitalized)",
            published: dated(7 * 86_400),
            duration: 600 + Int(random.next() % 5400), size: 1_000_000 + Int(random.next() % 24_000_000),
            hasGUID: number % 13 != 0)
    }
}
