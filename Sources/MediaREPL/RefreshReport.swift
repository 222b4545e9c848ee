import HostAPI
import MediaKit

/// `refresh.run`'s answer as a person reads it, in the shell (`mediahost refresh`) and the REPL
/// (`refresh`) alike: a summary line, then what arrived, what failed and why, and what the rules
/// downloaded and deleted and why, each wrapped at whole words.
public enum RefreshReport {
    /// - Parameter provider: the provider the refresh was limited to, if any.
    public static func render(_ report: RefreshRun.Response, width: Int, provider: String? = nil) -> String {
        let dry = report.dryRun == true
        var out = summary(report, provider: provider) + "\n"
        func section(_ title: String, _ lines: [String]) {
            guard !lines.isEmpty else { return }
            out += "\n\(title)\n"
            for line in lines { out += DoctorReport.wrap(line, width: width, indent: "      ", first: "  ") }
        }
        section(
            dry ? "Would arrive" : "New",
            report.arrived.map { item in
                let date = item.published.map { " (\($0.prefix(10)))" } ?? ""
                return [item.subtitle, Renderer.clean(item.title)].compactMap { $0 }.joined(separator: ": ") + date
            })
        section(
            "Not read",
            report.failed.map { failure in
                let since = failure.since.map { "; failing since \($0.prefix(10))" } ?? ""
                return "\(Renderer.clean(failure.title)): \(Renderer.clean(failure.message))\(since)"
            })
        section(dry ? "Would download" : "Downloading", report.downloads.map(action))
        section(dry ? "Would not download" : "Not downloaded", (report.skipped ?? []).map(action))
        section(dry ? "Would delete" : "Deleted", report.deletions.map(action))
        return out
    }

    /// "Refreshed 12 shows in 0.8 s: 3 new, 1 not read, 2 downloads, 1 deleted."
    public static func summary(_ report: RefreshRun.Response, provider: String? = nil) -> String {
        guard report.shows > 0 else {
            let what = provider.map { "Nothing of \($0) is followed" } ?? "Nothing is followed"
            return "\(what): `fav` a show or channel (in the REPL) to follow it; a refresh then fetches what is new."
        }
        if report.failed.count == report.shows {
            let shows = report.shows == 1 ? "the show" : "any of the \(report.shows) shows"
            return "Could not read \(shows)\(report.dryRun == true ? " (dry run)" : ""): each is listed below with why."
        }
        let seconds = report.seconds < 10 ? String(printf: "%.1f", report.seconds) : String(Int(report.seconds.rounded()))
        var parts = ["\(report.arrived.count) new"]
        if !report.failed.isEmpty { parts.append("\(report.failed.count) not read") }
        if !report.downloads.isEmpty {
            parts.append("\(report.downloads.count) download\(report.downloads.count == 1 ? "" : "s")")
        }
        if !report.deletions.isEmpty { parts.append("\(report.deletions.count) deleted") }
        let shows = "\(report.shows) show\(report.shows == 1 ? "" : "s")"
        return report.dryRun == true
            ? "Dry run (nothing kept or changed), \(shows) read in \(seconds) s: \(parts.joined(separator: ", "))."
            : "Refreshed \(shows) in \(seconds) s: \(parts.joined(separator: ", "))."
    }

    private static func action(_ action: RefreshRun.Action) -> String {
        let what = [action.show, Renderer.clean(action.title)].compactMap { $0 }.joined(separator: ": ")
        let size = action.bytes.map { " (\(Renderer.bytes($0)))" } ?? ""
        return "\(what)\(size): \(action.reason)"
    }
}
