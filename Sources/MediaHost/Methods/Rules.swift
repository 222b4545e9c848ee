import Basics
import FoundationEssentials
import HostAPI
import JSONRPC
import MediaKit
import MediaStore

/// A rule or playback setting a show can have: its key, what it does, its built-in value, and
/// what it accepts (the refusal names the range). Declared here and nowhere else.
public struct ShowRuleInfo: Sendable {
    public var key: String
    public var summary: String
    public var builtIn: String
    /// The value as kept (normalised), or why it is refused.
    let check: @Sendable (String) -> Result<String, ShowRuleError>

    /// Every rule, in the order `rules` shows them.
    public static let all: [ShowRuleInfo] = [
        ShowRuleInfo(
            key: "auto_download", summary: "download what arrives: off, all, or a number (the newest N of each refresh)",
            builtIn: "off"
        ) { value in
            if ["off", "all"].contains(value.lowercased()) { return .success(value.lowercased()) }
            return whole(value, 1...100, "off, all, or a whole number from 1 to 100")
        },
        ShowRuleInfo(
            key: "include", summary: "download only titles with one of these words (comma-separated)", builtIn: ""
        ) { .success(words($0).joined(separator: ", ")) },
        ShowRuleInfo(
            key: "exclude", summary: "never download titles with one of these words (comma-separated)", builtIn: ""
        ) { .success(words($0).joined(separator: ", ")) },
        ShowRuleInfo(key: "min_minutes", summary: "download nothing shorter (0: no limit)", builtIn: "0") {
            number($0, 0...1440, "minutes from 0 to 1440").map(text)
        },
        ShowRuleInfo(key: "max_minutes", summary: "download nothing longer (0: no limit)", builtIn: "0") {
            number($0, 0...1440, "minutes from 0 to 1440").map(text)
        },
        ShowRuleInfo(
            key: "keep_downloads", summary: "keep at most this many downloaded episodes; played ones beyond go (0: all)",
            builtIn: "0"
        ) { whole($0, 0...10_000, "a whole number from 0 to 10000") },
        ShowRuleInfo(
            key: "delete_played_after_days", summary: "delete a played episode's download after this many days (0: never)",
            builtIn: "0"
        ) { number($0, 0...3650, "days from 0 to 3650").map(text) },
        ShowRuleInfo(key: "speed", summary: "playback speed, pitch kept", builtIn: "1") {
            number($0, 0.25...4, "a number from 0.25 to 4").map(text)
        },
        ShowRuleInfo(key: "skip_intro", summary: "seconds skipped at the start of each episode", builtIn: "0") {
            number($0, 0...3600, "seconds from 0 to 3600").map(text)
        },
        ShowRuleInfo(key: "skip_outro", summary: "seconds skipped at the end of each episode", builtIn: "0") {
            number($0, 0...3600, "seconds from 0 to 3600").map(text)
        },
        ShowRuleInfo(key: "loudnorm", summary: "even out loudness (EBU R128): on or off", builtIn: "off") { value in
            ["on", "off"].contains(value.lowercased()) ? .success(value.lowercased()) : .failure(.range("on or off"))
        },
        ShowRuleInfo(key: "volume_boost_db", summary: "louder by this many decibels", builtIn: "0") {
            number($0, 0...20, "decibels from 0 to 20").map(text)
        },
    ]

    public static func named(_ key: String) -> ShowRuleInfo? { all.first { $0.key == key.lowercased() } }

    private static func number(_ value: String, _ range: ClosedRange<Double>, _ what: String) -> Result<Double, ShowRuleError> {
        guard let number = Double(value.trimming(.whitespaces)), number.isFinite, range.contains(number) else {
            return .failure(.range(what))
        }
        return .success(number)
    }

    /// A whole number in `range`: 1.5 downloads or episodes mean nothing, so they are refused.
    private static func whole(_ value: String, _ range: ClosedRange<Double>, _ what: String) -> Result<String, ShowRuleError> {
        number(value, range, what).flatMap { $0 == $0.rounded() ? .success(String(Int($0))) : .failure(.range(what)) }
    }

    private static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    static func words(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimming(.whitespaces) }.filter { !$0.isEmpty }
    }
}

/// Why a rule was refused, said so a person can act.
public enum ShowRuleError: Error, Equatable, Sendable {
    case range(String)
}

/// A show's rules as they apply (its own, else the default, else built in), read.
public struct EffectiveRules: Sendable, Equatable {
    public enum AutoDownload: Sendable, Equatable {
        case off, all
        case newest(Int)
    }
    public var autoDownload = AutoDownload.off
    public var include: [String] = []
    public var exclude: [String] = []
    public var minMinutes = 0.0
    public var maxMinutes = 0.0
    public var keepDownloads = 0
    public var deletePlayedAfterDays = 0.0
    /// How its episodes play.
    public var playback = ShowPlayback()

