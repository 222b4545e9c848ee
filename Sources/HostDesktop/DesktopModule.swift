import MediaHost

/// The desktop: media keys (an MPRIS2 player on the session bus while this host plays) and
/// desktop notifications, through sd-bus (CDBus). No methods of its own.
public enum DesktopModule: HostModule {
    public static let methods: [any RPCMethod.Type] = []

    /// The REPL, an editor's session or the service: the media keys follow what plays here, and
    /// downloads that end are told of.
    public static func sessionWillStart(_ host: HostRuntime) async {
        await host.component(MediaKeys.self).follow()
        await host.component(DesktopNotifier.self).followDownloads()
    }

    /// What a refresh found is told of (the service's, or `mediahost refresh` from cron).
    public static func refreshDidFinish(_ host: HostRuntime, _ refresh: RefreshRun.Response) async {
        await host.component(DesktopNotifier.self).refreshed(refresh)
    }
}
