import Foundation
import JSONRPC
import MediaHost
import MediaKit
import Synchronization
import TestSupport
import Testing

@testable import HostService

#if canImport(Glibc)
    import Glibc
#endif

/// A front end's connection to the service, on the service's own serving code, over a socket
/// pair in one process: calls typed and by name, errors as the host's, notifications decoded
/// back, and the service going away said once.
@Suite struct ServiceConnectionTests {
    /// A host served on one end of a socket pair, and a connection on the other.
    static func connected(environment: [String: String] = [:]) throws -> (
        HostFixture, ServiceConnection, serving: Task<Void, Never>, end: Int32
    ) {
        let fixture = try HostFixture(environment: environment)
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let (served, end) = (fds[0], fds[1])
        let serving = Task { await ServiceServer.serve(served, host: fixture.host) }
        return (fixture, ServiceConnection(fd: end), serving, served)
    }

    @Test func callsAnswerAsTheHostInThisProcessDoes() async throws {
        let (fixture, service, serving, _) = try Self.connected()
        defer {
            service.close()
            serving.cancel()
        }
        let local = LocalConnection(host: fixture.host)
        let typed = try await service.run(MediaSearch(query: "swift", provider: "catalog"))
        #expect(typed == (try await local.run(MediaSearch(query: "swift", provider: "catalog"))))
        let value = try await service.value("providers.categories", params: ["provider": "catalog"])
        #expect(value == (try await local.value("providers.categories", params: ["provider": "catalog"])))
        let unknown = try ItemID(parsing: "nope:video:1")
        do throws(RPCError) {
            _ = try await service.run(MediaGet(id: unknown))
            Issue.record("an unknown provider is an error")
        } catch {
            let here = await fixture.error("media.get", ["id": "nope:video:1"])
            #expect(error.code == here?.code && error.message == here?.message)
            #expect(!error.isServiceGone)
        }
    }

    @Test func theServicesNotificationsArriveTyped() async throws {
        let (_, service, serving, _) = try Self.connected()
        defer {
            service.close()
            serving.cancel()
        }
        let heard = Mutex<[LibraryChange]>([])
        service.events.subscribe { event in
            if let change = event.payload(LibraryChange.self) { heard.withLock { $0.append(change) } }
        }
        _ = try await service.run(ListsCreate(name: "Later"))
        for _ in 0..<400 where heard.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(25)) }
        #expect(heard.withLock { $0 } == [LibraryChange(what: "lists", list: "Later")])
    }

    @Test func aServiceThatGoesAwayIsSaidOnceAndCallsSaySo() async throws {
        let (_, service, serving, served) = try Self.connected()
        defer { serving.cancel() }
        let told = Mutex(0)
        service.whenClosed { told.withLock { $0 += 1 } }
        shutdown(served, Int32(SHUT_RDWR))
        for _ in 0..<400 where told.withLock({ $0 == 0 }) { try await Task.sleep(for: .milliseconds(25)) }
        #expect(told.withLock { $0 } == 1)
        do throws(RPCError) {
            _ = try await service.value("host.info", params: nil)
            Issue.record("a call to a service that is gone fails")
        } catch {
            #expect(error.isServiceGone, "\(error)")
        }
        // Told at once to one who asks after.
        service.whenClosed { told.withLock { $0 += 1 } }
        #expect(told.withLock { $0 } == 2)
    }

    /// A service that reads one request and goes away without answering (killed while it ran):
    /// the other end of a socket pair, read on a thread until the request's line has come.
    static func dyingService() throws -> ServiceConnection {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let (served, end) = (fds[0], fds[1])
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(served, &byte, 1) == 1, byte != 0x0A {}
            close(served)
        }
        return ServiceConnection(fd: end)
    }

    /// A call the service may have done before it went (sent, not answered) is not done again
    /// here unless doing it twice is harmless: `downloads.start` fails saying it may have been
    /// done, and no download starts here; `favorites.list` (it reads) is answered here.
    @Test func aCallTheServiceMayHaveDoneIsNotDoneTwice() async throws {
        let fixture = try HostFixture(environment: ["MEDIAHOST_CATALOG_MEDIA_BASE": "http://127.0.0.1:9/file"])
        let local = LocalConnection(host: fixture.host)
        let switched = Mutex<[String]>([])
        let video = try ItemID(parsing: "catalog:video:v3")
        let started = FallbackConnection(service: try Self.dyingService(), local: local) { reason in
            switched.withLock { $0.append(reason) }
        }
        do throws(RPCError) {
            _ = try await started.run(DownloadsStart(id: video))
            Issue.record("a download sent to a service that died is not started again here")
        } catch {
            #expect(error.isServiceInterrupted, "\(error)")
            #expect(error.message == "the background service stopped during downloads.start; it may have been done")
        }
        #expect(try await local.run(DownloadsList()).isEmpty, "no second download here")
        #expect(switched.withLock { $0.count } == 1)
        // From then on calls run here: a new download starts here, once.
        _ = try await started.run(DownloadsStart(id: video))
        #expect(try await local.run(DownloadsList()).count == 1)

        let reading = FallbackConnection(service: try Self.dyingService(), local: local) { _ in }
        let favorites = try await reading.run(FavoritesList())
        #expect(favorites.items.isEmpty, "a read is answered here: \(favorites)")
    }

    /// A call never sent (the service was gone already) runs here, whatever it does.
    @Test func aCallNeverSentRunsHere() async throws {
        let (fixture, service, serving, served) = try Self.connected(
            environment: ["MEDIAHOST_CATALOG_MEDIA_BASE": "http://127.0.0.1:9/file"])
        defer { serving.cancel() }
        shutdown(served, Int32(SHUT_RDWR))
        let closed = Mutex(false)
        service.whenClosed { closed.withLock { $0 = true } }
        for _ in 0..<400 where !closed.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(25)) }
        let local = LocalConnection(host: fixture.host)
        let fallback = FallbackConnection(service: service, local: local) { _ in }
        _ = try await fallback.run(DownloadsStart(id: try ItemID(parsing: "catalog:video:v4")))
        #expect(try await local.run(DownloadsList()).count == 1)
    }

    /// A streamed search through the service: each provider's part reaches the caller of the
    /// relayed request, under that caller's own id, before the result; the result's bytes are
    /// the service's as it wrote them.
    @Test func aStreamedSearchStreamsThroughTheService() async throws {
        let (fixture, service, serving, _) = try Self.connected()
        defer {
            service.close()
            serving.cancel()
        }
        let heard = Mutex<[(String, JSONValue?)]>([])
        let caller = RPCRequestContext(id: "client-7") { method, params in heard.withLock { $0.append((method, params)) } }
        let bytes = try await RPCRequestContext.$current.withValue(caller) {
            try await service.call("media.search", params: ["query": "swift", "stream": true])
        }
        let parts = heard.withLock { $0 }
        #expect(parts.count == 2, "a part per provider: \(parts)")
        #expect(parts.allSatisfy { $0.0 == SearchResults.method && $0.1?["request"] == "client-7" }, "\(parts)")
        #expect(Set(parts.compactMap { $0.1?["provider"]?.stringValue }) == ["catalog", "broken"])
        let result = try JSONValue(parsing: bytes)
        #expect(result["items"]?.arrayValue?.isEmpty == false)
        // Not read and written again: a plain call's bytes are those this host's dispatcher writes.
        let plain = try await service.call("providers.list", params: nil)
        #expect(plain == (try await LocalConnection(host: fixture.host).call("providers.list", params: nil)))
    }
}
