import ArgumentParser
import Basics
import Dispatch
import FoundationEssentials
import HostShare
import JSONRPC
import MediaHTTP
import MediaHost

#if canImport(Glibc)
    import Glibc
#endif

/// Says what went wrong on stderr and exits with status 1.
func fail(_ message: String) -> ExitCode {
    Descriptor.standardError("mediahost: \(message)\n")
    return ExitCode(1)
}

/// A line on stdout at once, also into a file or a pipe (print buffers those).
func say(_ line: String) {
    Descriptor.standardOutput(line + "\n")
}

/// `mediahost share <list>`: offers a list to nearby machines until the time is up or Ctrl-C.
struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Offer a list to a nearby machine for a while (read-only, with a pairing code).",
        discussion: """
            The list is announced on the local network with DNS-SD (Avahi) and served to whoever \
            gives the code; on the other machine run `mediahost peers`, then \
            `mediahost receive <peer> <code>`. Without Avahi, give the receiver the address and \
            code this prints. `favorites` shares your favorites. Ctrl-C ends the offer early.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The list to offer (`lists` shows them), or favorites.", valueName: "list"))
    var list: String

    @Option(help: ArgumentHelp("How long the offer lasts.", valueName: "minutes"))
    var minutes: Double = 10

    @Option(help: ArgumentHelp("The port to serve on (default: any free one).", valueName: "port"))
    var port: Int?

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        let host = try await global.makeHost()
        let offer: ShareOffer
        do {
            offer = try await host.dispatcher.run(ShareStart(name: list, minutes: minutes, port: port))
        } catch {
            throw fail(error.message)
        }
        let address = offer.addresses.first ?? "127.0.0.1:\(offer.port)"
        say("offering '\(offer.name)' until \(offer.expires) (\(String(printf: "%g", minutes)) min): code \(offer.code)")
        if offer.announced {
            say("announced on the local network: on the other machine, `mediahost peers`, then")
        } else {
            say("not announced: \(offer.note ?? "Avahi is not available"); on the other machine:")
        }
        say("  mediahost receive \(address) \(offer.code)")
        if offer.addresses.count > 1 { say("(other addresses: \(offer.addresses.dropFirst().joined(separator: ", ")))") }
        // Ctrl-C ends the offer (the announcement is withdrawn on the way out).
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber)
            source.setEventHandler {
                host.endShares()
                say("\nthe offer has ended")
                Glibc.exit(0)
            }
            source.resume()
            Self.signalSources.append(source)
        }
        var served = 0
        while let current = try? await host.dispatcher.run(ShareStatus()).first(where: { $0.name == offer.name }) {
            if current.served > served {
                served = current.served
                say("sent to \(served) receiver\(served == 1 ? "" : "s")")
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        say("the offer has ended" + (host.shareEnding(offer.name).map { ": \($0)" } ?? ""))
    }

    nonisolated(unsafe) static var signalSources: [any DispatchSourceSignal] = []
}

/// `mediahost peers`: what is offered nearby.
struct PeersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "peers", abstract: "Lists offered nearby (DNS-SD through Avahi) and their addresses.")

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("How long to look.", valueName: "seconds"))
    var seconds: Double = 2

    func run() async throws {
        let host = try await global.makeHost()
        let peers: [SharePeer]
        do {
            peers = try await host.dispatcher.run(ShareBrowse(seconds: seconds))
        } catch {
            throw fail(
                "\(error.message); ask the sender for the address and code `mediahost share` printed, then `mediahost receive <address> <code>`"
            )
        }
        if peers.isEmpty { print("nothing is offered nearby (`mediahost share <list>` on the other machine)") }
        for peer in peers {
            print("\(peer.list ?? peer.name)  \(peer.address)  (\(peer.name))")
        }
    }
}

/// `mediahost receive <peer> <code>`: fetches an offered list into a list here.
struct ReceiveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive", abstract: "Fetch a list offered nearby with its code and merge it into a list here.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("host:port, or a name `mediahost peers` shows.", valueName: "peer"))
    var peer: String

    @Argument(help: ArgumentHelp("The code shown where the list is shared.", valueName: "code"))
    var code: String

    @Option(
        help: ArgumentHelp(
            "The list to merge into (default: the offer's name; someone's favorites go to 'received favorites'); 'favorites' makes them your favorites.",
            valueName: "list"))
    var into: String?

    func run() async throws {
        MediaHTTPClient.preload()
        defer { MediaHTTPClient.settle() }
        let host = try await global.makeHost()
        do {
            let result = try await host.dispatcher.run(ShareReceive(peer: peer, code: code, into: into))
            var text = "received \(result.added) into \(result.name)"
            if result.present > 0 { text += " (\(result.present) were there already)" }
            if into == nil, result.name == ListsImport.receivedFavorites {
                text += "; `--into favorites` makes them your favorites"
            }
            if !result.skipped.isEmpty {
                text += "; left out \(result.skipped.count): \(result.skipped.prefix(3).joined(separator: "; "))"
            }
            print(text)
        } catch {
            throw fail(error.message)
        }
    }
}
