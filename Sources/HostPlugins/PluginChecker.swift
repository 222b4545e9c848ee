import Basics
import FoundationEssentials
import Glibc
import JSONRPC
import MediaHost
import MediaKit

/// `mediahost plugin check`: runs a plugin through every method of the protocol and checks each
/// answer against provider-spec.json, as a conformance suite would.
public enum PluginChecker {
    public struct Finding: Sendable, Equatable {
        public var passed: Bool
        public var step: String
        public var detail: String
    }

    /// provider-spec.json as built in.
    public static let spec: Swift.Result<JSONValue, JSONParseError> = Swift.Result { () throws(JSONParseError) in
        try JSONParser.parse(PackageResources.provider_spec_json)
    }

    /// The plugin in `folder` (with its plugin.toml).
    public static func manifest(folder: String) throws -> PluginManifest {
        let found = PluginManifest.discover(
            pluginsDirectory: URL(fileURLWithPath: folder).deletingLastPathComponent().path, configFile: nil, taken: [],
            only: URL(fileURLWithPath: folder).lastPathComponent)
        if let manifest = found.plugins.first { return manifest }
        throw PluginProblem(message: found.problems.first ?? "\(folder) has no plugin.toml")
    }

    public static func check(_ manifest: PluginManifest, settings: [String: String] = [:]) async -> [Finding] {
        guard case .success(let spec) = spec else {
            return [Finding(passed: false, step: "spec", detail: "provider-spec.json is unreadable")]
        }
        let validator = SchemaValidator(document: spec)
        let process = PluginProcess(
            manifest: manifest, settings: settings,
            logger: Logger(label: "mediahost.plugin-check") { _ in SwiftLogNoOpLogHandler() })
        var findings: [Finding] = []
        func record(_ passed: Bool, _ step: String, _ detail: String) {
            findings.append(Finding(passed: passed, step: step, detail: detail))
        }
        let claimed = Set(manifest.descriptor.capabilities)

        do {
            let hello = try await process.running()
            record(true, "initialize", "answers as \(hello.id)")
        } catch {
            record(false, "initialize", "\(error)")
            process.stop()
            return findings
        }
        var itemID: String?
        var category: String?
        /// Items seen, for `provider.children`: one with something inside is asked first.
        var seen: [JSONValue] = []
        /// Calls `method`; an unsupported answer is fine for what plugin.toml does not claim, and
        /// (`leaf`) for an item with nothing inside, as the built-in providers answer.
        func step(
            _ method: String, _ params: JSONValue, capability: ProviderDescriptor.Capability?, leaf: Bool = false
        ) async -> JSONValue? {
            do {
                let result = try await process.callRaw(method, params, timeout: 20)
                guard let schema = validator.resultSchema(of: method) else { return result }
                let errors = validator.validate(result, against: schema)
                var problems = errors
                for (index, item) in (result["items"]?.arrayValue ?? (method == "provider.item" ? [result] : [])).enumerated() {
                    let id = item["id"]?.stringValue ?? ""
                    if !id.hasPrefix(manifest.id + ":") || item["provider"]?.stringValue != manifest.id {
                        problems.append("$.items[\(index)]: id \(id) and provider must be this plugin's (\(manifest.id))")
                    }
                }
                if problems.isEmpty {
                    let count = result["items"]?.arrayValue?.count ?? result.arrayValue?.count
                    record(true, method, count.map { "\($0) entries" } ?? "conforms")
                } else {
                    record(false, method, problems.prefix(5).joined(separator: "; "))
                }
                return result
            } catch let error as PluginCallError {
                let unsupported = error.code == -32001
                if unsupported, leaf {
                    record(true, method, "answers unsupported for an item with nothing inside (as the built-ins do)")
                    return nil
                }
                let unclaimed = capability.map { !claimed.contains($0) } ?? false
                record(
                    unsupported && unclaimed
                        || (error.code.map { (-32099)...(-32000) ~= $0 || $0 == -32602 } ?? false) && !unsupported,
                    method,
                    unsupported && !unclaimed
                        ? "answers unsupported, but plugin.toml claims \(capability?.rawValue ?? "it")"
                        : "answers error \(error.code ?? 0): \(error.error["message"]?.stringValue ?? "")")
                return nil
            } catch {
                record(false, method, "\(error)")
                return nil
            }
        }

        if let categories = await step("provider.categories", [:], capability: .categories) {
            category = categories.arrayValue?.first?["id"]?.stringValue
        }
        if let category,
            let page = await step("provider.browse", ["category": .string(category), "cursor": nil], capability: .browse)
        {
            itemID = page["items"]?.arrayValue?.first?["id"]?.stringValue
            seen += page["items"]?.arrayValue ?? []
        }
        if let page = await step("provider.search", ["text": "a", "kind": nil, "cursor": nil], capability: .search) {
            if itemID == nil { itemID = page["items"]?.arrayValue?.first?["id"]?.stringValue }
            seen += page["items"]?.arrayValue ?? []
        }
        if let itemID {
            _ = await step("provider.item", ["id": .string(itemID)], capability: .item)
            // Children of something that has them (a channel, a show, a playlist, a person);
            // with none seen, of the first item, where unsupported is the right answer too.
            let containers: Set<String> = ["channel", "playlist", "podcast", "user"]
            if let container = seen.first(where: { containers.contains($0["kind"]?.stringValue ?? "") })?["id"]?.stringValue {
                _ = await step("provider.children", ["id": .string(container), "cursor": nil], capability: .children)
            } else {
                _ = await step("provider.children", ["id": .string(itemID), "cursor": nil], capability: .children, leaf: true)
            }
            _ = await step("provider.downloadSource", ["id": .string(itemID)], capability: .download)
        } else {
            record(true, "provider.item", "not tried: no item found by browsing or searching for \"a\"")
        }
        do {
            _ = try await process.callRaw("provider.noSuchMethod", [:], timeout: 20)
            record(false, "unknown method", "answered provider.noSuchMethod instead of error -32601")
        } catch let error as PluginCallError {
            record(error.code == -32601, "unknown method", "answers error \(error.code ?? 0)")
        } catch {
            record(false, "unknown method", "\(error)")
        }
        process.stop()
        let exited = await process.hasExited(within: 3)
        record(
            exited, "shutdown",
            exited ? "exits at the end of its input" : "still running 3 s after shutdown and the end of its input")
        return findings
    }
}
