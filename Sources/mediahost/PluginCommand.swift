import ArgumentParser
import Basics
import BuiltinProviders
import FoundationEssentials
import Glibc
import HostPlugins
import MediaHost
import MediaKit

/// `mediahost plugin check|new`: for people writing a provider as a plugin.
struct PluginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plugin",
        abstract: "List the plugins, check one against the protocol, or start a new one.",
        discussion:
            "A plugin is a folder with plugin.toml and a program speaking provider-spec.json on its stdin/stdout; put it in $XDG_DATA_HOME/mediahost/plugins/<id>/ (the data dir's plugins folder) to use it. See the README's \"Writing a provider\".",
        subcommands: [List.self, Check.self, New.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The plugins of the data dir and config.toml: those loaded, and why the others are not.",
            discussion: "Exit status 0 when every plugin loads, 1 when one does not.")

        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let paths = global.host.paths
            let found = PluginManifest.discover(
                pluginsDirectory: paths.plugins, configFile: paths.configFile,
                taken: Set(BuiltinProviders.all.map(\.descriptor.id)))
            print("plugins in \(paths.plugins)")
            if found.plugins.isEmpty && found.problems.isEmpty { print("  (none: `mediahost plugin new <id>` starts one)") }
            for plugin in found.plugins {
                print("  \(plugin.id)  \(plugin.executable)")
            }
            for problem in found.problems { print("  not loaded: \(problem)") }
            if !found.problems.isEmpty { throw ExitCode(1) }
        }
    }

    struct Check: AsyncParsableCommand {
        @OptionGroup var global: GlobalOptions

        static let configuration = CommandConfiguration(
            abstract: "Run a plugin through every method of the protocol and check each answer against provider-spec.json.",
            discussion: "Exit status 0 when it conforms, 1 when anything is wrong (each problem is printed).")

        @Argument(help: "The plugin's folder (holding plugin.toml).", completion: .directory)
        var folder: String

        @Option(name: .customLong("set"), help: "A setting to send in initialize, as key=value (repeatable).")
        var settings: [String] = []

        func run() async throws {
            let manifest: PluginManifest
            do {
                manifest = try PluginChecker.manifest(folder: folder)
            } catch {
                throw ValidationError("\(error)")
            }
            var values: [String: String] = [:]
            for setting in settings {
                let parts = setting.split(separator: "=", maxSplits: 1)
                guard parts.count == 2 else { throw ValidationError("--set takes key=value, not '\(setting)'") }
                values[String(parts[0])] = String(parts[1])
            }
            print("checking plugin \(manifest.id) (\(manifest.executable))")
            let findings = await PluginChecker.check(manifest, settings: values)
            for finding in findings {
                print("  \(finding.passed ? "ok  " : "FAIL") \(finding.step): \(finding.detail)")
            }
            let failed = findings.filter { !$0.passed }.count
            print(failed == 0 ? "conforms to provider-spec.json" : "\(failed) problem(s)")
            if failed > 0 { throw ExitCode(1) }
        }
    }

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a working plugin skeleton to start from.",
            discussion: "The skeleton serves one item and passes `mediahost plugin check`.")

        @Argument(help: "The plugin's id: lower-case letters, digits, '-' or '_'.")
        var id: String

        @Option(help: "The language of the skeleton.")
        var lang: PluginSkeleton.Language = .python

        @Option(help: "The folder to write it in, as <dir>/<id> (default: the plugins folder of the data dir).")
        var dir: String?

        @OptionGroup var global: GlobalOptions

        func run() throws {
            guard ProviderDescriptor.isValidID(id) else {
                throw ValidationError("'\(id)' is not a valid id: lower-case letters, digits, '-' or '_', at most 32")
            }
            let skeleton = PluginSkeleton(language: lang, id: id)
            let parent = dir ?? global.host.paths.plugins
            let folder = parent + "/" + id
            guard !FileManager.default.fileExists(atPath: folder) else {
                throw ValidationError("\(folder) exists already; choose another id or --dir")
            }
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try skeleton.manifest.write(toFile: folder + "/plugin.toml", atomically: true, encoding: .utf8)
            try skeleton.program.write(toFile: folder + "/" + skeleton.file, atomically: true, encoding: .utf8)
            chmod(folder + "/" + skeleton.file, 0o755)
            print("wrote \(folder)/plugin.toml and \(skeleton.file); try: mediahost plugin check \(folder)")
        }
    }
}

/// The programs `plugin new` writes.
struct PluginSkeleton {
    enum Language: String, CaseIterable, ExpressibleByArgument {
        case python, sh
    }

    var file: String
    var manifest: String
    var program: String

    init(language: Language, id: String) {
        let item =
            #"{"id": "\#(id):video:hello", "provider": "\#(id)", "kind": "video", "title": "Hello from \#(id)", "url": "https://example.com/hello"}"#
        switch language {
        case .python:
            file = "plugin.py"
            program = """
                #!/usr/bin/env python3
                # A mediahost provider plugin: JSON-RPC 2.0, one message per line on stdin/stdout
                # (provider-spec.json). stderr is the plugin's log.
                import json, sys

                ITEMS = [\(item)]

                def handle(method, params):
                    if method == "initialize":
                        return {"id": "\(id)"}
                    if method == "provider.categories":
                        return [{"id": "all", "name": "Everything"}]
                    if method == "provider.browse":
                        return {"items": ITEMS}
                    if method == "provider.search":
                        text = params.get("text", "").lower()
                        return {"items": [i for i in ITEMS if text in i["title"].lower()]}
                    if method == "provider.item":
                        for i in ITEMS:
                            if i["id"] == params.get("id"):
                                return i
                        raise PluginError(-32002, "no such item")
                    if method in ("provider.children", "provider.downloadSource"):
                        raise PluginError(-32001, "not supported")
                    raise PluginError(-32601, "unknown method " + method)

                class PluginError(Exception):
                    def __init__(self, code, message):
                        self.code, self.message = code, message

                for line in sys.stdin:
                    message = json.loads(line)
                    if "id" not in message:
                        if message.get("method") == "shutdown":
                            break
                        continue
                    try:
                        reply = {"result": handle(message["method"], message.get("params") or {})}
                    except PluginError as error:
                        reply = {"error": {"code": error.code, "message": error.message}}
                    reply.update(jsonrpc="2.0", id=message["id"])
                    print(json.dumps(reply), flush=True)

                """
        case .sh:
            file = "plugin.sh"
            program = """
                #!/bin/sh
                # A mediahost provider plugin: JSON-RPC 2.0, one message per line on stdin/stdout
                # (provider-spec.json). stderr is the plugin's log. Needs jq.
                item='\(item)'
                while IFS= read -r line; do
                  id=$(printf '%s' "$line" | jq -c '.id // empty')
                  method=$(printf '%s' "$line" | jq -r '.method // empty')
                  if [ -z "$id" ]; then [ "$method" = shutdown ] && exit 0; continue; fi
                  case "$method" in
                    initialize) result='{"id":"\(id)"}' ;;
                    provider.categories) result='[{"id":"all","name":"Everything"}]' ;;
                    provider.browse|provider.search) result="{\\"items\\":[$item]}" ;;
                    provider.item) result="$item" ;;
                    provider.children|provider.downloadSource)
                      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"not supported"}}\\n' "$id"; continue ;;
                    *) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"unknown method"}}\\n' "$id"; continue ;;
                  esac
                  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\\n' "$id" "$result"
                done

                """
        }
        manifest = """
            command = "./\(file)"
            name = "\(id)"
            kinds = ["video"]
            capabilities = ["categories", "browse", "search", "item"]

            """
    }
}
