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
    static func connected() throws -> (HostFixture, ServiceConnection, serving: Task<Void, Never>, end: Int32) {
        let fixture = try HostFixture()
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
}
