import Basics
import FoundationEssentials
import Glibc
import HostAPI
import MediaKit
import MediaStore

/// A list name as given by a person: trimmed, 1-100 characters, no control characters, not
/// "favorites" (the built-in list, which every list command also accepts where it reads).
func checkedListName(_ name: String) throws -> String {
    let trimmed = name.trimming(.whitespacesAndNewlines)
    guard !trimmed.isEmpty, trimmed.count <= 100,
        !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else { throw HostError.invalidArgument("a list name is 1 to 100 characters, with no control characters") }
    guard trimmed.lowercased() != favoritesList else {
        throw HostError.invalidArgument("'favorites' is the built-in list (`fav <n>` adds to it); choose another name")
    }
    return trimmed
}

/// The name that stands for the favorites in exports and downloads.
public let favoritesList = "favorites"

extension HostRuntime {
    /// Every item of a list, or of the favorites.
    public func listContents(_ name: String) async throws -> [MediaItem] {
        if name.lowercased() == favoritesList {
            return try await store.favorites(limit: MediaStore.listLimit).items
        }
        guard try await store.list(named: name) != nil else { throw ListError.noSuchList(name) }
        return try await store.allListItems(name)
    }
}

extension ListsList: RPCMethod {
    public func run(on host: HostRuntime) async throws -> [ListInfo] { try await host.store.lists() }
}

extension ListsCreate: RPCMethod {
    public func run(on host: HostRuntime) async throws -> ListInfo {
        try await host.store.createList(try checkedListName(name))
    }
}

extension ListsRename: RPCMethod {
    public func run(on host: HostRuntime) async throws -> ListInfo {
        let newName = try checkedListName(to)
        try await host.store.renameList(name, to: newName)
        guard let info = try await host.store.list(named: newName) else { throw ListError.noSuchList(newName) }
        return info
    }
}

extension ListsDelete: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let deleted = try await host.store.deleteList(name)
        return Response(name: name, deleted: deleted)
    }
}

extension ListsAdd: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        guard try await host.store.list(named: name) != nil else { throw ListError.noSuchList(name) }
        let item = try await host.itemOrSnapshot(id)
        let added = try await host.store.addToList(name, [item]) > 0
        let annotated = try await host.annotate(item)
        return Response(name: name, item: annotated, added: added)
    }
}

extension ListsRemove: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let removed = try await host.store.removeFromList(name, id)
        return Response(name: name, id: id, removed: removed)
    }
}

extension ListsMove: RPCMethod {
    public func run(on host: HostRuntime) async throws -> ListInfo {
        try await host.store.moveInList(name, id, to: to)
        guard let info = try await host.store.list(named: name) else { throw ListError.noSuchList(name) }
        return info
    }
}

extension ListsItems: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Page {
        let limit = min(max(limit ?? 50, 1), 500)
        if name.lowercased() == favoritesList {
            return try await host.annotate(try await host.store.favorites(limit: limit, after: cursor), allFavorites: true)
        }
        return try await host.annotate(try await host.store.listItems(name, limit: limit, after: cursor))
    }
}

extension ListsDownload: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        var started: [Download] = []
        var skipped: [Skipped] = []
        for item in try await host.listContents(name) {
            do {
                if [.podcast, .channel, .playlist].contains(item.kind) {
                    guard new == true else {
                        skipped.append(
                            Skipped(id: item.id, reason: "a \(item.kind.rawValue): `--new` downloads its newest episode"))
                        continue
                    }
                    let page = try await host.annotate(
                        try await host.withProvider(item.id.provider) { try await $0.children(of: item.id, cursor: nil) })
                    guard let newest = page.items.first(where: { $0.enclosure != nil || $0.kind == .video }) else {
                        skipped.append(Skipped(id: item.id, reason: "nothing to download yet"))
                        continue
                    }
                    guard newest.download == nil, newest.played != true else {
                        skipped.append(Skipped(id: item.id, reason: "its newest, \(newest.title), is downloaded or played"))
                        continue
                    }
                    started.append(try await DownloadsStart(id: newest.id).run(on: host))
                } else {
                    started.append(try await DownloadsStart(id: item.id).run(on: host))
                }
            } catch {
                skipped.append(Skipped(id: item.id, reason: host.redactor.redact("\(error)")))
            }
        }
        return Response(started: started, skipped: skipped)
    }
}

