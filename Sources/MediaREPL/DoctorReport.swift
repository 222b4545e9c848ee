import HostAPI
import MediaKit

/// `host.doctor`'s answer as a person reads it, in the shell (`mediahost doctor`) and the REPL
/// (`doctor`) alike.
public enum DoctorReport {
    /// The host's own checks and those of `providers` (all when none is named); `all` are the
    /// provider ids, whose checks are areas of their own.
    public static func only(_ providers: [String], of all: [String], in report: HostDoctor.Response) -> HostDoctor.Response {
        guard !providers.isEmpty else { return report }
        let all = Set(all)
        var kept = report
        kept.checks = report.checks.filter { !all.contains($0.area) || providers.contains($0.area) }
        kept.ok = !kept.checks.contains { $0.status == .failed }
        return kept
    }

    /// One line a check (area, what, status, what was found), its fix under it, wrapped at
    /// whole words; a summary at the end.
    public static func render(_ report: HostDoctor.Response, width: Int) -> String {
        var out = ""
        let indent = String(repeating: " ", count: 4)
        var area = ""
        for check in report.checks {
            if check.area != area {
                area = check.area
                out += "\n\(area)\n"
            }
            let mark =
                switch check.status {
                case .ok: "ok     "
                case .warning: "warning"
                case .failed: "FAILED "
                case .skipped: "skipped"
                }
            out += wrap("\(mark)  \(check.name): \(check.detail)", width: width, indent: indent, first: "  ")
            if let fix = check.fix { out += wrap("→ " + fix, width: width, indent: indent + "  ", first: indent) }
        }
        let failed = report.checks.filter { $0.status == .failed }.count
        let warnings = report.checks.filter { $0.status == .warning }.count
        let skipped = report.checks.contains { $0.status == .skipped && $0.name == "service" }
        out += "\n"
        out +=
            failed == 0
            ? "Everything configured works"
            : "\(failed) thing\(failed == 1 ? "" : "s") configured do\(failed == 1 ? "es" : "") not work"
        if warnings > 0 { out += "; \(warnings) warning\(warnings == 1 ? "" : "s")" }
        out += ".\n"
        if skipped { out += "The services were not reached: `mediahost doctor --online` does.\n" }
        return out.hasPrefix("\n") ? String(out.dropFirst()) : out
    }

    /// `text` wrapped at spaces to `width`, its first line after `first`, the others after
    /// `indent`; a word longer than a line stands alone (never cut).
    static func wrap(_ text: String, width: Int, indent: String, first: String) -> String {
        var lines: [String] = []
        var line = first
        var empty = true
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            let candidate = empty ? line + word : line + " " + word
            if !empty, candidate.count > width {
                lines.append(line)
                line = indent + word
            } else {
                line = candidate
            }
            empty = false
        }
        lines.append(line)
        return lines.joined(separator: "\n") + "\n"
    }
}
