import HostAPI
import JSONRPC
import MediaKit

/// Calls that need more than one step: a search that reads its provider, a browse that finds
/// its category, paged listings, a login that offers to sync.
extension REPL {
    /// `search [<provider>] [--kind K] <query>`.
    func searchCall(_ line: CommandWords) throws(CommandError) -> Call {
        var words = line.words[...]
        var request = MediaSearch(query: "", kind: try line.value("--kind", as: MediaKind.self))
        // `search YouTube swift`: provider ids are read case-blind.
        if let word = words.first, providerIDs.contains(word.lowercased()), words.count > 1 {
            request.provider = word.lowercased()
            words = words.dropFirst()
        }
        guard !words.isEmpty else { throw CommandError.usage }
        // A first word one or two letters away from a provider id is a typo more often than a query.
        if request.provider == nil, words.count > 1, let word = words.first, !word.hasPrefix("#"), !word.hasPrefix("@"),
            let guess = Self.closest(word, in: providerIDs)
        {
            throw CommandError.invalid(
                "did you mean \(guess)? `search \(guess) \(words.dropFirst().joined(separator: " "))`; to search every provider for these words, quote them: search \"\(words.joined(separator: " "))\""
            )
        }
        request.query = words.joined(separator: " ")
        return listing(.search(request), pictures: line.has("--pictures"))
    }

    /// The provider id one or two edits away from `word` (letters case-blind), if exactly one is.
    static func closest(_ word: String, in ids: [String]) -> String? {
        let word = word.lowercased()
        guard word.count >= 3, !ids.contains(word) else { return nil }
        let near = ids.filter { id in
            let distance = editDistance(Array(word), Array(id))
            return distance >= 1 && distance <= (id.count <= 4 ? 1 : 2)
        }
        return near.count == 1 ? near[0] : nil
    }

    /// Edit distance with two neighbouring letters swapped counting as one edit (`tmbd` is one
    /// from `tmdb`), as typing mistakes go (optimal string alignment).
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var twoBack = Array(repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { current[j] = min(current[j], twoBack[j - 2] + 1) }
            }
            twoBack = previous
            previous = current
        }
        return previous[b.count]
    }

    /// `browse`: the category by row number, name or id, then the listing.
    func browse(provider: String, category text: String, pictures: Bool = false) -> Call {
        Call(method: MediaBrowse.method) { repl throws(RPCError) in
            let category = await repl.resolveCategory(provider: provider, text: text)
            try await repl.listing(.browse(MediaBrowse(provider: provider, category: category)), pictures: pictures)
                .perform(repl)
        }
    }

    /// A category given by row number of the last `categories`, by name, by id, or by its
    /// number as `categories <provider>` lists them (whatever was listed last).
    private func resolveCategory(provider: String, text: String) async -> String {
        if let n = Int(text), case .categories(provider, _) = listing, case .category(_, let category)? = listing.row(n) {
            return category.id
        }
        if categoryCache.get(provider) == nil,
            let categories = try? await dispatch(ProvidersCategories(provider: provider))
        {
            categoryCache.set(provider, categories)
        }
        let categories = categoryCache.get(provider) ?? []
        if let named = categories.first(where: { $0.name.equalsIgnoringCase(text) || $0.id == text }) {
            return named.id
        }
        if let n = Int(text), categories.indices.contains(n - 1) { return categories[n - 1].id }
        return text
    }

    /// A paged listing: runs its request and remembers it for `next` and `prev`.
    /// A paged listing's call; with `pictures`, its thumbnails follow its rows.
    func listing(_ request: PagedRequest, pictures: Bool = false) -> Call {
        switch request {
        case .browse(let browse):
            return .run(browse) { repl, page in repl.present(page: page, request: request, pictures: pictures) }
        case .children(let children):
            return .run(children) { repl, page in repl.present(page: page, request: request, pictures: pictures) }
        case .favorites(let favorites):
            return .run(favorites) { repl, page in repl.present(page: page, request: request, pictures: pictures) }
        case .list(let list):
            return .run(list) { repl, page in repl.present(page: page, request: request, pictures: pictures) }
        case .queue(let queue):
            return .run(queue) { repl, page in repl.present(page: page, request: request, pictures: pictures) }
        case .search(let search):
            return .run(search) { repl, result in
                for failure in result.errors ?? [] { repl.fail(failure.message, label: "warning") }
                repl.present(
                    page: Page(items: result.items, next: result.next, prev: result.prev, total: result.total), request: request,
                    pictures: pictures)
            }
        }
    }

    /// `login`: asks for the username and password of a session login when they are not given.
    func login(_ given: AuthLogin) -> Call {
        Call(method: AuthLogin.method) { repl throws(RPCError) in
            var request = given
            if request.password == nil, repl.needsPassword(request.provider) {
                guard let ask = repl.ask else {
                    throw RPCError(
                        code: RPCError.invalidParamsCode,
                        message: "usage in scripts: login \(request.provider) <username> <password>")
                }
                let cancelled = RPCError(code: RPCError.requestCancelledCode, message: "login cancelled")
                if request.username == nil {
                    guard let name = await ask("\(request.provider) username: ", false), !name.isEmpty else { throw cancelled }
                    request.username = name
                }
                guard let password = await ask("\(request.provider) password: ", true) else { throw cancelled }
                request.password = password
            }
            let status = try await repl.dispatch(request)
            try repl.printJSON(AuthLogin.self, status)
            repl.present(auth: status)
            if let missing = status.unsyncedFavorites, missing > 0 { try await repl.offerSync(missing, to: request.provider) }
        }
    }

    /// After a login: favorites made here while logged out can go to the account, if the
    /// person says so (scripts are told how).
    private func offerSync(_ missing: Int, to provider: String) async throws(RPCError) {
        let what =
            "\(missing) favorite\(missing == 1 ? "" : "s") kept here \(missing == 1 ? "is" : "are") not on your \(provider) account"
        guard let ask, !options.json else {
            display(what + "; `sync \(provider)` adds \(missing == 1 ? "it" : "them")")
            return
        }
        let answer = await ask(what + "; add \(missing == 1 ? "it" : "them") now? [y/N] ", false)
        guard let answer, answer.lowercased().hasPrefix("y") else { return }
        try await CommandSpec.syncCall(provider).perform(self)
    }
}
