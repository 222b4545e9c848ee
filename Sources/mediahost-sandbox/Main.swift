import ArgumentParser
import Foundation
import MediaKit
import Sandbox

#if canImport(Glibc)
    import Glibc
#endif

/// The local replicas of the providers' APIs, in a process of their own so the product binary
/// links no HTTP server: `mediahost --sandbox` starts one as a child (`--child`), `mediahost
/// sandbox` and `make sandbox` run one for people, tests and demos.
@main
struct SandboxMain: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mediahost-sandbox",
        abstract: "Serve the local replicas of the providers' APIs (for tests, demos and offline work).",
        discussion: """
            Point a provider at it with MEDIAHOST_<ID>_BASE_URL=http://127.0.0.1:PORT/<id>, or use --sandbox on any \
            mediahost command to run one for that command. Faults are switched with POST /_sandbox/faults (JSON: \
            path, status, retryAfter, latencyMs, throttleBytesPerSecond, truncateAfterBytes, malformed, times).
            """)

    @Option(help: "The port (0 picks a free one; default 8080, or a free one with --child).")
    var port: Int?

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(
        name: .customLong("media-rate"),
        help: "Serve media files at this many bytes per second (0: unlimited; default 8000000 or MEDIAHOST_SANDBOX_MEDIA_RATE).")
    var mediaRate: Int?

    @Flag(
        help: ArgumentHelp(
            "Run for a parent process: print the providers' settings as one JSON line on stdout, and exit when stdin closes.",
            visibility: .hidden))
    var child = false

    func run() async throws {
        let server = SandboxServer(replicas: SandboxReplicas.all)
        server.media.bytesPerSecond = SandboxReplicas.mediaRate(ProcessInfo.processInfo.environment, flag: mediaRate)
        let bound: Int
        if child, let port, port != 0 {
            // The port the parent's last sandbox had, so what it kept (logins, pictures' and
            // media's addresses) still points here; another when that one is taken.
            do { bound = try await server.start(host: host, port: port) } catch {
                bound = try await server.start(host: host, port: 0)
            }
        } else {
            bound = try await server.start(host: host, port: port ?? (child ? 0 : 8080))
        }
        if child {
            let line = try JSONSerialization.data(withJSONObject: server.providerEnvironment(host: host), options: [.sortedKeys])
            try? FileHandle.standardOutput.write(contentsOf: line + Data("\n".utf8))
            // The parent holds our stdin: when it exits, however it ends, so do we.
            await Self.waitForEndOfInput()
            server.stop()
            return
        }
        print("sandbox listening on http://\(host):\(bound)")
        for id in server.replicaIDs {
            print(
                "  \(id): \(ProviderDescriptor.environmentName(provider: id, key: "base_url"))=\(server.baseURL(for: id, host: host) ?? "")"
            )
        }
        let extra = server.providerEnvironment(host: host).filter { !$0.key.hasSuffix("_BASE_URL") || $0.key.contains("OAUTH") }
        if !extra.isEmpty {
            print("  other settings the replicas accept:")
            for (name, value) in extra.sorted(by: { $0.key < $1.key }) { print("    \(name)=\(value)") }
        }
        fflush(nil)
        while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
    }

    static func waitForEndOfInput() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                var byte: UInt8 = 0
                while true {
                    let n = read(0, &byte, 1)
                    if n == 0 || (n < 0 && errno != EINTR) { break }
                }
                continuation.resume()
            }
        }
    }
}
