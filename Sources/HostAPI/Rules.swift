import JSONRPC
import MediaKit

/// One rule or playback setting of a followed show (or of every show), as it applies.
public struct ShowRule: Codable, Sendable, Equatable {
    /// `auto_download`, `include`, `exclude`, `min_minutes`, `max_minutes`, `keep_downloads`,
    /// `delete_played_after_days`, `speed`, `skip_intro`, `skip_outro`, `loudnorm`, `volume_boost_db`.
    public var key: String
    public var value: String
    /// `show` (set for this show), `default` (set for every show) or `built-in`.
    public var from: String
    /// What it does and the values it takes.
    public var summary: String?

    public init(key: String, value: String, from: String, summary: String? = nil) {
        self.key = key
        self.value = value
        self.from = from
        self.summary = summary
    }
}

/// A show's rules (or the defaults of every show, `show` absent).
public struct ShowRules: Codable, Sendable, Equatable {
    public var show: ItemID?
    /// The show's title, or "every show".
    public var title: String
    public var rules: [ShowRule]

    public init(show: ItemID?, title: String, rules: [ShowRule]) {
        self.show = show
        self.title = title
        self.rules = rules
    }
}

/// Each followed show's rules: with `show`, every rule as it applies to it (its own, else the
/// default, else built in); without, the defaults and every show with a rule of its own.
public struct RulesList: APIMethod {
    public static let method = "rules.list"
    public static let effect = MethodEffect(.reads)
    public var show: ItemID?

    public init(show: ItemID? = nil) {
        self.show = show
    }

    public struct Response: Codable, Sendable, Equatable {
        public var items: [ShowRules]

        public init(items: [ShowRules]) {
            self.items = items
        }
    }
}

/// Sets one rule of a followed show, or (without `show`) of every show; an unknown key or a value
/// outside its range is refused, naming the keys or the range.
public struct RulesSet: APIMethod {
    public static let method = "rules.set"
    public static let effect = MethodEffect(.changes, library: .rules)
    public typealias Response = ShowRules
    /// The show; absent: the default of every show.
    public var show: ItemID?
    public var key: String
    public var value: String

    public init(show: ItemID? = nil, key: String, value: String) {
        self.show = show
        self.key = key
        self.value = value
    }
}

/// Takes back one rule of a show (or of the defaults), or all of them without `key`: the
/// default applies again.
public struct RulesUnset: APIMethod {
    public static let method = "rules.unset"
    public static let effect = MethodEffect(.removes, library: .rules)
    public typealias Response = ShowRules
    public var show: ItemID?
    public var key: String?

    public init(show: ItemID? = nil, key: String? = nil) {
        self.show = show
        self.key = key
    }
}
