import JSONRPC
import MediaKit

/// rpc-spec.json, the OpenRPC document of the API, and where it and the API's types disagree.
public enum APISpec {
    /// The document as embedded at build time, parsed once.
    public static let document: Swift.Result<JSONValue, JSONParseError> = Swift.Result { () throws(JSONParseError) in
        try JSONParser.parse(PackageResources.rpc_spec_json)
    }

    /// Where the document says of `methods` something their types do not: a method missing, its
    /// x-effect, a param or answer member that one side has and the other lacks, required on one
    /// side and optional on the other, or of another type. Empty when they agree.
    public static func disagreements(_ methods: [any APIMethod.Type], in spec: JSONValue) -> [String] {
        let described = Dictionary(
            (spec["methods"]?.arrayValue ?? []).compactMap { m in m["name"]?.stringValue.map { ($0, m) } },
            uniquingKeysWith: { a, _ in a })
        let checker = Checker(spec: spec)
        var found: [String] = []
        for method in methods {
            guard let entry = described[method.method] else {
                found.append("\(method.method) is not in rpc-spec.json")
                continue
            }
            if entry["x-effect"] != method.effect.described {
                found.append(
                    "\(method.method): x-effect is \(entry["x-effect"]?.jsonString ?? "missing"), the type says \(method.effect.described.jsonString)"
                )
            }
            var properties: [String: JSONValue] = [:]
            var required: [JSONValue] = []
            for param in entry["params"]?.arrayValue ?? [] {
                guard let name = param["name"]?.stringValue else { continue }
                if let member = method.aliases[name] {
                    if !(entry["params"]?.arrayValue ?? []).contains(where: { $0["name"]?.stringValue == member }) {
                        found.append("\(method.method) params: `\(name)` stands for `\(member)`, which the spec lacks")
                    }
                    continue
                }
                properties[name] = param["schema"] ?? [:]
                if param["required"]?.boolValue == true { required.append(.string(name)) }
            }
            let params = JSONValue.object([
                "type": .string("object"), "properties": .object(properties), "required": .array(required),
            ])
            checker.compare(params, APIShape.of(method), at: "\(method.method) params", into: &found)
            if let result = entry["result"]?["schema"] {
                checker.compare(result, answerShape(method), at: "\(method.method) result", into: &found)
            } else {
                found.append("\(method.method) has no result schema")
            }
        }
        return found
    }

    private static func answerShape<M: APIMethod>(_ method: M.Type) -> APIShape { APIShape.of(M.Response.self) }

    /// Where the document's `x-notifications` entry of `type` and the type disagree.
    public static func disagreements(notification type: any HostNotification.Type, in spec: JSONValue) -> [String] {
        guard
            let entry = (spec["x-notifications"]?.arrayValue ?? []).first(where: { $0["name"]?.stringValue == type.method }),
            let params = entry["params"]
        else { return ["\(type.method) is not in rpc-spec.json's x-notifications"] }
        var found: [String] = []
        Checker(spec: spec).compare(params, APIShape.of(type), at: type.method, into: &found)
        return found
    }

    private struct Checker {
        let spec: JSONValue

        func resolve(_ schema: JSONValue, depth: Int = 0) -> JSONValue {
            guard depth < 8, let ref = schema["$ref"]?.stringValue, ref.hasPrefix("#/") else { return schema }
            var target: JSONValue? = spec
            for part in ref.dropFirst(2).split(separator: "/") { target = target?[String(part)] }
            return target.map { resolve($0, depth: depth + 1) } ?? [:]
        }

        /// The schema's type, the one that is not null when it allows two.
        func type(of schema: JSONValue) -> String? {
            if let type = schema["type"]?.stringValue { return type }
            return schema["type"]?.arrayValue?.compactMap(\.stringValue).first { $0 != "null" }
        }

        func compare(_ schema: JSONValue, _ shape: APIShape, at path: String, into found: inout [String]) {
            let schema = resolve(schema)
            // A choice of schemas, or a shape that cannot be traced: nothing to hold against.
            guard schema["oneOf"] == nil, schema["anyOf"] == nil, schema["allOf"] == nil else { return }
            switch (type(of: schema), shape) {
            case (_, .any), (_, .opaque), (nil, _): return
            case ("object", .object(let fields)):
                let properties = schema["properties"]?.objectValue ?? [:]
                let required = Set((schema["required"]?.arrayValue ?? []).compactMap(\.stringValue))
                for name in fields.keys.sorted() where properties[name] == nil {
                    found.append("\(path): `\(name)` is in the type, not in the spec")
                }
                for name in properties.keys.sorted() where fields[name] == nil {
                    found.append("\(path): `\(name)` is in the spec, not in the type")
                }
                for (name, field) in fields.sorted(by: { $0.key < $1.key }) {
                    guard let property = properties[name] else { continue }
                    if field.required != required.contains(name) {
                        found.append(
                            "\(path): `\(name)` is \(field.required ? "required" : "optional") in the type, "
                                + "\(required.contains(name) ? "required" : "optional") in the spec")
                    }
                    compare(property, field.shape, at: "\(path).\(name)", into: &found)
                }
            case ("object", .dictionary(let values)):
                if let additional = schema["additionalProperties"], additional.objectValue != nil {
                    compare(additional, values, at: "\(path).*", into: &found)
                }
            case ("array", .array(let element)):
                if let items = schema["items"] { compare(items, element, at: "\(path)[]", into: &found) }
            case ("string", .string), ("integer", .integer), ("number", .number), ("number", .integer),
                ("boolean", .boolean):
                return
            case ("string", .oneOf(let cases)):
                let listed = (schema["enum"]?.arrayValue ?? []).compactMap(\.stringValue)
                if !listed.isEmpty, Set(listed) != Set(cases) {
                    found.append("\(path): the spec's values \(listed.sorted()), the type's \(cases.sorted())")
                }
            default:
                found.append("\(path): the spec says \(type(of: schema) ?? "?"), the type is \(shape.described)")
            }
        }
    }
}

extension APIShape {
    /// In a sentence.
    var described: String {
        switch self {
        case .string: "a string"
        case .oneOf(let cases): "one of \(cases.joined(separator: ", "))"
        case .integer: "an integer"
        case .number: "a number"
        case .boolean: "a boolean"
        case .array: "an array"
        case .dictionary: "an object of any keys"
        case .object: "an object"
        case .any: "any JSON"
        case .opaque(let name): name
        }
    }
}
