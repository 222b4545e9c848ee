import Foundation
import JSONRPC
import MediaHost
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The background service under load: clients that call `host.info` one after another (each
/// waits for its answer, as an editor does), beside clients that send without ever reading (a
/// hung editor, a script piped into something stopped). What the readers see (latency
/// percentiles) and what the service holds (its resident memory) while that goes on.
struct ServiceLoad {
    let binary: String
    let dataDir: String

    struct Figures {
        var latencies: [Double]
        var calls: Int
        var seconds: Double
        var peakRSSMB: Double
        var lastRSSMB: Double
        /// How often the service cut a client that did not read, and what those sent in all.
        var cutOff: Int
        var silentSentMB: Double
    }

    /// Starts `mediahost serve` for `dataDir`; the caller stops it.
    func start() throws -> (process: Process, socket: UnixSocket) {
        let paths = HostPaths(configFile: dataDir + "/none.toml", dataDir: dataDir, cacheDir: dataDir + "/cache")
        let socket = UnixSocket(path: paths.serviceSocket(environment: [:]))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--data-dir", dataDir, "--config", paths.configFile]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = nil
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = now() + 30
        while !socket.isServing {
            guard now() < deadline, process.isRunning else { throw BenchError("the service did not start") }
            usleep(20_000)
        }
        return (process, socket)
    }

    /// `readers` clients calling for `seconds`, beside `silent` clients that never read.
    func run(readers: Int, silent: Int, seconds: Double) throws -> Figures {
        let (service, socket) = try start()
        defer {
            service.terminate()
            service.waitUntilExit()
        }
        let stop = Atomic<Bool>(false)
        let cutOff = Atomic<Int>(0)
        let silentSent = Atomic<Int>(0)
        let results = Mutex<[[Double]]>([])
        var threads: [Thread] = []
        let done = DispatchGroup()
        for _ in 0..<silent {
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                let request = Array(#"{"jsonrpc":"2.0","id":1,"method":"host.info"}"#.utf8) + [0x0A]
                let burst = [UInt8]((0..<64).flatMap { _ in request })
                while !stop.load(ordering: .relaxed) {
                    guard let fd = socket.connect() else { break }
                    // Sends, never reads, until the service gives up on it.
                    var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
                    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    while !stop.load(ordering: .relaxed) {
                        let sent = burst.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        if sent < 0, errno == EAGAIN || errno == EINTR { continue }
                        if sent <= 0 {
                            cutOff.add(1, ordering: .relaxed)
                            break
                        }
                        silentSent.add(sent, ordering: .relaxed)
                    }
                    close(fd)
                }
            }
            threads.append(thread)
        }
        for _ in 0..<readers {
            done.enter()
            let thread = Thread {
                defer { done.leave() }
                guard let fd = socket.connect() else { return }
                defer { close(fd) }
                var times: [Double] = []
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                var id = 0
                while !stop.load(ordering: .relaxed) {
                    id += 1
                    let request = Array(#"{"jsonrpc":"2.0","id":\#(id),"method":"host.info"}"#.utf8) + [0x0A]
                    let start = now()
                    guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count
                    else { break }
                    // The answer is one line (notifications may come first: read to our id's line).
                    var line: [UInt8] = []
                    var answered = false
                    while !answered {
                        let n = read(fd, &buffer, buffer.count)
                        if n < 0, errno == EINTR { continue }
                        guard n > 0 else { return }
                        for byte in buffer[0..<n] {
                            if byte == 0x0A {
                                if line.starts(with: Array(#"{"jsonrpc":"2.0","id":\#(id),"#.utf8)) { answered = true }
                                line.removeAll(keepingCapacity: true)
                            } else {
                                line.append(byte)
                            }
                        }
                    }
                    times.append(now() - start)
                }
                results.withLock { $0.append(times) }
            }
            threads.append(thread)
        }
        let began = now()
        threads.forEach { $0.start() }
        var peak = 0.0
        var last = 0.0
        while now() - began < seconds {
            last = residentMB(pid: service.processIdentifier)
            peak = max(peak, last)
            usleep(20_000)
        }
        stop.store(true, ordering: .relaxed)
        done.wait()
        let elapsed = now() - began
        let all = results.withLock { $0.flatMap { $0 } }
        guard !all.isEmpty else { throw BenchError("no call was answered") }
        return Figures(
            latencies: all, calls: all.count, seconds: elapsed, peakRSSMB: peak, lastRSSMB: last,
            cutOff: cutOff.load(ordering: .relaxed), silentSentMB: Double(silentSent.load(ordering: .relaxed)) / 1e6)
    }

    /// Resident memory now (VmRSS), in MB.
    func residentMB(pid: Int32) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Double(line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0) / 1024
    }
}
