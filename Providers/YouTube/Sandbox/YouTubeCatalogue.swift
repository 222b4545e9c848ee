import Foundation
import Sandbox

/// A deterministic YouTube: categories, channels with uploads playlists, and hundreds of videos
/// per category.
struct YouTubeCatalogue: Sendable {
    struct Category: Sendable { var id: String; var title: String; var assignable: Bool }
    struct Channel: Sendable {
        var id: String; var title: String; var uploads: String; var playlists: [String]; var subscribers: Int
    }
    struct Video: Sendable {
        var id: String
        var title: String
        var description: String
        var channel: Int
        var category: String
        var published: Date
        var duration: String
        var views: Int
        var likes: Int
        var comments: Int
        var hasMaxres: Bool

        /// A minute or less: a Short, linked as YouTube links them (`/shorts/<id>`) in feeds.
        var isShort: Bool {
            guard duration.hasPrefix("PT") else { return false }
            var total = 0
            var number = 0
            for character in duration.dropFirst(2) {
                if let digit = character.wholeNumberValue {
                    number = number * 10 + digit
                } else {
                    total += number * (character == "H" ? 3600 : character == "M" ? 60 : 1)
                    number = 0
                }
            }
            return total > 0 && total <= 60
        }
    }

    static let categories: [Category] = [
        .init(id: "1", title: "Film & Animation", assignable: true), .init(id: "2", title: "Autos & Vehicles", assignable: true),
        .init(id: "10", title: "Music", assignable: true), .init(id: "15", title: "Pets & Animals", assignable: true),
        .init(id: "17", title: "Sports", assignable: true), .init(id: "18", title: "Short Movies", assignable: false),
        .init(id: "19", title: "Travel & Events", assignable: true), .init(id: "20", title: "Gaming", assignable: true),
        .init(id: "21", title: "Videoblogging", assignable: false), .init(id: "22", title: "People & Blogs", assignable: true),
        .init(id: "23", title: "Comedy", assignable: true), .init(id: "24", title: "Entertainment", assignable: true),
        .init(id: "25", title: "News & Politics", assignable: true), .init(id: "26", title: "Howto & Style", assignable: true),
        .init(id: "27", title: "Education", assignable: true), .init(id: "28", title: "Science & Technology", assignable: true),
        .init(id: "30", title: "Movies", assignable: false), .init(id: "44", title: "Trailers", assignable: false),
    ]

    static let topics = [
        "swift concurrency", "guitar lesson", "sourdough bread", "rust ownership", "cat compilation", "chess endgame",
        "trail running", "synth jam", "space telescope", "woodworking", "street food", "retro games", "jazz piano",
        "bike repair", "origami", "black holes",
    ]
    static let channelNames = [
        "Swift Academy", "Sound Garden TV", "Kitchen Lab", "Code Chronicles", "Paws & Claws", "Endgame Studio",
        "Trail Tales", "Analog Dreams", "Cosmos Daily", "Sawdust Stories", "Night Market", "Pixel Museum",
    ]

    let videos: [Video]
    let channels: [Channel]
    private let videoIndex: [String: Int]

    static let videosPerCategory = 240

    init(seed: UInt64 = 20_261_121) {
        var random = SplitMix64(seed: seed)
        channels = Self.channelNames.enumerated().map { index, name in
            let suffix = Self.id(seed: UInt64(index) &+ 7_000, length: 22)
            return Channel(
                id: "UC" + suffix, title: name, uploads: "UU" + suffix,
                playlists: (0..<2).map { "PL" + Self.id(seed: UInt64(index * 10 + $0) &+ 9_000, length: 32) },
                subscribers: 1_000 + Int(random.next() % 5_000_000))
        }
        var videos: [Video] = []
        for category in Self.categories where category.assignable {
            for n in 0..<Self.videosPerCategory {
                let topic = Self.topics[Int(random.next() % UInt64(Self.topics.count))]
                let seconds = 30 + Int(random.next() % 7_200)
                let duration: String =
                    switch n % 4 {
                    case 0: "PT\(seconds / 60)M\(seconds % 60)S"
                    case 1: seconds >= 3600 ? "PT\(seconds / 3600)H\(seconds / 60 % 60)M\(seconds % 60)S" : "PT\(seconds / 60)M"
                    case 2: "PT\(seconds)S"
                    default: n % 40 == 3 ? "P0D" : "PT\(seconds / 3600)H\(seconds % 60)S"
                    }
                videos.append(
                    Video(
                        id: Self.id(seed: UInt64(videos.count) &+ 1, length: 11),
                        title: "\(topic.capitalized) #\(n) — \(category.title)",
                        description:
                            "A video about \(topic). Links: https://example.invalid/\(n) #\(topic.split(separator: " ")[0])",
                        channel: Int(random.next() % UInt64(Self.channelNames.count)), category: category.id,
                        published: Date(timeIntervalSince1970: 1_760_000_000 - Double(videos.count) * 3_600),
                        duration: duration, views: Int(random.next() % 10_000_000), likes: Int(random.next() % 100_000),
                        comments: Int(random.next() % 10_000), hasMaxres: n % 3 != 0))
            }
        }
        self.videos = videos
        videoIndex = Dictionary(uniqueKeysWithValues: videos.enumerated().map { ($1.id, $0) })
    }

    func video(_ id: String) -> Video? { videoIndex[id].map { videos[$0] } }
    func channel(_ id: String) -> Channel? { channels.first { $0.id == id } }
    func channel(uploads: String) -> Channel? { channels.first { $0.uploads == uploads } }
    /// The channel a playlist (its uploads or one of its curated lists) belongs to.
    func channel(ofPlaylist id: String) -> Channel? { channels.first { $0.uploads == id || $0.playlists.contains(id) } }

    /// Videos of a playlist: a channel's uploads (newest first), or a curated half of them.
    func playlist(_ id: String) -> [Video]? {
        if let channel = channels.firstIndex(where: { $0.uploads == id }) {
            return videos.filter { $0.channel == channel }
        }
        for (index, channel) in channels.enumerated() {
            if let which = channel.playlists.firstIndex(of: id) {
                return videos.enumerated().filter { $0.element.channel == index && $0.offset % 2 == which }.map(\.element).prefix(
                    60
                ).map { $0 }
            }
        }
        return nil
    }

    /// YouTube-like ids from a seed: letters, digits, '-' and '_'.
    static func id(seed: UInt64, length: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var random = SplitMix64(seed: seed &* 0x5851_F42D_4C95_7F2D)
        return String((0..<length).map { _ in alphabet[Int(random.next() % 64)] })
    }
}

/// Ids of videos the YouTube replica serves, for other replicas to link to (TMDB trailers).
public enum YouTubeSandboxVideos {
    public static let ids: [String] = YouTubeCatalogue().videos.prefix(500).map(\.id)
}
