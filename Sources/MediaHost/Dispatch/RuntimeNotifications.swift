import HostAPI
import MediaKit

extension HostRuntime {
    /// The runtime's own notifications; modules add theirs (`HostModule.notifications`).
    /// `SearchResults` goes to the one client that asked, not through the hub.
    public static let runtimeNotifications: [any HostNotification.Type] = [
        DownloadProgress.self, DownloadStateChange.self, AuthPrompt.self, LibraryChange.self, SearchResults.self,
    ]

    /// Every notification this host sends: the runtime's and its modules'.
    public var notifications: [any HostNotification.Type] {
        Self.runtimeNotifications + modules.flatMap { $0.notifications }
    }
}
