import Foundation
import HostPlayer
import HostSync
import HostWebLink
import JSONRPC
import MediaHost
import MediaKit
import Synchronization
import TestSupport
import Testing

@testable import MediaREPL

/// A REPL whose output is captured.
final class CapturedREPL: @unchecked Sendable {
    let fixture: HostFixture
    let repl: REPL
    private let out = LineLog()
    private let err = LineLog()

    init(json: Bool = false, keepGoing: Bool = false, environment: [String: String] = [:]) throws {
        fixture = try HostFixture(environment: environment, modules: [PlayerModule.self])
        repl = REPL(
            host: fixture.host, options: REPL.Options(json: json, keepGoing: keepGoing, color: false),
            write: out.append, writeError: err.append)
    }

    /// Runs a line and returns what it printed on stdout.
    func run(_ line: String) async -> String {
        out.clear()
        await repl.execute(line)
        return out.text
    }

    var errors: String { err.text }
}

@Suite struct REPLTests {
    /// Each command and the RPC call it stands for give the same result.
    static let equivalents: [(String, String, String)] = [
        ("providers", "providers.list", "{}"),
        ("categories catalog", "providers.categories", #"{"provider":"catalog"}"#),
        ("browse catalog music", "media.browse", #"{"provider":"catalog","category":"music"}"#),
        ("browse catalog Science & Tech", "media.browse", #"{"provider":"catalog","category":"science"}"#),
        ("search catalog swift", "media.search", #"{"provider":"catalog","query":"swift"}"#),
        ("search catalog --kind channel channel", "media.search", #"{"provider":"catalog","query":"channel","kind":"channel"}"#),
        // Options are read wherever they are on the line.
        ("search catalog channel --kind channel", "media.search", #"{"provider":"catalog","query":"channel","kind":"channel"}"#),
        ("latest --no-shorts catalog --unplayed", "favorites.latest", #"{"provider":"catalog","shorts":false,"unplayed":true}"#),
        ("new --keep", "new.list", #"{"keep":true}"#),
        ("seen all", "new.seen", #"{"all":true}"#),
        ("show catalog:video:v3", "media.get", #"{"id":"catalog:video:v3"}"#),
        ("open catalog:channel:c2", "media.children", #"{"id":"catalog:channel:c2"}"#),
        ("favs", "favorites.list", "{}"),
        ("favs catalog", "favorites.list", #"{"provider":"catalog"}"#),
        ("config log.level", "config.get", #"{"key":"log.level"}"#),
        ("config", "config.get", "{}"),
        ("call host.info", "host.info", "{}"),
    ]

    @Test(arguments: equivalents)
    func commandMatchesItsRPCCall(command: String, method: String, params: String) async throws {
        let session = try CapturedREPL(json: true)
        let printed = await session.run(command)
        let direct = try await session.fixture.host.dispatcher.call(method, params: try JSONValue(parsing: params))
        #expect(try JSONValue(parsing: printed) == (try JSONParser.parse(direct)), "\(command)")
        #expect(session.errors.isEmpty)
    }

    @Test func rowsNextPrevShowFav() async throws {
        let session = try CapturedREPL()
        let page1 = await session.run("search catalog about")
        #expect(page1.contains("  1  Video 0 about swift"))
        #expect(page1.contains("`next` for more"))
        let page2 = await session.run("next")
        #expect(page2.contains("  1  Video 20 about swift"))
        #expect(page2.contains("`prev`"))
        #expect(await session.run("prev").contains("  1  Video 0 about swift"))
        let detail = await session.run("show 2")
        #expect(detail.contains("Video 1 about rust"))
        #expect(detail.contains("catalog:video:v1"))
        #expect(detail.contains("1:01"))
        #expect(await session.run("fav 2") == "★ Video 1 about rust is a favorite")
        let favs = await session.run("favs")
        #expect(favs.contains("Video 1 about rust"))
        #expect(favs.contains("★"))
        #expect(await session.run("unfav catalog:video:v1").contains("removed catalog:video:v1"))
        #expect(await session.run("favs").contains("(no items)"))
    }

    @Test func openRowsOfEachListing() async throws {
        let session = try CapturedREPL()
        _ = await session.run("categories catalog")
        #expect(await session.run("open 2").contains("about science"))
        _ = await session.run("search catalog --kind channel channel")
        let videos = await session.run("open 3")
        #expect(videos.contains("Video 2 about music"))
        _ = await session.run("history")
        #expect(await session.run("open 1").contains("Channel 1"))
        _ = await session.run("providers")
        #expect(await session.run("open 1").contains("Music"))
    }

    @Test func openListsWhatIsInsideAndShowGivesDetails() async throws {
        let session = try CapturedREPL()
        // A video with related videos opens as them, like a movie's similar movies or a post's replies.
        let related = await session.run("open catalog:video:v10")
        #expect(related.contains("  1  Video 11"))
        #expect(related.contains("  2  Video 12"))
        #expect(!related.contains("catalog:video:v10"))
        // One with nothing inside opens as its details; show always gives details.
        let details = await session.run("open catalog:video:v3")
        #expect(details.contains("catalog:video:v3"))
        #expect(details.contains("Video 3"))
        #expect(await session.run("show catalog:video:v10").contains("catalog:video:v10"))
        #expect(session.errors.isEmpty)
    }

    @Test func linkedItemsAreRowsThatOpenShowAndFavTake() async throws {
        let session = try CapturedREPL()
        let details = await session.run("show catalog:video:v3")
        #expect(details.contains("Linked\n  1  channel  catalog:channel:c4"))
        #expect(!details.contains("  channel    catalog:channel:c4"), "a link is a row, not a field")
        #expect(await session.run("fav 1") == "★ Channel 4 is a favorite")
        let videos = await session.run("open 1")
        #expect(videos.contains("  1  Video 3 about"))
        #expect(videos.contains(" 20  Video 98 about"))
        // Shown from a listing, the rows come after its rows, which keep their numbers.
        let shown = await session.run("show 2")
        #expect(shown.contains("Linked\n 21  channel  catalog:channel:c4"))
        #expect(await session.run("fav 2").hasPrefix("★ Video 8 about"))
        #expect(await session.run("show 21").contains("Channel 4"))
        #expect(await session.run("next").contains("Video 103 about"), "next still pages the listing")
        let links = Renderer.links(
            of: MediaItem(
                id: try ItemID(parsing: "m:movie:1"), title: "M",
                extra: ["trailer": "y:video:a", "trailers": "y:video:a y:video:b y:video:c", "genres": "Action, Family"]))
        #expect(links.map(\.label) == ["trailer", "trailer 2", "trailer 3"])
        #expect(links.map(\.id.description) == ["y:video:a", "y:video:b", "y:video:c"])
    }

    /// Every row-taking command takes several rows, ranges and lists (`download 2 3`, `fav 2-4`,
    /// `played 1,3`); one that fails is said with its item and the others go on.
    @Test func rowTakingCommandsTakeSeveralRowsAndRanges() async throws {
        let session = try CapturedREPL(environment: ["MEDIAHOST_CATALOG_MEDIA_BASE": "http://127.0.0.1:9/file"])
        _ = await session.run("search catalog swift")
        let favs = await session.run("fav 2-4")
        #expect(favs.split(separator: "\n").filter { $0.hasSuffix("is a favorite") }.count == 3, "\(favs)")
        let downloads = await session.run("download 1 5,6")
        #expect(downloads.split(separator: "\n").count == 3, "\(downloads)")
        #expect(await session.run("downloads").split(separator: "\n").filter { $0.contains("Video") }.count == 3)
        _ = await session.run("favs")
        let gone = await session.run("unfav 1 2")
        #expect(gone.split(separator: "\n").count == 2, "\(gone)")
        #expect(await session.run("played catalog:video:v1 catalog:video:v2") == "marked 2 items played")
        // What is wrong is said before anything is done.
        _ = await session.run("search catalog swift")
        #expect(await !session.repl.execute("fav 4-2"))
        #expect(session.errors.hasSuffix("4-2 runs backwards: write 2-4"), "\(session.errors)")
        #expect(await !session.repl.execute("download 1 999"))
        #expect(session.errors.contains("there is no row 999 in the last listing"))
        #expect(await !session.repl.execute("fav 1-5000"))
        #expect(session.errors.hasSuffix("1-5000 is more than 1,000 rows"))
        // One that fails is said with its item; the rest are done; the line fails.
        #expect(await !session.repl.execute("show 1 catalog:video:nope 2"))
        #expect(session.errors.contains("catalog:video:nope: "), "\(session.errors)")
        #expect(session.errors.hasSuffix("1 of 3 did not"), "\(session.errors)")
    }

    @Test func everyRowTakingCommandTakesTheRowsOfAnyListing() async throws {
        let session = try CapturedREPL(environment: ["MEDIAHOST_CATALOG_MEDIA_BASE": "http://127.0.0.1:9/file"])
        _ = await session.run("download catalog:video:v3")
        _ = await session.run("download catalog:video:v4")
        #expect(await session.run("downloads").contains("Video 4"))
        #expect(await session.run("show 2").contains("catalog:video:v4"))
        #expect(await session.run("fav 2").hasPrefix("★ Video 4 about"))
        _ = await session.run("downloads")
        let removed = await session.run("remove 1 --keep-file")
        #expect(removed == "removed the download of Video 3 about science (the file stays)", "\(removed)")
        #expect(await session.run("downloads").contains("Video 3") == false)
        // Rows that are not items say what `open` does with them.
        _ = await session.run("categories catalog")
        #expect(await !session.repl.execute("fav 1"))
        #expect(session.errors.contains("row 1 is a category: `open 1` browses it"))
        #expect(await !session.repl.execute("show 99"))
        #expect(session.errors.contains("there is no row 99 in the last listing (1–"))
    }

    @Test func wordsAreSplitAsAShellDoes() async throws {
        let session = try CapturedREPL()
        #expect(
            await session.run(#"config player.command "mpv --ao=null --vo=null""#).contains(
                "player.command = mpv --ao=null --vo=null"))
        let stored = try await session.fixture.call("config.get", ["key": "player.command"])
        #expect(stored.arrayValue?.first?["value"] == "mpv --ao=null --vo=null")
        #expect(await session.run(#"config player.command 'my player' --fs"#).contains("= my player --fs"))
        _ = await session.run("config player.command --unset")
        let unset = try await session.fixture.call("config.get", ["key": "player.command"])
        #expect(unset.arrayValue?.first?["value"] != "my player --fs")
        #expect(await !session.repl.execute("config player.command mpv --unset"))
        // Quotes group a query and are removed; a backslash escapes one character.
        let json = try CapturedREPL(json: true)
        let quoted = await json.run(#"search catalog "about swift""#)
        let direct = try await json.fixture.call("media.search", ["provider": "catalog", "query": "about swift"])
        #expect(try JSONValue(parsing: quoted) == direct)
        #expect(await json.run(#"search catalog about\ swift"#) == quoted)
        // A quote left open is an error that says how to write one.
        #expect(await !session.repl.execute("search catalog don't"))
        #expect(session.errors.contains("is not closed"))
        #expect(session.errors.contains(#"don't"#))
        // call takes its JSON as typed, or in quotes.
        #expect(await json.run(#"call favorites.list {"limit": 1}"#) == #"{"items":[]}"#)
        #expect(await json.run(#"call favorites.list '{"limit": 1}'"#) == #"{"items":[]}"#)
    }

    /// Errors read as sentences, not JSON-RPC labels, and their hints run as shown.
    @Test func errorsCarryNoProtocolWordsAndHintsRunAsTyped() async throws {
        let session = try CapturedREPL()
        #expect(await !session.repl.execute(#"list "no such list""#))
        #expect(!session.errors.contains("Invalid params"), "\(session.errors)")
        #expect(session.errors.contains(#"there is no list 'no such list'"#), "\(session.errors)")
        #expect(session.errors.contains(#"`list new "no such list"` makes it"#), "\(session.errors)")
        #expect(await session.repl.execute(#"list new "no such list""#), "the hint runs as shown: \(session.errors)")
    }

    /// `browse <provider> <n>` is the n-th of `categories <provider>` whatever was listed last;
    /// an empty page says why and leaves the last listing's rows as they were.
    @Test func numberedCategoriesAndEmptyListingsKeepTheRows() async throws {
        let session = try CapturedREPL()
        let music = await session.run("browse catalog music")
        let science = await session.run("browse catalog 2")
        #expect(science == (await session.run("browse catalog science")), "\(science)")
        #expect(science != music)
        let empty = await session.run("search catalog nothing-like-this")
        #expect(empty.contains("(nothing found for 'nothing-like-this' in catalog)"), "\(empty)")
        // Row 2 is still row 2 of the science listing.
        let second = try #require(science.split(separator: "\n").first { $0.hasPrefix("  2  ") })
        let shown = await session.run("show 2")
        #expect(shown.hasPrefix(String(second.dropFirst(5).prefix(12))), "\(shown)")
    }

    @Test func aProviderTypoIsCaughtNotSearchedEverywhere() async throws {
        let session = try CapturedREPL()
        #expect(await !session.repl.execute("search catalgo swift"))
        #expect(session.errors.contains("did you mean catalog?"))
        #expect(session.fixture.host.providerIDs.contains("catalog"))
        // Quoted, the words are a query for every provider.
        #expect(await session.run(#"search "catalgo swift""#).contains("(nothing found for 'catalgo swift')"))
        #expect(REPL.closest("youtub", in: ["youtube", "tmdb"]) == "youtube")
        #expect(REPL.closest("tmbd", in: ["youtube", "tmdb"]) == "tmdb")  // two letters swapped: one edit
        #expect(REPL.closest("tbmd", in: ["youtube", "tmdb"]) == nil)  // two edits on a short id
        #expect(REPL.closest("tmd", in: ["youtube", "tmdb"]) == "tmdb")
        #expect(REPL.closest("cats", in: ["youtube", "tmdb"]) == nil)
        #expect(REPL.editDistance(Array("kitten"), Array("sitting")) == 3)
        // A provider's id in another case is that provider, not a word of the query.
        let cased = await session.run("search CATALOG swift")
        #expect(!cased.contains("did you mean"), "\(cased)")
        #expect(session.fixture.control.calls.contains("search swift"), "\(session.fixture.control.calls)")
    }

    @Test func detailLabelsAreNeverCut() throws {
        let item = MediaItem(
            id: try ItemID(parsing: "m:post:1"), title: "T",
            extra: ["contentWarning": "spoilers", "sensitive": "true", "originalLanguage": "fr"])
        let text = Renderer(color: false).detail(item)
        #expect(text.contains("  originalLanguage fr"))
        #expect(text.contains("content warning: spoilers"))
        #expect(!text.contains("contentWar"))
        #expect(!text.contains("sensitive  true"))
        #expect(text.contains("media      sensitive: not previewed"))
    }

    /// A post's text under a content warning is shown in its place only when asked.
    @Test func aContentWarningStandsInPlaceOfTheText() throws {
        let item = MediaItem(
            id: try ItemID(parsing: "m:post:1"), title: "T", summary: "the butler did it",
            extra: ["contentWarning": "spoilers"])
        let hidden = Renderer(color: false).detail(item)
        #expect(hidden.contains("content warning: spoilers"))
        #expect(!hidden.contains("butler"), "\(hidden)")
        #expect(hidden.contains("`show m:post:1 --reveal` shows it"))
        #expect(Renderer(color: false).detail(item, reveal: true).contains("the butler did it"))
    }

    /// The rule for whatever reaches a terminal: wrapped at words under its own text, a URL
    /// wider than the room whole on the lines it needs (to be copied), another word wider than
    /// the room keeps its start and end, colours take no columns, short lines stay.
    @Test func everyLineIsFittedToTheTerminal() {
        let url = "https://media.example.com/podcasts/shows/12345/episodes/67890/the-long-file-name.mp3"
        let field = "  media      \(url)  audio/mpeg  12.3 MB"
        let fitted = Renderer.fitLines(field, width: 60).components(separatedBy: "\n")
        #expect(fitted.allSatisfy { Renderer.columns($0) <= 60 }, "\(fitted)")
        #expect(fitted.first?.hasPrefix("  media      https://media.ex") == true, "\(fitted)")
        let joined = fitted.map { $0.trimmingCharacters(in: .whitespaces) }.joined()
        #expect(joined.contains(url), "the URL is whole: \(fitted)")
        #expect(!fitted.joined().contains("…"))
        #expect(fitted.dropFirst().allSatisfy { $0.hasPrefix(String(repeating: " ", count: 13)) }, "\(fitted)")
        let note = "       " + String(repeating: "login youtube then MEDIAHOST_YOUTUBE_API_KEY ", count: 4)
        let wrapped = Renderer.fitLines(note, width: 50).components(separatedBy: "\n")
        #expect(wrapped.count > 1 && wrapped.allSatisfy { Renderer.columns($0) <= 50 }, "\(wrapped)")
        #expect(wrapped.allSatisfy { $0.hasPrefix("       ") }, "\(wrapped)")
        #expect(Set(wrapped.flatMap { $0.split(separator: " ") }) == Set(note.split(separator: " ")), "no word is cut")
        let colored = "\u{1B}[2m" + String(repeating: "x", count: 30) + "\u{1B}[0m"
        #expect(Renderer.fitLines(colored, width: 40) == colored, "escapes take no columns")
        #expect(Renderer.visibleColumns(Renderer.fitLines("a " + colored + colored, width: 40)) <= 40)
        #expect(Renderer.fitLines("short\n\nlines", width: 40) == "short\n\nlines")
        #expect(
            Renderer.elide("/home/me/.local/share/mediahost/downloads/show/episode.mp3", 30) == "/home/me/.l…s/show/episode.mp3")
    }

    @Test func terminalRowsFitByDisplayWidth() throws {
        var renderer = Renderer(color: false)
        renderer.terminalWidth = { 40 }
        let items = [
            MediaItem(id: try ItemID(parsing: "m:video:1"), title: "日本語のテキストも大丈夫です本当に長い", subtitle: "チャンネル", duration: 61),
            MediaItem(id: try ItemID(parsing: "m:video:2"), title: "Three emoji 👩‍💻🚀✨ in a row and more", duration: 3600),
            MediaItem(id: try ItemID(parsing: "m:video:3"), title: "short", duration: 5),
        ]
        var lines = renderer.items(Page(items: items)).components(separatedBy: "\n")
        try #require(lines.count == 4)
        // All videos: said once, above the rows.
        #expect(lines.removeFirst() == "     videos")
        for line in lines { #expect(Renderer.columns(line) <= 40, "\(line)") }
        // The metadata column ends at the same column on every row (its last part, the date,
        // lines up); at 40 columns the title keeps its room and the kind gives way (the
        // durations stay whole).
        #expect(Set(lines.map { Renderer.columns($0) }).count == 1, "\(lines)")
        #expect(lines[1].hasSuffix("1:00:00") && !lines[1].contains("video"), "\(lines)")
        #expect(lines[0].contains("…"))
        #expect(Renderer.columns("日本") == 4)
        #expect(Renderer.columns("👩‍💻") == 2)
        // Shown apart (xterm and tmux draw its parts apart, kitty as one): counted as drawn.
        #expect(Renderer.clean("a 👩‍💻 b 🏳️‍🌈") == "a 👩💻 b 🏳️🌈")
        #expect(Renderer.columns(Renderer.clean("👩‍💻")) == 4)
        #expect(Renderer.clean("क्‍ष") == "क्‍ष", "a ZWJ in a script stays")
        #expect(Renderer.columns("e\u{301}") == 1)
        #expect(Renderer.fit("日本語テキスト", 7) == "日本語…")
        #expect(Renderer.home("/home/ada/x/y.mp3", home: "/home/ada") == "~/x/y.mp3")
        #expect(Renderer.home("/home/adam/y.mp3", home: "/home/ada") == "/home/adam/y.mp3")
    }

    @Test func timesAreLocalAndRelativeWhenRecent() {
        let now = try! #require(ISO8601DateFormatter().date(from: "2026-11-22T15:30:00Z"))
        let berlin: (Date) -> Int = { _ in 3600 }  // CET, as Berlin is in November
        #expect(Renderer.when("2026-11-22T15:29:40Z", now: now) == "just now")
        #expect(Renderer.when("2026-11-22T15:27:00Z", now: now) == "3 min ago")
        #expect(Renderer.when("2026-11-22T10:30:00Z", now: now) == "5 h ago")
        #expect(Renderer.when("2026-11-22T01:05:00Z", now: now, utcOffset: berlin) == "today 02:05")
        #expect(Renderer.when("2026-11-20T23:30:00Z", now: now, utcOffset: berlin) == "2026-11-21 00:30")
        #expect(Renderer.when("not a time", now: now) == "not a time")
        // The local offset is the C library's, the same Foundation's time zones know.
        for date in [now, now.addingTimeInterval(-180 * 86_400)] {
            #expect(Renderer.localUTCOffset(date) == TimeZone.current.secondsFromGMT(for: date))
        }
    }

    @Test func historyAndClear() async throws {
        let session = try CapturedREPL()
        _ = await session.run("search catalog swift")
        _ = await session.run("search catalog rust")
        _ = await session.run("search catalog swift")
        let history = await session.run("history")
        #expect(history.components(separatedBy: "\n").first?.contains("swift") == true)
        #expect(history.components(separatedBy: "\n").count == 2)
        #expect(await session.run("history clear") == "forgot 2 searches")
    }

    @Test func errorsAreClearAndDoNotPrintResults() async throws {
        let session = try CapturedREPL()
        #expect(await !session.repl.execute("show 5"))
        #expect(session.errors.contains("there is no row 5"))
        #expect(await !session.repl.execute("categories nope"))
        #expect(session.errors.contains("providers are catalog, broken, locked"))
        #expect(await !session.repl.execute("frobnicate"))
        #expect(session.errors.contains("`help` lists the commands"))
        #expect(await !session.repl.execute("search locked x"))
        #expect(session.errors.contains("LOCKED_API_KEY"))
        #expect(await !session.repl.execute("call host.info {bad json"))
        #expect(session.errors.contains("params are not JSON"))
        #expect(await !session.repl.execute("next"))
        #expect(await !session.repl.execute("search catalog --kind film swift"))
        #expect(session.errors.contains("--kind takes one of video, channel"))
        #expect(await !session.repl.execute("search catalog swift --kind"))
        #expect(session.errors.contains("--kind takes one of"))
        #expect(await !session.repl.execute("favs --remote"))
        #expect(session.errors.contains("favs <provider> --remote"))
    }

    @Test func searchAcrossProvidersWarnsAboutFailures() async throws {
        let session = try CapturedREPL()
        let out = await session.run("search swift")
        #expect(out.contains("Video 0 about swift"))
        #expect(session.errors.contains("warning: broken: connection refused"))
        // Each provider's items under its name; the rows keep counting across them.
        #expect(out.hasPrefix("catalog\n  1  Video 0 about swift"))
        let one = await session.run("search catalog swift")
        #expect(one.hasPrefix("     Channel 1 · videos\n  1  Video 0 about swift"), "one provider: no provider heading: \(one)")
    }

    @Test func helpListsEveryCommandWithItsMethod() async throws {
        let session = try CapturedREPL()
        let help = await session.run("help all")
        for spec in CommandSpec.all {
            #expect(help.contains(spec.usage))
            #expect(help.contains(spec.method))
        }
        for method in servedMethodNames { #expect(help.contains(method)) }
    }

    @Test func scriptsStopAtFirstFailureUnlessKeepGoing() async throws {
        let session = try CapturedREPL()
        let status = await session.repl.run(lines: ["# a comment", "providers", "bogus", "favs"])
        #expect(status == 1)
        #expect(session.errors.contains("stopped at line 3"))
        let keepGoing = try CapturedREPL(keepGoing: true)
        #expect(await keepGoing.repl.run(lines: ["bogus", "providers"]) == 1)
        #expect(await keepGoing.run("quit") == "")
        #expect(keepGoing.repl.finished)
    }

    /// A script's downloads that cannot be read back at its end are said, and fail it (they
    /// were taken for "no downloads" and the script passed).
    @Test func aScriptSaysWhenItsDownloadsCannotBeRead() async throws {
        let session = try CapturedREPL()
        // A row an older or hand-edited store could hold: a time that is no number.
        let insert = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("INSERT INTO download (id, provider, title, url, path, state, seq, createdAt, updatedAt) "
                       "VALUES ('catalog:video:v1', 'catalog', 'V', 'http://x/v', '/tmp/v', 'completed', 1, 0, 'soon')")
            db.commit()
            """
        let done = await runProgram("/usr/bin/python3", ["-c", insert, session.fixture.host.paths.database])
        try #require(done.status == 0)
        let status = await session.repl.run(lines: ["providers"])
        #expect(status == 1)
        #expect(session.errors.contains("the downloads of this run cannot be read"), "\(session.errors)")
    }

    @Test func networkTextCannotDriveTheTerminal() {
        #expect(Renderer.clean("evil\u{1B}]0;title\u{07}\u{1B}[2Jtext\u{9B}31m") == "evil]0;title[2Jtext31m")
        #expect(Renderer.clean("a\nb") == "a b")
        #expect(Renderer.clean("a\nb", keepNewlines: true) == "a\nb")
    }

    @Test func completionOffersCommandsProvidersCategoriesAndMethods() {
        let cache = CategoryCache()
        let completer = Completer(
            providers: ["catalog", "broken"], methods: servedMethodNames, configKeys: ["log.level"], categories: cache,
            fetchCategories: { _ in [MediaCategory(id: "music", name: "Music"), MediaCategory(id: "m2", name: "Metal")] })
        #expect(completer.candidates(before: "", word: "se") == ["search", "seek", "seen"])
        #expect(completer.candidates(before: "browse ", word: "ca") == ["catalog"])
        #expect(completer.candidates(before: "browse catalog ", word: "m") == ["Metal", "Music"])
        #expect(cache.get("catalog")?.count == 2)
        #expect(completer.candidates(before: "call ", word: "favorites.li") == ["favorites.list"])
        #expect(completer.candidates(before: "search --kind ", word: "ch") == ["channel"])
        #expect(completer.candidates(before: "history ", word: "") == ["broken", "catalog", "clear"])
        #expect(completer.candidates(before: "config ", word: "log") == ["log.level"])
    }

    @Test func postsAreHighlightedOnlyWithColor() {
        let text = "Hi #swift @ada see x.com/a 🎉"
        let entities = [
            TextEntity(type: .hashtag, start: 3, end: 9, text: "#swift", value: "swift"),
            TextEntity(type: .mention, start: 10, end: 14, text: "@ada", value: "ada"),
            TextEntity(type: .url, start: 19, end: 26, text: "x.com/a", value: "https://x.com/a"),
            TextEntity(type: .media, start: 28, end: 28, text: "[image]", value: "https://img/1.jpg"),
        ]
        let colored = Renderer(color: true).highlighted(text, entities: entities)
        #expect(colored.contains("\u{1B}[36m#swift\u{1B}[0m"))
        #expect(colored.contains("\u{1B}[35m@ada\u{1B}[0m"))
        #expect(colored.contains("\u{1B}[34;4mx.com/a\u{1B}[0m"))
        #expect(colored.hasSuffix("\n[image]"))
        let plain = Renderer(color: false).highlighted(text, entities: entities)
        #expect(plain == text + "\n[image]")
        let sections = Renderer(color: false).rows(links: [], entities: entities)
        #expect(sections == "Media\n  1  https://img/1.jpg\nURLs\n  2  https://x.com/a\nHashtags\n  3  #swift\nUsers\n  4  @ada")
        // Control sequences in network text never reach the terminal, entities or not.
        #expect(
            !Renderer(color: false).highlighted(
                "a\u{1B}[2J #x", entities: [TextEntity(type: .hashtag, start: 6, end: 8, text: "#x", value: "x")]
            ).contains("\u{1B}"))
    }

    @Test func styledFieldsKeepTheirEscapesAndValuesLoseTheirs() {
        var item = MediaItem(id: ItemID(provider: "mastodon", kind: .post, nativeID: "1"), title: "t\u{1B}]0;x\u{07}")
        item.favorite = true
        item.extra = ["sensitive": "true", "boostedBy": "@a\u{1B}[2J"]
        let colored = Renderer(color: true).detail(item)
        #expect(colored.contains("\u{1B}[33m★ yes\u{1B}[0m"))
        #expect(colored.contains("\u{1B}[31msensitive: not previewed\u{1B}[0m"))
        #expect(!colored.contains("]0;x\u{07}") && !colored.contains("\u{1B}[2J"))
        let plain = Renderer(color: false).detail(item)
        #expect(
            !plain.contains("\u{1B}") && plain.contains("favorite   ★ yes")
                && plain.contains("media      sensitive: not previewed"))
    }
}

/// Lines with secrets never reach the history file.
@Suite struct HistorySecretTests {
    @Test func linesCarryingSecretsAreNotRemembered() async throws {
        let fixture = try HostFixture(environment: ["CATALOG_API_KEY": "env-secret-value-42"])
        let host = fixture.host
        let kept = [
            "search catalog swift", "login catalog", "login catalog ada", "config log.level debug",
            "config providers.catalog.api_key",
            "call config.set {\"key\":\"log.level\",\"value\":\"info\"}", "call auth.login {\"provider\":\"catalog\"}", "help",
        ]
        let refused = [
            "login catalog ada s3cret-password", "login tmdb ada 'pass word'",
            "config providers.catalog.api_key abcdef123456", "config providers.catalog.api_key \"abc def\"",
            "call config.set {\"key\":\"providers.catalog.api_key\",\"value\":\"abcdef123456\"}",
            "call auth.login {\"provider\":\"tmdb\",\"username\":\"ada\",\"password\":\"x\"}",
            "search catalog env-secret-value-42",
        ]
        for line in kept { #expect(REPL.mayKeepInHistory(line, host: host), "\(line)") }
        for line in refused { #expect(!REPL.mayKeepInHistory(line, host: host), "\(line)") }
    }
}

/// The command table is the whole grammar: execution, `help` and completion all read it.
@Suite struct CommandTableTests {
    @Test func namesAndAliasesAreUniqueAndResolve() {
        var seen = Set<String>()
        for spec in CommandSpec.all {
            for word in [spec.name] + spec.aliases {
                #expect(seen.insert(word).inserted, "\(word) names two commands")
                #expect(CommandSpec.named(word)?.name == spec.name)
                #expect(CommandSpec.named(word.uppercased())?.name == spec.name)
            }
        }
        #expect(CommandSpec.named("frobnicate") == nil)
    }

    @Test func everyMethodATableEntryNamesIsServed() {
        let served = Set(servedMethodNames)
        for spec in CommandSpec.all where !spec.method.hasPrefix("(") && spec.method != "any" {
            for method in spec.method.components(separatedBy: " / ") {
                #expect(served.contains(method), "\(spec.name) names \(method)")
            }
        }
    }

    @Test(arguments: [
        ("cats catalog", "categories catalog"), ("s catalog swift", "search catalog swift"),
        ("get catalog:video:v3", "show catalog:video:v3"), ("favorites", "favs"),
    ])
    func aliasesRunTheirCommand(alias: String, command: String) async throws {
        let session = try CapturedREPL(json: true)
        let viaAlias = await session.run(alias)
        let viaName = await session.run(command)
        #expect(!viaAlias.isEmpty)
        #expect(viaAlias == viaName)
    }

    @Test func seekPositionsReadAsAPersonWritesThem() {
        #expect(REPL.parsePosition("+30")! == (30, true))
        #expect(REPL.parsePosition("-10")! == (-10, true))
        #expect(REPL.parsePosition("-1:00")! == (-60, true))
        #expect(REPL.parsePosition("12:30")! == (750, false))
        #expect(REPL.parsePosition("1:02:03")! == (3723, false))
        #expect(REPL.parsePosition("750")! == (750, false))
        #expect(REPL.parsePosition("1.5")! == (1.5, false))
        for bad in ["", "+", "soon", "1:60", "1:2:3:4", "12:", "nan", "-inf", "1:-5"] {
            #expect(REPL.parsePosition(bad) == nil, "\(bad)")
        }
    }

    /// `help` is one screen: every command once, by what it is for; `help <command>` is that
    /// command alone, with two examples that are lines the REPL takes.
    @Test func helpFitsOneScreenAndEachCommandHasItsOwn() async throws {
        let session = try CapturedREPL()
        let help = await session.run("help")
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 22, "\(help)")
        #expect(lines.allSatisfy { $0.count < 80 }, "\(help)")
        let grouped = CommandSpec.groups.flatMap(\.names)
        #expect(grouped.count == Set(grouped).count, "a command in two groups")
        #expect(Set(grouped) == Set(CommandSpec.all.map(\.name)), "every command in one group")
        for name in grouped { #expect(help.contains(name), "\(name)") }
        for spec in CommandSpec.all {
            let examples = try #require(CommandSpec.examples[spec.name], "\(spec.name) has no examples")
            #expect(examples.count == 2, "\(spec.name)")
            for example in examples {
                let word = String(example.line.split(separator: " ").first ?? "")
                #expect(CommandSpec.named(word) != nil, "\(spec.name): \(example.line)")
            }
            let own = await session.run("help \(spec.name)")
            #expect(own.hasPrefix(spec.usage) && own.contains(examples[0].line), "\(spec.name): \(own)")
            #expect(own.contains("calls " + spec.method))
            for other in CommandSpec.all where other.name != spec.name && other.usage.count > 12 {
                let inOwn = ([spec] + spec.subcommands).contains { $0.usage.contains(other.usage) }
                #expect(!own.contains(other.usage) || inOwn, "help \(spec.name) shows \(other.name)")
            }
        }
        #expect(await session.run("help list new").hasPrefix("list new <name>"))
        #expect(await !session.repl.execute("help frobnicate"))
        #expect(session.errors.contains("no command 'frobnicate'; `help` lists them"))
    }

    /// `man mediahost-repl` is made from the same table: every command and subcommand, its
    /// method and examples, as mdoc whose text lines start with no dot.
    @Test func theManualPageHasEveryCommand() {
        let page = REPLManual.mdoc(date: "2026-11-29")
        #expect(page.hasPrefix(".Dd 2026-11-29\n.Dt MEDIAHOST-REPL 1"))
        for spec in CommandSpec.all.flatMap({ [$0] + $0.subcommands }) {
            #expect(page.contains(".It Li " + REPLManual.escape(spec.usage)), "\(spec.usage)")
        }
        for examples in CommandSpec.examples.values { #expect(page.contains(REPLManual.escape(examples[0].line))) }
        #expect(REPLManual.escape(".hidden \\n") == "\\&.hidden \\en")
    }

    /// A missing transcript is a plain fact, said with the item's title; times are the
    /// person's (local or relative), never ISO 8601 in UTC.
    @Test func plainFactsAndLocalTimes() async throws {
        let session = try CapturedREPL()
        _ = await session.run("search catalog swift")
        #expect(await session.run("transcript 1") == "no transcript for Video 0 about swift")
        #expect(session.errors.isEmpty, "\(session.errors)")
        let shown = await session.run("show 1")
        let published = try #require(shown.split(separator: "\n").first { $0.contains("published") })
        #expect(!published.contains("T") || !published.contains("Z"), "\(published)")
    }

    /// `show` says how many chapters a chapters file has, and how many fall within the media.
    @Test func chaptersInAFileAreCounted() throws {
        let id = try ItemID(parsing: "podcasts:episode:1:2")
        let chapters = MediaChapters.Response(
            id: id, source: "podcast:chapters",
            chapters: (0..<9).map { Chapter(start: Double($0) * 60, title: "Part \($0)") } + [
                Chapter(start: 30, title: "a picture", toc: false)
            ])
        #expect(Renderer.chapterCount(chapters, duration: 200) == "9 in its file, 4 within its length")
        #expect(Renderer.chapterCount(chapters, duration: 3600) == "9")
        #expect(Renderer.chapterCount(chapters, duration: nil) == "9")
        #expect(Renderer.chaptersField("9 in its file, 4 within its length").hasSuffix("(`chapters <n>` lists them)"))
        #expect(Renderer.chaptersField("https://x/c.json") == "in a chapters file (`chapters <n>` lists them)")
    }

    @Test func doctorWorksInTheREPL() async throws {
        let session = try CapturedREPL()
        let out = await session.run("doctor")
        #expect(out.contains("data dir") && out.contains("catalog"), "\(out)")
        let one = await session.run("doctor broken")
        #expect(one.contains("broken") && !one.contains("\ncatalog\n"), "\(one)")
    }

    @Test func helpShowsAliases() async throws {
        let session = try CapturedREPL()
        let help = await session.run("help all")
        for spec in CommandSpec.all where !spec.aliases.isEmpty {
            #expect(help.contains("(also " + spec.aliases.joined(separator: ", ") + ")"), "\(spec.name)")
        }
    }

    @Test func commandsMissingTheirArgumentsSayTheirUsage() async throws {
        let session = try CapturedREPL()
        for spec in CommandSpec.all where spec.usage.contains(" <") {
            #expect(await !session.repl.execute(spec.name), "\(spec.name) ran without its argument")
            // One with subcommands shows them all.
            let usage = ([spec.usage] + spec.subcommands.map(\.usage)).joined(separator: " | ")
            #expect(session.errors.hasSuffix("usage: " + usage), "\(spec.name)")
        }
    }

    /// `list`'s subcommands are commands of the table: parsed, shown by `help` and completed
    /// from it, so what help shows runs as shown.
    @Test func subcommandsAreParsedHelpedAndCompletedFromTheTable() async throws {
        let session = try CapturedREPL()
        let list = try #require(CommandSpec.named("list"))
        #expect(list.subcommands.map(\.name) == ["new", "rename", "delete", "download", "play", "move", "export", "import"])
        let player = try #require(CommandSpec.named("player"))
        #expect(player.subcommands.map(\.name) == ["pause", "resume", "stop", "skip", "previous", "seek", "volume"])
        #expect(player.resolve(CommandWords(words: ["vol", "50"], raw: "vol 50")).spec.name == "volume", "aliases resolve")
        let help = await session.run("help all")
        for sub in list.subcommands { #expect(help.contains("  " + sub.usage), "\(sub.usage)") }
        #expect(await session.run("list new Road") == "made the list Road")
        _ = await session.run("search catalog swift")
        _ = await session.run("add 1 to Road")
        let exported = await session.run("list export Road json")
        #expect(exported.contains("\"format\":\"mediahost-list\"") || exported.contains("mediahost-list"), "\(exported)")
        #expect(exported == (await session.run("export Road json")))
        #expect(await !session.repl.execute("list rename Road"))
        #expect(session.errors.hasSuffix("usage: list rename <name> <new>"), "\(session.errors)")
        #expect(await session.run("list rename Road Trip") == "renamed it Trip")
        #expect(await session.run("list Trip").contains("  1  Video"))
    }

    @Test func completionFollowsTheTable() {
        let completer = Completer(
            providers: ["catalog", "broken"], methods: servedMethodNames, configKeys: ["log.level"],
            categories: CategoryCache(),
            fetchCategories: { _ in nil })
        #expect(completer.candidates(before: "cats ", word: "") == ["broken", "catalog"])
        #expect(completer.candidates(before: "history clear ", word: "") == ["broken", "catalog"])
        #expect(completer.candidates(before: "history catalog ", word: "").isEmpty)
        #expect(completer.candidates(before: "favs catalog ", word: "--") == ["--pictures", "--remote"])
        #expect(completer.candidates(before: "s --kind ", word: "v") == ["video"])
        // An option is offered wherever it may go, until it is given.
        #expect(completer.candidates(before: "latest ", word: "--") == ["--live", "--no-shorts", "--pictures", "--unplayed"])
        #expect(completer.candidates(before: "latest --unplayed catalog ", word: "") == ["--live", "--no-shorts", "--pictures"])
        #expect(completer.candidates(before: "refresh ", word: "--") == ["--dry-run"])
        #expect(completer.candidates(before: "play 3 ", word: "") == ["--chapter", "--now", "--soundbite"])
        #expect(completer.candidates(before: "play 3 --now ", word: "") == ["--chapter", "--soundbite"])
        #expect(completer.candidates(before: "chapter ", word: "") == ["next", "prev"])
        #expect(completer.candidates(before: "browse ", word: "") == ["broken", "catalog"])
        #expect(completer.candidates(before: "browse catalog ", word: "").isEmpty)
        #expect(completer.candidates(before: "frobnicate ", word: "").isEmpty)
        #expect(completer.candidates(before: "", word: "q") == ["queue", "quit"])
        #expect(completer.candidates(before: "queue ", word: "") == ["add", "clear", "move", "remove"])
        // Subcommands from the same table: their names, then their own arguments.
        #expect(
            completer.candidates(before: "list ", word: "") == [
                "delete", "download", "export", "import", "move", "new", "play", "rename",
            ])
        #expect(completer.candidates(before: "list ", word: "ex") == ["export"])
        #expect(completer.candidates(before: "list export Road ", word: "") == ["json", "m3u", "opml"])
        #expect(completer.candidates(before: "list download Road ", word: "") == ["--new"])
        #expect(completer.candidates(before: "player ", word: "s") == ["seek", "skip", "stop"])
        let accounts = Completer(
            providers: ["catalog", "youtube"], methods: [], configKeys: [], categories: CategoryCache(),
            fetchCategories: { _ in nil },
            accountProviders: ["youtube"], kinds: ["catalog": [.channel, .video], "youtube": [.video, .channel, .playlist]])
        // The sync server's account beside the providers'.
        #expect(accounts.candidates(before: "login ", word: "") == ["sync", "youtube"])
        #expect(accounts.candidates(before: "logout ", word: "") == ["sync", "youtube"])
        #expect(accounts.candidates(before: "sync ", word: "") == ["status", "youtube"])
        #expect(accounts.candidates(before: "favs youtube ", word: "") == ["--pictures", "--remote"])
        #expect(accounts.candidates(before: "search catalog --kind ", word: "") == ["channel", "video"])
        #expect(accounts.candidates(before: "search --kind ", word: "").count == MediaKind.allCases.count)
    }
}

/// Lists from the REPL: names with spaces, rows, add/remove/move, export and import.
@Suite struct REPLListTests {
    @Test func listsThroughTheREPL() async throws {
        let session = try CapturedREPL()
        #expect(await session.run(#"list new "Road trip""#).contains("made the list Road trip"))
        _ = await session.run("search catalog swift")
        let added = await session.run(#"add 1 2 3 to "Road trip""#)
        #expect(added.components(separatedBy: "added ").count == 4, "\(added)")
        #expect(await session.run("lists").contains("Road trip  3 items"))
        let listed = await session.run(#"list Road trip"#)
        let rows = listed.split(separator: "\n").filter { $0.hasPrefix("  ") && $0.dropFirst(2).first?.isNumber == true }
        #expect(rows.count == 3, "\(listed)")
        // Row numbers now refer to the list: move its third first, take its second out.
        #expect(await session.run(#"list move "Road trip" 3 1"#).contains("moved it to place 1"))
        let moved = await session.run(#"list "Road trip""#)
        let firstRow = moved.split(separator: "\n").first { $0.hasPrefix("  1  ") }
        #expect(firstRow?.contains(rows[2].dropFirst(5).prefix(10)) == true, "\(moved)")
        #expect(await session.run(#"remove 2 from "Road trip""#).contains("took catalog:video:"))
        #expect(await session.run("lists").contains("Road trip  2 items"))
        // The details say which lists hold an item.
        #expect(await session.run("show 1").contains("lists      Road trip"))
        let file = session.fixture.directory + "/trip.json"
        #expect(await session.run(#"export "Road trip" json \#(file)"#).contains("wrote 2 entries"))
        #expect(await session.run("import \(file) into Copy").contains("imported 2 into Copy"))
        #expect(await session.run("list Copy").split(separator: "\n").count >= 2)
        // `list export` and `list import`, as help shows them, are export and import.
        let again = session.fixture.directory + "/again.json"
        #expect(await session.run(#"list export "Road trip" json \#(again)"#).contains("wrote 2 entries"), "\(session.errors)")
        #expect(await session.run("list import \(again) into Second").contains("imported 2 into Second"), "\(session.errors)")
        // Mistakes say what to do.
        _ = await session.run("list nope")
        #expect(session.errors.contains("there is no list 'nope'"))
        _ = await session.run("list new favorites")
        #expect(session.errors.contains("built-in list"))
        _ = await session.run(#"export "Road trip" pdf"#)
        #expect(session.errors.contains("opml, json or m3u"))
        _ = await session.run("add 1 into Copy")
        #expect(session.errors.contains("usage: add <n|id>... to <list>"))
    }
}

/// The methods a host with the shipped modules serves.
let servedMethodNames = (Dispatcher.runtimeMethods + PlayerModule.methods + SyncModule.methods + WebModule.methods).map {
    $0.method
}

/// An answer JSON cannot hold (JSONEncoder refuses a NaN).
private struct Unwritable: RPCMethod {
    static let method = "test.unwritable"
    static let effect = MethodEffect(.reads)
    struct Response: Codable, Sendable { var position: Double }
    func run(on host: HostRuntime) async throws -> Response { Response(position: .nan) }
}

@Suite struct REPLJSONOutputTests {
    /// `--json` output that cannot be written fails the command with why (it printed nothing
    /// and the command succeeded: a script took nothing for an answer).
    @Test func anAnswerThatCannotBeWrittenFailsTheCommand() async throws {
        let session = try CapturedREPL(json: true)
        let printed = await session.run("providers")
        #expect(!printed.isEmpty)
        do {
            try session.repl.printJSON(Unwritable.self, Unwritable.Response(position: .nan))
            Issue.record("an unwritable answer was taken")
        } catch {
            #expect(error.message.contains("test.unwritable could not be written as JSON"))
        }
    }
}

/// `show` of an episode and a show with Podcasting 2.0 elements: people with their roles,
/// soundbites, funding, the podroll, live state, formats, value said not paid; at 80 columns.
@Suite struct PodcastNamespaceDetailTests {
    @Test func theNamespaceIsShownWherePeopleLook() throws {
        var namespace = PodcastNamespace()
        namespace.people = [.init(name: "Adam Curry"), .init(name: "Becky Smith", role: "cover art designer", group: "visuals")]
        namespace.soundbites = [.init(start: 33.8, duration: 60, title: "The good bit")]
        namespace.funding = [.init(text: "Support the show!", url: "https://example.com/donate")]
        namespace.podroll = [
            .init(feedGuid: "917393e3-1b1e-5cef-ace4-edaa54e1f810", feedURL: "https://feeds.podcastindex.org/pc20.xml")
        ]
        namespace.live = .init(status: "live", start: "2021-09-26T13:30:00Z")
        namespace.seasonName = "Podcasting 2.0"
        namespace.alternateEnclosures = [
            .init(type: "audio/opus", sources: ["https://example.com/3.opus"], bitrate: 96_000, title: "High quality")
        ]
        namespace.value = .init(
            type: "lightning", method: "keysend", recipients: [.init(name: "podcaster", type: "node", address: "03ab", split: 99)]
        )
        var item = MediaItem(id: ItemID(provider: "podcasts", kind: .episode, nativeID: "1:2"), title: "Episode 3")
        item.namespace = namespace
        let renderer = Renderer(color: false)
        let text = renderer.detail(item)
        for expected in [
            "Adam Curry, host", "Becky Smith, cover art designer (visuals)", "1. 0:34 for 1:00  The good bit",
            "Support the show!  https://example.com/donate", "https://feeds.podcastindex.org/pc20.xml", "live now from",
            "season is", "Podcasting 2.0", "audio/opus 96 kb/s High quality", "said, not paid",
        ] {
            #expect(text.contains(expected), "\(expected)\n\(text)")
        }
        for line in text.split(separator: "\n") { #expect(Renderer.columns(String(line)) <= 80, "\(line)") }
    }
}

@Suite struct SeasonHeadingTests {
    /// A show's episodes over several seasons are listed under their seasons' headings (with
    /// their names), live items marked; one season needs no heading.
    @Test func seasonsAreHeadingsAndLivesAreMarked() {
        func episode(_ n: Int, season: Int?, name: String? = nil, live: String? = nil) -> MediaItem {
            var item = MediaItem(
                id: ItemID(provider: "podcasts", kind: .episode, nativeID: "1:\(n)"), title: "Episode \(n)", subtitle: "The Show")
            if let season { item.extra = ["season": String(season)] }
            var namespace = PodcastNamespace()
            namespace.seasonName = name
            if let live { namespace.live = .init(status: live) }
            item.namespace = namespace.isEmpty ? nil : namespace
            return item
        }
        let renderer = Renderer(color: false, width: 80)
        let text = renderer.items(
            Page(items: [
                episode(0, season: nil, live: "pending"), episode(4, season: 2, name: "The return"), episode(3, season: 2),
                episode(2, season: 1, name: "Beginnings"), episode(1, season: 1),
            ]))
        let lines = text.split(separator: "\n").map(String.init)
        let two = lines.firstIndex { $0.contains("Season 2: The return") }
        let one = lines.firstIndex { $0.contains("Season 1: Beginnings") }
        #expect(two != nil && one != nil && two! < one!, "\(text)")
        #expect(lines.contains { $0.contains("Episode 0") && $0.contains("upcoming live") }, "\(text)")
        for line in lines { #expect(Renderer.columns(line) <= 80, "\(line)") }
        let single = renderer.items(Page(items: [episode(2, season: 1), episode(1, season: 1)]))
        #expect(!single.contains("Season"), "\(single)")
    }
}
