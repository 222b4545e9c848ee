import Mastodon
/// The providers compiled into this build, registered by the executable (the host runtime knows
/// none of them: it is given these, as it is given plugins).
import MediaHost
import MediaKit
import Podcasts
import TMDB
import Twitter
import YouTube

/// The providers this build ships. Adding a provider is one line here (and its folder, and its
/// line in Package.swift; `SandboxEndToEndTests.everyCompiledProviderHasAReplica` checks the
/// sandbox has its replica).
public enum BuiltinProviders {
    public static let all: [ProviderRegistration] = [
        .of(PodcastsProvider.self),
        .of(YouTubeProvider.self),
        .of(TMDBProvider.self),
        .of(MastodonProvider.self),
        .of(TwitterProvider.self),
    ]
}
