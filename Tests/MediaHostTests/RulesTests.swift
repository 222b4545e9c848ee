import Foundation
import JSONRPC
import MediaKit
import MediaStore
import TestSupport
import Testing

@testable import MediaHost

/// Each show's rules: kept and refused through the dispatcher, applied by a refresh (what
/// auto_download takes, what the tidy rules delete and what they never touch), said by a dry run.
@Suite struct RulesTests {
    let c1 = ItemID(provider: "catalog", kind: .channel, nativeID: "c1")

    func rule(_ rules: JSONValue, _ key: String) -> (value: String?, from: String?) {
        let found = rules["rules"]?.arrayValue?.first { $0["key"]?.stringValue == key }
        return (found?["value"]?.stringValue, found?["from"]?.stringValue)
    }

    @Test func aShowsOwnRuleBeatsTheDefaultWhichBeatsTheBuiltIn() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c1"])
        let fresh = try await fixture.checked("rules.list", ["show": "catalog:channel:c1"])
        #expect(rule(try #require(fresh["items"]?.arrayValue?.first), "speed") == ("1", "built-in"))
        _ = try await fixture.checked("rules.set", ["key": "speed", "value": "1.25"])
        let set = try await fixture.checked("rules.set", ["show": "catalog:channel:c1", "key": "AUTO_DOWNLOAD", "value": "All"])
        #expect(set["title"] == "Channel 1")
        #expect(rule(set, "auto_download") == ("all", "show"))
        #expect(rule(set, "speed") == ("1.25", "default"))
        let effective = try await fixture.host.effectiveRules(of: c1)
        #expect(effective.autoDownload == .all && effective.playback.speed == 1.25)
        // The list: the defaults, then each show with rules of its own (only those).
        let list = try await fixture.checked("rules.list")
        let items = list["items"]?.arrayValue ?? []
        #expect(items.count == 2 && items.first?["show"] == nil && items.first?["title"] == "every show")
        #expect(items.last?["rules"]?.arrayValue?.map { $0["key"] } == ["auto_download"])
        // Taken back: the default applies again.
        let unset = try await fixture.checked("rules.unset", ["show": "catalog:channel:c1", "key": "auto_download"])
        #expect(rule(unset, "auto_download") == ("off", "built-in"))
        _ = try await fixture.checked("rules.unset", [:])
        #expect(try await fixture.host.effectiveRules(of: c1) == EffectiveRules())
    }

    @Test func unknownKeysAndValuesOutOfRangeAreRefusedNamingTheRange() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c1"])
        let unknown = await fixture.error("rules.set", ["key": "autodownload", "value": "all"])
        #expect(unknown?.code == RPCError.invalidParamsCode)
        #expect(unknown?.message.contains("no rule 'autodownload'; the rules are auto_download, include") == true)
        for (key, value, says) in [
            ("speed", "9", "speed must be a number from 0.25 to 4, not '9'"),
            ("speed", "nan", "a number from 0.25 to 4"),
            ("auto_download", "-1", "off, all, or a whole number from 1 to 100"),
            ("auto_download", "101", "off, all, or a whole number from 1 to 100"),
            ("auto_download", "1.5", "off, all, or a whole number from 1 to 100"),
            ("skip_intro", "1e9", "seconds from 0 to 3600"), ("loudnorm", "yes", "on or off"),
            ("keep_downloads", "2.5e4", "a whole number from 0 to 10000"), ("keep_downloads", "1.5", "a whole number"),
        ] {
            let refused = await fixture.error(
                "rules.set", ["show": "catalog:channel:c1", "key": .string(key), "value": .string(value)])
            #expect(refused?.message.contains(says) == true, "\(key) \(value): \(String(describing: refused))")
        }
        let notFollowed = await fixture.error("rules.set", ["show": "catalog:channel:c2", "key": "speed", "value": "2"])
        #expect(notFollowed?.message.contains("catalog:channel:c2 is not followed: `fav` it first") == true)
        let episode = await fixture.error("rules.list", ["show": "catalog:video:v1"])
        #expect(
            episode?.message.contains("rules belong to the shows and channels you follow") == true,
            "\(String(describing: episode))")
        // Limits that leave nothing to download.
        _ = try await fixture.checked("rules.set", ["show": "catalog:channel:c1", "key": "min_minutes", "value": "30"])
        let contradiction = await fixture.error("rules.set", ["show": "catalog:channel:c1", "key": "max_minutes", "value": "10"])
        #expect(contradiction?.message == "Invalid params: min_minutes 30 is more than max_minutes 10: nothing would download")
        _ = try await fixture.checked("rules.unset", ["show": "catalog:channel:c1", "key": "min_minutes"])
        #expect(await fixture.error("rules.unset", ["key": "nosuch"])?.code == RPCError.invalidParamsCode)
        // `id` for `show` would set the rule of every show: refused.
        let wrongName = await fixture.error("rules.set", ["id": "catalog:channel:c1", "key": "speed", "value": "2"])
        #expect(wrongName?.message.contains("rules.set has no param 'id'; it takes key, show, value") == true)
        #expect(await fixture.error("rules.unset", ["id": "catalog:channel:c1"])?.code == RPCError.invalidParamsCode)
        #expect(try await fixture.checked("rules.list")["items"]?.arrayValue?.count == 1, "nothing refused was kept")
    }

    @Test func filtersChooseWhatAutoDownloadTakes() {
        var rules = EffectiveRules(["include": "swift, Rust", "exclude": "trailer", "min_minutes": "2", "max_minutes": "60"])
        func item(_ title: String, minutes: Double?) -> MediaItem {
            var item = MediaItem(id: ItemID(provider: "p", kind: .episode, nativeID: "1:\(title)"), title: title)
            item.duration = minutes.map { $0 * 60 }
            return item
        }
        #expect(rules.filteredOut(item("All about SWIFT", minutes: 30)) == nil)
        #expect(rules.filteredOut(item("Cooking", minutes: 30))?.contains("(include)") == true)
        #expect(rules.filteredOut(item("Rust trailer", minutes: 30)) == "its title has trailer (exclude)")
        #expect(rules.filteredOut(item("Swift short", minutes: 1)) == "shorter than 2 min (min_minutes)")
        #expect(rules.filteredOut(item("Swift long", minutes: 61)) == "longer than 60 min (max_minutes)")
        #expect(rules.filteredOut(item("Swift, length unknown", minutes: nil)) == nil)
        rules = EffectiveRules(["auto_download": "3"])
        #expect(rules.autoDownload == .newest(3))
    }

    /// A dry run says what auto_download would take, and why; nothing starts.
    @Test func aDryRunSaysWhatWouldBeDownloaded() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c1"])
        _ = try await fixture.checked("rules.set", ["key": "auto_download", "value": "1"])
        let dry = try await fixture.checked("refresh.run", ["dryRun": true])
        let download = try #require(dry["downloads"]?.arrayValue?.first)
        #expect(download["show"] == "Channel 1" && download["reason"] == "auto_download 1: the newest 1 of what arrived")
        #expect(dry["arrived"]?.arrayValue?.first?["id"] == download["id"])
        #expect(try await fixture.checked("downloads.list")["items"]?.arrayValue?.isEmpty ?? true)
        _ = try await fixture.checked("rules.set", ["show": "catalog:channel:c1", "key": "exclude", "value": "video"])
        let excluded = try await fixture.checked("refresh.run", ["dryRun": true])
        #expect(excluded["downloads"] == [])
        // What is not downloaded is said, with why.
        #expect(
            excluded["skipped"]?.arrayValue?.first?["reason"]?.stringValue?.hasPrefix("its title has video (exclude)") == true,
            "\(excluded)")
    }

    /// The tidy rules delete played downloads of a show beyond keep_downloads and past
    /// delete_played_after_days, then the oldest played beyond downloads.max_gb; never an
    /// unplayed one, a favorite, one in a list or the queue.
    @Test func tidyingDeletesOnlyWhatMayGo() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.checked("favorites.add", ["id": "catalog:channel:c1"])
        // The refresh sees the channel's first page: its downloads are known as of it.
        _ = try await fixture.checked("refresh.run")
        let page = try await fixture.checked("media.children", ["id": "catalog:channel:c1"])
        let ids = try (page["items"]?.arrayValue ?? []).prefix(8).map { try ItemID(parsing: $0["id"]?.stringValue ?? "") }
        try #require(ids.count == 8)
        let folder = fixture.directory + "/files"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let long = Date().addingTimeInterval(-40 * 86_400)
        for (index, id) in ids.enumerated() {
            let path = folder + "/\(index).bin"
            try Data(repeating: 1, count: 100).write(to: URL(fileURLWithPath: path))
            var record = DownloadRecord(
                id: id, title: "Video \(index)", url: "http://127.0.0.1:9/\(index)", path: path, expectedLength: 100,
                now: Date().addingTimeInterval(Double(index) * -3600))
            record = try await fixture.host.store.insertDownload(record)
            record.state = .completed
            record.bytes = 100
            try await fixture.host.store.updateDownload(record)
        }
        // 0 to 5 played 40 days ago; 6 and 7 not played. 1 is a favorite, 2 in a list, 3 queued.
        try await fixture.host.store.markPlayed(Array(ids[0...5]), played: true, at: long)
        _ = try await fixture.checked("favorites.add", ["id": .string(ids[1].description)])
        _ = try await fixture.checked("lists.create", ["name": "Keep"])
        _ = try await fixture.checked("lists.add", ["name": "Keep", "id": .string(ids[2].description)])
        _ = try await fixture.checked("queue.add", ["ids": [.string(ids[3].description)]])
        _ = try await fixture.checked(
            "rules.set", ["show": "catalog:channel:c1", "key": "delete_played_after_days", "value": "30"])
        let dry = try await fixture.checked("refresh.run", ["dryRun": true])
        let planned = (dry["deletions"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        #expect(Set(planned) == Set([ids[0], ids[4], ids[5]].map(\.description)), "\(dry)")
        #expect(dry["deletions"]?.arrayValue?.first?["reason"]?.stringValue?.contains("(delete_played_after_days 30)") == true)
        #expect(FileManager.default.fileExists(atPath: folder + "/0.bin"), "a dry run deletes nothing")

        let run = try await fixture.checked("refresh.run")
        #expect(run["deletions"]?.arrayValue?.count == 3)
        for index in 0..<8 {
            let gone = [0, 4, 5].contains(index)
            #expect(FileManager.default.fileExists(atPath: folder + "/\(index).bin") != gone, "file \(index)")
        }
        // keep_downloads and the budget find nothing more that may go: 1, 2, 3 are kept, 6, 7 unplayed.
        _ = try await fixture.checked("rules.set", ["show": "catalog:channel:c1", "key": "keep_downloads", "value": "1"])
        _ = try await fixture.checked("config.set", ["key": "downloads.max_gb", "value": "1"])
        #expect(try await fixture.checked("refresh.run")["deletions"] == [])
        // Newest by publication, not by download: unqueued, 3 (v15, published 16 January) is the
        // newest left and stays; unfavorited, 1 (v5, 6 January) is beyond it and goes (the day
        // rule taken back first).
        _ = try await fixture.checked("rules.unset", ["show": "catalog:channel:c1", "key": "delete_played_after_days"])
        _ = try await fixture.checked("queue.clear")
        #expect(try await fixture.checked("refresh.run")["deletions"] == [])
        _ = try await fixture.checked("favorites.remove", ["id": .string(ids[1].description)])
        let kept = try await fixture.checked("refresh.run")
        #expect(kept["deletions"]?.arrayValue?.map { $0["id"] } == [.string(ids[1].description)], "\(kept)")
        #expect(kept["deletions"]?.arrayValue?.first?["reason"] == "beyond the newest 1 kept (keep_downloads 1)")
    }

    /// Over downloads.max_gb, the oldest played go first, whatever show they are of; what is not
    /// played stays even over the budget.
    @Test func theBudgetDeletesTheOldestPlayedFirst() async throws {
        let fixture = try HostFixture()
        let folder = fixture.directory + "/files"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let ids = (1...4).map { ItemID(provider: "catalog", kind: .video, nativeID: "v\($0)") }
        for (index, id) in ids.enumerated() {
            let path = folder + "/\(index).bin"
            try Data("x".utf8).write(to: URL(fileURLWithPath: path))
            var record = try await fixture.host.store.insertDownload(
                DownloadRecord(
                    id: id, title: "Video \(index)", url: "http://127.0.0.1:9/\(index)", path: path, expectedLength: nil))
            record.state = .completed
            record.bytes = 600_000_000
            try await fixture.host.store.updateDownload(record)
        }
        // Played an hour apart, 3 first; 4 not played.
        for (index, id) in ids.prefix(3).enumerated() {
            try await fixture.host.store.markPlayed(
                [id], played: true, at: Date().addingTimeInterval(Double(index == 2 ? -9 : -index) * 3600))
        }
        _ = try await fixture.checked("config.set", ["key": "downloads.max_gb", "value": "1"])
        let run = try await fixture.checked("refresh.run")
        let deleted = (run["deletions"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        // 2.4 GB: v3 (played 9 h ago), then v2 (1 h ago), then v1 (now): 0.6 GB of played and 0.6 unplayed are left.
        #expect(deleted == ["catalog:video:v3", "catalog:video:v2", "catalog:video:v1"], "\(run)")
        #expect(
            run["deletions"]?.arrayValue?.first?["reason"] == "downloads over 1 GB (downloads.max_gb): the oldest played first")
        #expect(FileManager.default.fileExists(atPath: folder + "/3.bin"), "not played: kept")
    }
}
