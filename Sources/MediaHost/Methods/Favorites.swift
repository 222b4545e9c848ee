import FoundationEssentials
import HostAPI
import JSONRPC
import MediaKit
import MediaStore

extension FavoritesAdd: RPCMethod {
    public func run(on host: HostRuntime) async throws -> MediaItem {
        var item = try await host.withProvider(id.provider) { try await $0.item(id) }
        try await host.store.addFavorite(item)
        let moved = try await host.replaceMovedShow(by: item)
        item = try await host.annotate(item)
        if let moved { item.extra = (item.extra ?? [:]).merging(["replaces": moved.id.description]) { $1 } }
        if let note = await host.syncAccountFavorite(id, true) {
            item.extra = (item.extra ?? [:]).merging(["account": note]) { $1 }
        }
        return item
    }
}

extension FavoritesRemove: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let removed = try await host.store.removeFavorite(id)
        let account = await host.syncAccountFavorite(id, false)
        return Response(id: id, removed: removed, account: account)
    }
}

extension HostRuntime {
    /// Mirrors a favorite to the provider's account when logged in. A failure there leaves the
    /// local favorite as it is and is reported.
    /// - Returns: what happened on the account, or nil when there is no account involved.
    func syncAccountFavorite(_ id: ItemID, _ favorite: Bool) async -> String? {
        guard (try? registry.registration(id.provider).descriptor.capabilities.contains(.remoteFavorites)) == true,
            sessions.load(id.provider) != nil
        else { return nil }
        do {
            try await withAccount(id.provider) { account, session in
                try await account.setAccountFavorite(id, favorite, session: session)
            }
            return favorite ? "saved to your \(id.provider) account" : "removed from your \(id.provider) account"
        } catch {
            let rpc = Dispatcher.rpcError(for: error, method: "favorites", logger: logger)
            return "kept here, but your \(id.provider) account was not updated: \(rpc.message)"
        }
    }
}

extension FavoritesSync: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        var response = Response(provider: provider, synced: 0, failed: [])
        for id in try await host.favoritesMissingFromAccount(provider) {
            try Task.checkCancellation()
            do {
                try await host.withAccount(provider) { account, session in
                    try await account.setAccountFavorite(id, true, session: session)
                }
                response.synced += 1
            } catch {
                response.failed.append(
                    .init(id: id, message: Dispatcher.rpcError(for: error, method: Self.method, logger: host.logger).message))
            }
        }
        return response
    }
}

extension HostRuntime {
    /// How many pages of the account's favorites are compared (a page is 50 on YouTube, 20 on TMDB).
    static let accountFavoritePages = 40

    /// The provider's favorites kept here, of the kinds its account keeps, that the account lacks.
    func favoritesMissingFromAccount(_ provider: String) async throws -> [ItemID] {
        let kinds = try accountProvider(provider).accountFavoriteKinds
        let local = try await store.favoriteIDs(provider: provider, kinds: kinds)
        guard !local.isEmpty else { return [] }
        var remote = Set<ItemID>()
        var cursor: Cursor?
        for _ in 0..<Self.accountFavoritePages {
            let page = try await withAccount(provider) { account, session in
                try await account.accountFavorites(cursor: cursor, session: session)
            }
            remote.formUnion(page.items.map(\.id))
            guard let next = page.next else { break }
            cursor = next
        }
        return local.filter { !remote.contains($0) }
    }
}

extension FavoritesList: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Page {
        if remote == true {
            guard let provider else { throw HostError.invalidArgument("remote favorites need a provider") }
            let cursor = cursor
            return try await host.annotate(
                host.withAccount(provider) { try await $0.accountFavorites(cursor: cursor, session: $1) })
        }
        let limit = limit ?? 50
        guard (1...500).contains(limit) else { throw HostError.invalidArgument("limit must be between 1 and 500") }
        if let cursor, !cursor.rawValue.hasPrefix("fav|") {
            throw HostError.invalidArgument("cursor does not belong to favorites.list")
        }
        // Snapshots are favorites by definition; annotating adds their download state.
        let page = try await host.annotate(
            host.store.favorites(provider: provider, kind: kind, limit: limit, after: cursor), allFavorites: true)
        // A provider no one knows (a typo) is said to be one; favorites kept of a provider since
        // removed (a plugin uninstalled) are still listed.
        if let provider, page.items.isEmpty, cursor == nil, !host.providerIDs.contains(provider) {
            throw HostError.unknownProvider(provider, known: host.providerIDs)
        }
        return page
    }
}

extension FavoritesLatest: RPCMethod {
    /// Favorites asked at once (each is a request to its provider).
    static let concurrency = 8

