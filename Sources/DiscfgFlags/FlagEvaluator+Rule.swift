import DiscfgJSON

/// Which branch of a flag's targeting gave its answer, for a person reading why.
public enum TargetingBranch: Sendable, Equatable, CustomStringConvertible {
    /// The targeting is an `if` and its condition number `n` (from 1) was the first to hold.
    case condition(Int)
    /// The targeting is an `if` and none of its conditions held: its last argument answered.
    case otherwise
    /// The targeting is not a top-level `if`: the whole rule answered.
    case wholeRule

    /// `if branch 2`, `the if's else`, `the rule`.
    public var description: String {
        switch self {
        case .condition(let n): "if branch \(n)"
        case .otherwise: "the if's else"
        case .wholeRule: "the rule"
        }
    }
}

extension FlagEvaluator {
    /// The branch of the targeting of flag `key` that answers for `context`: for a rule
    /// `{"if": [c1, v1, c2, v2, …, else]}` the first condition that holds, as the
    /// evaluator's `if` picks it (truthiness as flagd's JSON Logic reads it); nil for a flag
    /// without targeting, a disabled or unknown flag, or a condition that fails to run.
    public func branch(of key: String, in catalog: FlagCatalog, context: JSONObject = JSONObject()) -> TargetingBranch? {
        guard let entry = catalog.entries[key], entry.flag.state == .enabled, case .object(let rule)? = entry.flag.targeting else { return nil }
        guard rule.count == 1, case .operation(let op?, _, let args, _)? = entry.rule, op == .conditional || op == .ternary, args.count > 1 else {
            return .wholeRule
        }
        let data = logicData(key, context: context)
        var index = 0
        while index < args.count - 1 {
            var run = LogicRun(fractional: entry.fractionalGeneration)
            guard let held = try? run.evaluate(args[index], data).isTruthy else { return nil }
            if held { return .condition(index / 2 + 1) }
            index += 2
        }
        return index < args.count ? .otherwise : nil
    }
}
