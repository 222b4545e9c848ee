import Foundation
import HostAPI
import JSONRPC
import MediaKit
import Testing

@testable import HostDesktop

/// The desktop module knows the player only by the API's types: a `player.state` as it comes over
/// a connection (JSON from the service) must read as what the media keys show.
@Suite struct MediaKeysUnitTests {
    @Test func thePlayersNotificationReadsAsWhatTheKeysShow() throws {
        let id = try ItemID(parsing: "podcasts:episode:1:ep-2")
        let entry = PlayerStatus.Entry(id: id, title: "Tone 2", target: "http://x/2.wav", local: false)
        let sent = PlayerStatus(
            state: .paused, item: entry, position: 12.5, duration: 120, paused: true, volume: 40, queue: [entry],
            player: "mpv")
        let value = try JSONValue(parsing: String(decoding: JSONEncoder().encode(sent), as: UTF8.self))
        let read = try #require(HostEvent(method: "player.state", params: value)?.payload(PlayerStatus.self))
        #expect(read == sent)
        #expect(MPRISPlayer.State.Playback(rawValue: read.state.rawValue.capitalized) == .paused)
        let stopped = PlayerStatus(state: .stopped, paused: false, queue: [], player: nil)
        let none = try JSONValue(parsing: String(decoding: JSONEncoder().encode(stopped), as: UTF8.self))
        #expect(HostEvent(method: "player.state", params: none)?.payload(PlayerStatus.self)?.item == nil)
        // Another notification is not taken for the player's.
        #expect(HostEvent(method: "downloads.state", params: value)?.payload(PlayerStatus.self) == nil)
    }

    /// D-Bus object paths allow only [A-Za-z0-9_] between slashes: any id or file name fits.
    @Test(arguments: ["podcasts:episode:1:ep-2", "/home/ada/Müsic/a b.mp3", "x"])
    func trackPathsAreObjectPaths(name: String) {
        let path = MediaKeys.trackPath(PlayerStatus.Entry(id: nil, title: "", target: name, local: true))
        #expect(path.hasPrefix("/org/mediahost/track/"))
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        #expect(!last.isEmpty && last.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        #expect(path != MediaKeys.trackPath(PlayerStatus.Entry(id: nil, title: "", target: name + "!", local: true)))
    }

    @Test func newEpisodesAreToldInFewLines() throws {
        func item(_ n: Int) throws -> MediaItem {
            var item = MediaItem(id: try ItemID(parsing: "podcasts:episode:1:\(n)"), title: "Episode \(n)")
            item.subtitle = "The Show"
            return item
        }
        #expect(DesktopNotifier.newSummary(1) == "New in what you follow")
        #expect(DesktopNotifier.newSummary(5) == "5 new in what you follow")
        let body = DesktopNotifier.newBody(try (1...5).map(item))
        #expect(
            body.split(separator: "\n") == [
                "The Show: Episode 1", "The Show: Episode 2", "The Show: Episode 3", "and 2 more (`new` in the REPL)",
            ])
    }

    /// A feed's text as a notification: its markup is text, its escapes and bells gone, and a
    /// 97 KB title no notification.
    @Test func notificationsCarryPlainTextOnly() {
        let hostile =
            "New <a href=\"file:///etc/passwd\">episode</a> <img src=\"file:///x.png\"> \u{1B}]2;owned\u{07}\u{1B}[31m & more"
        let shown = NotificationText.plain(hostile, limit: NotificationText.bodyLimit)
        #expect(
            !shown.contains("<") && !shown.contains(">") && !shown.contains("\u{1B}") && !shown.contains("\u{07}"), "\(shown)")
        #expect(shown.contains("&lt;a href=&quot;file:///etc/passwd&quot;&gt;episode&lt;/a&gt;") && shown.contains("&amp; more"))
        let huge = NotificationText.plain(String(repeating: "Episode ", count: 12_500), limit: NotificationText.bodyLimit)
        #expect(huge.count <= NotificationText.bodyLimit, "\(huge.count)")
        #expect(NotificationText.plain("line one\nline two", limit: 100) == "line one\nline two")
    }
}
