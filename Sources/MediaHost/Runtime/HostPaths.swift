import Basics
import FoundationEssentials
import Glibc
import MediaKit

/// Where mediahost keeps its files, following the XDG base directory spec.
public struct HostPaths: Sendable, Equatable {
    /// config.toml (it need not exist).
    public var configFile: String
    /// Database, REPL history and downloads.
    public var dataDir: String
    /// The artwork cache.
    public var cacheDir: String

    public var database: String { dataDir + "/mediahost.sqlite" }
    public var replHistory: String { dataDir + "/repl_history" }
    public var downloads: String { dataDir + "/downloads" }
    /// Login sessions and secret settings: 0600 files in a 0700 folder.
    public var authDir: String { dataDir + "/auth" }
    public var secretSettings: String { authDir + "/settings.json" }
    /// Touched by `config.set`, so every process of the data dir reads the settings again.
    public var settingsStamp: String { dataDir + "/settings.changed" }
    /// Plugins: a folder each, with its plugin.toml.
    public var plugins: String { dataDir + "/plugins" }

    /// Where the background service (`mediahost serve`) listens for this data dir:
    /// `$XDG_RUNTIME_DIR/mediahost/rpc-<hash of the data dir>.sock` (folder 0700, socket 0600),
    /// or `<data dir>/run/rpc.sock` without XDG_RUNTIME_DIR. One service per data dir: a front
    /// end with another `--data-dir` never attaches to it. (Its server is HostService's.)
    public func serviceSocket(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty, runtime.hasPrefix("/") {
            let tag = SHA256.hex(Array(dataDir.utf8)).prefix(12)
            return "\(runtime)/mediahost/rpc-\(tag).sock"
        }
        return dataDir + "/run/rpc.sock"
    }

    public init(configFile: String, dataDir: String, cacheDir: String) {
        self.configFile = configFile
        self.dataDir = dataDir
        self.cacheDir = cacheDir
    }

    /// Resolves paths from flags first, then MEDIAHOST_DATA_DIR and the XDG variables, then ~/.
    /// - Parameter sandbox: a try-out (`--sandbox`): its data (unless `--data-dir` names a folder)
    ///   and its cache are folders of their own beside the real ones
    ///   (`~/.local/share/mediahost-sandbox`), so nothing done in it (favorites, logins, the sync
    ///   account, settings, downloads) reaches the library.
    public static func resolve(
        configFlag: String? = nil, dataDirFlag: String? = nil, sandbox: Bool = false,
        environment env: [String: String] = ProcessInfo.processInfo.environment
    ) -> HostPaths {
        let home = env["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? Path.homeDirectory()
        func xdg(_ name: String, _ fallback: String) -> String {
            if let value = env[name], value.hasPrefix("/") { return value }
            return home + "/" + fallback
        }
        let configFile = configFlag ?? xdg("XDG_CONFIG_HOME", ".config") + "/mediahost/config.toml"
        let dataDir =
            dataDirFlag ?? env["MEDIAHOST_DATA_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? xdg("XDG_DATA_HOME", ".local/share") + "/mediahost"
        let cacheDir = xdg("XDG_CACHE_HOME", ".cache") + "/mediahost"
        // The sandbox's pictures are made up: they never fill the real cache either.
        let suffix = sandbox ? sandboxSuffix : ""
        return HostPaths(
            configFile: canonical(configFile), dataDir: canonical(dataDir) + (dataDirFlag == nil ? suffix : ""),
            cacheDir: canonical(cacheDir) + suffix)
    }

    /// What a sandbox's own folders add to the real ones' names.
    public static let sandboxSuffix = "-sandbox"

    /// One spelling per place: absolute, without `.`, `..`, doubled or trailing slashes, and
    /// with symbolic links resolved as far as the path exists. A data dir is known by it (the
    /// service's socket is named after it), so `/x/data/`, `/x/./data` and a link to it are the
    /// same data dir with the same service.
    public static func canonical(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var parts: [Substring] = []
        for part in absolute.split(separator: "/") {
            switch part {
            case ".": continue
            case "..": _ = parts.popLast()
            default: parts.append(part)
            }
        }
        // The longest part that exists is resolved by the kernel; the rest is kept as written.
        for existing in stride(from: parts.count, through: 1, by: -1) {
            guard let resolved = realpath("/" + parts[..<existing].joined(separator: "/"), nil) else { continue }
            defer { free(resolved) }
            let base = String(cString: resolved)
            let rest = parts[existing...].joined(separator: "/")
            return rest.isEmpty ? base : (base == "/" ? "/" : base + "/") + rest
        }
        return "/" + parts.joined(separator: "/")
    }
}
