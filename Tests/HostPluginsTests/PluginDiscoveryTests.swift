import Foundation
import HostPlugins
import JSONRPC
import MediaHost
import MediaKit
import TestSupport
import Testing

/// Plugins found in the data dir and served in this process: the Shelf example, and folders
/// that are no plugin, each said with why.
@Suite struct PluginDiscoveryTests {
    static let shelf = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Providers/Shelf").path

    static func addShelf(to dataDir: String) throws {
        try FileManager.default.createDirectory(atPath: dataDir + "/plugins", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: shelf, toPath: dataDir + "/plugins/shelf")
    }

    @Test func theShelfIsAProviderLikeABuiltInOne() async throws {
        let fixture = try HostFixture(discovery: [PluginDiscovery()], setUp: Self.addShelf)
        let providers = try await fixture.checked("providers.list")
        let shelf = try #require(providers.arrayValue?.first { $0["id"] == "shelf" })
        #expect(shelf["name"] == "Shelf (example plugin in sh)")
        let found = try await fixture.checked("media.search", ["provider": "shelf", "query": "metropolis"])
        #expect(found["items"]?.arrayValue?.first?["id"] == "shelf:movie:metropolis")
        let item = try await fixture.checked("media.get", ["id": "shelf:movie:nosferatu"])
        #expect(item["creator"] == "F. W. Murnau")
    }

    @Test func foldersThatAreNoPluginAreSaidWithWhy() throws {
        let dataDir = try makeTemporaryDirectory()
        try Self.addShelf(to: dataDir)
        for (folder, manifest) in [
            ("Bad Name", "command = \"/bin/cat\"\n"), ("catalog", "command = \"/bin/cat\"\n"),
            ("nocommand", "name = \"x\"\n"),
        ] {
            try FileManager.default.createDirectory(atPath: dataDir + "/plugins/" + folder, withIntermediateDirectories: true)
            try manifest.write(toFile: dataDir + "/plugins/\(folder)/plugin.toml", atomically: true, encoding: .utf8)
        }
        let paths = HostPaths(configFile: dataDir + "/none.toml", dataDir: dataDir, cacheDir: dataDir + "/cache")
        let found = PluginDiscovery().discover(paths: paths, taken: ["catalog"])
        let problems = found.problems
        #expect(found.registrations.map(\.descriptor.id).contains("shelf"))
        #expect(problems.contains { $0.contains("Bad Name") && $0.contains("lower-case letters") }, "\(problems)")
        #expect(problems.contains { $0.contains("catalog") && $0.contains("built-in") }, "\(problems)")
        #expect(problems.contains { $0.contains("nocommand") }, "\(problems)")
    }

    @Test func theCheckerPassesTheShelf() async throws {
        let manifest = try PluginChecker.manifest(folder: Self.shelf)
        let findings = await PluginChecker.check(manifest)
        #expect(!findings.isEmpty)
        #expect(findings.filter { !$0.passed }.map(\.detail) == [])
    }
}
