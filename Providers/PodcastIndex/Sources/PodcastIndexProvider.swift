import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// The Podcast Index (api.podcastindex.org, API 1.0): search by term, by title and by person,
/// trending shows and recent episodes, a show's episodes, a show by feed URL or podcast:guid.
/// A show found here is the podcasts provider's show of its own feed (`podcasts:podcast:feed-…`),
/// so following it, syncing it and downloading from it work as for any show; so are episodes
/// whose feed is known.
public struct PodcastIndexProvider: CompiledProvider {
    public static let descriptor = ProviderDescriptor(
        id: "podcastindex", name: "Podcast Index", kinds: [.podcast, .episode],
        capabilities: [.categories, .browse, .search, .item, .children],
        configKeys: [
            .init(
                name: "api_key", summary: "API key (free at https://api.podcastindex.org/)", environment: ["PODCASTINDEX_API_KEY"]
            ),
            .init(
                name: "api_secret", summary: "API secret, sent only as the SHA-1 of key, secret and time", secret: true,
                environment: ["PODCASTINDEX_API_SECRET"]),
            .init(name: "base_url", summary: "The API's base URL", defaultValue: "https://api.podcastindex.org/api/1.0"),
        ],
        notes:
            "Needs a free key and secret from https://api.podcastindex.org/ (PODCASTINDEX_API_KEY, PODCASTINDEX_API_SECRET); `search podcastindex person:NAME` finds a guest's episodes across shows.",
        requiredAnyOf: [["api_key"]])

    static let missingKey =
        "the Podcast Index needs a key: get one free at https://api.podcastindex.org/, then set PODCASTINDEX_API_KEY and PODCASTINDEX_API_SECRET (or `config providers.podcastindex.api_key …` and `api_secret`)"

    let base: URL
    let key: String?
    let secret: String?
    let http: any HTTPClient
    /// The clock the request time is read from (tests set it).
    var now: @Sendable () -> Date = { Date() }

    public init(context: ProviderContext) throws {
        let config = context.config.declared(by: Self.descriptor)
        base = try config.url("base_url")
        key = config["api_key"]
        secret = config["api_secret"]
        http = context.http
    }

    // MARK: Categories and browsing

    public func categories() async throws -> [MediaCategory] {
        [MediaCategory(id: "trending", name: "Trending shows"), MediaCategory(id: "recent", name: "Recent episodes")]
    }

    public func browse(category: String, cursor: Cursor?) async throws -> Page {
        switch category.lowercased() {
        case "trending", "trending shows":
            return Page(items: Self.shows(try await get("podcasts/trending", ["max": "40"]).feeds ?? []))
        case "recent", "recent episodes":
            return Page(items: Self.episodes(try await get("recent/episodes", ["max": "40"]).items ?? []))
        default:
            throw ProviderError.notFound("the Podcast Index has trending and recent; `categories podcastindex` lists them")
        }
    }

    /// A term (`q`), or `title:` a show's title, or `person:` a person's episodes across shows
    /// (also what an episode search is).
    public func search(_ query: SearchQuery) async throws -> Page {
        var text = query.text.trimming(.whitespaces)
        let lower = text.lowercased()
        if lower.hasPrefix("person:") || query.kind == .episode {
            if lower.hasPrefix("person:") { text = String(text.dropFirst("person:".count)).trimming(.whitespaces) }
            guard !text.isEmpty else { throw ProviderError.invalidArgument("whose episodes? `search podcastindex person:NAME`") }
            let episodes = Self.episodes(try await get("search/byperson", ["q": text, "max": "40"]).items ?? [])
            guard query.kind == .podcast else { return Page(items: episodes) }
            // `--kind podcast`: the shows the person is heard on, each once, in the order found.
            var seen = Set<ItemID>()
            let shows = episodes.compactMap { episode -> MediaItem? in
                guard let feed = episode.feed, let id = ItemID.feed(feed, provider: "podcasts"), seen.insert(id).inserted else {
                    return nil
                }
                var show = MediaItem(id: id, title: episode.subtitle ?? feed, artwork: episode.artwork, creator: episode.creator)
                show.feed = feed
                return show
            }
            return Page(items: shows)
        }
        if lower.hasPrefix("title:") {
            text = String(text.dropFirst("title:".count)).trimming(.whitespaces)
            return Page(items: Self.shows(try await get("search/bytitle", ["q": text, "max": "40"]).feeds ?? []))
        }
        guard !text.isEmpty else { throw ProviderError.invalidArgument("search for what?") }
        return Page(items: Self.shows(try await get("search/byterm", ["q": text, "max": "40"]).feeds ?? []))
    }

