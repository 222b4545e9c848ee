import Basics
import FoundationEssentials
import Glibc
import MediaKit

extension PodcastsProvider: TranscriptProvider {
    /// An episode's transcript: of its `<podcast:transcript>` elements, one in `language` when
    /// asked (else the first language listed), in the richest format (JSON with speakers, then
    /// WebVTT, SRT, HTML, plain text); captions (`rel="captions"`) count as a transcript.
    public func transcript(of id: ItemID, language: String?) async throws -> Transcript? {
        guard id.kind == .episode else { return nil }
        let (_, _, episode) = try await findEpisode(id)
        let offered = Self.transcripts(episode)
        guard let chosen = Self.choose(offered, language: language), let url = URL(string: chosen.url),
            ["http", "https"].contains(url.scheme?.lowercased())
        else { return nil }
        let name = URLRedaction.redact(url.absoluteString)
        let response: HTTPResponse
        do {
            response = try await http.send(HTTPRequest(url: url, maxBodySize: TranscriptReader.maxSize))
        } catch let error as HTTPClientError where error.kind != .cancelled {
            throw ProviderError.network("cannot fetch the transcript \(name): \(error)")
        }
        guard (200..<300).contains(response.status) else {
            throw ProviderError.from(response, reason: "the transcript \(name) answered HTTP \(response.status)")
        }
        let type = chosen.type ?? response.headers["content-type"]
        var transcript = try TranscriptReader.read(response.body, type: type, url: chosen.url)
        if offered.count > 1, let language, let wanted = LanguageTag.primary(language),
            LanguageTag.primary(chosen.language) != wanted
        {
            transcript.notes.append("no transcript in \(language); this one is in \(chosen.language ?? "the feed's language")")
        }
        return transcript
    }

    struct Offer: Equatable {
        var url: String
        var type: String?
        var language: String?
        var rel: String?
    }

    static func transcripts(_ episode: ParsedEpisode) -> [Offer] {
        let listed = (episode.transcripts ?? "").split(separator: "\n").map { line -> Offer in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            func field(_ index: Int) -> String? { index < fields.count && !fields[index].isEmpty ? fields[index] : nil }
            return Offer(url: field(0) ?? "", type: field(1), language: field(2), rel: field(3))
        }.filter { !$0.url.isEmpty }
        if listed.isEmpty, let url = episode.transcript { return [Offer(url: url)] }
        return listed
    }

    /// The language asked for first (by its primary subtag: `en` matches `en-US`), then the
    /// format that says most.
    static func choose(_ offers: [Offer], language: String?) -> Offer? {
        func rank(_ offer: Offer) -> Int {
            let type = (offer.type ?? "").lowercased() + " " + offer.url.lowercased()
            if type.contains("json") { return 0 }
            if type.contains("vtt") { return 1 }
            if type.contains("srt") || type.contains("subrip") { return 2 }
            if type.contains("html") { return 3 }
            return 4
        }
        let wanted = LanguageTag.primary(language)
        let inLanguage = offers.filter { wanted != nil && LanguageTag.primary($0.language) == wanted }
        let pool = inLanguage.isEmpty ? offers : inLanguage
        return pool.enumerated().min { (rank($0.element), $0.offset) < (rank($1.element), $1.offset) }?.element
    }
}
