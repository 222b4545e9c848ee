import MediaHost
import MediaKit

/// `player.skipped`: a segment of what plays was skipped or muted (SponsorBlock), once each time
/// the file plays; a person sees "skipped sponsor 0:45-1:30".
public struct PlayerSkip: HostNotification, Equatable {
    public static let method = "player.skipped"
    public var id: ItemID
    public var category: String
    /// skipped, muted.
    public var action: String
    public var start: Double
    public var end: Double

    public init(id: ItemID, category: String, action: String, start: Double, end: Double) {
        self.id = id
        self.category = category
        self.action = action
        self.start = start
        self.end = end
    }
}
