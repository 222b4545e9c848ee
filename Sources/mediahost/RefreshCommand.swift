import ArgumentParser
import Basics
import FoundationEssentials
import HostService
import JSONRPC
import MediaHost
import MediaKit
import MediaREPL
import MediaStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `mediahost refresh`: what is followed, read once (`refresh.run`), for cron or a systemd timer;
/// through the background service when one runs (its clients see what arrived), else here.
struct RefreshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Fetch new episodes of every followed show and channel once, then apply each show's rules.",
        discussion: """
            What arrived goes into the inbox (`new` in the REPL); each show's rules then download \
            and tidy (`rules` in the REPL). A show that cannot be read keeps its episodes and is \
            listed with why. The background service does this every refresh.interval_minutes; \
            this command is for cron or a systemd timer (`make install` installs one) when no \
            service runs. One refresh runs at a time on a data dir: a second is refused.

            Exit status: 0 when the refresh ran (shows that failed are listed), 1 when it could \
            not run or every show failed.
            """)

    @OptionGroup var global: GlobalOptions
    @Flag(help: "Say what would arrive, be downloaded and be deleted, and why; keep and change nothing.")
    var dryRun = false
    @Option(help: ArgumentHelp("Only this followed show or channel.", valueName: "id"))
    var show: String?
    @Flag(help: "Print refresh.run's answer as JSON.")
    var json = false
    @Argument(
        help: ArgumentHelp("Only this provider's shows and channels.", valueName: "provider"),
        completion: .custom { _, _, prefix in Completions.providers.filter { $0.hasPrefix(prefix) } })
    var provider: String?

    /// "Reading 120 of 500 shows…" on one line of stderr, every tenth show; gone at the end.
    @Sendable static func showProgress(_ done: Int, _ total: Int) {
        guard done == total || done % 10 == 0 else { return }
        Descriptor.standardError(done == total ? "\r\u{1B}[K" : "\rReading \(done) of \(total) shows…")
    }

    func run() async throws {
        var request = RefreshRun(provider: provider, dryRun: dryRun ? true : nil)
        if let show {
            guard let id = try? ItemID(parsing: show) else {
                throw ValidationError("'\(show)' is not an item id (like podcasts:podcast:1200361736)")
            }
            request.show = id
        }
        let response: RefreshRun.Response
        var local: HostRuntime?
        do throws(RPCError) {
            if let service = await global.host.service() {
                defer { service.close() }
                response = try await service.run(request)
            } else {
                let host: HostRuntime
                do {
                    host = try await global.host.makeHost(oneShot: true)
                } catch {
                    throw RPCError(code: RPCError.internalErrorCode, message: "\(error)")
                }
                // What an earlier run left (killed while downloading) goes on with this one's.
                if !dryRun { await host.downloads.resumeInterrupted() }
                // On a terminal, how far it got, on one line of stderr (cron's output stays clean).
                if isatty(2) == 1 { host.refreshProgress.withLock { $0 = Self.showProgress } }
                response = try await host.dispatcher.run(request)
                local = host
            }
        } catch {
            Descriptor.standardError("mediahost: \(error.message)\n")
            throw ExitCode(1)
        }
        if json {
            _ = Descriptor.writeAll(1, try RefreshRun.encode(response) + [0x0A])
        } else {
            let width = isatty(1) == 1 ? DoctorCommand.columns() : 100
            _ = Descriptor.writeAll(1, Array(RefreshReport.render(response, width: width, provider: provider).utf8))
        }
        if local == nil, !dryRun, !response.downloads.isEmpty, !json {
            _ = Descriptor.writeAll(1, Array("\n(the background service downloads them: `downloads` shows how far)\n".utf8))
        }
        // Without a service, the rules' downloads are this process's: it ends when they do (as
        // cron expects), saying how each ended. The service downloads on after answering.
        if let host = local, !dryRun {
            if !response.downloads.isEmpty, isatty(2) == 1 {
                Descriptor.standardError("Downloading (Ctrl-C stops; the next refresh goes on)…\n")
            }
            await host.downloadsIdle()
            var lines: [String] = []
            for action in response.downloads {
                do {
                    let record = try await host.store.download(action.id)
                    let state = record?.state.rawValue ?? "not started"
                    lines.append("  \(action.title): \(state)\(record?.error.map { " (\($0))" } ?? "")")
                } catch {
                    lines.append("  \(action.title): cannot say how it ended (the database: \(error))")
                }
            }
            if !json, !lines.isEmpty {
                _ = Descriptor.writeAll(1, Array(("\nDownloads\n" + lines.joined(separator: "\n") + "\n").utf8))
            }
        }
        if response.shows > 0, response.failed.count == response.shows { throw ExitCode(1) }
    }
}