    public init() {}

    /// From the values in effect by key (checked when they were kept; anything else reads as built in).
    public init(_ values: [String: String]) {
        func number(_ key: String) -> Double { values[key].flatMap { Double($0) } ?? 0 }
        switch values["auto_download"] {
        case "all": autoDownload = .all
        case let text?: autoDownload = Int(text).map { .newest($0) } ?? .off
        case nil: autoDownload = .off
        }
        include = values["include"].map(ShowRuleInfo.words) ?? []
        exclude = values["exclude"].map(ShowRuleInfo.words) ?? []
        minMinutes = number("min_minutes")
        maxMinutes = number("max_minutes")
        keepDownloads = Int(number("keep_downloads"))
        deletePlayedAfterDays = number("delete_played_after_days")
        playback.speed = values["speed"].flatMap { Double($0) } ?? 1
        playback.skipIntro = number("skip_intro")
        playback.skipOutro = number("skip_outro")
        playback.loudnorm = values["loudnorm"] == "on"
        playback.volumeBoostDB = number("volume_boost_db")
    }

    /// Why `item` is not downloaded by these rules, or nil when it may be.
    public func filteredOut(_ item: MediaItem) -> String? {
        let title = item.title.lowercased()
        if !include.isEmpty, !include.contains(where: { title.contains($0.lowercased()) }) {
            return "its title has none of \(include.joined(separator: ", ")) (include)"
        }
        if let word = exclude.first(where: { title.contains($0.lowercased()) }) { return "its title has \(word) (exclude)" }
        if let duration = item.duration {
            if minMinutes > 0, duration < minMinutes * 60 { return "shorter than \(Int(minMinutes)) min (min_minutes)" }
            if maxMinutes > 0, duration > maxMinutes * 60 { return "longer than \(Int(maxMinutes)) min (max_minutes)" }
        }
        return nil
    }
}

extension HostRuntime {
    /// A show's rules as they apply, each with where its value comes from.
    func rules(of show: ItemID?) async throws -> ShowRules {
        let key = show?.description ?? MediaStore.everyShow
        let (own, defaults) = try await store.showSettings(of: key)
        let rules = ShowRuleInfo.all.map { info in
            if let value = own[info.key] { return ShowRule(key: info.key, value: value, from: "show", summary: info.summary) }
            if let value = defaults[info.key] {
                return ShowRule(key: info.key, value: value, from: "default", summary: info.summary)
            }
            return ShowRule(key: info.key, value: info.builtIn, from: "built-in", summary: info.summary)
        }
        var title = "every show"
        if let show { title = try await showTitle(show) }
        return ShowRules(show: show, title: title, rules: rules)
    }

    /// The rules in effect for `show` (its own, else the defaults).
    public func effectiveRules(of show: ItemID?) async throws -> EffectiveRules {
        let (own, defaults) = try await store.showSettings(of: show?.description ?? MediaStore.everyShow)
        return EffectiveRules(defaults.merging(own) { $1 })
    }

    private func showTitle(_ show: ItemID) async throws -> String {
        try await store.favorite(show)?.title ?? show.description
    }

    /// `show` when it is followed here; a rule for anything else would never apply.
    fileprivate func requireFollowed(_ show: ItemID?) async throws {
        guard let show else { return }
        guard show.kind.isContainer else {
            throw HostError.invalidArgument(
                "\(show) is \(show.kind == .episode ? "an episode" : "a \(show.kind.rawValue)"); rules belong to the shows and channels you follow (`favs` lists them)"
            )
        }
        guard try await store.favorite(show) != nil else {
            throw HostError.invalidArgument("\(show) is not followed: `fav` it first, then set its rules")
        }
    }

    fileprivate static func rule(_ key: String) throws -> ShowRuleInfo {
        guard let info = ShowRuleInfo.named(key) else {
            throw HostError.invalidArgument(
                "no rule '\(key)'; the rules are \(ShowRuleInfo.all.map(\.key).joined(separator: ", "))")
        }
        return info
    }
}

extension RulesList: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        if let show {
            try await host.requireFollowed(show)
            return Response(items: [try await host.rules(of: show)])
        }
        var items = [try await host.rules(of: nil)]
        let set = try await host.store.showSettings()
        let followed = try await host.followedShows()
        for show in followed where set[show.id.description] != nil {
            var rules = try await host.rules(of: show.id)
            rules.rules = rules.rules.filter { $0.from == "show" }
            items.append(rules)
        }
        return Response(items: items)
    }
}

