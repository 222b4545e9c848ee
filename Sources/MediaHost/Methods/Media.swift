import Basics
import FoundationEssentials
import Glibc
import HostAPI
import JSONRPC
import MediaKit
import MediaStore

extension MediaBrowse: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Page {
        try await host.annotate(
            host.page(provider, from: cursor) { try await $0.browse(category: category, cursor: cursor) })
    }
}

extension MediaSearch: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let text = query.trimming(.whitespacesAndNewlines)
        guard !text.isEmpty else { throw HostError.invalidArgument("query is empty") }
        guard text.count <= 500 else { throw HostError.invalidArgument("query is longer than 500 characters") }
        // Only searches that can run are remembered: an unknown provider is a typo, not history.
        if let provider {
            _ = try host.provider(provider)
        } else if !host.registry.registrations.contains(where: { host.isConfigured($0.descriptor) }) {
            throw HostError.noProviderConfigured
        }
        // A search is remembered once it ran: not when it failed or was cancelled, and across
        // providers when at least one answered.
        let response: Response
        let answered: Bool
        if let provider {
            let page = try await host.annotate(
                host.page(provider, from: cursor) { try await $0.search(SearchQuery(text: text, kind: kind, cursor: cursor)) })
            response = Response(items: page.items, next: page.next, prev: page.prev, total: page.total)
            answered = true
        } else {
            (response, answered) = try await searchAll(text, host: host)
        }
        try Task.checkCancellation()
        if cursor == nil, answered {
            try await host.store.recordSearch(query: text, provider: provider, kind: kind)
        }
        return response
    }

    /// Every configured provider concurrently; a failure of one is reported beside the others' items.
    /// - Returns: the response, and whether any provider answered.
    private func searchAll(_ text: String, host: HostRuntime) async throws -> (Response, Bool) {
        let positions = try cursor.map(MultiCursor.init(decoding:))
        // Those that search: a provider without the capability would only add an "unsupported".
        let ids = host.registry.registrations.filter {
            host.isConfigured($0.descriptor) && $0.descriptor.capabilities.contains(.search)
        }.map(\.descriptor.id)
            .filter { positions == nil || positions!.cursors[$0] != nil }
        guard !ids.isEmpty else { throw HostError.noProviderConfigured }
        let caller = stream == true ? RPCRequestContext.current : nil
        let outcomes = await withTaskGroup(of: (String, Swift.Result<Page, any Error>).self) { group in
            for id in ids {
                let query = SearchQuery(text: text, kind: kind, cursor: positions?.cursors[id].map { Cursor($0) })
                group.addTask { () -> (String, Swift.Result<Page, any Error>) in
                    do {
                        let page = try await host.page(id, from: query.cursor) { try await $0.search(query) }
                        return (id, .success(page))
                    } catch {
                        return (id, .failure(error))
                    }
                }
            }
            var outcomes: [String: Swift.Result<Page, any Error>] = [:]
            for await (id, outcome) in group {
                outcomes[id] = outcome
                if let caller { await send(outcome, of: id, to: caller, query: text, host: host) }
            }
            return outcomes
        }
        var items: [MediaItem] = []
        var next = MultiCursor(cursors: [:])
        var prev = MultiCursor(cursors: [:])
        var failures: [Failure] = []
        for id in ids {
            guard let outcome = outcomes[id] else {
                // Every provider's task answers with its id: one missing is a defect, reported.
                host.logger.error("media.search: no result for \(id)")
                failures.append(
                    Failure(provider: id, code: RPCError.internalErrorCode, message: "internal error: its result was lost"))
                continue
            }
            switch outcome {
            case .success(let page):
                items += page.items
                if let cursor = page.next { next.cursors[id] = cursor.rawValue }
                if let cursor = page.prev { prev.cursors[id] = cursor.rawValue }
            case .failure(let error):
                if error is CancellationError || Task.isCancelled { throw CancellationError() }
                let rpc = host.outgoing(Dispatcher.rpcError(for: error, method: Self.method, logger: host.logger))
                failures.append(Failure(provider: id, code: rpc.code, message: rpc.message))
            }
        }
        let response = Response(
            items: try await host.annotate(items), next: next.cursor, prev: prev.cursor, total: nil, errors: failures)
        return (response, failures.count < ids.count)
    }
}

