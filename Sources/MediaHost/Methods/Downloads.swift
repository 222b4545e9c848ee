import Basics
import FoundationEssentials
import Glibc
import MediaKit
import MediaStore

/// A download as clients see it.
public struct Download: Codable, Sendable, Equatable {
    public var id: ItemID
    public var title: String
    public var state: DownloadRecord.State
    /// Where the file is (or will be, once complete).
    public var path: String
    public var bytes: Int64
    public var total: Int64?
    /// Bytes per second and seconds left, while it runs in this process.
    public var rate: Double?
    public var eta: Double?
    public var error: String?
    public var note: String?
    public var url: String

    init(_ record: DownloadRecord) {
        id = record.id
        title = record.title
        state = record.state
        path = record.path
        bytes = record.bytes
        total = record.total ?? record.expectedLength
        error = record.error
        note = record.note
        url = URLRedaction.redact(record.url)
    }
}

extension DownloadRecord {
    /// What items carry about their download.
    var info: DownloadInfo {
        DownloadInfo(state: state.rawValue, path: state == .completed ? path : nil, bytes: bytes, total: total ?? expectedLength)
    }
}

/// Queues an item's media for download; the same item twice gives the existing download.
public struct DownloadsStart: RPCMethod {
    public static let method = "downloads.start"
    public static let effect = MethodEffect(.changes, idempotent: false, reachesOut: true)
    public typealias Response = Download
    /// e.g. "podcasts:episode:1200361736:abc".
    public var id: ItemID

    public init(id: ItemID) {
        self.id = id
    }

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

/// Every download in queue order, or those in one state.
public struct DownloadsList: RPCMethod {
    public static let method = "downloads.list"
    public static let effect = MethodEffect(.reads)
    public typealias Response = [Download]
    public var state: DownloadRecord.State?

    public init(state: DownloadRecord.State? = nil) {
        self.state = state
    }

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

/// Pauses a queued or running download; its `.part` file stays for resuming.
public struct DownloadsPause: DownloadAction {
    public static let method = "downloads.pause"
    public static let effect = MethodEffect(.changes)
    public var id: ItemID

    public init(id: ItemID) { self.id = id }
    public static func act(on downloads: DownloadManager, _ id: ItemID) async throws -> DownloadRecord {
        try await downloads.pause(id)
    }
}

/// Queues a paused, failed or cancelled download again; it continues from its `.part` file.
public struct DownloadsResume: DownloadAction {
    public static let method = "downloads.resume"
    public static let effect = MethodEffect(.changes, reachesOut: true)
    public var id: ItemID

    public init(id: ItemID) { self.id = id }
    public static func act(on downloads: DownloadManager, _ id: ItemID) async throws -> DownloadRecord {
        try await downloads.resume(id)
    }
}

/// Stops a download and deletes its partial file.
public struct DownloadsCancel: DownloadAction {
    public static let method = "downloads.cancel"
    public static let effect = MethodEffect(.removes)
    public var id: ItemID

    public init(id: ItemID) { self.id = id }
    public static func act(on downloads: DownloadManager, _ id: ItemID) async throws -> DownloadRecord {
        try await downloads.cancel(id)
    }
}

/// Forgets a download and deletes its file (unless keepFile).
public struct DownloadsRemove: RPCMethod {
    public static let method = "downloads.remove"
    public static let effect = MethodEffect(.removes)
    public var id: ItemID
    /// Keep the downloaded file on disk.
    public var keepFile: Bool?

    public init(id: ItemID, keepFile: Bool? = nil) {
        self.id = id
        self.keepFile = keepFile
    }

    public struct Response: Codable, Sendable, Equatable {
        public var id: ItemID
        public var removed: Bool
    }

    public func run(on host: HostRuntime) async throws -> Response {
        let removed = try await host.downloads.remove(id, keepFile: keepFile ?? false)
        return Response(id: id, removed: removed)
    }
}
