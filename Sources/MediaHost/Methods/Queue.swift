import HostAPI
import MediaKit
import MediaStore

extension QueueList: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Page {
        let limit = min(max(limit ?? 50, 1), 500)
        let offset = cursor.flatMap { Int($0.rawValue) }.map { max(0, $0) } ?? 0
        let (items, total) = try await host.store.queue(limit: limit, offset: offset)
        let end = offset + items.count
        let page = Page(
            items: items, next: end < total ? Cursor(String(end)) : nil,
            prev: offset > 0 ? Cursor(String(max(0, offset - limit))) : nil, total: total)
        return try await host.annotate(page)
    }
}

extension QueueAdd: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        var items: [MediaItem] = []
        switch (ids, list) {
        case (let ids?, nil):
            guard !ids.isEmpty else { throw HostError.invalidArgument("ids: give at least one item to queue") }
            guard ids.count <= MediaStore.queueLimit else {
                throw HostError.invalidArgument("ids: at most \(MediaStore.queueLimit) items at once")
            }
            // Each as its provider has it now (else as kept, offline), so the queue plays offline too.
            for id in ids {
                try Task.checkCancellation()
                items.append(try await host.itemOrSnapshot(id))
            }
        case (nil, let list?):
            // As the list keeps them (no network), in its order.
            items =
                list.lowercased() == favoritesList
                ? try await host.store.favorites(limit: MediaStore.queueLimit).items
                : try await host.store.allListItems(list)
            guard !items.isEmpty else { throw HostError.invalidArgument("the list '\(list)' is empty: nothing to queue") }
        default:
            throw HostError.invalidArgument("give ids or a list to queue (one of them)")
        }
        let count = try await host.store.enqueue(items, next: next ?? false)
        return Response(added: try await host.annotate(items), count: count)
    }
}

extension QueueMove: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        guard from >= 1, to >= 1 else { throw HostError.invalidArgument("positions count from 1, as `queue.list` shows them") }
        try await host.store.moveInQueue(from: from - 1, to: to - 1)
        return Response(count: try await host.store.queue(limit: 0).total)
    }
}

extension QueueRemove: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let removed = try await host.store.dequeue(ids)
        let count = try await host.store.queue(limit: 0).total
        return Response(removed: removed, count: count)
    }
}

extension QueueClear: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response { Response(removed: try await host.store.clearQueue()) }
}