extension MediaSearch {
    /// One provider's part of a streamed search, to the client that asked (secrets removed).
    fileprivate func send(
        _ outcome: Swift.Result<Page, any Error>, of provider: String, to caller: RPCRequestContext, query: String,
        host: HostRuntime
    ) async {
        var part = SearchResults(request: caller.id, query: query, provider: provider, items: [])
        switch outcome {
        case .success(let page):
            part.items = (try? await host.annotate(page.items)) ?? page.items
        case .failure(let error):
            if error is CancellationError || Task.isCancelled { return }
            let rpc = host.outgoing(Dispatcher.rpcError(for: error, method: Self.method, logger: host.logger))
            part.error = Failure(provider: provider, code: rpc.code, message: rpc.message)
        }
        guard let value = try? JSONCoding.value(part) else { return }
        let params = host.redactor.redact(value)
        caller.notify(SearchResults.method, params)
    }
}

/// The per-provider cursors of a search across providers, as one opaque cursor.
struct MultiCursor: Codable {
    var cursors: [String: String]

    init(cursors: [String: String]) { self.cursors = cursors }

    init(decoding cursor: Cursor) throws {
        guard cursor.rawValue.hasPrefix("all:"),
            let data = Data(base64Encoded: String(cursor.rawValue.dropFirst(4))),
            let decoded = try? JSONDecoder().decode(MultiCursor.self, from: data)
        else { throw HostError.invalidArgument("cursor does not belong to a search across providers") }
        self = decoded
    }

    var cursor: Cursor? {
        guard !cursors.isEmpty, let data = try? JSONEncoder().encode(self) else { return nil }
        return Cursor("all:" + data.base64EncodedString())
    }
}

extension MediaGet: RPCMethod {
    public func run(on host: HostRuntime) async throws -> MediaItem {
        // A video's SponsorBlock label of the whole video (a sponsored video, a paid
        // promotion), asked beside its details: `extra.sponsorblock`. Only for a provider with
        // segments: no task for every other item's details.
        let whole = host.hasSegments(id) ? Task { await Self.wholeVideoLabel(id, host: host) } : nil
        var item = try await host.annotate(host.withProvider(id.provider) { try await $0.item(id) })
        if let label = await whole?.value { item.extra = (item.extra ?? [:]).merging(["sponsorblock": label]) { $1 } }
        return item
    }

    /// "exclusive access (the whole video)", or nil: no segments for it, SponsorBlock off, no
    /// label, or SponsorBlock not reachable (said in the debug log).
    static func wholeVideoLabel(_ id: ItemID, host: HostRuntime) async -> String? {
        guard host.hasSegments(id), host.config.string(HostSettings.sponsorBlock) == "on" else {
            return nil
        }
        do {
            let answer = try await host.dispatcher.run(MediaSegments(id: id))
            return answer.full.map { $0.replacing("_", with: " ") + " (the whole video)" }
        } catch {
            host.logger.debug("no SponsorBlock label for \(id): \(error.message)")
            return nil
        }
    }
}

extension MediaChildren: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Page {
        try await host.annotate(host.page(id.provider, from: cursor) { try await $0.children(of: id, cursor: cursor) })
    }
}

extension HostRuntime {
    /// A provider's page asked with `cursor`: a `next` that leads back to that page (a
    /// provider's empty page past the end, answered with the cursor it was asked with) is
    /// dropped, so no client that pages on (the REPL's `next`, an editor, a script) loops.
    func page(_ provider: String, from cursor: Cursor?, _ body: (any MediaProvider) async throws -> Page) async throws
        -> Page
    {
        var page = try await withProvider(provider, body)
        if let next = page.next, next == cursor || (page.items.isEmpty && next == page.prev && cursor != nil) {
            logger.notice(
                "\(provider): its next page is the page asked (cursor \(DisplayText.cut(next.rawValue, to: 80))); no next")
            page.next = nil
        }
        return page
    }
}
