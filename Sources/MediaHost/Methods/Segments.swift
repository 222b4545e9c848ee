import Basics
import FoundationEssentials
import Glibc
import HostAPI
import MediaKit

extension MediaSegments: RPCMethod {
    /// The longest a lookup may take, retries included.
    static let budget = 3.0

    /// SponsorBlock's answers by server and video.
    static let answers = Memo<Data>(lifetime: 3600)

    /// The segments of `id` in the hash-prefix answer, each with its action.
    static func read(_ body: Data, id: ItemID, skip: Set<String>, mute: Set<String>) throws -> Response {
        guard let videos = (try? JSONValue(parsing: body))?.plainValue as? [[String: Any]] else {
            throw ProviderFailure(provider: id.provider, error: .invalidResponse("SponsorBlock's answer is not a list of videos"))
        }
        var segments: [MediaSegment] = []
        var full: String?
        for video in videos where (video["videoID"] as? String) == id.nativeID {
            for case let entry as [String: Any] in (video["segments"] as? [Any]) ?? [] {
                guard let category = entry["category"] as? String, let times = entry["segment"] as? [Any], times.count == 2,
                    let start = times[0] as? Double, let end = times[1] as? Double,
                    start.isFinite, end.isFinite, start >= 0, end >= start, end < ChapterList.longestMedia
                else { continue }
                // A segment past the video's own length (as its submitter's player said) is none of it.
                if let length = entry["videoDuration"] as? Double, length > 0, start >= length + 1 { continue }
                let type = (entry["actionType"] as? String) ?? "skip"
                let action: String
                switch type {
                case "full":
                    full = category
                    continue
                case "poi": action = "highlight"
                default:
                    // A segment marked to mute (a song) is muted where its category is skipped.
                    if skip.contains(category) {
                        action = type == "mute" ? "mute" : "skip"
                    } else if mute.contains(category) {
                        action = "mute"
                    } else {
                        action = "mark"
                    }
                }
                segments.append(
                    MediaSegment(category: category, action: action, start: start, end: end, uuid: entry["UUID"] as? String))
            }
        }
        return Response(id: id, segments: segments.sorted { $0.start < $1.start }, full: full)
    }

    public func run(on host: HostRuntime) async throws -> Response {
        guard host.hasSegments(id) else {
            let with = host.providers(with: .segments)
            throw ProviderFailure(
                provider: id.provider,
                error: .unsupported(
                    "segments are SponsorBlock's, for videos of "
                        + (with.isEmpty ? "a provider with segments (none here)" : with.joined(separator: " or "))))
        }
        guard host.config.string(HostSettings.sponsorBlock) == "on" else { return Response(id: id, segments: [], full: nil) }
        let server = host.config.string(HostSettings.sponsorBlockServer)
        let prefix = String(SHA256.hex(Array(id.nativeID.utf8)).prefix(4))
        let categories = "[" + Self.categories.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        guard let base = URL(string: server), ["http", "https"].contains(base.scheme?.lowercased()),
            let url = base.endpoint(
                "api/skipSegments/\(prefix)",
                query: ["categories": categories, "actionTypes": #"["skip","mute","poi","full"]"#])
        else {
            throw HostError.invalidArgument("sponsorblock.server is not an http(s) URL: \(server)")
        }
        let skip = Self.list(host, HostSettings.sponsorBlockSkip)
        let mute = Self.list(host, HostSettings.sponsorBlockMute)
        // Kept an hour with the video, per server (a play, its chapters and a replay ask once).
        let key = server + " " + id.nativeID
        if let kept = Self.answers.value(key) { return try Self.read(kept, id: id, skip: skip, mute: mute) }
        let response: HTTPResponse
        do {
            // Asked beside a video's details, chapters and playback: a server that does not
            // answer costs those at most 3 s, retries included (its answers are small and quick).
            let budget = min(Self.budget, CallDeadline.current?.remaining ?? Self.budget)
            response = try await CallDeadline.$current.withValue(CallDeadline(seconds: budget)) {
                try await host.http.send(
                    HTTPRequest(url: url, headers: ["Accept": "application/json"], maxBodySize: 4 << 20))
            }
        } catch let error as HTTPClientError where error.kind == .timedOut {
            throw ProviderFailure(
                provider: id.provider,
                error: .network("SponsorBlock (\(base.host ?? server)) did not answer within \(Int(Self.budget)) s"))
        } catch {
            throw ProviderFailure(
                provider: id.provider, error: .network("SponsorBlock (\(base.host ?? server)) cannot be reached: \(error)"))
        }
        // 404: no video with that prefix has segments.
        guard response.status == 200 || response.status == 404 else {
            throw ProviderFailure(
                provider: id.provider, error: .from(response, reason: "SponsorBlock answered HTTP \(response.status)"))
        }
        let body = response.status == 404 ? Data("[]".utf8) : response.body
        let answer = try Self.read(body, id: id, skip: skip, mute: mute)
        Self.answers.keep(body, key)
        return answer
    }

    static func list(_ host: HostRuntime, _ setting: ConfigKeyInfo) -> Set<String> {
        Set(host.config.string(setting).split(separator: ",").map { $0.trimming(.whitespaces).lowercased() })
    }
}
