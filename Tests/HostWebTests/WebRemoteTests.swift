import Foundation
import HostAPI
import HostPlayer
import JSONRPC
import MediaHost
import MediaKit
import TestSupport
import Testing

@testable import HostWeb
@testable import HostWebLink

/// The web remote's parts that need no browser: who may pair and how often, what a browser may
/// call, what is kept of a token, Range requests, and `player.mark`'s position for "listen
/// here". The page itself is tested in real browsers (Tests/Web/test_web.py).
@Suite struct WebRemoteTests {
    @Test(arguments: [
        ("bytes=0-99", 1000, 0, 99), ("bytes=100-", 1000, 100, 999), ("bytes=-100", 1000, 900, 999),
        ("bytes=990-2000", 1000, 990, 999), ("bytes=0-0,5-9", 1000, 0, 0), ("bytes=-5000", 1000, 0, 999),
    ])
    func rangesAreReadAsBrowsersSendThem(header: String, size: Int, start: Int, end: Int) throws {
        #expect(WebRoutes.byteRange(header, size: size) == .range(start, end))
    }

    @Test func aRangeToFarPastTheEndIsTheRestOfTheFile() {
        #expect(WebRoutes.byteRange("bytes=0-99999999999999999999", size: 1000) == .range(0, 999))
        #expect(WebRoutes.byteRange("bytes=-99999999999999999999", size: 1000) == .range(0, 999))
    }

    @Test(arguments: ["bytes=1000-", "bytes=-0", "bytes=99999999999999999999-"])
    func rangesPastTheEndAreRefused(header: String) {
        #expect(WebRoutes.byteRange(header, size: 1000) == .unsatisfiable)
    }

    /// What is not a byte range is ignored: the whole file, as if it were not asked.
    @Test(arguments: ["bytes=5-2", "bytes=abc", "items=0-9", "bytes=", "bytes=-", "bytes=1-2-3"])
    func whatIsNotAByteRangeIsIgnored(header: String) {
        #expect(WebRoutes.byteRange(header, size: 1000) == .whole)
    }

    @Test func onlyAPicturesBytesAreServedAsArtwork() {
        #expect(WebRoutes.imageType([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0]) == "image/png")
        #expect(WebRoutes.imageType([0xFF, 0xD8, 0xFF, 0xE0]) == "image/jpeg")
        #expect(WebRoutes.imageType(Array("RIFF\0\0\0\0WEBPVP8 ".utf8)) == "image/webp")
        for page in ["<html><script>alert(1)</script>", "<svg xmlns='http://www.w3.org/2000/svg'><script/>", "alert(1)", ""] {
            #expect(WebRoutes.imageType(Array(page.utf8)) == nil, "\(page)")
        }
    }

    @Test func aCodeIsConfirmedOnceAndOnlyItsBrowserCollects() throws {
        let pairing = WebPairing()
        let (request, secret) = try pairing.start(device: "Firefox on Android", address: "10.0.0.5")
        #expect(request.code.count == 7 && request.code.contains("-"))
        #expect(pairing.waiting.map(\.code) == [request.code])
        guard case .waiting = pairing.answer(secret: secret) else { Issue.record("not waiting"); return }
        // As a person types it: lower case, no dash.
        // Confirmed, then taken back (its browser did not come for it): its wait goes on.
        #expect(pairing.confirm(code: request.code, name: nil, access: .full) != nil)
        guard case .withdrawn = pairing.withdraw(code: request.code) else { Issue.record("not withdrawn"); return }
        guard case .waiting = pairing.answer(secret: secret) else { Issue.record("not waiting again"); return }
        let typed = request.code.lowercased().replacing("-", with: "")
        #expect(pairing.confirm(code: typed, name: nil, access: .read) != nil)
        #expect(pairing.confirm(code: typed, name: nil, access: .full) == nil, "confirmed twice")
        guard case .unknown = pairing.answer(secret: "someone else's") else { Issue.record("a guess collected"); return }
        guard case .confirmed(let name, let access) = pairing.answer(secret: secret) else {
            Issue.record("not confirmed")
            return
        }
        #expect(name == "Firefox on Android" && access == .read)
        // A second wait (another tab, a retry) does not collect it too; nor is it withdrawn
        // while it is being collected.
        guard case .waiting = pairing.answer(secret: secret) else { Issue.record("collected twice"); return }
        guard case .collecting = pairing.withdraw(code: request.code) else { Issue.record("withdrawn while collected"); return }
        #expect(pairing.waiting.isEmpty)
    }

    @Test func askingTooOftenAndGuessingAreRefused() throws {
        let pairing = WebPairing()
        for _ in 0..<WebPairing.requestsPerAddress { _ = try pairing.start(device: "x", address: "10.0.0.9") }
        #expect(throws: WebPairing.StartRefusal.self) { try pairing.start(device: "x", address: "10.0.0.9") }
        // Another address is not held up by that one.
        _ = try pairing.start(device: "x", address: "10.0.0.10")
        for _ in 0..<WebPairing.failuresPerAddress - 1 { pairing.fail("10.0.0.9") }
        #expect(!pairing.isLockedOut("10.0.0.9"))
        pairing.fail("10.0.0.9")
        #expect(pairing.isLockedOut("10.0.0.9"))
        #expect(!pairing.isLockedOut("10.0.0.10"))
        // A link works once.
        let link = pairing.makeLink(access: .full, minutes: 1)
        #expect(pairing.useLink(link.secret) == .full)
        #expect(pairing.useLink(link.secret) == nil)
    }

