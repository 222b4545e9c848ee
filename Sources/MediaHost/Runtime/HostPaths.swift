import Foundation

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
    /// Plugins: a folder each, with its plugin.toml.
    public var plugins: String { dataDir + "/plugins" }

    public init(configFile: String, dataDir: String, cacheDir: String) {
        self.configFile = configFile
        self.dataDir = dataDir
        self.cacheDir = cacheDir
    }

    /// Resolves paths from flags first, then MEDIAHOST_DATA_DIR and the XDG variables, then ~/.
    public static func resolve(
        configFlag: String? = nil, dataDirFlag: String? = nil,
        environment env: [String: String] = ProcessInfo.processInfo.environment
    ) -> HostPaths {
        let home = env["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        func xdg(_ name: String, _ fallback: String) -> String {
            if let value = env[name], value.hasPrefix("/") { return value }
            return home + "/" + fallback
        }
        let configFile = configFlag ?? xdg("XDG_CONFIG_HOME", ".config") + "/mediahost/config.toml"
        let dataDir =
            dataDirFlag ?? env["MEDIAHOST_DATA_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? xdg("XDG_DATA_HOME", ".local/share") + "/mediahost"
        let cacheDir = xdg("XDG_CACHE_HOME", ".cache") + "/mediahost"
        return HostPaths(configFile: absolute(configFile), dataDir: absolute(dataDir), cacheDir: absolute(cacheDir))
    }

    private static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }
}
