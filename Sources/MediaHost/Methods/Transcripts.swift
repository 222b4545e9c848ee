import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit
import MediaStore

extension MediaTranscript: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        if refresh != true, let kept = try await host.store.transcript(id) {
            return Response(
                id: id, format: kept.format, timed: kept.format != "text", cues: kept.cues, notes: nil, cached: true)
        }
        let language = Self.language(setting: host.config.string(HostSettings.transcriptsLanguage), environment: host.environment)
        let found = try await host.withProvider(id.provider) { provider -> Transcript? in
            guard let transcribed = provider as? any TranscriptProvider else {
                throw ProviderError.unsupported("\(provider.descriptor.name) has no transcripts")
            }
            return try await transcribed.transcript(of: id, language: language)
        }
        guard let transcript = found, !transcript.cues.isEmpty else {
            throw ProviderFailure(provider: id.provider, error: .notFound("\(id) has no transcript"))
        }
        let item = try? await host.itemOrSnapshot(id)
        do {
            try await host.store.keepTranscript(
                id, title: item?.title ?? id.description, show: item?.subtitle, format: transcript.format.rawValue,
                cues: transcript.cues)
        } catch {
            // The answer stands; the search will not find it, and says so in the log.
            host.logger.error("cannot keep the transcript of \(id) for search: \(error)")
        }
        return Response(
            id: id, format: transcript.format.rawValue, timed: transcript.timed, cues: transcript.cues,
            notes: transcript.notes.isEmpty ? nil : transcript.notes, cached: false)
    }
}

extension HostRuntime {
    /// With `transcripts.prefetch downloads`, a downloaded episode's transcript is fetched and
    /// kept with it, so `transcripts.search` finds what was said in what a person has.
    func fetchTranscriptAhead(_ id: ItemID) async {
        guard ["downloads", "new"].contains(config.string(HostSettings.transcriptsPrefetch)) else { return }
        do {
            let transcript = try await dispatcher.run(MediaTranscript(id: id))
            logger.info("kept the transcript of \(id) (\(transcript.cues.count) lines) with its download")
        } catch  where error.data?["kind"]?.stringValue == "notFound" || error.data?["kind"]?.stringValue == "unsupported" {
            logger.debug("\(id) has no transcript to keep with its download")
        } catch {
            logger.warning("the transcript of \(id) could not be kept with its download: \(error.message)")
        }
    }
}

extension HostRuntime {
    /// With `transcripts.prefetch new`, the service keeps the transcripts of the newest episodes
    /// of what is followed (the newest 20 across them), looking at its start and every hour, so
    /// `transcripts.search` finds what was said in them before anyone asks.
    func keepNewTranscripts() {
        Task.detached { [weak self] in
            while let self, !Task.isCancelled {
                if self.config.string(HostSettings.transcriptsPrefetch) == "new" { await self.fetchNewTranscripts() }
                try? await Task.sleep(for: .seconds(3600))
            }
        }
    }

    func fetchNewTranscripts() async {
        let latest: FavoritesLatest.Response
        do {
            latest = try await dispatcher.run(FavoritesLatest(limit: 20))
        } catch {
            logger.warning("transcripts of new episodes: what is followed cannot be read: \(error.message)")
            return
        }
        var kept = 0
        for item in latest.items where item.kind == .episode || item.kind == .video {
            do {
                guard try await store.transcript(item.id) == nil else { continue }
                _ = try await dispatcher.run(MediaTranscript(id: item.id))
                kept += 1
            } catch let error as RPCError where ["notFound", "unsupported"].contains(error.data?["kind"]?.stringValue ?? "") {
                continue
            } catch {
                logger.info("the transcript of \(item.id) could not be kept ahead of time: \(error)")
            }
        }
        if kept > 0 { logger.info("kept \(kept) new episodes' transcripts") }
    }
}

extension MediaTranscript {
    /// transcripts.language, else the language of the person's locale (LC_ALL, LC_MESSAGES,
    /// LANG: `de_DE.UTF-8` is `de-DE`), else none.
    static func language(setting: String, environment: [String: String]) -> String? {
        let set = setting.trimming(.whitespaces)
        if !set.isEmpty { return set }
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            guard let value = environment[name], !value.isEmpty else { continue }
            let tag = String(value.prefix { $0 != "." && $0 != "@" }).replacing("_", with: "-")
            return tag == "C" || tag == "POSIX" ? nil : tag
        }
        return nil
    }
}

extension TranscriptsSearch: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        guard !text.trimming(.whitespaces).isEmpty else { throw HostError.invalidArgument("text is empty") }
        // FTS5's work grows faster than the words: a query is what a person types.
        guard text.utf8.count <= MediaStore.maxSearchBytes,
            text.split(separator: " ", omittingEmptySubsequences: true).count <= MediaStore.maxSearchWords
        else {
            throw HostError.invalidArgument(
                "give at most \(MediaStore.maxSearchWords) words (\(MediaStore.maxSearchBytes) bytes) to find")
        }
        let limit = limit ?? 20
        guard (1...200).contains(limit) else { throw HostError.invalidArgument("limit is from 1 to 200") }
        let hits = try await host.store.searchTranscripts(text, limit: limit)
        let count = try await host.store.transcriptCount()
        return Response(hits: hits, transcripts: count)
    }
}
