import ArgumentParser
import Basics
import FoundationEssentials
import JSONRPC
import MediaHost
import MediaKit

#if canImport(Glibc)
    import Glibc
#endif

/// `mediahost doctor`: what works here and what does not, each with its fix (`host.doctor`).
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check what mediahost needs here (yt-dlp and its JavaScript runtime, the player, settings), with fixes.",
        discussion: """
            Each provider, the programs it runs (yt-dlp, its version and age, a JavaScript runtime, \
            ffmpeg), cookies, API keys, the data dir, the player, the background service and plugins: \
            what works, what is missing and the command or setting that fixes it. Exit status 0 when \
            everything configured works. Offline by default: --online also reaches each service.
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Also reach each configured provider's service (needs the network).")
    var online = false
    @Flag(help: "Print the checks as JSON (host.doctor's answer).")
    var json = false
    @Argument(
        help: ArgumentHelp("Check only these providers (and the host's own checks).", valueName: "provider"),
        completion: .custom { _, _, prefix in Completions.providers.filter { $0.hasPrefix(prefix) } })
    var providers: [String] = []

    func validate() throws {
        let known = Completions.providers
        for id in providers where !known.contains(id) {
            throw ValidationError("no provider '\(id)' (\(known.joined(separator: ", ")))")
        }
    }

    func run() async throws {
        let host = try await global.host.makeHost(oneShot: true)
        let report: HostDoctor.Response
        do throws(RPCError) {
            let all = try await host.dispatcher.run(HostDoctor(online: online))
            report = Self.only(providers, in: all)
        } catch {
            Descriptor.standardError("mediahost: \(error.message)\n")
            throw ExitCode(1)
        }
        if json {
            _ = Descriptor.writeAll(1, try HostDoctor.encode(report) + [0x0A])
        } else {
            let width = isatty(1) == 1 ? Self.columns() : 100
            _ = Descriptor.writeAll(1, Array(Self.render(report, width: width).utf8))
        }
        if !report.ok { throw ExitCode(1) }
    }

    /// The host's own checks and those of `providers` (all when none is named).
    static func only(_ providers: [String], in report: HostDoctor.Response) -> HostDoctor.Response {
        guard !providers.isEmpty else { return report }
        let all = Set(Completions.providers)
        var kept = report
        kept.checks = report.checks.filter { !all.contains($0.area) || providers.contains($0.area) }
        kept.ok = !kept.checks.contains { $0.status == .failed }
        return kept
    }

    static func columns() -> Int {
        var size = winsize()
        return ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 20 ? Int(size.ws_col) : 80
    }

    /// One line a check (area, what, status, what was found), its fix under it, wrapped at
    /// whole words; a summary at the end.
    static func render(_ report: HostDoctor.Response, width: Int) -> String {
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
