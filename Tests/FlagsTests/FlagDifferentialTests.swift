import DiscfgFlags
import DiscfgJSON
import DiscfgTestSupport
import Testing

/// discfg's evaluator against flagd's reference (openfeature-flagd-core from PyPI, both
/// generations of `fractional`) on thousands of generated flag sets and contexts: they must
/// agree on value, variant, reason and error code.
@Suite("FlagsTests.Differential")
struct FlagDifferentialTests {
    /// Cases per run; the seed is fixed, so a failure is the same on every run.
    static let caseCount = 10000
    static let seed: UInt64 = 0x00f1_a9d5

    @Test("every generated case evaluates as flagd's reference evaluates it")
    func agreesWithReference() async throws {
        var generator = FlagCaseGenerator(seed: Self.seed)
        let cases = (0..<Self.caseCount).map { _ in generator.next() }
        let lines = try cases.enumerated().map { index, flagCase in try Self.line(index, flagCase) }
        let answers = try await FlagdReference.evaluate(lines)
        try #require(answers.count == cases.count, "the reference answered \(answers.count) of \(cases.count) cases")
        var disagreements: [String] = []
        var tally: [String: Int] = [:]
        for (index, flagCase) in cases.enumerated() {
            let expected = try JSONParser.parse(answers[index])
            let ours = Self.evaluate(flagCase)
            tally[ours.outcome, default: 0] += 1
            if ours.evaluation?.reason == .targetingMatch, lines[index].contains(#""fractional""#) {
                tally[lines[index].contains(#""fractionalGeneration":"utf8""#) ? "fractional utf8" : "fractional cbor", default: 0] += 1
            }
            if let difference = Self.difference(ours, expected), !Self.isBooleanAskedAsFloat(flagCase, ours, expected) {
                disagreements.append("case \(index): \(difference)\n  \(lines[index])\n  reference: \(answers[index])")
            }
        }
        let summary = tally.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        #expect(disagreements.isEmpty, "\(disagreements.count) of \(cases.count) cases disagree (\(summary)):\n\(disagreements.prefix(15).joined(separator: "\n"))")
        // The generator must reach every outcome, or agreement proves little.
        for outcome in ["fractional utf8", "fractional cbor", "setError", "STATIC", "DEFAULT", "TARGETING_MATCH", "DISABLED", "ERROR FLAG_NOT_FOUND", "ERROR PARSE_ERROR", "ERROR GENERAL", "ERROR TYPE_MISMATCH"] {
            #expect(tally[outcome, default: 0] > 0, "no generated case gave \(outcome) (\(summary))")
        }
    }

    /// Our answer in the peer's terms.
    struct Answer {
        var setError = false
        var evaluation: FlagEvaluation?

        var outcome: String {
            guard let evaluation else { return "setError" }
            return evaluation.reason.rawValue + (evaluation.errorCode.map { " " + $0.rawValue } ?? "")
        }
    }

    static func evaluate(_ flagCase: FlagCase) -> Answer {
        guard let set = try? FlagSet(parsing: flagCase.set) else { return Answer(setError: true) }
        let evaluator = FlagEvaluator(clock: { flagCase.timestamp })
        let type = flagCase.type.flatMap(FlagValueType.init(rawValue:))
        return Answer(evaluation: evaluator.evaluate(flagCase.flag, in: FlagCatalog(set), context: flagCase.context, expecting: type))
    }

    /// What differs between our answer and the reference's, or nil.
    static func difference(_ ours: Answer, _ expected: JSONValue) -> String? {
        let referenceRefused = expected["setError"] == .bool(true)
        guard let evaluation = ours.evaluation else {
            return referenceRefused ? nil : "we refused the flag set, the reference did not"
        }
        if referenceRefused { return "the reference refused the flag set, we did not" }
        if evaluation.reason.rawValue != expected["reason"]?.stringValue { return "reason \(evaluation.reason.rawValue)" }
        if evaluation.errorCode?.rawValue != expected["errorCode"]?.stringValue { return "error \(evaluation.errorCode?.rawValue ?? "none")" }
        if evaluation.variant != expected["variant"]?.stringValue { return "variant \(evaluation.variant ?? "none")" }
        if evaluation.value != expected["value"] {
            return "value \(evaluation.value.map { (try? JSONSerializer.string($0)) ?? "?" } ?? "none")"
        }
        return nil
    }

    /// The one deliberate difference: the reference's float resolver accepts a boolean variant
    /// (Python's `bool` is an `int`) and answers 1.0 or 0.0; discfg answers TYPE_MISMATCH, as
    /// flagd itself does.
    static func isBooleanAskedAsFloat(_ flagCase: FlagCase, _ ours: Answer, _ expected: JSONValue) -> Bool {
        guard flagCase.type == "float", ours.evaluation?.errorCode == .typeMismatch,
            case .string(let variant)? = expected["variant"],
            case .bool? = flagCase.set["flags"]?[flagCase.flag]?["variants"]?[variant]
        else { return false }
        return true
    }

    static func line(_ index: Int, _ flagCase: FlagCase) throws -> String {
        var object = JSONObject()
        object["id"] = .number(JSONNumber(index))
        object["set"] = flagCase.set
        object["flag"] = .string(flagCase.flag)
        object["context"] = .object(flagCase.context)
        object["type"] = flagCase.type.map(JSONValue.string) ?? .null
        object["timestamp"] = .number(JSONNumber(flagCase.timestamp))
        return try JSONSerializer.string(.object(object), options: .init(numbersAsWritten: true))
    }
}

extension JSONValue {
    fileprivate var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
}
