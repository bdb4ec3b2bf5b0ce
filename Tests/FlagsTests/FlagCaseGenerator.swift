import DiscfgJSON
import DiscfgTestSupport

/// One generated evaluation: a flag set, the flag asked for, a context, a type and a time.
struct FlagCase {
    var set: JSONValue
    var flag: String
    var context: JSONObject
    var type: String?
    var timestamp: Int
}

/// Draws flag sets and contexts from a seed: every operator, nesting, `$ref`s, `fractional`
/// with 1–10 variants and odd weights in both generations, sem_ver edge cases, and missing and
/// wrongly typed context values.
///
/// It stays inside what flagd's reference and discfg mean alike; what the reference does only
/// by accident of Python (comparing two arrays with `==` by identity, `$ref`s it resolves in
/// order of definition, `int()` of an infinity) is not drawn.
struct FlagCaseGenerator {
    var random: SeededGenerator

    init(seed: UInt64) {
        random = SeededGenerator(state: seed)
    }

    mutating func pick<T>(_ choices: [T]) -> T { choices.randomElement(using: &random)! }
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

    static let variantNames = ["on", "off", "red", "blue", "green", "a", "b", "true", "false", "3", "2.5", "None"]
    static let flagKeys = ["new-ui", "checkout", "banner-color", "rollout", "pricing", "x"]

    /// A number literal as JSON text spells it (`10.0` stays a float).
    func number(_ text: String) -> JSONValue { .number(JSONNumber(text)!) }

    mutating func next() -> FlagCase {
        let flagKey = pick(Self.flagKeys)
        var evaluators = JSONObject()
        let evaluatorCount = chance(30) ? int(1...3) : 0
        // An evaluator refers only to ones defined after it: the reference substitutes in order.
        for index in (0..<evaluatorCount).reversed() {
            let later = (index + 1..<evaluatorCount).map { "rule\($0)" }
            evaluators["rule\(index)"] = condition(depth: 2, references: later)
        }
        let references = evaluators.keys
        var flags = JSONObject()
        flags[flagKey] = flag(references: references)
        if chance(30) { flags[pick(Self.flagKeys) + "-other"] = flag(references: references) }
        var set = JSONObject()
        set["flags"] = .object(flags)
        if evaluatorCount > 0 { set["$evaluators"] = .object(reorderedEvaluators(evaluators)) }
        var metadata = JSONObject()
        if chance(50) { metadata["fractionalGeneration"] = .string("utf8") }
        if chance(30) { metadata["team"] = "growth" }
        if chance(20) { metadata["version"] = number(pick(["2", "2.0", "1.5"])) }
        if !metadata.isEmpty { set["metadata"] = .object(metadata) }
        let asked = chance(95) ? flagKey : "missing-flag"
        let type: String? = chance(40) ? nil : pick(["boolean", "string", "integer", "float", "object"])
        return FlagCase(set: .object(set), flag: asked, context: context(), type: type, timestamp: int(1_600_000_000...1_800_000_000))
    }

    /// Evaluators in the order the reference needs: referring ones first.
    private func reorderedEvaluators(_ evaluators: JSONObject) -> JSONObject {
        JSONObject(evaluators.members.sorted { $0.key < $1.key })
    }

    mutating func flag(references: [String]) -> JSONValue {
        var variants = JSONObject()
        for name in Self.variantNames.shuffled(using: &random).prefix(int(1...5)) { variants[name] = variantValue() }
        var flag = JSONObject()
        flag["state"] = chance(92) ? "ENABLED" : (chance(80) ? "DISABLED" : "PAUSED")
        flag["variants"] = chance(98) ? .object(variants) : .object(JSONObject())
        switch int(0...9) {
        case 0: break
        case 1: flag["defaultVariant"] = pick([.null, "", "nowhere", true, false, 0])
        default: flag["defaultVariant"] = .string(pick(variants.keys.isEmpty ? ["on"] : variants.keys))
        }
        if !chance(15) { flag["targeting"] = targeting(variants: variants.keys, references: references) }
        if chance(25) { flag["metadata"] = ["owner": "web", "weight": number(pick(["1", "1.0", "0.5"]))] }
        return .object(flag)
    }

    mutating func variantValue() -> JSONValue {
        switch int(0...9) {
        case 0, 1: .bool(chance(50))
        case 2, 3: .string(pick(["#FF0000", "blue", "", "ünïcødé"]))
        case 4: number(pick(["0", "7", "-3", "9007199254740991"]))
        case 5: number(pick(["10.0", "0.5", "-2.25", "1e2", "3.0"]))
        case 6: ["limit": number("10.0"), "tags": ["a", "b"]]
        case 7: [1, "two", number("3.0")]
        case 8: chance(20) ? .null : .bool(true)
        default: .string(pick(["on", "off"]))
        }
    }

    mutating func targeting(variants: [String], references: [String]) -> JSONValue {
        let names = variants + [pick(Self.variantNames)]
        switch int(0...19) {
        case 0...5:
            var args: [JSONValue] = []
            for _ in 0..<int(1...3) {
                args.append(condition(depth: int(1...3), references: references))
                args.append(chance(90) ? .string(pick(names)) : .null)
            }
            if chance(70) { args.append(.string(pick(names))) }
            return ["if": .array(args)]
        case 6...10: return fractional(names: names)
        case 11: return ["if": [semVer(), .string(pick(names)), .string(pick(names))]]
        case 12: return chance(50) ? condition(depth: 2, references: references) : ["!": [condition(depth: 2, references: references)]]
        case 13: return value(depth: 3)
        case 14: return references.isEmpty ? ["cat": [.string(pick(names))]] : ["$ref": .string(pick(references))]
        case 15: return pick(["abc", [1, 2], ["nope": [1]], [:], ["var": "plan"], ["substr": ["blue-sky", 0, 4]]])
        case 16: return ["if": [["in": [["var": "plan"], ["pro", "team"]]], ["fractional": fractionalArgs(names: names)], .string(pick(names))]]
        case 17: return ["max": [["var": "age"], number("2.5"), ["var": "score"]]]
        default: return ["cat": [.string(pick(["r", "b", "o"])), .string(pick(["ed", "lue", "n", "ff"]))]]
        }
    }
}