    @Test func aTokenIsKeptOnlyAsItsHashInAPrivateFile() throws {
        let folder = try makeTemporaryDirectory()
        let store = WebDeviceStore(path: folder + "/auth/web-devices.json")
        let paired = try store.add(name: "Chrome on Android", access: .full)
        let text = try String(contentsOfFile: store.path, encoding: .utf8)
        #expect(!text.contains(paired.token))
        #expect(text.contains(WebDeviceStore.hash(paired.token)))
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? Int)
        #expect(mode & 0o077 == 0, "readable by others: \(String(mode, radix: 8))")
        #expect(store.device(token: paired.token)?.id == paired.device.id)
        #expect(store.device(token: paired.token + "x") == nil)
        #expect(store.device(token: "") == nil)
        // Another process's revocation is seen at the next request.
        let other = WebDeviceStore(path: store.path)
        #expect(try other.revoke(paired.device.id).map(\.id) == [paired.device.id])
        #expect(store.device(token: paired.token) == nil)
    }

    /// Pairing, revoking and pages being seen at once: nothing written is lost, and nothing
    /// revoked comes back (a page's `seen` written as the desk revoked it once did).
    @Test func changesAtOnceLoseNothing() async throws {
        let folder = try makeTemporaryDirectory()
        let store = WebDeviceStore(path: folder + "/auth/web-devices.json")
        let paired = try await withThrowingTaskGroup(of: WebDevice.self) { group in
            for index in 0..<24 { group.addTask { try store.add(name: "d\(index)", access: .full).device } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(store.all().count == 24)
        await withTaskGroup(of: Void.self) { group in
            for device in paired {
                group.addTask { store.markSeen(device.id) }
                group.addTask { _ = try? store.revoke(device.id) }
                group.addTask { store.markSeen(device.id) }
            }
        }
        #expect(store.all().isEmpty, "\(store.all().map(\.device.name))")
        #expect(WebDeviceStore(path: store.path).all().isEmpty)
    }

    @Test func aBrowserCannotCallTheDesksMethods() throws {
        let folder = try makeTemporaryDirectory()
        let remote = WebRemote(dataDir: folder, serviceSocket: folder + "/none.sock")
        let full = WebBridge(remote: remote, device: WebDevice(id: "a", name: "phone", access: .full, paired: ""))
        let reader = WebBridge(remote: remote, device: WebDevice(id: "b", name: "tv", access: .read, paired: ""))
        for method in ["config.set", "web.pair", "web.link", "web.revoke", "auth.login", "lists.export", "share.start"] {
            #expect(full.refusal(method) != nil, "\(method)")
        }
        #expect(full.refusal("player.pause") == nil)
        #expect(reader.refusal("player.pause")?.contains("read-only") == true)
        #expect(reader.refusal("queue.add") != nil)
        #expect(reader.refusal("player.status") == nil && reader.refusal("media.search") == nil)

        let single = full.screen(#"{"jsonrpc":"2.0","id":3,"method":"config.set","params":{"key":"a","value":"b"}}"#)
        #expect(single.forward == nil && single.replies.first?["error"]?["code"] == JSONValue(WebBridge.refusedCode))
        // A notification refused is not answered.
        #expect(full.screen(#"{"jsonrpc":"2.0","method":"config.set"}"#).replies.isEmpty)
        let batch = full.screen(
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"config.set\"},\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"host.info\"}]"
        )
        #expect(batch.batch && batch.replies.count == 1)
        let forwarded = try JSONParser.parse(try #require(batch.forward))
        #expect(forwarded.arrayValue?.count == 1 && forwarded.arrayValue?.first?["id"] == 2)
        #expect(!(batch.forward ?? []).contains(0x0A), "a raw newline would split the line")
        #expect(full.screen("{not json").replies.first?["error"]?["code"] == JSONValue(RPCError.parseErrorCode))
        #expect(full.screen("[]").replies.first?["error"]?["code"] == JSONValue(RPCError.invalidRequestCode))
        // The inbox listed and left as it is changes nothing; marked seen, it does.
        #expect(reader.refusal("new.list", params: ["keep": true]) == nil)
        #expect(reader.refusal("new.list", params: [:]) != nil)
    }

    @Test func theWebMethodsOutsideTheServiceSayWhatToDo() async throws {
        let fixture = try HostFixture(modules: [WebModule.self])
        let pair = try #require(await fixture.error("web.pair", ["code": "ABC-DEF"]))
        #expect(pair.message.contains("web.listen"), "\(pair.message)")
        #expect(try await fixture.checked("web.devices") == .array([]))
        let revoke = try #require(await fixture.error("web.revoke", ["id": "nope"]))
        #expect(revoke.code == AppErrorCode.notFound)
        let status = try await fixture.checked("web.status")
        #expect(status["listening"] == false && status["listen"] == "")
    }

    @Test func listeningElsewhereKeepsThePlaceInTheLibrary() async throws {
        let fixture = try HostFixture(modules: [PlayerModule.self])
        let id = "catalog:video:v1"
        _ = try await fixture.checked(
            "player.mark", ["ids": [.string(id)], "played": false, "position": JSONValue(754.5), "duration": 1800])
        let kept = try #require(try await fixture.host.store.playback(try ItemID(parsing: id)))
        #expect(kept.position == 754.5 && kept.duration == 1800 && !kept.played)
        for (params, words) in [
            (["ids": [.string(id)], "played": true, "position": 10] as JSONValue, "played false"),
            (["ids": [.string(id), "catalog:video:v2"], "played": false, "position": 10], "one id"),
            (["ids": [.string(id)], "played": false, "position": -1], "seconds from 0"),
            (["ids": [.string(id)], "played": false, "duration": 10], "goes with position"),
        ] {
            let error = try #require(await fixture.error("player.mark", params))
            #expect(error.message.contains(words), "\(error.message)")
        }
    }
}
