import Basics
import FoundationEssentials
import Glibc

/// Checks JSON values against the JSON Schema subset rpc-spec.json and provider-spec.json use:
/// type, properties, required, additionalProperties, items, enum, const, oneOf, pattern,
/// min/max, minLength/maxLength, $ref.
public struct SchemaValidator {
    public let document: JSONValue

    public init(document: JSONValue) { self.document = document }

    /// Whether `pattern` (a schema's regular expression, searched for anywhere unless anchored)
    /// finds a match in `string`; a pattern Swift's regular expressions cannot read fails the
    /// value, never the validator.
    static func matches(_ string: String, pattern: String) -> Bool {
        guard let regex = try? Regex(pattern) else { return false }
        return string.contains(regex)
    }

    /// - Returns: every violation, as "path: problem"; empty when the value conforms.
    public func validate(_ value: JSONValue, against schema: JSONValue, path: String = "$") -> [String] {
        guard case .object(let rules) = schema else { return ["\(path): schema is not an object"] }
        if let ref = rules["$ref"]?.stringValue {
            guard let target = resolve(ref) else { return ["\(path): unresolved \(ref)"] }
            return validate(value, against: target, path: path)
        }
        if let options = rules["oneOf"]?.arrayValue {
            let outcomes = options.map { validate(value, against: $0, path: path) }
            let passing = outcomes.filter(\.isEmpty).count
            if passing != 1 {
                return passing == 0
                    ? ["\(path): matches none of its \(options.count) alternatives (\(outcomes.first?.first ?? ""))"]
                    : ["\(path): matches more than one alternative"]
            }
        }
        var errors: [String] = []
        if let constant = rules["const"], value != constant {
            errors.append("\(path): must be \(constant.jsonString)")
        }
        if let type = rules["type"] {
            let allowed = type.arrayValue?.compactMap(\.stringValue) ?? [type.stringValue ?? ""]
            if !allowed.contains(where: { matches(value, type: $0) }) {
                return ["\(path): expected \(allowed.joined(separator: "|")), got \(value.jsonString.prefix(80))"]
            }
        }
        if let options = rules["enum"]?.arrayValue, !options.contains(value) {
            errors.append("\(path): \(value.jsonString) is not one of \(JSONValue.array(options).jsonString)")
        }
        if case .string(let string) = value {
            if let pattern = rules["pattern"]?.stringValue, !Self.matches(string, pattern: pattern) {
                errors.append("\(path): '\(string)' does not match \(pattern)")
            }
            if let min = rules["minLength"]?.intValue, string.count < min { errors.append("\(path): shorter than \(min)") }
            if let max = rules["maxLength"]?.intValue, string.count > max { errors.append("\(path): longer than \(max)") }
        }
        if let number = value.doubleValue {
            if let min = rules["minimum"]?.doubleValue, number < min { errors.append("\(path): below \(min)") }
            if let max = rules["maximum"]?.doubleValue, number > max { errors.append("\(path): above \(max)") }
        }
        if case .object(let members) = value {
            let properties = rules["properties"]?.objectValue ?? [:]
            for name in rules["required"]?.arrayValue?.compactMap(\.stringValue) ?? [] where members[name] == nil {
                errors.append("\(path): missing required \(name)")
            }
            for (name, member) in members {
                if let property = properties[name] {
                    errors += validate(member, against: property, path: "\(path).\(name)")
                } else if let additional = rules["additionalProperties"] {
                    if additional == .bool(false) {
                        errors.append("\(path): unexpected property \(name)")
                    } else if case .object = additional {
                        errors += validate(member, against: additional, path: "\(path).\(name)")
                    }
                }
            }
        }
        if case .array(let elements) = value, let items = rules["items"] {
            for (i, element) in elements.enumerated() { errors += validate(element, against: items, path: "\(path)[\(i)]") }
        }
        return errors
    }

    private func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object),
            ("number", .number):
            true
        case ("integer", .number(let text)): Int(text) != nil
        default: false
        }
    }

    private func resolve(_ ref: String) -> JSONValue? {
        guard ref.hasPrefix("#/") else { return nil }
        var node: JSONValue? = document
        for part in ref.dropFirst(2).split(separator: "/") { node = node?[String(part)] }
        return node
    }

    /// The result schema of a method in an OpenRPC document.
    public func resultSchema(of method: String) -> JSONValue? {
        document["methods"]?.arrayValue?.first { $0["name"]?.stringValue == method }?["result"]?["schema"]
    }
}
