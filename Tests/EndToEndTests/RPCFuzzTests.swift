import Foundation
import JSONRPC
import Sandbox
import TestSupport
import Testing

/// Structure-aware fuzzing of every method: params built from rpc-spec.json's schemas, then bent
/// (wrong types, extremes, lone surrogates, NUL, huge strings, unknown members, nulls). Each
/// request is answered exactly once, never with an internal error, and the process lives on.
/// `make fuzz` runs it at length (MEDIAHOST_FUZZ_CASES, MEDIAHOST_FUZZ_SEED).
@Suite struct RPCFuzzTests {
    static let spec: JSONValue = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("rpc-spec.json")
        return (try? JSONParser.parse(Array(Data(contentsOf: url)))) ?? .null
    }()
    static let cases = (ProcessInfo.processInfo.environment["MEDIAHOST_FUZZ_CASES"].flatMap(Int.init)).map { $0 / 10 } ?? 3000
    static let seed = ProcessInfo.processInfo.environment["MEDIAHOST_FUZZ_SEED"].flatMap(UInt64.init) ?? 7

    /// No provider reaches the network: the ones that need no key point at a closed port.
    static let environment = [
        "MEDIAHOST_PODCASTS_BASE_URL": "http://127.0.0.1:9", "MASTODON_INSTANCE": "http://127.0.0.1:9",
        "MEDIAHOST_MASTODON_BASE_URL": "http://127.0.0.1:9", "MEDIAHOST_PLAYER": "/bin/true", "MEDIAHOST_HTTP_TIMEOUT": "2",
    ]

    static let ids: [JSONValue] = [
        "podcasts:podcast:1000015838", "podcasts:episode:1000015838:g1", "youtube:video:dQw4w9WgXcQ", "tmdb:movie:550",
        "mastodon:post:1", "twitter:user:12", "x:y", "podcasts:podcast:", ":::", "podcasts:nokind:1", "a:b:c:d:e:f",
    ]
    static let strings: [JSONValue] = [
        "", " ", "podcasts", "youtube", "tmdb", "mastodon", "twitter", "catalog", "log.level", "cache.max_mb",
        "downloads.concurrency", "player.command", "http.timeout", "providers.tmdb.api_key", "#swift", "@user", "Comedy", "1303",
        "video", "podcast", "episode", "running", "completed", "\u{0}", "\u{1B}[2J", "\u{202E}evil", "😀👍🏽", "ﷺ", "\u{FFFF}",
        .string(String(repeating: "x", count: 10_000)), "../../etc/passwd", "all:eyJjdXJzb3JzIjp7fX0=", "all:%%%",
        "9223372036854775807",
        "-1", "r1", "s99999999999999999999",
    ]
    static let numbers: [JSONValue] = [
        0, 1, -1, 50, 500, 501, .number("9223372036854775808"), .number("-9223372036854775809"), .number("1e308"),
        .number("-0"), .number("0.5"), .number("1E+2"), .number("123456789012345678901234567890"),
    ]

    static func value(for schema: JSONValue, _ random: inout SplitMix64) -> JSONValue {
        // One time in four: anything at all, whatever the schema says.
        if random.next() % 4 == 0 { return anything(&random, depth: 0) }
        let reference = schema["$ref"]?.stringValue ?? ""
        if reference.hasSuffix("ItemID") { return pick(ids, &random) }
        if reference.hasSuffix("MediaKind") {
            return pick(["video", "channel", "podcast", "episode", "post", "user", "movie", "nope"], &random)
        }
        if reference.hasSuffix("DownloadState") {
            return pick(["queued", "running", "paused", "failed", "completed", "cancelled", "x"], &random)
        }
        if reference.hasSuffix("Cursor") { return pick(strings, &random) }
        switch schema["type"] {
        case "integer"?, "number"?: return pick(numbers, &random)
        case "boolean"?: return random.next() % 2 == 0 ? true : false
        default: return pick(strings + numbers.prefix(3), &random)
        }
    }

    static func anything(_ random: inout SplitMix64, depth: Int) -> JSONValue {
        switch random.next() % (depth > 3 ? 4 : 7) {
        case 0: return .null
        case 1: return random.next() % 2 == 0 ? true : false
        case 2: return pick(numbers, &random)
        case 3: return pick(strings, &random)
        case 4: return .array((0..<Int(random.next() % 4)).map { _ in anything(&random, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int(random.next() % 4) {
                members[pick(["id", "a", "", "__proto__", "query"], &random)] = anything(&random, depth: depth + 1)
            }
            return .object(members)
        }
    }

    static func pick<T>(_ values: [T], _ random: inout SplitMix64) -> T { values[Int(random.next() % UInt64(values.count))] }

    /// One request's text: usually well-formed JSON of bent params; sometimes a lone surrogate.
    static func request(id: Int, _ random: inout SplitMix64) -> (text: String, unparseable: Bool) {
        let methods = spec["methods"]?.arrayValue ?? []
        let method = pick(methods, &random)
        var params: [String: JSONValue] = [:]
        for param in method["params"]?.arrayValue ?? [] {
            let required = param["required"] == true
            guard required ? random.next() % 10 != 0 : random.next() % 2 == 0, let name = param["name"]?.stringValue else {
                continue
            }
            params[name] = value(for: param["schema"] ?? .null, &random)
        }
        if random.next() % 8 == 0 { params["unknownMember"] = anything(&random, depth: 0) }
        var message: [String: JSONValue] = ["jsonrpc": "2.0", "id": .number(String(id)), "method": method["name"] ?? "host.info"]
        switch random.next() % 12 {
        case 0: message["params"] = .array([.object(params)])
        case 1: message["params"] = .null
        default: message["params"] = .object(params)
        }
        var text = JSONValue.object(message).jsonString
        if random.next() % 20 == 0, let quote = text.lastIndex(of: "\"") {
            text.insert(contentsOf: #"\ud800"#, at: quote)
            return (text, true)
        }
        return (text, false)
    }

    @Test func everyMethodWithBentParamsIsAnsweredOnceAndNeverInternally() async throws {
        #expect((Self.spec["methods"]?.arrayValue?.count ?? 0) > 20)
        let process = try MediahostProcess(["rpc"], environment: Self.environment)
        var random = SplitMix64(seed: Self.seed)
        var pending = Set<Int>()
        var unparseable = Set<Int>()
        var answered = 0
        var internalErrors: [String] = []
        let window = 64
        var next = 0
        while next < Self.cases || !pending.isEmpty || !unparseable.isEmpty {
            while next < Self.cases, pending.count + unparseable.count < window {
                let (text, broken) = Self.request(id: next, &random)
                process.sendLine(text)
                if broken { unparseable.insert(next) } else { pending.insert(next) }
                next += 1
            }
            guard let message = await process.next(timeout: .seconds(30)) else {
                Issue.record("no reply for \(pending.count) requests, e.g. \(pending.sorted().prefix(5))")
                break
            }
            guard let reply = message.value else { continue }
            if reply["error"]?["code"] == -32603 { internalErrors.append(reply.jsonString) }
            if let id = reply["id"]?.intValue {
                #expect(pending.remove(id) != nil, "request \(id) answered twice, or never asked")
                answered += 1
            } else if reply["id"] == .null {
                // A lone surrogate makes the message unparseable: answered with id null.
                #expect(unparseable.popFirst() != nil, "an id-null reply to a request that parses: \(reply.jsonString)")
                answered += 1
            }
        }
        #expect(answered == Self.cases)
        #expect(internalErrors.isEmpty, "\(internalErrors.prefix(3))")
        process.closeInput()
        #expect(await process.waitForExit(timeout: .seconds(60)) == 0)
    }
}
