import HostAPI
import JSONRPC
import MediaKit
import Testing

/// rpc-spec.json is checked against the API's types: every method's params and answer, every
/// notification, member by member (required or not, and of which type), so the document cannot
/// drift from what the host reads and writes.
@Suite struct APISpecTests {
    @Test func theSpecDescribesTheTypes() throws {
        let spec = try APISpec.document.get()
        let found = APISpec.disagreements(API.methods, in: spec)
        #expect(found.isEmpty, "\(found.count) disagreements:\n\(found.joined(separator: "\n"))")
    }

    /// Every method's params and answer were read from its type, none left as "cannot tell".
    @Test func everyTypeIsTraced() {
        func answer<M: APIMethod>(_ method: M.Type) -> APIShape { APIShape.of(M.Response.self) }
        /// Where in `shape` a member could not be traced.
        func untraced(_ shape: APIShape, _ path: String) -> [String] {
            switch shape {
            case .opaque(let name): ["\(path): \(name)"]
            case .array(let element), .dictionary(let element): untraced(element, path + "[]")
            case .object(let fields): fields.flatMap { untraced($0.value.shape, path + "." + $0.key) }
            default: []
            }
        }
        for method in API.methods {
            for problem in untraced(APIShape.of(method), method.method + " params") + untraced(answer(method), method.method) {
                Issue.record("cannot be traced: \(problem)")
            }
            if case .any = answer(method), method != RPCDiscover.self { Issue.record("\(method.method)'s answer is any JSON") }
        }
        for notification in API.notifications {
            for problem in untraced(APIShape.of(notification), notification.method) {
                Issue.record("cannot be traced: \(problem)")
            }
        }
    }

    @Test func theSpecDescribesTheNotifications() throws {
        let spec = try APISpec.document.get()
        let found = API.notifications.flatMap { APISpec.disagreements(notification: $0, in: spec) }
        #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
    }

    @Test func theSpecListsEachMethodOnce() throws {
        let spec = try APISpec.document.get()
        let listed = (spec["methods"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        #expect(listed.sorted() == API.methods.map { $0.method }.sorted())
        let notifications = (spec["x-notifications"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        #expect(notifications.sorted() == API.notifications.map { $0.method }.sorted())
    }

    // MARK: The checker finds what it is for

    struct Sample: APIMethod {
        static let method = "sample.get"
        static let effect = MethodEffect(.reads)
        enum Color: String, Codable, CaseIterable { case red, green }
        struct Response: Codable, Sendable {
            var id: ItemID
            var count: Int
            var tags: [String]
            var color: Color?
            var extra: [String: Double]?
        }
        var id: ItemID
        var limit: Int?
    }

    static let sampleSpec: JSONValue = [
        "methods": [
            [
                "name": "sample.get",
                "x-effect": ["access": "reads", "idempotent": true, "reachesOut": false],
                "params": [
                    ["name": "id", "required": true, "schema": ["type": "string"]],
                    ["name": "limit", "schema": ["type": "integer"]],
                ],
                "result": [
                    "name": "sample",
                    "schema": [
                        "type": "object", "required": ["id", "count", "tags"],
                        "properties": [
                            "id": ["type": "string"], "count": ["type": "integer"],
                            "tags": ["type": "array", "items": ["type": "string"]],
                            "color": ["type": "string", "enum": ["red", "green"]],
                            "extra": ["type": "object", "additionalProperties": ["type": "number"]],
                        ],
                    ],
                ],
            ]
        ]
    ]

    @Test func aTypeAndTheSpecThatDescribesItAgree() {
        #expect(APISpec.disagreements([Sample.self], in: Self.sampleSpec) == [])
    }

    @Test func theShapeOfATypeIsReadFromTheTypeItself() {
        guard case .object(let fields) = APIShape.of(Sample.Response.self) else {
            Issue.record("not an object")
            return
        }
        #expect(fields["id"] == .init(shape: .string, required: true))
        #expect(fields["tags"] == .init(shape: .array(.string), required: true))
        #expect(fields["color"] == .init(shape: .oneOf(["red", "green"]), required: false))
        #expect(fields["extra"] == .init(shape: .dictionary(.number), required: false))
        #expect(fields.count == 5)
    }

    /// Each kind of drift is found: a member missing on either side, required on one side only,
    /// another type, other enum values, another effect.
    @Test func driftIsFound() throws {
        func mutated(_ edit: (inout [String: JSONValue]) -> Void) -> [String] {
            guard var method = Self.sampleSpec["methods"]?.arrayValue?.first?.objectValue else { return ["no method"] }
            edit(&method)
            return APISpec.disagreements([Sample.self], in: ["methods": [.object(method)]])
        }
        func result(_ edit: @escaping (inout [String: JSONValue]) -> Void) -> [String] {
            mutated { method in
                guard var schema = method["result"]?["schema"]?.objectValue else { return }
                edit(&schema)
                method["result"] = ["name": "sample", "schema": .object(schema)]
            }
        }
        #expect(
            mutated { $0["params"] = [["name": "id", "required": true, "schema": ["type": "string"]]] }
                == ["sample.get params: `limit` is in the type, not in the spec"])
        #expect(
            mutated {
                $0["params"] = [["name": "id", "schema": ["type": "string"]], ["name": "limit", "schema": ["type": "integer"]]]
            }
                == ["sample.get params: `id` is required in the type, optional in the spec"])
        #expect(
            result { $0["required"] = ["id", "count"] }
                == ["sample.get result: `tags` is required in the type, optional in the spec"])
        #expect(
            result { schema in
                schema["properties"] = schema["properties"].map { p in
                    var p = p.objectValue ?? [:]
                    p["gone"] = ["type": "string"]
                    p["count"] = ["type": "string"]
                    p["color"] = ["type": "string", "enum": ["red", "blue"]]
                    return .object(p)
                }
            } == [
                "sample.get result: `gone` is in the spec, not in the type",
                "sample.get result.color: the spec's values [\"blue\", \"red\"], the type's [\"green\", \"red\"]",
                "sample.get result.count: the spec says string, the type is an integer",
            ])
        #expect(mutated { $0["x-effect"] = ["access": "changes", "idempotent": true, "reachesOut": false] }.count == 1)
        #expect(APISpec.disagreements([Sample.self], in: ["methods": []]) == ["sample.get is not in rpc-spec.json"])
    }
}
