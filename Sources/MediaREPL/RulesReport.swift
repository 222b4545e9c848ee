import HostAPI
import MediaKit

/// `rules.list`'s answer as a person reads it: each show (and every show's defaults) with its
/// rules, one a line ("auto_download 2 (this show)"), what each does after it where there is room.
public enum RulesReport {
    public static func render(_ list: RulesList.Response, width: Int, summaries: Bool) -> String {
        var out = ""
        for rules in list.items {
            let heading = rules.show.map { "\(Renderer.clean(rules.title)) (\($0))" } ?? "Every show (the defaults)"
            out += "\(heading)\n"
            if rules.rules.isEmpty { out += "  (nothing of its own)\n" }
            let keyWidth = (rules.rules.map(\.key.count).max() ?? 0) + 1
            for rule in rules.rules {
                let value = rule.value.isEmpty ? "(none)" : rule.value
                let from =
                    switch (rule.from, rules.show == nil) {
                    case ("show", _): " (this show)"
                    case ("default", true): " (set)"
                    case ("default", false): " (every show)"
                    default: " (built in)"
                    }
                let key = rule.key + String(repeating: " ", count: max(1, keyWidth - rule.key.count))
                var line = "\(key)\(value)\(from)"
                if summaries, let summary = rule.summary { line += ": " + summary }
                out += DoctorReport.wrap(line, width: width, indent: String(repeating: " ", count: keyWidth + 2), first: "  ")
            }
        }
        return out
    }
}