extension ListsExport: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let items = try await host.listContents(name)
        let written: String
        let count: Int
        switch format {
        case .opml:
            (written, count) = ListWriter.opml(title: "mediahost: \(name)", items: items)
        case .json:
            written = try ListWriter.json(name: name, items: items)
            count = items.count
        case .m3u:
            let downloads = try await host.store.downloads(for: items.map(\.id))
            var paths: [ItemID: String] = [:]
            for (id, record) in downloads where record.state == .completed { paths[id] = record.path }
            (written, count) = ListWriter.m3u(items: items, paths: paths)
        }
        // Snapshots keep what a provider gave (a plugin's item URL may carry its token, which it
        // needs to play); a file written here leaves the host, so no secret goes with it.
        let text = host.redactor.redact(written)
        guard let path else { return Response(name: name, format: format, count: count, text: text) }
        let expanded = Path.expandingTilde(path)
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: expanded), options: .atomic)
        } catch {
            throw HostError.invalidArgument("cannot write \(expanded): \(describe(error))")
        }
        return Response(name: name, format: format, count: count, path: expanded)
    }
}

/// An OPML outline made into an item, or left out of an import and why.
enum ImportedOutline: Sendable {
    case item(MediaItem)
    case skipped(String)
}

extension ListsImport: RPCMethod {
    /// The largest file taken (a subscription list is kilobytes).
    public static let maxSize = OPMLReader.maxSize
    /// An item of a list from elsewhere (a file, another machine), as it is kept: checked as any
    /// item is, and with links only to the web (a `file:` or `javascript:` link in someone else's
    /// list is nothing this machine should open or play).
    static func received(_ item: MediaItem) -> MediaItem {
        func web(_ link: String?) -> String? { link.flatMap(ListWriter.webLink) }
        var item = item.checked()
        item.url = web(item.url)
        item.artwork = web(item.artwork)
        if let enclosure = item.enclosure, web(enclosure.url) == nil { item.enclosure = nil }
        if let entities = item.entities {
            item.entities = entities.filter { $0.type == .hashtag || $0.type == .mention || web($0.value) != nil }
        }
        return item
    }

    /// The providers that may know a feed as one of their items (`itemID(forFeed:)`); one that
    /// cannot be made (not configured) is passed over.
    static func feedClaimers(_ host: HostRuntime) -> [any MediaProvider] {
        host.providerIDs.compactMap { id in try? host.provider(id) }
    }

    /// "; youtube cannot be started: …" for each provider that cannot be made, to say why none
    /// took a feed.
    static func unstartable(_ host: HostRuntime) -> String {
        host.providerIDs.compactMap { id -> String? in
            do {
                _ = try host.provider(id)
                return nil
            } catch {
                return "; \(id) cannot be started: \((error as? ProviderError)?.message ?? "\(error)")"
            }
        }.joined()
    }

