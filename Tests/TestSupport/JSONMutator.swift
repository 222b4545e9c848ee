import Foundation
import MediaKit
import Sandbox
import Testing

/// Mutates recorded JSON bodies the way services drift and break: a field dropped, set to null,
/// a number sent as a string or the reverse, an unknown field or enum value added, a list element
/// replaced by garbage. Each variant says what was done, for the failure message.
public enum JSONMutator {
    public struct Variant: Sendable {
        public var body: Data
        public var changes: [String]
        /// How many list elements a change may have cost (an element replaced or emptied).
        public var touchedElements: Int
    }

    /// `count` variants of `body`, each with 1–3 changes at `minDepth` or deeper (the root is 0;
    /// a page's list is 1, its elements 2): deep enough that only elements can be hurt.
    public static func variants(of body: Data, count: Int, seed: UInt64, minDepth: Int = 2) -> [Variant] {
        guard let root = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else { return [] }
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            var value = root
            var changes: [String] = []
            var touched = 0
            for _ in 0..<(1 + Int(random.next() % 3)) {
                var paths: [[PathStep]] = []
                collect(value, path: [], into: &paths)
                let candidates = paths.filter { $0.count >= minDepth }
                guard !candidates.isEmpty else { break }
                let path = candidates[Int(random.next() % UInt64(candidates.count))]
                let target = element(at: path, in: value)
                let (new, change) = apply(path, to: value, &random)
                value = new
                changes.append(path.map(\.description).joined() + ": " + change)
                if path.contains(where: { if case .index = $0 { true } else { false } }) {
                    touched += 1
                } else if let list = target as? [Any] {
                    // A list replaced or dropped whole costs all its elements.
                    touched += list.count
                }
            }
            let data = (try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])) ?? body
            return Variant(body: data, changes: changes, touchedElements: touched)
        }
    }

    enum PathStep: CustomStringConvertible {
        case key(String)
        case index(Int)
        var description: String {
            switch self {
            case .key(let key): "." + key
            case .index(let index): "[\(index)]"
            }
        }
    }

    static func collect(_ value: Any, path: [PathStep], into paths: inout [[PathStep]]) {
        if !path.isEmpty { paths.append(path) }
        guard paths.count < 4000 else { return }
        if let object = value as? [String: Any] {
            // In key order: a seed gives the same variants in every process (dictionaries are not).
            for key in object.keys.sorted() { collect(object[key] as Any, path: path + [.key(key)], into: &paths) }
        } else if let array = value as? [Any] {
            for (index, element) in array.enumerated().prefix(50) { collect(element, path: path + [.index(index)], into: &paths) }
        }
    }

    static func element(at path: [PathStep], in value: Any) -> Any? {
        guard let step = path.first else { return value }
        switch step {
        case .key(let key): return (value as? [String: Any])?[key].flatMap { element(at: Array(path.dropFirst()), in: $0) }
        case .index(let index):
            guard let array = value as? [Any], index < array.count else { return nil }
            return element(at: Array(path.dropFirst()), in: array[index])
        }
    }

    static func apply(_ path: [PathStep], to value: Any, _ random: inout SplitMix64) -> (Any, String) {
        guard let step = path.first else {
            // The target itself.
            switch random.next() % 7 {
            case 0: return (NSNull(), "null")
            case 1:
                if let number = value as? NSNumber, !(value is Bool) { return ("\(number)", "a number as a string") }
                return (42, "42")
            case 2:
                if let text = value as? String, let number = Double(text) { return (number, "a numeric string as a number") }
                return (12345, "12345")
            case 3: return ("mediahost-unknown-value", "an unknown value")
            case 4: return (["unexpected": [1, "two", NSNull()]], "an object")
            case 5: return ([] as [Any], "[]")
            default: return (true, "true")
            }
        }
        let rest = Array(path.dropFirst())
        switch step {
        case .key(let key):
            guard var object = value as? [String: Any], let member = object[key] else { return (value, "nothing") }
            if rest.isEmpty, random.next() % 4 == 0 {
                object[key] = nil
                object["mediahost_unknown_field"] = ["nested": true]
                return (object, "dropped, an unknown field added")
            }
            let (new, change) = apply(rest, to: member, &random)
            object[key] = new
            return (object, change)
        case .index(let index):
            guard var array = value as? [Any], index < array.count else { return (value, "nothing") }
            let (new, change) = apply(rest, to: array[index], &random)
            array[index] = new
            return (array, change)
        }
    }
}

/// Runs a provider operation on many mutated variants of a recorded body: it must never crash
/// or throw anything but a typed ProviderError, and a page may lose at most the elements a
/// variant touched. `run` answers the operation from the body given and returns its item count.
public func checkTolerance(
    of body: Data, named name: String, variants: Int = 60, seed: UInt64 = 1, minDepth: Int = 2,
    sourceLocation: SourceLocation = #_sourceLocation, run: (Data) async throws -> Int
) async {
    let baseline: Int
    do {
        baseline = try await run(body)
    } catch {
        Issue.record("\(name) fails unmutated: \(error)", sourceLocation: sourceLocation)
        return
    }
    var survived = 0
    for variant in JSONMutator.variants(of: body, count: variants, seed: seed, minDepth: minDepth) {
        do {
            let count = try await run(variant.body)
            survived += 1
            #expect(
                count >= baseline - variant.touchedElements, "\(name): \(variant.changes) cost \(baseline - count) items",
                sourceLocation: sourceLocation)
        } catch is ProviderError {
            // A typed error is an answer (a details page without its id, say).
        } catch {
            Issue.record("\(name): \(variant.changes) threw \(error)", sourceLocation: sourceLocation)
        }
    }
    #expect(
        survived > variants / 2, "\(name): most variants still give a page (\(survived) of \(variants))",
        sourceLocation: sourceLocation)
}