    public func run(on host: HostRuntime) async throws -> Response {
        let limit = limit ?? 100
        guard (1...500).contains(limit) else { throw HostError.invalidArgument("limit must be between 1 and 500") }
        if let provider, !host.providerIDs.contains(provider) {
            throw HostError.unknownProvider(provider, known: host.providerIDs)
        }
        // Read as a refresh reads them (`eachShow`); a person waits on this read, so as many at
        // once from one host as in all.
        let followed = try await host.followedShows(provider: provider, limit: 1000)
        let outcomes = await HostRuntime.eachShow(followed, limits: (Self.concurrency, Self.concurrency)) { show in
            do {
                let children = try await host.withProvider(show.id.provider) {
                    try await $0.children(of: show.id, cursor: nil).items
                }
                return .success(children)
            } catch {
                return .failure(error)
            }
        }
        var items: [MediaItem] = []
        var seen = Set<ItemID>()
        var failures: [Failure] = []
        for (show, outcome) in zip(followed, outcomes) {
            switch outcome {
            case .success(let children):
                for child in children where seen.insert(child.id).inserted { items.append(child) }
            case .failure(let error):
                if error is CancellationError || Task.isCancelled { throw CancellationError() }
                let rpc = host.outgoing(Dispatcher.rpcError(for: error, method: Self.method, logger: host.logger))
                failures.append(Failure(id: show.id, code: rpc.code, message: rpc.message))
            }
        }
        let dated = HostRuntime.newestFirst(items)
        var annotated = try await host.annotate(dated)
        if unplayed == true { annotated.removeAll { $0.played == true } }
        if shorts == false { annotated.removeAll(where: \.isShort) }
        if live == true { annotated = Self.liveFirst(annotated) }
        return Response(
            items: Array(annotated.prefix(limit)), followed: followed.count, errors: failures.isEmpty ? nil : failures)
    }
}

extension FavoritesLatest {
    /// The live streams among `items`: live now, then upcoming (soonest first), then ended (the
    /// latest first).
    static func liveFirst(_ items: [MediaItem]) -> [MediaItem] {
        func start(_ item: MediaItem) -> Date {
            item.namespace?.live?.start.flatMap(ISODate.parse) ?? item.published.flatMap(ISODate.parse) ?? .distantPast
        }
        let lives = items.filter { $0.namespace?.live != nil }
        let now = lives.filter { $0.namespace?.live?.status == "live" }
        let upcoming = lives.filter { $0.namespace?.live?.status == "pending" }.sorted { start($0) < start($1) }
        let ended = lives.filter { $0.namespace?.live?.status == "ended" }.sorted { start($0) > start($1) }
        return now + upcoming + ended
    }
}

extension HostRuntime {
    /// A show followed at another address that is `item`'s show moved there: the same
    /// `podcast:guid`, and its feed, read now, names `item`'s address as its own (`extra.movedTo`:
    /// its `itunes:new-feed-url`, or the self link of the feed its old address now serves). Then
    /// `item`, followed, takes its place: the old address is unfollowed (syncing, on the other
    /// devices too) and its rules go to the new one. A feed that only copies a guid proves
    /// nothing and replaces nothing: both stay followed.
    /// - Returns: the show it replaced.
    public func replaceMovedShow(by item: MediaItem) async throws -> MediaItem? {
        guard item.id.kind == .podcast, let guid = item.namespace?.guid, !guid.isEmpty, let address = item.feed,
            try await store.favoriteIDs(among: [item.id]).contains(item.id)
        else { return nil }
        let followed = try await store.favorites(kind: .podcast, limit: 1_000_000).items
        for old in followed where old.id != item.id && old.namespace?.guid == guid {
            let now = try? await withProvider(old.id.provider) { try await $0.item(old.id) }
            guard let moved = now?.extra?["movedTo"], SyncKeys.sameFeed(moved, address) else {
                logger.notice(
                    "\(old.id) has the podcast:guid of \(item.id) (\(guid)) but its feed does not say it moved there: both stay followed"
                )
                continue
            }
            try await store.removeFavorite(old.id)
            try await store.moveShowSettings(from: old.id.description, to: item.id.description)
            // Its episodes' places: the same episodes, under the new show's part of their ids.
            var carried = 0
            if old.id.provider == item.id.provider {
                let episodes = { (show: ItemID) in "\(show.provider):\(MediaKind.episode.rawValue):\(show.nativeID):" }
                carried = try await store.movePlayback(from: episodes(old.id), to: episodes(item.id))
            }
            logger.notice(
                "\(old.id) moved to \(address) (its feed says so; podcast:guid \(guid)): followed there as \(item.id), \(carried) episodes' places carried"
            )
            return old
        }
        return nil
    }
}
