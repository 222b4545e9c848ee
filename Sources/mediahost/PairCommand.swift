import ArgumentParser
import Basics
import FoundationEssentials
import HostAPI
import HostService
import JSONRPC
import MediaHost
import Pictures

#if canImport(Glibc)
    import Glibc
#endif

/// `mediahost pair`: the web remote's browsers, paired at the desk.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair a browser with the web remote, list the paired ones, or unpair one.",
        discussion: """
            With `web.listen` set (e.g. `mediahost call config.set '{"key":"web.listen","value":"0.0.0.0:8733"}'` \
            or `config web.listen 0.0.0.0:8733` in the REPL), the background service (`mediahost serve`) \
            answers browsers on that port. A browser that is not paired shows a code: confirm it here \
            with `mediahost pair CODE`. Or `mediahost pair --link` prints a link that pairs the first \
            browser to open it. --read-only pairs a browser that can look but change nothing.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The code the browser shows (e.g. K7M-4QX).", valueName: "code"))
    var code: String?

    @Flag(help: "Only what changes nothing: see what plays, browse and search, but not play, queue or download.")
    var readOnly = false

    @Option(help: ArgumentHelp("A name for the browser (default: what it says it is).", valueName: "name"))
    var name: String?

    @Flag(help: "Print a one-time link (valid 10 minutes) that pairs the first browser to open it.")
    var link = false

    @Flag(help: "List the paired browsers.")
    var list = false

    @Option(help: ArgumentHelp("Unpair a browser by its id (`--list` shows them), or all.", valueName: "id"))
    var revoke: String?

    func validate() throws {
        let chosen = [code != nil, link, list, revoke != nil].filter { $0 }.count
        if chosen == 0 {
            throw ValidationError("give the code the browser shows, or --link, --list or --revoke ID")
        }
        if chosen > 1 { throw ValidationError("give one of: a code, --link, --list, --revoke") }
    }

    func run() async throws {
        let access: WebAccess = readOnly ? .read : .full
        do throws(RPCError) {
            if list {
                let devices = try await call(WebDevices())
                if devices.isEmpty {
                    say("no browser is paired")
                    return
                }
                for device in devices {
                    let seen = device.seen.map { ", last seen \($0)" } ?? ""
                    say(
                        "\(device.id)  \(device.name)  \(device.access == .read ? "read-only" : "full")  paired \(device.paired)\(seen)"
                    )
                }
            } else if let revoke {
                let answer = try await call(WebRevoke(id: revoke))
                say(
                    answer.revoked.isEmpty
                        ? "no browser was paired"
                        : "unpaired " + answer.revoked.map { "\($0.name) (\($0.id))" }.joined(separator: ", "))
            } else if link {
                let answer = try await call(WebLink(access: access))
                say(
                    "open this on the device within 10 minutes (it pairs the first browser that opens it\(readOnly ? ", read-only" : "")):"
                )
                for url in answer.urls { say("  \(url)") }
                // The first address (another machine's way in) as a code for the phone's camera.
                if isatty(1) == 1, let url = answer.urls.first, let code = QRCode.lines(url) {
                    say("or scan it:")
                    for line in code { say(line) }
                }
            } else if let code {
                let device = try await call(WebPair(code: code, access: access, name: name))
                say(
                    "paired \(device.name) (\(device.id), \(device.access == .read ? "read-only" : "full access")); its page goes on by itself"
                )
            }
        } catch {
            throw fail(error.message)
        }
    }

    /// In the service when one runs (pairing lives there); the library's own file otherwise.
    private func call<M: APIMethod>(_ request: M) async throws(RPCError) -> M.Response { try await global.host.run(request) }
}
