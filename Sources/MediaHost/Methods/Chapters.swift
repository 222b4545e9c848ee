import Basics
import FoundationEssentials
import Glibc
import HostAPI
import MediaKit
import MediaStore

extension MediaChapters: RPCMethod {
    /// A segment as a chapter: "Sponsor (skipped)", marked apart from the contents; the
    /// highlight is a chapter to jump to.
    static func chapter(_ segment: MediaSegment) -> Chapter {
        guard segment.action != "highlight" else { return Chapter(start: segment.start, title: "Highlight") }
        let names = [
            "sponsor": "Sponsor", "selfpromo": "Self-promotion", "interaction": "Reminder to subscribe", "intro": "Intro",
            "outro": "Endcards", "preview": "Preview", "music_offtopic": "Not music", "filler": "Filler",
            "exclusive_access": "Exclusive access",
        ]
        let done = ["skip": "skipped", "mute": "muted"][segment.action] ?? "marked"
        return Chapter(
            start: segment.start, end: segment.end, title: "\(names[segment.category] ?? segment.category) (\(done))", toc: false)
    }

    public func run(on host: HostRuntime) async throws -> Response {
        let item = try await host.itemOrSnapshot(id)
        var notes: [String] = []
        var list: ChapterList?
        do {
            list = try await host.withProvider(id.provider) { provider -> ChapterList? in
                guard let chaptered = provider as? any ChapterProvider else { return nil }
                return try await chaptered.chapters(of: id)
            }
        } catch {
            // A chapters file that cannot be had: the other sources may still have them.
            notes.append("the service's chapters: \(error)")
            host.logger.info("chapters of \(id): \(error)")
        }
        if list?.chapters.isEmpty ?? true, let record = try await host.store.download(id), record.state == .completed,
            FileManager.default.fileExists(atPath: record.path)
        {
            do {
                if let found = try ID3Chapters.read(path: record.path), !found.chapters.isEmpty { list = found }
            } catch {
                notes.append("the downloaded file's chapters: \(error)")
            }
        }
        if list?.chapters.isEmpty ?? true, let summary = item.summary, let found = ChapterReader.description(summary) {
            list = found
        }
        // A video's SponsorBlock segments are markers beside its chapters (skipped, muted or
        // marked, as the player treats them), its highlight a chapter.
        if host.hasSegments(id), host.config.string(HostSettings.sponsorBlock) == "on" {
            do {
                let answer = try await host.dispatcher.run(MediaSegments(id: id))
                let marks = answer.segments.map(Self.chapter)
                if let full = answer.full {
                    notes.append("SponsorBlock labels the whole video: \(full.replacing("_", with: " "))")
                }
                if !marks.isEmpty {
                    if var known = list {
                        known.chapters += marks
                        list = known
                    } else {
                        list = ChapterList(source: .sponsorBlock, chapters: marks)
                    }
                }
            } catch {
                notes.append("SponsorBlock's segments: \(error.message)")
            }
        }
        guard let list else {
            return Response(id: id, source: nil, chapters: [], notes: notes.isEmpty ? nil : notes)
        }
        let normalized = list.normalized(duration: item.duration)
        let all = notes + normalized.notes
        return Response(id: id, source: normalized.source.rawValue, chapters: normalized.chapters, notes: all.isEmpty ? nil : all)
    }
}
