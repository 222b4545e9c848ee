import Basics
import FoundationEssentials
import Glibc
import MediaHost
import MediaKit

/// A provider outside the binary: a program speaking the provider protocol (provider-spec.json)
/// on its stdin/stdout. Found as `<data>/plugins/<id>/plugin.toml` or as `[plugins.<id>]` in
/// config.toml; described there well enough to be listed without starting it.
public struct PluginManifest: Sendable, Equatable {
    public var id: String
    /// Its folder: where it runs, and where it may keep files.
    public var directory: String
    public var executable: String
    public var arguments: [String]
    /// What it declares (name, kinds, capabilities, settings): listed before it ever runs.
    public var descriptor: ProviderDescriptor
    /// Where it was declared, for messages.
    public var origin: String
    /// Seconds to answer `initialize`.
    public var startTimeout: Double = 10

    /// The manifests of `<pluginsDirectory>/*/plugin.toml` and of config.toml's `[plugins]`, and
    /// what is wrong with the others (a broken plugin does not stop the rest).
    public static func discover(pluginsDirectory: String, configFile: String?, taken: Set<String>, only: String? = nil) -> (
        plugins: [PluginManifest], problems: [String], broken: [PluginProblem]
    ) {
        var plugins: [PluginManifest] = []
        var problems: [String] = []
        var broken: [PluginProblem] = []
        var seen = taken
        func add(_ result: Result<PluginManifest, PluginProblem>) {
            switch result {
            case .success(let manifest):
                guard seen.insert(manifest.id).inserted else {
                    problems.append("plugin \(manifest.id) (\(manifest.origin)): a provider with that id exists already")
                    return
                }
                plugins.append(manifest)
            case .failure(let problem):
                problems.append(problem.message)
                if let id = problem.id, ProviderDescriptor.isValidID(id), !seen.contains(id) {
                    seen.insert(id)
                    broken.append(problem)
                }
            }
        }
        if let configFile, let text = try? String(contentsOfFile: configFile, encoding: .utf8),
            let table = try? TOMLTable(string: text), let section = table["plugins"]?.table
        {
            for (id, value) in section.sorted(by: { $0.0 < $1.0 }) {
                let origin = "\(configFile) [plugins.\(id)]"
                guard let entry = value.table else {
                    problems.append("\(origin) is not a table")
                    continue
                }
                add(read(entry, id: id, directory: pluginsDirectory + "/" + id, origin: origin, createDirectory: true))
            }
        }
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: pluginsDirectory)) ?? []
        for id in folders.sorted() where only == nil || only == id {
            let file = pluginsDirectory + "/" + id + "/plugin.toml"
            guard FileManager.default.fileExists(atPath: file) else { continue }
            // A folder named like a built-in provider would stand for it: said, not skipped quietly.
            guard !seen.contains(id) else {
                if taken.contains(id) {
                    problems.append("plugin \(id) (\(file)): a built-in provider has that id; rename the folder")
                }
                continue
            }
            do {
                let table = try TOMLTable(string: try String(contentsOfFile: file, encoding: .utf8))
                // `id` in plugin.toml must agree with the folder (`plugin check` takes it as given).
                var name = id
                if let declared = table["id"]?.string, declared != id {
                    guard only != nil else {
                        problems.append("plugin \(id): \(file) declares id '\(declared)'; its folder must be named so")
                        continue
                    }
                    name = declared
                }
                add(read(table, id: name, directory: pluginsDirectory + "/" + id, origin: file, createDirectory: false))
            } catch {
                add(.failure(PluginProblem(message: "plugin \(id): \(file) cannot be read: \(error)", id: id)))
            }
        }
        return (plugins, problems, broken)
    }

    private static func read(_ table: TOMLTable, id: String, directory: String, origin: String, createDirectory: Bool)
        -> Result<PluginManifest, PluginProblem>
    {
        func problem(_ text: String) -> Result<PluginManifest, PluginProblem> {
            .failure(PluginProblem(message: "plugin \(id) (\(origin)): \(text)", id: id))
        }
        guard ProviderDescriptor.isValidID(id) else {
            return problem("its id must be lower-case letters, digits, '-' or '_', at most 32")
        }
        guard let command = table["command"]?.string, !command.isEmpty else { return problem("command is not set") }
        guard case .success(var words) = ShellWords.split(command), !words.isEmpty else {
            return problem("command '\(command)' cannot be read as a command line")
        }
        let program = words.removeFirst()
        let extra = table["args"]?.array?.compactMap { $0.string } ?? []
        let executable: String
        switch resolve(program, in: directory) {
        case .success(let path): executable = path
        case .failure(let why): return problem(why.message)
        }
        func strings(_ key: String) -> [String] { table[key]?.array?.compactMap { $0.string } ?? [] }
        var kinds: [MediaKind] = []
        for name in strings("kinds") {
            guard let kind = MediaKind(rawValue: name) else { return problem("unknown kind '\(name)'") }
            kinds.append(kind)
        }
        var capabilities: [ProviderDescriptor.Capability] = []
        for name in strings("capabilities") {
            guard let capability = ProviderDescriptor.Capability(rawValue: name), capability != .login,
                capability != .remoteFavorites
            else { return problem("unknown capability '\(name)' (plugins have no accounts yet)") }
            capabilities.append(capability)
        }
        var keys: [ProviderDescriptor.ConfigKey] = []
        for entry in table["config"]?.array ?? [] {
            guard let entry = entry.table, let name = entry["name"]?.string else {
                return problem("a [[config]] entry has no name")
            }
            keys.append(
                .init(
                    name: name, summary: entry["summary"]?.string ?? name, secret: entry["secret"]?.bool ?? false,
                    defaultValue: entry["default"]?.string))
        }
        if createDirectory { try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        let descriptor = ProviderDescriptor(
            id: id, name: table["name"]?.string ?? id, kinds: kinds, capabilities: capabilities, configKeys: keys,
            notes: "a plugin: \(origin)")
        var manifest = PluginManifest(
            id: id, directory: directory, executable: executable, arguments: words + extra, descriptor: descriptor, origin: origin
        )
        if let timeout = table["start_timeout"]?.int { manifest.startTimeout = Double(min(max(timeout, 1), 120)) }
        return .success(manifest)
    }

    /// A program path: relative to the plugin's folder when it has a '/' (and then inside it), an
    /// absolute path as given, else looked up on PATH.
    private static func resolve(_ program: String, in directory: String) -> Result<String, PluginProblem> {
        let fm = FileManager.default
        func checked(_ path: String) -> Result<String, PluginProblem> {
            if fm.isExecutableFile(atPath: path) { return .success(path) }
            if fm.fileExists(atPath: path) {
                return .failure(PluginProblem(message: "'\(program)' is not executable (chmod +x \(path))"))
            }
            return .failure(PluginProblem(message: "cannot find '\(program)' (relative to \(directory), or on PATH)"))
        }
        if program.hasPrefix("/") { return checked(program) }
        if program.contains("/") {
            // Written paths, not resolved links: a script linked in from elsewhere is the
            // plugin's; `../` out of the folder is not.
            func lexical(_ path: String) -> String {
                var parts: [Substring] = []
                for part in path.split(separator: "/") where part != "." {
                    if part == ".." { _ = parts.popLast() } else { parts.append(part) }
                }
                return "/" + parts.joined(separator: "/")
            }
            let folder = lexical(directory)
            let path = lexical(directory + "/" + program)
            guard path.hasPrefix(folder + "/") else {
                return .failure(
                    PluginProblem(
                        message:
                            "'\(program)' is outside the plugin's folder (a relative command is inside it; give an absolute path to run another)"
                    ))
            }
            return checked(path)
        }
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(folder)/\(program)"
            if fm.isExecutableFile(atPath: path) { return .success(path) }
        }
        return checked(directory + "/" + program).flatMap { _ in
            .failure(PluginProblem(message: "cannot find '\(program)' on PATH (a command in the folder is written ./\(program))"))
        }
    }

    /// The environment a plugin runs with: the basics a program needs and nothing else, so no
    /// other provider's secret (in `MEDIAHOST_*`, `*_TOKEN`, `*_API_KEY`...) reaches it; its own
    /// settings come in `initialize`.
    static func environment(from host: [String: String], plugin: PluginManifest) -> [String: String] {
        var environment = host.filter { key, _ in
            ["PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "USER", "LOGNAME", "SHELL"].contains(key)
                || key.hasPrefix("LC_") || key.hasPrefix("XDG_")
        }
        environment["MEDIAHOST_PLUGIN_ID"] = plugin.id
        environment["MEDIAHOST_PLUGIN_DIR"] = plugin.directory
        return environment
    }
}

public struct PluginProblem: Error, CustomStringConvertible {
    public var message: String
    /// The plugin it is about, when its manifest got that far.
    public var id: String?
    public var description: String { message }

    public init(message: String, id: String? = nil) {
        self.message = message
        self.id = id
    }
}
