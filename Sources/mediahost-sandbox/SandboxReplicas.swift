import Foundation
import MastodonSandbox
import PodcastsSandbox
import Sandbox
import TMDBSandbox
import TwitterSandbox
import YouTubeSandbox

/// Every provider's replica of its real API: a line per compiled-in provider, as in
/// `BuiltinProviders`.
enum SandboxReplicas {
    static let all: [any SandboxReplica] = [
        PodcastsReplica(),
        YouTubeReplica(),
        TMDBReplica(),
        MastodonReplica(),
        TwitterReplica(),
    ]

    /// Media is served at 8 MB/s unless MEDIAHOST_SANDBOX_MEDIA_RATE says otherwise (bytes/s,
    /// 0 for as fast as loopback goes), so downloads take a visible, realistic time.
    static func mediaRate(_ environment: [String: String], flag: Int? = nil) -> Int? {
        let rate = flag ?? environment["MEDIAHOST_SANDBOX_MEDIA_RATE"].flatMap(Int.init) ?? 8_000_000
        return rate > 0 ? rate : nil
    }
}
