/// What this build puts on the runtime: the compiled-in providers, the plugins, and the modules
/// built on the runtime (the player, sharing). The executables register these: the runtime knows
/// none of them.
import HostDesktop
import HostPlayer
import HostPlugins
import HostShare
import HostSync
import HostWebLink
import MediaHost

/// The providers this build ships: `all`, written by Plugins/ProviderList from Package.swift's
/// `providers` (adding one is its folder and a line there).
public enum BuiltinProviders {}

/// The modules of this build and where its plugins come from.
public enum BuiltinModules {
    public static let all: [any HostModule.Type] = [
        PlayerModule.self, ShareModule.self, DesktopModule.self, SyncModule.self, WebModule.self,
    ]

    /// A host's plugins (one per host: it keeps the host's plugin settings).
    public static func discovery() -> [any ProviderDiscovery] { [PluginDiscovery()] }
}