    /// `podcastindex:podcast:<feed id>` (its show on its feed) or `podcastindex:episode:<id>`.
    public func item(_ id: ItemID) async throws -> MediaItem {
        guard let number = Int64(id.nativeID), number > 0 else { throw ProviderError.notFound("no Podcast Index item \(id)") }
        switch id.kind {
        case .podcast:
            let answer = try await get("podcasts/byfeedid", ["id": String(number)])
            guard let feed = answer.feed, let item = Self.show(feed) else {
                throw ProviderError.notFound("the Podcast Index has no feed \(number)")
            }
            return item
        case .episode:
            let answer = try await get("episodes/byid", ["id": String(number)])
            guard let episode = answer.episode, let item = Self.episode(episode) else {
                throw ProviderError.notFound("the Podcast Index has no episode \(number)")
            }
            return item
        default:
            throw ProviderError.notFound("no Podcast Index \(id.kind.rawValue)")
        }
    }

    /// A show's episodes, newest first (`podcastindex:podcast:<feed id>`).
    public func children(of id: ItemID, cursor: Cursor?) async throws -> Page {
        guard id.kind == .podcast, let number = Int64(id.nativeID) else {
            throw ProviderError.unsupported("only shows have episodes")
        }
        return Page(items: Self.episodes(try await get("episodes/byfeedid", ["id": String(number), "max": "100"]).items ?? []))
    }

    /// A show by its feed's URL or its podcast:guid.
    public func show(feedURL: String? = nil, guid: String? = nil) async throws -> MediaItem? {
        let answer =
            if let guid { try await get("podcasts/byguid", ["guid": guid]) } else {
                try await get("podcasts/byfeedurl", ["url": feedURL ?? ""])
            }
        return answer.feed.flatMap(Self.show)
    }

    // MARK: Requests

    /// The headers of one request at `date`: the key, the time, and the SHA-1 of key, secret
    /// and time in lower-case hex (the secret itself never travels).
    static func authHeaders(key: String, secret: String, date: Date) -> [String: String] {
        let time = String(Int64(date.timeIntervalSince1970))
        return [
            "X-Auth-Key": key, "X-Auth-Date": time, "Authorization": SHA1.hex(Array((key + secret + time).utf8)),
            "User-Agent": "mediahost (+https://github.com/mediahost)", "Accept": "application/json",
        ]
    }

    func get(_ path: String, _ parameters: [String: String]) async throws -> PodcastIndexAnswer {
        guard let key, !key.isEmpty, let secret, !secret.isEmpty else { throw ProviderError.notConfigured(Self.missingKey) }
        guard let url = base.endpoint(path, query: parameters) else {
            throw ProviderError.invalidArgument("cannot build a Podcast Index URL for \(path)")
        }
        let response = try await http.fetch(
            HTTPRequest(url: url, headers: Self.authHeaders(key: key, secret: secret, date: now())), failure: Self.error(for:))
        return try response.json(service: "Podcast Index", what: path)
    }

    /// 401 is plain text ("Authorization header doesn't match up…"), 400 JSON with a description.
    static func error(for response: HTTPResponse) -> ProviderError {
        let said = String(decoding: response.body.prefix(300), as: UTF8.self).trimming(.whitespacesAndNewlines)
        switch response.status {
        case 401, 403:
            return .unauthorized(
                "the Podcast Index refused the key (\(said.isEmpty ? "\(response.status)" : said)); check PODCASTINDEX_API_KEY and PODCASTINDEX_API_SECRET, and the clock (the time it is sent must be within 3 minutes)"
            )
        case 429: return .rateLimited(retryAfter: response.retryAfter)
        default: return .from(response)
        }
    }

    // MARK: Items

