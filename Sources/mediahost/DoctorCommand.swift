import ArgumentParser
import Basics
import FoundationEssentials
import JSONRPC
import MediaHost
import MediaKit
import MediaREPL

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
            report = DoctorReport.only(providers, of: Completions.providers, in: all)
        } catch {
            Descriptor.standardError("mediahost: \(error.message)\n")
            throw ExitCode(1)
        }
        if json {
            _ = Descriptor.writeAll(1, try HostDoctor.encode(report) + [0x0A])
        } else {
            let width = isatty(1) == 1 ? Self.columns() : 100
            _ = Descriptor.writeAll(1, Array(DoctorReport.render(report, width: width).utf8))
        }
        if !report.ok { throw ExitCode(1) }
    }

    static func columns() -> Int {
        var size = winsize()
        return ioctl(1, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 20 ? Int(size.ws_col) : 80
    }
}
