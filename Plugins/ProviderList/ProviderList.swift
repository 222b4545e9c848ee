import Foundation
import PackagePlugin

/// Writes the list of compiled-in providers for the target it is applied to, from that target's
/// dependencies under Providers/, so `Package.swift`'s `providers` array is the one list:
/// - for `BuiltinProviders`, `<Name>` modules register `<Name>Provider`;
/// - for `mediahost-sandbox`, `<Name>Sandbox` modules serve `<Name>Replica`.
/// A provider whose types are named otherwise fails to build with the name that is missing.
@main struct ProviderList: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let providersFolder = context.package.directoryURL.appendingPathComponent("Providers").standardizedFileURL.path
        let modules = target.dependencies.compactMap { dependency -> String? in
            guard case .target(let module) = dependency,
                module.directoryURL.standardizedFileURL.path.hasPrefix(providersFolder + "/")
            else { return nil }
            return module.name
        }
        let text: String
        let output: URL
        if target.name == "BuiltinProviders" {
            output = context.pluginWorkDirectoryURL.appendingPathComponent("BuiltinProviders+List.swift")
            text = source(
                imports: ["MediaHost"] + modules, extending: "BuiltinProviders", modifier: "public ",
                declaration: "all: [ProviderRegistration]", entries: modules.map { ".of(\($0)Provider.self)" })
        } else {
            let names = modules.filter { $0.hasSuffix("Sandbox") }.map { String($0.dropLast("Sandbox".count)) }
            output = context.pluginWorkDirectoryURL.appendingPathComponent("SandboxReplicas+List.swift")
            text = source(
                imports: ["Sandbox"] + names.map { $0 + "Sandbox" }, extending: "SandboxReplicas", modifier: "",
                declaration: "all: [any SandboxReplica]", entries: names.map { "\($0)Replica()" })
        }
        return [
            .buildCommand(
                displayName: "Listing the compiled-in providers of \(target.name)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", "printf '%s' \"$1\" > \"$2\"", "sh", text, output.path],
                outputFiles: [output])
        ]
    }

    private func source(imports: [String], extending type: String, modifier: String, declaration: String, entries: [String])
        -> String
    {
        var lines = ["// Written by Plugins/ProviderList from Package.swift's `providers`: edit that list, not this."]
        lines += imports.sorted().map { "import \($0)" }
        lines += ["", "extension \(type) {", "    \(modifier)static let \(declaration) = ["]
        lines += entries.map { "        \($0)," }
        lines += ["    ]", "}", ""]
        return lines.joined(separator: "\n")
    }
}