    /// A show, as the podcasts provider's show of its feed: following and downloads work as for any.
    static func show(_ feed: PodcastIndexAnswer.Feed) -> MediaItem? {
        guard let url = feed.url, let id = ItemID.feed(url, provider: "podcasts") else { return nil }
        var item = MediaItem(
            id: id, title: Self.text(feed.title) ?? url, subtitle: Self.text(feed.author) ?? Self.text(feed.ownerName),
            summary: feed.description.map(HTMLText.plain), url: feed.link.flatMap { $0.isEmpty ? nil : $0 },
            artwork: [feed.artwork, feed.image].compactMap { $0 }.first { !$0.isEmpty },
            published: (feed.newestItemPubdate ?? feed.newestItemPublishTime).map {
                ISODate.string(from: Date(timeIntervalSince1970: Double($0)))
            },
            creator: Self.text(feed.author))
        item.feed = url
        var extra: [String: String] = ["podcastindex": String(feed.id ?? 0)]
        if let categories = feed.categories?.values.sorted(), !categories.isEmpty {
            extra["genres"] = categories.joined(separator: ", ")
        }
        if let guid = feed.podcastGuid, !guid.isEmpty {
            var namespace = PodcastNamespace()
            namespace.guid = guid
            item.namespace = namespace
        }
        item.extra = extra
        if let count = feed.episodeCount { item.stats = ["episodes": count] }
        return item
    }

    /// An episode: of its show's feed when the answer names it (the podcasts provider's id, by
    /// its guid), else the Podcast Index's own.
    static func episode(_ episode: PodcastIndexAnswer.Episode) -> MediaItem? {
        guard let number = episode.id else { return nil }
        let showID = episode.feedUrl.flatMap { ItemID.feed($0, provider: "podcasts") }
        let id: ItemID
        if let showID, let guid = episode.guid, !guid.isEmpty, guid.utf8.count <= 200, !guid.contains(where: \.isNewline) {
            id = ItemID(provider: "podcasts", kind: .episode, nativeID: "\(showID.nativeID):\(guid)")
        } else {
            id = ItemID(provider: "podcastindex", kind: .episode, nativeID: String(number))
        }
        var item = MediaItem(
            id: id, title: Self.text(episode.title) ?? "Episode \(number)", subtitle: Self.text(episode.feedTitle),
            summary: episode.description.map(HTMLText.plain), url: episode.link.flatMap { $0.isEmpty ? nil : $0 },
            artwork: [episode.image, episode.feedImage].compactMap { $0 }.first { !$0.isEmpty },
            published: episode.datePublished.map { ISODate.string(from: Date(timeIntervalSince1970: Double($0))) },
            duration: episode.duration.flatMap { $0 > 0 ? Double($0) : nil }, creator: Self.text(episode.feedAuthor),
            enclosure: episode.enclosureUrl.flatMap {
                $0.isEmpty ? nil : Enclosure(url: $0, type: episode.enclosureType, length: episode.enclosureLength)
            })
        item.feed = episode.feedUrl
        var extra: [String: String] = [:]
        if let season = episode.season, season > 0 { extra["season"] = String(season) }
        if let number = episode.episode, number > 0 { extra["episode"] = String(number) }
        if let chapters = episode.chaptersUrl, !chapters.isEmpty { extra["chapters"] = chapters }
        if let transcript = episode.transcriptUrl ?? episode.transcripts?.first?.url, !transcript.isEmpty {
            extra["transcript"] = transcript
        }
        if let guid = episode.guid { extra["guid"] = guid }
        item.extra = extra.isEmpty ? nil : extra
        if let persons = episode.persons, !persons.isEmpty {
            var namespace = PodcastNamespace()
            namespace.people = persons.prefix(100).compactMap { person in
                guard let name = Self.text(person.name) else { return nil }
                return .init(
                    name: name, role: person.role?.lowercased() ?? "host", group: person.group?.lowercased() ?? "cast",
                    image: person.img.flatMap { $0.isEmpty ? nil : $0 }, link: person.href.flatMap { $0.isEmpty ? nil : $0 })
            }
            item.namespace = namespace.isEmpty ? nil : namespace
        }
        return item
    }

    static func shows(_ feeds: [PodcastIndexAnswer.Feed]) -> [MediaItem] { feeds.compactMap(show) }
    static func episodes(_ episodes: [PodcastIndexAnswer.Episode]) -> [MediaItem] { episodes.compactMap(episode) }

    static func text(_ text: String?) -> String? {
        guard let text = text.map({ HTMLText.decodeEntities($0).trimming(.whitespacesAndNewlines) }), !text.isEmpty else {
            return nil
        }
        return text
    }
}
