import Foundation
import JSONRPC
import MediaHTTP
import MediaKit

#if canImport(Glibc)
    import Glibc
#endif

/// Podcast sync (`make bench --only sync`): a new machine's first sync with an account of 500
/// subscriptions and 10,000 episode actions on the local gpodder.net server
/// (gpodder-fastapi-router, the one the tests use), timed from a cold `mediahost call sync.now`;
/// then a sync with nothing new.
func syncBench() async throws {
    let venv =
        ProcessInfo.processInfo.environment["MEDIAHOST_TEST_SYNC_VENV"]
        ?? FileManager.default.currentDirectoryPath + "/.build/sync-venv"
    let tools = "Tests/Tools/sync-servers"
    guard FileManager.default.isExecutableFile(atPath: venv + "/bin/uvicorn") else {
        report("sync: first sync of 500 shows and 10,000 actions", "not run: no \(venv) (make sync-venv)", goal: "< 2 s")
        return
    }
    // A free port: bound, read, released.
    let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0
        }
    }
    close(probe)
    let port = Int(UInt16(bigEndian: address.sin_port))
    let data = scratch + "/sync-server"
    let server = Process()
    server.executableURL = URL(fileURLWithPath: tools + "/serve-gpodder.sh")
    server.arguments = [String(port), "alice", "secret", data]
    server.environment = ProcessInfo.processInfo.environment.merging(["VENV": venv]) { $1 }
    server.standardOutput = FileHandle.nullDevice
    server.standardError = FileHandle.nullDevice
    try server.run()
    defer {
        kill(server.processIdentifier, SIGKILL)
        server.waitUntilExit()
    }
    let base = "http://127.0.0.1:\(port)"
    let http = MediaHTTPClient()
    let auth = ["Authorization": "Basic " + Data("alice:secret".utf8).base64EncodedString(), "Content-Type": "application/json"]
    var up = false
    for _ in 0..<300 where !up && server.isRunning {
        up = (try? await http.send(HTTPRequest(url: URL(string: base + "/clientconfig.json")!, timeout: 1)))?.status == 200
        if !up { try await Task.sleep(for: .milliseconds(100)) }
    }
    guard up else { throw BenchError("the gpodder server did not start") }
    func post(_ path: String, _ body: JSONValue) async throws {
        let response = try await http.send(
            HTTPRequest(
                method: "POST", url: URL(string: base + path)!, headers: auth, body: Data(JSONWriter.bytes(body)), timeout: 300))
        guard response.status == 200 else { throw BenchError("POST \(path): \(response.status)") }
    }
    // The phone's account: 500 shows, 20 episodes each played somewhere.
    try await post("/api/2/devices/alice/phone.json", ["caption": "Phone", "type": "mobile"])
    let shows = (0..<500).map { "https://feeds.example.org/show\($0)/feed.xml" }
    try await post("/api/2/subscriptions/alice/phone.json", ["add": .array(shows.map(JSONValue.string)), "remove": []])
    let start = Date().addingTimeInterval(-86_400 * 30)
    for chunk in 0..<10 {
        let actions: [JSONValue] = (0..<1000).map { n in
            let index = chunk * 1000 + n
            let stamp = String(ISODate.string(from: start.addingTimeInterval(Double(index) * 60)).dropLast())
            return [
                "podcast": .string(shows[index % 500]),
                "episode": .string("https://media.example.org/\(index % 500)/\(index).mp3"),
                "action": "play", "timestamp": .string(stamp), "started": 0, "position": JSONValue(Double(index % 3000)),
                "total": 3600, "device": "phone",
            ]
        }
        try await post("/api/2/episodes/alice.json", .array(actions))
    }
    let dataDir = scratch + "/sync-machine"
    func call(_ method: String, _ params: String) throws -> (seconds: Double, output: String) {
        let child = Process()
        let output = Pipe()
        child.executableURL = URL(fileURLWithPath: binary)
        child.arguments = ["call", method, params, "--data-dir", dataDir]
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        let began = now()
        try child.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        guard child.terminationStatus == 0 else { throw BenchError("\(method) failed") }
        return (now() - began, text)
    }
    _ = try call("sync.login", #"{"server":"\#(base)","username":"alice","password":"secret","device":"desk"}"#)
    let first = try call("sync.now", "{}")
    let report1 = try JSONValue(parsing: first.output)
    guard report1["followed"]?.intValue == 500, report1["actionsReceived"]?.intValue == 10_000 else {
        throw BenchError("the first sync did not take everything: \(first.output)")
    }
    report(
        "sync: first sync of 500 shows and 10,000 actions (cold `call sync.now`, local gpodder server)",
        String(format: "%.2f s", first.seconds), goal: "< 2 s")
    let again = try call("sync.now", "{}")
    report("sync: a sync with nothing new", String(format: "%.0f ms", again.seconds * 1000), goal: "")
}
