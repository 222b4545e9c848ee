import Basics
import FoundationEssentials

/// How items are known to a podcast sync server (gpodder.net's API, Nextcloud's gpoddersync):
/// a followed show by its feed's URL, an episode by its media file's URL (and its guid), the way
/// AntennaPod, gPodder and Kasts name them. A YouTube channel is followed by its RSS feed, which
/// gPodder subscribes to as any podcast; its videos by their watch URLs, as gPodder names them.
public enum SyncKeys {
    static let youTubeFeedPrefix = "https://www.youtube.com/feeds/videos.xml?channel_id="

    /// The URL a followed item is subscribed by, or nil for what a sync server cannot follow
    /// (a movie, a post).
    public static func subscriptionURL(of item: MediaItem) -> String? {
        switch item.kind {
        case .podcast: return item.feed.flatMap { ItemID.isFeedURL($0) ? $0 : nil }
        case .channel where item.provider == "youtube": return youTubeFeedPrefix + item.id.nativeID
        default: return nil
        }
    }

    /// What a subscription URL from the server is followed as here: a YouTube channel for a
    /// channel's feed, else a podcast known by its feed. Nil for what is no feed (other
    /// schemes, garbage).
    public static func followedID(forSubscription url: String) -> ItemID? {
        if url.hasPrefix(youTubeFeedPrefix) {
            let channel = String(url.dropFirst(youTubeFeedPrefix.count))
            guard !channel.isEmpty, channel.utf8.count <= 64,
                channel.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") })
            else { return nil }
            return ItemID(provider: "youtube", kind: .channel, nativeID: channel)
        }
        return ItemID.feed(url, provider: "podcasts")
    }

    /// The episode's URL to a sync server: a podcast episode's media file, a YouTube video's
    /// watch URL.
    public static func episodeURL(of item: MediaItem) -> String? {
        switch item.kind {
        case .episode: return item.enclosure?.url
        case .video: return episodeURL(of: item.id)
        default: return nil
        }
    }

    /// The episode URL of an item known by its id alone (a YouTube video's watch URL), whatever
    /// URL plays it; nil for others.
    public static func episodeURL(of id: ItemID) -> String? {
        id.kind == .video && id.provider == "youtube" ? "https://www.youtube.com/watch?v=" + id.nativeID : nil
    }

    /// Whether the item can be an episode to a sync server (a podcast episode, a YouTube
    /// video): what else plays (a movie's trailer, a post's video) is not queued for it.
    public static func mayHaveEpisodeURL(_ id: ItemID) -> Bool {
        id.kind == .episode || (id.kind == .video && id.provider == "youtube")
    }

    /// The show an episode belongs to, by its feed (a sync server needs it with every action);
    /// a YouTube video's channel by the channel's feed.
    public static func podcastURL(of item: MediaItem) -> String? {
        if item.provider == "youtube", item.kind == .video {
            guard let channel = item.extra?["channel"], let id = try? ItemID(parsing: channel), id.kind == .channel else {
                return nil
            }
            return youTubeFeedPrefix + id.nativeID
        }
        return item.feed.flatMap { ItemID.isFeedURL($0) ? $0 : nil }
    }

    /// The episode's guid, when its feed gives one.
    public static func guid(of item: MediaItem) -> String? { item.extra?["guid"] }

    /// Whether two addresses name the same feed, as publishers write them: http or https, the
    /// host in any case, with or without a slash at the end.
    public static func sameFeed(_ one: String, _ other: String) -> Bool {
        func key(_ url: String) -> String {
            var text = Substring(url.trimming(.whitespacesAndNewlines))
            if let scheme = text.firstRange(of: "://") { text = text[scheme.upperBound...] }
            let hostEnd = text.firstIndex(of: "/") ?? text.endIndex
            var key = text[..<hostEnd].lowercased() + text[hostEnd...]
            while key.hasSuffix("/") { key.removeLast() }
            return key
        }
        return key(one) == key(other)
    }
}

extension UInt8 {
    var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }

}
