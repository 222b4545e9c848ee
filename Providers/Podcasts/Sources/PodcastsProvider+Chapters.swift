import Basics
import FoundationEssentials
import Glibc
import MediaKit

extension PodcastsProvider: ChapterProvider {
    /// The largest chapters file read (real ones are a few KB; a thousand chapters is 100 KB).
    static let maxChaptersFile = 2 << 20

    /// An episode's chapters: its Podcasting 2.0 chapters file (fetched, kept by the cache and
    /// revalidated with its ETag), else the Podlove chapters in the feed.
    public func chapters(of id: ItemID) async throws -> ChapterList? {
        guard id.kind == .episode else { return nil }
        let (_, _, episode) = try await findEpisode(id)
        if let link = episode.chapters, let url = URL(string: link), ["http", "https"].contains(url.scheme?.lowercased()) {
            do {
                return try await chaptersFile(url)
            } catch {
                // The feed's own chapters, when it has both, stand in for a file that fails.
                guard episode.simpleChapters != nil else { throw error }
                logger.info("the chapters file of \(id) cannot be read (\(error)); using the feed's chapters")
            }
        }
        guard episode.simpleChapters != nil else { return nil }
        return Self.simpleChapters(episode.simpleChapters)
    }

    /// The Podlove chapters the feed parser kept (a line each: start, title, href, image).
    static func simpleChapters(_ kept: String?) -> ChapterList {
        let entries = (kept ?? "").split(separator: "\n").map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            func field(_ index: Int) -> String? { index < fields.count && !fields[index].isEmpty ? fields[index] : nil }
            return (start: field(0) ?? "", title: field(1) ?? "", href: field(2), image: field(3))
        }
        return ChapterReader.podloveSimple(entries)
    }

    private func chaptersFile(_ url: URL) async throws -> ChapterList {
        let key = "chapters:" + url.absoluteString
        let kept = await cache.value(for: key)
        var headers = ["Accept": "application/json+chapters, application/json;q=0.9, */*;q=0.5"]
        if let etag = kept?.etag { headers["If-None-Match"] = etag }
        if let modified = kept?.lastModified { headers["If-Modified-Since"] = modified }
        let name = URLRedaction.redact(url.absoluteString)
        let response: HTTPResponse
        do {
            response = try await http.send(HTTPRequest(url: url, headers: headers, maxBodySize: Self.maxChaptersFile))
        } catch let error as HTTPClientError where error.kind != .cancelled {
            throw ProviderError.network("cannot fetch the chapters file \(name): \(error)")
        }
        if response.status == 304, let kept { return try ChapterReader.podcastJSON(kept.data) }
        guard (200..<300).contains(response.status) else {
            throw ProviderError.from(response, reason: "the chapters file \(name) answered HTTP \(response.status)")
        }
        let chapters = try ChapterReader.podcastJSON(response.body)
        await cache.store(
            CachedValue(data: response.body, etag: response.headers["etag"], lastModified: response.headers["last-modified"]),
            for: key)
        return chapters
    }
}
