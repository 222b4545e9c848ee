import Foundation
import Sandbox

/// Every provider's replica of its real API: `all`, written by Plugins/ProviderList from
/// Package.swift's `providers`, as `BuiltinProviders.all` is.
enum SandboxReplicas {
    /// Media is served at 8 MB/s unless MEDIAHOST_SANDBOX_MEDIA_RATE says otherwise (bytes/s,
    /// 0 for as fast as loopback goes), so downloads take a visible, realistic time.
    static func mediaRate(_ environment: [String: String], flag: Int? = nil) -> Int? {
        let rate = flag ?? environment["MEDIAHOST_SANDBOX_MEDIA_RATE"].flatMap(Int.init) ?? 8_000_000
        return rate > 0 ? rate : nil
    }
}
