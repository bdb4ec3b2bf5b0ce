import DiscfgJSON
import Foundation

/// Evaluates flags as flagd does: reasons, errors and values exactly as flagd's reference
/// evaluator (openfeature-flagd-core) answers them.
///
/// The rule sees the evaluation context with `targetingKey` and `$flagd.flagKey` and
/// `$flagd.timestamp` (unix seconds from ``clock``) set by the evaluator.
///
/// ```swift
/// let evaluator = FlagEvaluator(clock: { 1_700_000_000 })
/// let answer = evaluator.evaluate("new-ui", in: catalog, context: ["targetingKey": "u1", "plan": "pro"])
/// answer.value    // .bool(true)
/// answer.reason   // .targetingMatch
/// ```
public struct FlagEvaluator: Sendable {
    /// The time `$flagd.timestamp` reports, in unix seconds.
    public let clock: @Sendable () -> Int

    /// An evaluator; `clock` defaults to the system's time.
    public init(clock: @escaping @Sendable () -> Int = { Int(Date().timeIntervalSince1970) }) {
        self.clock = clock
    }

    /// Evaluates the flag `key` for `context`.
    ///
    /// - Parameters:
    ///   - context: the evaluation context; its `targetingKey` member, if any, must be a string.
    ///   - type: the type the caller expects; a variant of another type is TYPE_MISMATCH.
    public func evaluate(_ key: String, in catalog: FlagCatalog, context: JSONObject = JSONObject(), expecting type: FlagValueType? = nil) -> FlagEvaluation {
        guard let entry = catalog.entries[key] else {
            return FlagEvaluation(key: key, error: .flagNotFound, message: "flag \"\(key)\" is not defined")
        }
        var metadata = entry.setMetadata
        for (name, value) in entry.flag.metadata { metadata[name] = value }
        let answer = evaluate(entry, context: context, metadata: metadata)
        guard let type, answer.variant != nil, let value = answer.value, !type.admits(value) else { return answer }
        return FlagEvaluation(key: key, error: .typeMismatch, message: "flag \"\(key)\" is not of type \(type.rawValue)", metadata: metadata)
    }

    private func evaluate(_ entry: FlagCatalog.Entry, context: JSONObject, metadata: JSONObject) -> FlagEvaluation {
        let flag = entry.flag
        if flag.state == .disabled {
            return FlagEvaluation(key: flag.key, value: nil, variant: nil, reason: .disabled, metadata: metadata)
        }
        guard flag.targeting != nil else { return defaultAnswer(flag, reason: .staticValue, metadata: metadata) }
        guard let rule = entry.rule else {
            return FlagEvaluation(key: flag.key, error: .parseError, message: "targeting of flag \"\(flag.key)\" is not a JSON Logic rule", metadata: metadata)
        }
        if let targetingKey = context["targetingKey"], !targetingKey.isStringOrNull {
            return FlagEvaluation(key: flag.key, error: .invalidContext, message: "targetingKey must be a string", metadata: metadata)
        }
        var run = LogicRun(fractional: entry.fractionalGeneration)
        let result: LogicValue
        do {
            result = try run.evaluate(rule, logicData(flag.key, context: context))
        } catch {
            let code: EvaluationErrorCode = if case .unknownOperator = error { .parseError } else { .general }
            return FlagEvaluation(key: flag.key, error: code, message: "flag \"\(flag.key)\": \(error.message)", metadata: metadata)
        }
        let name: String
        switch result {
        case .null: return defaultAnswer(flag, reason: .defaultValue, metadata: metadata)
        case .bool(let b): name = b ? "true" : "false"
        default: name = result.pythonText
        }
        guard !name.isEmpty, let value = flag.variants[name], value != .null else {
            return FlagEvaluation(key: flag.key, error: .general, message: "targeting of flag \"\(flag.key)\" named a variant it does not define", metadata: metadata)
        }
        return FlagEvaluation(key: flag.key, value: value, variant: name, reason: .targetingMatch, metadata: metadata)
    }

    /// What a rule of `flagKey` sees: the context with `targetingKey` and `$flagd` set.
    func logicData(_ flagKey: String, context: JSONObject) -> LogicValue {
        var data = LogicObject(context, room: 2)
        var flagd = LogicObject()
        flagd["flagKey"] = .string(flagKey)
        flagd["timestamp"] = .int(clock())
        data["$flagd"] = .object(flagd)
        data["targetingKey"] = context["targetingKey"].map(LogicValue.init) ?? .null
        return .object(data)
    }

    /// The default variant with `reason`, or the caller's default (reason DEFAULT) when there is none.
    private func defaultAnswer(_ flag: Flag, reason: EvaluationReason, metadata: JSONObject) -> FlagEvaluation {
        guard let name = flag.defaultVariant else {
            return FlagEvaluation(key: flag.key, value: nil, variant: nil, reason: .defaultValue, metadata: metadata)
        }
        guard let value = flag.variants[name] else {
            return FlagEvaluation(key: flag.key, error: .general, message: "defaultVariant of flag \"\(flag.key)\" names a variant it does not define", metadata: metadata)
        }
        return FlagEvaluation(key: flag.key, value: value, variant: name, reason: reason, metadata: metadata)
    }
}

extension JSONValue {
    fileprivate var isStringOrNull: Bool {
        switch self {
        case .string, .null: true
        default: false
        }
    }
}
