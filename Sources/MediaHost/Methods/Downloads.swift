import Basics
import FoundationEssentials
import Glibc
import HostAPI
import MediaKit
import MediaStore

extension Download {
    init(_ record: DownloadRecord) {
        self.init(
            id: record.id, title: record.title, state: record.state, path: record.path, bytes: record.bytes,
            total: record.total ?? record.expectedLength, error: record.error, note: record.note,
            url: URLRedaction.redact(record.url))
    }

}

extension DownloadRecord {
    /// What items carry about their download.
    var info: DownloadInfo {
        DownloadInfo(state: state.rawValue, path: state == .completed ? path : nil, bytes: bytes, total: total ?? expectedLength)
    }
}

extension DownloadsStart: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Download {
        if let existing = try await host.store.download(id), existing.state != .failed, existing.state != .cancelled {
            return host.downloads.live.current(existing)
        }
        let source = try await host.withProvider(id.provider) { try await $0.downloadSource(for: id) }
        // The item is asked for its title only when finding its media did not read it.
        let title: String
        if let known = source.title {
            title = known
        } else {
            title = (try? await host.withProvider(id.provider) { try await $0.item(id) })?.title ?? source.suggestedName
        }
        return host.downloads.live.current(try await host.downloads.start(id, source: source, title: title))
    }
}

extension DownloadsList: RPCMethod {
    public func run(on host: HostRuntime) async throws -> [Download] {
        try await host.store.downloads(in: state.map { [$0] }).map(host.downloads.live.current)
    }
}

/// A method on one download that answers with the download as it is after.
public protocol DownloadAction: RPCMethod where Response == Download {
    var id: ItemID { get }
    static func act(on downloads: DownloadManager, _ id: ItemID) async throws -> DownloadRecord
}

extension DownloadAction {
    public func run(on host: HostRuntime) async throws -> Download {
        host.downloads.live.current(try await Self.act(on: host.downloads, id))
    }
}

extension DownloadsPause: DownloadAction {
    public static func act(on downloads: DownloadManager, _ id: ItemID) async throws -> DownloadRecord {
        try await downloads.pause(id)
    }
}

extension DownloadsResume: DownloadAction {
    public static func act(on downloads: DownloadManager, _ id: ItemID) async throws -> DownloadRecord {
        try await downloads.resume(id)
    }
}

extension DownloadsCancel: DownloadAction {
    public static func act(on downloads: DownloadManager, _ id: ItemID) async throws -> DownloadRecord {
        try await downloads.cancel(id)
    }
}

extension DownloadsRemove: RPCMethod {
    public func run(on host: HostRuntime) async throws -> Response {
        let removed = try await host.downloads.remove(id, keepFile: keepFile ?? false)
        return Response(id: id, removed: removed)
    }
}
