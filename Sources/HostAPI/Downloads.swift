import MediaKit

/// Queues an item's media for download; the same item twice gives the existing download.
public struct DownloadsStart: APIMethod {
    public static let method = "downloads.start"
    public static let effect = MethodEffect(.changes, idempotent: false, reachesOut: true)
    public typealias Response = Download
    /// e.g. "podcasts:episode:1200361736:abc".
    public var id: ItemID

    public init(id: ItemID) {
        self.id = id
    }
}

/// Every download in queue order, or those in one state.
public struct DownloadsList: APIMethod {
    public static let method = "downloads.list"
    public static let effect = MethodEffect(.reads)
    public typealias Response = [Download]
    public var state: DownloadState?

    public init(state: DownloadState? = nil) {
        self.state = state
    }
}

/// Forgets a download and deletes its file (unless keepFile).
public struct DownloadsRemove: APIMethod {
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

        public init(id: ItemID, removed: Bool) {
            self.id = id
            self.removed = removed
        }
    }
}

/// Where a download is.
public enum DownloadState: String, Codable, Sendable, CaseIterable {
    case queued, running, paused, completed, failed, cancelled
}

/// A download as clients see it.
public struct Download: Codable, Sendable, Equatable {
    public var id: ItemID
    public var title: String
    public var state: DownloadState
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

    public init(
        id: ItemID, title: String, state: DownloadState, path: String, bytes: Int64, total: Int64? = nil, rate: Double? = nil,
        eta: Double? = nil, error: String? = nil, note: String? = nil, url: String
    ) {
        self.id = id
        self.title = title
        self.state = state
        self.path = path
        self.bytes = bytes
        self.total = total
        self.rate = rate
        self.eta = eta
        self.error = error
        self.note = note
        self.url = url
    }
}

/// Pauses a queued or running download; its `.part` file stays for resuming.
public struct DownloadsPause: APIMethod {
    public typealias Response = Download
    public static let method = "downloads.pause"
    public static let effect = MethodEffect(.changes)
    public var id: ItemID

    public init(id: ItemID) { self.id = id }
}

/// Queues a paused, failed or cancelled download again; it continues from its `.part` file.
public struct DownloadsResume: APIMethod {
    public typealias Response = Download
    public static let method = "downloads.resume"
    public static let effect = MethodEffect(.changes, reachesOut: true)
    public var id: ItemID

    public init(id: ItemID) { self.id = id }
}

/// Stops a download and deletes its partial file.
public struct DownloadsCancel: APIMethod {
    public typealias Response = Download
    public static let method = "downloads.cancel"
    public static let effect = MethodEffect(.removes)
    public var id: ItemID

    public init(id: ItemID) { self.id = id }
}