extension RulesSet: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        try await host.requireFollowed(show)
        let info = try HostRuntime.rule(key)
        let kept: String
        switch info.check(value.trimming(.whitespaces)) {
        case .success(let value): kept = value
        case .failure(.range(let what)): throw HostError.invalidArgument("\(info.key) must be \(what), not '\(value)'")
        }
        // Limits that leave nothing to download are refused, naming both.
        if ["min_minutes", "max_minutes"].contains(info.key), let value = Double(kept), value > 0 {
            let now = try await host.rules(of: show).rules
            let other = info.key == "min_minutes" ? "max_minutes" : "min_minutes"
            if let otherValue = now.first(where: { $0.key == other }).flatMap({ Double($0.value) }), otherValue > 0 {
                let (low, high) = info.key == "min_minutes" ? (value, otherValue) : (otherValue, value)
                if low > high {
                    throw HostError.invalidArgument(
                        "min_minutes \(HostRuntime.number(low)) is more than max_minutes \(HostRuntime.number(high)): nothing would download"
                    )
                }
            }
        }
        try await host.store.setShowSetting(show?.description ?? MediaStore.everyShow, key: info.key, value: kept)
        return try await host.rules(of: show)
    }
}

extension RulesUnset: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let owner = show?.description ?? MediaStore.everyShow
        if let key {
            let info = try HostRuntime.rule(key)
            try await host.store.setShowSetting(owner, key: info.key, value: nil)
        } else {
            try await host.store.clearShowSettings(owner)
        }
        return try await host.rules(of: show)
    }
}

/// How an episode of a followed show plays: its show's `speed`, `skip_intro`, `skip_outro`,
/// `loudnorm` and `volume_boost_db` as they apply (its own, else the defaults).
public struct ShowPlayback: Sendable, Equatable, CustomStringConvertible {
    public var speed = 1.0
    public var skipIntro = 0.0
    public var skipOutro = 0.0
    public var loudnorm = false
    public var volumeBoostDB = 0.0

    public init() {}

    /// The label of the filter mpv is given, so it is replaced (never a filter of the person's own).
    public static let filterLabel = "@mediahost"

    /// mpv's `af add` argument: loudness evened out (EBU R128, -16 LUFS as podcasts are mastered)
    /// and a boost, through lavfi; nil when neither is asked for.
    public var audioFilter: String? {
        var parts: [String] = []
        if loudnorm { parts.append("loudnorm=I=-16:TP=-1.5:LRA=11") }
        if volumeBoostDB > 0 { parts.append("volume=\(HostRuntime.number(volumeBoostDB))dB") }
        return parts.isEmpty ? nil : "\(Self.filterLabel):lavfi=[\(parts.joined(separator: ","))]"
    }

    public var description: String {
        "speed \(HostRuntime.number(speed)), skip_intro \(HostRuntime.number(skipIntro)) s, skip_outro \(HostRuntime.number(skipOutro)) s, \(audioFilter ?? "no filter")"
    }
}

extension HostRuntime {
    /// The playback settings of the followed show `id` is an episode or video of; nil when it is
    /// of none (or the store cannot say).
    public func showPlayback(of id: ItemID) async -> ShowPlayback? {
        do {
            guard let show = try await followedShow(of: id) else { return nil }
            return try await effectiveRules(of: show).playback
        } catch {
            logger.info("the show settings of \(id) cannot be read: \(error)")
            return nil
        }
    }

    /// The followed show an episode or video is of: the one a refresh saw it in, else the one
    /// whose feed it names (as kept with it), else the channel it names.
    func followedShow(of id: ItemID) async throws -> ItemID? {
        guard id.kind == .episode || id.kind == .video else { return nil }
        if let show = try await store.shows(of: [id])[id]?.show, try await store.favorite(show) != nil { return show }
        // Nothing of its provider followed: no need to ask what it is.
        let followed = try await followedShows(provider: id.provider)
        guard !followed.isEmpty else { return nil }
        var item = try await store.favorite(id)
        if item == nil { item = try await store.queue().items.first { $0.id == id } }
        if item == nil { item = try? await itemOrSnapshot(id) }
        guard let item else { return nil }
        if let feed = item.feed, let show = followed.first(where: { $0.feed == feed }) { return show.id }
        if let channel = item.extra?["channel"].flatMap({ try? ItemID(parsing: $0) }),
            followed.contains(where: { $0.id == channel })
        {
            return channel
        }
        return nil
    }
}
