import Foundation
import HostShare
import JSONRPC
import MediaHTTP
import MediaHost
import MediaKit
import TestSupport
import Testing

/// Sharing between two hosts in one process: a list offered by one is received by the other
/// with its code, and what the methods take.
@Suite struct ShareMethodTests {
    @Test func aListOfferedByOneHostIsReceivedByAnother() async throws {
        let sender = try HostFixture(modules: [ShareModule.self])
        _ = try await sender.checked("lists.create", ["name": "Road trip"])
        for id in ["catalog:video:v1", "catalog:video:v3"] {
            _ = try await sender.checked("lists.add", ["name": "Road trip", "id": .string(id)])
        }
        let offer = try await sender.checked("share.start", ["name": "Road trip", "minutes": 1])
        defer { Task { _ = try? await sender.call("share.stop", ["name": "Road trip"]) } }
        let port = try #require(offer["port"]?.intValue)
        let code = try #require(offer["code"]?.stringValue)

        let receiver = try HostFixture(http: MediaHTTPClient(), modules: [ShareModule.self])
        let wrong = try #require(
            await receiver.error("share.receive", ["peer": .string("127.0.0.1:\(port)"), "code": "000-000"]))
        #expect(wrong.message.contains("code"), "\(wrong.message)")
        let received = try await receiver.checked(
            "share.receive", ["peer": .string("127.0.0.1:\(port)"), "code": .string(code), "into": "From a friend"])
        #expect(received["added"] == 2 && received["name"] == "From a friend")
        let items = try await receiver.checked("lists.items", ["name": "From a friend"])
        #expect(items["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["catalog:video:v1", "catalog:video:v3"])
        let status = try await sender.checked("share.status")
        #expect(status.arrayValue?.first?["served"] == 1, "\(status)")
    }

    static let badParams: [(String, String, String)] = [
        ("share.start", #"{"name":"favorites","minutes":0}"#, "minutes is from 0 to 120"),
        ("share.start", #"{"name":"favorites","minutes":1000}"#, "minutes is from 0 to 120"),
        ("share.start", #"{"name":"favorites","port":70000}"#, "port is from 1 to 65535"),
        ("share.receive", #"{"peer":"bad host:80","code":"x"}"#, "is not an address"),
    ]

    @Test(arguments: badParams)
    func badParamsAreInvalidParams(method: String, params: String, needle: String) async throws {
        let fixture = try HostFixture(modules: [ShareModule.self])
        let error = try #require(await fixture.error(method, try JSONValue(parsing: params)))
        #expect(error.code == -32602)
        #expect(error.message.contains(needle), "\(error.message)")
    }

    @Test func theSpecDescribesTheSharingMethods() throws {
        #expect(try specDisagreements(ShareModule.methods) == [])
    }
}
