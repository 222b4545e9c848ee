import Basics
import Foundation
import Testing

/// The TOML reader against the official toml-test suite's TOML 1.0 cases (toml-test/SOURCES.md):
/// every valid document reads as its expected JSON says, every invalid one is refused.
@Suite struct TOMLTests {
    static let folder = Bundle.module.resourcePath! + "/toml-test"

    static func cases(_ kind: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + kind)) ?? []
        return names.filter { $0.hasSuffix(".toml") }.map { String($0.dropLast(5)) }.sorted()
    }

    static func read(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func theSuiteIsThere() {
        #expect(Self.cases("valid").count > 60)
        #expect(Self.cases("invalid").count > 60)
    }

    @Test(arguments: cases("valid")) func validDocumentsReadAsExpected(_ name: String) throws {
        let table = try TOMLTable(bytes: Self.read("\(Self.folder)/valid/\(name).toml"))
        let expected = try JSONSerialization.jsonObject(
            with: Data(Self.read("\(Self.folder)/valid/\(name).json")), options: [.fragmentsAllowed])
        let difference = Self.difference(.table(table), expected, path: "$")
        #expect(difference == nil, "\(name): \(difference ?? "")")
    }

    @Test(arguments: cases("invalid")) func invalidDocumentsAreRefused(_ name: String) throws {
        let bytes = try Self.read("\(Self.folder)/invalid/\(name).toml")
        #expect(throws: TOMLError.self, "\(name)") { try TOMLTable(bytes: bytes) }
    }

    /// Where `value` and toml-test's tagged JSON differ, or nil.
    static func difference(_ value: TOMLValue, _ expected: Any, path: String) -> String? {
        if case .table(let table) = value {
            guard let object = expected as? [String: Any] else { return "\(path): a table where \(expected) was expected" }
            guard Set(table.keys) == Set(object.keys) else {
                return "\(path): keys \(table.keys.sorted()) where \(object.keys.sorted()) were expected"
            }
            for (key, element) in table {
                if let difference = difference(element, object[key]!, path: path + "." + key) { return difference }
            }
            return nil
        }
        if case .array(let values) = value {
            guard let array = expected as? [Any], array.count == values.count else {
                return "\(path): \(values.count) elements where \(expected) was expected"
            }
            for (index, element) in values.enumerated() {
                if let difference = difference(element, array[index], path: "\(path)[\(index)]") { return difference }
            }
            return nil
        }
        guard let tagged = expected as? [String: String], let type = tagged["type"], let text = tagged["value"] else {
            return "\(path): \(value) where \(expected) was expected"
        }
        let same: Bool
        switch value {
        case .string(let string): same = type == "string" && string == text
        case .integer(let number): same = type == "integer" && String(number) == text
        case .float(let number):
            let wanted =
                ["inf": Double.infinity, "+inf": .infinity, "-inf": -.infinity, "nan": .nan, "+nan": .nan, "-nan": .nan][text]
                ?? Double(text)
            same = type == "float" && (number.isNaN ? wanted?.isNaN == true : wanted == number)
        case .bool(let flag): same = type == "bool" && String(flag) == text
        case .dateTime(let written): same = type == "datetime" && normal(written) == normal(text)
        case .localDateTime(let written): same = type == "datetime-local" && normal(written) == normal(text)
        case .localDate(let written): same = type == "date-local" && written == text
        case .localTime(let written): same = type == "time-local" && normal(written) == normal(text)
        case .array, .table: same = false
        }
        return same ? nil : "\(path): \(value) where \(type) \(text) was expected"
    }

    /// A date-time's text compared as a time: "T" for the space, upper case, trailing zeros of
    /// the fraction of a second dropped.
    static func normal(_ text: String) -> String {
        var out = text.uppercased().replacingOccurrences(of: " ", with: "T")
        if let dot = out.firstIndex(of: ".") {
            let digitsEnd = out[out.index(after: dot)...].firstIndex { !$0.isNumber } ?? out.endIndex
            var fraction = String(out[out.index(after: dot)..<digitsEnd])
            while fraction.hasSuffix("0") { fraction.removeLast() }
            out = String(out[..<dot]) + (fraction.isEmpty ? "" : "." + fraction) + out[digitsEnd...]
        }
        return out
    }

    @Test func aProblemSaysItsLineAndColumn() {
        do {
            _ = try TOMLTable(string: "[player]\nspeed = 1.5\nspeed = 2\n")
            Issue.record("a key defined twice was read")
        } catch {
            #expect(error.line == 3 && error.column > 1, "\(error)")
            #expect(error.description.contains("speed is defined twice"), "\(error)")
        }
    }

    @Test func valuesKeepTheirOrderAndTypes() throws {
        let table = try TOMLTable(string: "b = 1\na = \"x\"\n[c]\nd = [1, 2.5, true]\n")
        #expect(table.keys == ["b", "a", "c"])
        #expect(table["b"]?.int == 1 && table["a"]?.string == "x")
        #expect(table["c"]?.table?["d"]?.array == [.integer(1), .float(2.5), .bool(true)])
    }
}
