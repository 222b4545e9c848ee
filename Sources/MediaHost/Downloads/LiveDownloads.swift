import Basics
import FoundationEssentials
import Glibc
import MediaKit
import MediaStore
import Synchronization

/// The latest progress of every download running in this process, so listings show the bytes
/// arriving now rather than those of the last saved row, and a throttled copy of the byte count in
/// the store, so another process listing downloads sees them move too.
public final class LiveDownloads: Sendable {
    private let progress = Mutex<[String: (report: DownloadProgress, persisted: ContinuousClock.Instant?)]>([:])
    /// How often a running download's byte count is written to the store.
    static let persistInterval: Duration = .seconds(2)

    init(events: EventHub, store: MediaStore) {
        events.subscribe { [self] event in
            if let report = event.payload(DownloadProgress.self) {
                let persist = progress.withLock { entries -> Bool in
                    let now = ContinuousClock.now
                    let last = entries[report.id]?.persisted
                    let due = last.map { now - $0 >= Self.persistInterval } ?? true
                    entries[report.id] = (report, due ? now : last)
                    return due
                }
                if persist, let id = try? ItemID(parsing: report.id) {
                    Task.detached { try? await store.updateRunningDownloadBytes(id, bytes: report.bytes) }
                }
            } else if let change = event.payload(DownloadStateChange.self),
                change.state != DownloadRecord.State.running.rawValue
            {
                progress.withLock { $0[change.id] = nil }
            }
        }
    }

    /// The running download's latest report, if it is running here.
    public func report(for id: ItemID) -> DownloadProgress? { progress.withLock { $0[id.description]?.report } }

    /// A listing's row with the running transfer's figures. One running in another process
    /// shows the bytes on disk (its process saves the count only now and then); one left
    /// running by a process that has gone is queued (the next front end or service resumes it).
    func current(_ record: DownloadRecord) -> Download {
        var download = Download(record)
        if record.state == .running, let report = report(for: record.id) {
            download.bytes = report.bytes
            download.total = report.total ?? download.total
            download.rate = report.rate
            download.eta = report.eta
            return download
        }
        guard record.state != .completed, record.bytes > 0 || record.state == .running,
            let size = DownloadLock.partSize(record.partPath)
        else { return download }
        download.bytes = max(download.bytes, size)
        if record.state == .running, !DownloadLock.isHeldElsewhere(record.partPath) { download.state = .queued }
        return download
    }
}
