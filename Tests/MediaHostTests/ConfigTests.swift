import Foundation
import JSONRPC
import MediaHost
import Testing
import TestSupport

@Suite struct ConfigTests {
    @Test func layersDefaultFileStoreEnvironment() async throws {
        let fixture = try HostFixture(
            environment: ["MEDIAHOST_CATALOG_REGION": "DE"],
            configText: """
                [log]
                level = "error"

                [providers.catalog]
                region = "FR"
                api_key = "file-secret-value"
                """)
        let all = try await fixture.checked("config.get").arrayValue ?? []
        let byKey = Dictionary(uniqueKeysWithValues: all.map { ($0["key"]?.stringValue ?? "", $0) })
        #expect(byKey["log.level"]?["value"] == "error")
        #expect(byKey["log.level"]?["source"] == "file")
        #expect(byKey["providers.catalog.region"]?["value"] == "DE")
        #expect(byKey["providers.catalog.region"]?["source"] == "environment")
        #expect(byKey["providers.catalog.api_key"]?["value"] == "********")
        #expect(byKey["providers.catalog.api_key"]?["secret"] == true)
        #expect(!all.description.contains("file-secret-value"))

        let set = try await fixture.checked("config.set", ["key": "log.level", "value": "debug"])
        #expect(set["value"] == "debug" && set["source"] == "store")
        let shadowed = try await fixture.checked("config.set", ["key": "providers.catalog.region", "value": "IT"])
        #expect(shadowed["value"] == "DE")
        #expect(shadowed["note"]?.stringValue?.contains("MEDIAHOST_CATALOG_REGION") == true)
        let unset = try await fixture.checked("config.set", ["key": "log.level", "value": nil])
        #expect(unset["source"] == "file")
    }

    @Test func storedSettingsSurviveARestartAndReachProviders() async throws {
        let fixture = try HostFixture()
        _ = try await fixture.call("config.set", ["key": "providers.catalog.region", "value": "JP"])
        let reopened = try HostRuntime(
            paths: fixture.host.paths, providers: [CatalogProvider.registration(CatalogControl())], http: NoNetwork(),
            environment: [:])
        let entry = try await reopened.dispatcher.call("config.get", params: ["key": "providers.catalog.region"])
        #expect(String(decoding: entry, as: UTF8.self).contains("\"value\":\"JP\""))
    }

    @Test func rejectsUnknownKeysAndBadValues() async throws {
        let fixture = try HostFixture()
        #expect(await fixture.error("config.get", ["key": "nope"])?.message.contains("unknown setting 'nope'") == true)
        #expect(await fixture.error("config.set", ["key": "nope", "value": "1"])?.code == -32602)
        #expect(await fixture.error("config.set", ["key": "log.level", "value": "loud"])?.message.contains("trace, debug") == true)
        #expect(await fixture.error("config.set", ["key": "log.level", "value": ["a"]])?.code == -32602)
    }

    @Test func badConfigFileNamesFileAndLine() throws {
        #expect {
            try HostFixture(configText: "[log]\nlevel = \n")
        } throws: { error in
            let text = "\(error)"
            return text.contains("config.toml") && text.contains("line 2")
        }
    }

    @Test func logsRedactSecrets() {
        let redactor = Redactor()
        redactor.update(["sekrit-token-123"])
        #expect(redactor.redact("GET https://x/?key=sekrit-token-123 failed") == "GET https://x/?key=*** failed")
    }

    @Test func pathsFollowXDGAndOverrides() {
        let env = ["HOME": "/home/u", "XDG_DATA_HOME": "/xdg/data", "XDG_CONFIG_HOME": "relative/ignored"]
        let paths = HostPaths.resolve(environment: env)
        #expect(paths.dataDir == "/xdg/data/mediahost")
        #expect(paths.configFile == "/home/u/.config/mediahost/config.toml")
        #expect(paths.cacheDir == "/home/u/.cache/mediahost")
        #expect(HostPaths.resolve(environment: env.merging(["MEDIAHOST_DATA_DIR": "/d"]) { $1 }).database == "/d/mediahost.sqlite")
        #expect(HostPaths.resolve(configFlag: "/c.toml", dataDirFlag: "/flag", environment: env).dataDir == "/flag")
    }
}