    public func run(on host: HostRuntime) async throws -> Response {
        let bytes: [UInt8]
        if let text {
            bytes = Array(text.utf8)
        } else if let path {
            let expanded = Path.expandingTilde(path)
            var info = stat()
            guard stat(expanded, &info) == 0 else {
                let why = errno == ENOENT ? "no such file" : String(cString: strerror(errno))
                throw HostError.invalidArgument("cannot read \(expanded): \(why)")
            }
            guard info.st_size <= OPMLReader.maxSize else { throw HostError.invalidArgument("\(expanded) is larger than 16 MB") }
            guard let data = FileManager.default.contents(atPath: expanded) else {
                throw HostError.invalidArgument("cannot read \(expanded)")
            }
            bytes = Array(data)
        } else {
            throw HostError.invalidArgument("give the file to import (path) or its text")
        }
        guard let format = format ?? ListImportFormat.guess(name: path, text: bytes) else {
            throw HostError.invalidArgument("cannot tell the format: give format (\(ListImportFormat.importable))")
        }
        var items: [MediaItem] = []
        var skipped: [String] = []
        var suggested: String?
        switch format {
        case .opml:
            let reader = try OPMLReader.read(bytes)
            guard let provider = host.feedProvider else {
                throw HostError.invalidArgument(
                    "no provider here opens feeds (the feeds capability), so an OPML's podcasts have nowhere to go")
            }
            suggested = reader.title
            skipped = reader.skipped.map { "\(URLRedaction.redact($0)): not an http(s) feed URL" }
            // A feed a provider knows as one of its items (a YouTube channel) is kept as that item.
            // Thousands of outlines are made into items on every core.
            let claimers = Self.feedClaimers(host)
            let entries = try reader.outlines.mapInSlices(smallest: 1024) { part in
                part.map { outline -> ImportedOutline in
                    if let claimed = claimers.lazy.compactMap({ $0.itemID(forFeed: outline.feedURL) }).first {
                        var item = MediaItem(id: claimed, title: outline.title ?? claimed.nativeID, url: outline.htmlURL)
                        item.feed = outline.feedURL
                        return .item(Self.received(item))
                    }
                    guard let id = ItemID.feed(outline.feedURL, provider: provider) else {
                        return .skipped("\(URLRedaction.redact(outline.feedURL)): too long")
                    }
                    var item = MediaItem(
                        id: id, title: outline.title ?? URL(string: outline.feedURL)?.host ?? "Podcast", url: outline.htmlURL)
                    item.feed = outline.feedURL
                    // The same rule as a JSON import's (`received`): a link kept is a web link, so a
                    // list exported and imported back exports the same (a `tag:` htmlUrl was kept
                    // here and dropped there).
                    return .item(Self.received(item))
                }
            }
            for entry in entries {
                switch entry {
                case .item(let item): items.append(item)
                case .skipped(let reason): skipped.append(reason)
                }
            }
        case .json:
            guard bytes.count <= OPMLReader.maxSize else { throw HostError.invalidArgument("the file is larger than 16 MB") }
            let document: ListWriter.Document
            do {
                document = try JSONDecoder().decode(ListWriter.Document.self, from: Data(bytes))
            } catch {
                throw HostError.invalidArgument("this is not a mediahost list (JSON): \(error)")
            }
            guard document.format == "mediahost-list" else {
                throw HostError.invalidArgument("this JSON is a '\(document.format)', not a mediahost list")
            }
            suggested = document.name
            for item in document.items {
                guard item.provider == item.id.provider, item.kind == item.id.kind else {
                    skipped.append("\(item.id): its provider or kind does not match its id")
                    continue
                }
                items.append(Self.received(item))
            }
        case .takeout, .newpipe, .freetube:
            let read = try SubscriptionExport.read(bytes, as: format)
            // The provider that knows a YouTube channel's feed as one of its channels keeps them.
            let claimers = Self.feedClaimers(host)
            guard let sample = read.channels.first else {
                items = []
                skipped = read.reasons
                break
            }
            guard let claimer = claimers.first(where: { $0.itemID(forFeed: sample.feed) != nil }) else {
                throw HostError.invalidArgument(
                    "no provider here has YouTube's channels (none knows \(sample.feed) as a channel), so this \(format.rawValue) export's \(read.channels.count) channels have nowhere to go"
                        + Self.unstartable(host))
            }
            items = []
            for channel in read.channels {
                if let id = claimer.itemID(forFeed: channel.feed) {
                    items.append(Self.received(channel.item(as: id)))
                } else {
                    skipped.append("\(channel.id): not a channel \(claimer.descriptor.id) knows")
                }
            }
            skipped = read.reasons + skipped
        case .m3u:
            throw HostError.invalidArgument(
                "M3U is for players: lists are exported as M3U, imported as \(ListImportFormat.importable)")
        }
        // An answer says the first reasons and how many more: not a million of them (the
        // apps' exports count theirs as they read).
        if format == .opml || format == .json, skipped.count > SubscriptionImport.maxReasons {
            let more = skipped.count - SubscriptionImport.maxReasons
            skipped = Array(skipped.prefix(SubscriptionImport.maxReasons)) + ["and \(more) more entries left out"]
        }
        // Checked on the way in: each branch above made its items with `checked()`.
        guard items.count <= MediaStore.listLimit else {
            throw HostError.invalidArgument("the file has \(items.count) entries; a list holds \(MediaStore.listLimit) at most")
        }
        // Into the favorites when asked by name (those there already keep their place and snapshot).
        if let name, name.trimming(.whitespaces).lowercased() == favoritesList {
            let already = try await host.store.favoriteIDs(among: items.map(\.id))
            var seen = already
            let new = items.filter { seen.insert($0.id).inserted }
            try await host.store.addFavorites(new)
            return Response(
                name: favoritesList, format: format, added: new.count, present: items.count - new.count, skipped: skipped)
        }
        // Someone else's favorites become a list of their own unless asked otherwise.
        var proposed = suggested.map { String($0.prefix(100)) }
        if proposed?.trimming(.whitespaces).lowercased() == favoritesList { proposed = Self.receivedFavorites }
        let listName = try checkedListName(name ?? proposed ?? "imported")
        if try await host.store.list(named: listName) == nil { try await host.store.createList(listName) }
        let added = try await host.store.addToList(listName, items)
        return Response(name: listName, format: format, added: added, present: items.count - added, skipped: skipped)
    }
}
