import DiscfgJSON

/// A targeting rule read once, for many evaluations: the JSON Logic document with its
/// literals already values, its operators already named by ``LogicOperator`` and each
/// operation's arguments already split out, so an evaluation walks the rule without reading
/// JSON again. A flag's rule is read when its catalog is made (``FlagCatalog``).
///
/// Reading changes no meaning: an operation whose name is not an operator is kept as it is
/// and fails only when an evaluation reaches it (after its arguments, as before), and every
/// bound of ``LogicRun`` (depth, values built) is counted as the rule runs.
indirect enum LogicRule: Sendable {
    /// A value as written: a number, string, boolean, null, or an object that is not an
    /// operation (it has no member or more than one).
    case literal(LogicValue)
    /// An array, each element a rule.
    case array([LogicRule])
    /// An operation: its operator (nil when the name is none), the name as written, its
    /// arguments as rules, and for `reduce` its third argument as written (the accumulator's
    /// start, taken unevaluated).
    case operation(LogicOperator?, name: String, [LogicRule], initial: LogicValue?)

    /// The rule `json` is.
    init(_ json: JSONValue) {
        switch json {
        case .array(let items):
            self = .array(items.map(LogicRule.init))
        case .object(let object) where object.count == 1:
            guard let (name, raw) = object.first else { self = .literal(LogicValue(json)); return }
            let args: [JSONValue] = if case .array(let items) = raw { items } else { [raw] }
            let op = LogicOperator(rawValue: name)
            let initial = op == .reduce && args.count > 2 ? LogicValue(args[2]) : nil
            self = .operation(op, name: name, args.map(LogicRule.init), initial: initial)
        default:
            self = .literal(LogicValue(json))
        }
    }
}

/// The operators a rule may name: JSON Logic's own and flagd's custom ones.
enum LogicOperator: String, Sendable {
    case conditional = "if", ternary = "?:", and, or
    // `some` and `none` named apart from Optional's cases, which a switch over an optional
    // operator would take them for.
    case map, filter, reduce, all, someOf = "some", noneOf = "none"
    case variable = "var", missing, missingSome = "missing_some"
    case equal = "==", notEqual = "!=", strictEqual = "===", strictNotEqual = "!=="
    case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case not = "!", truthy = "!!"
    case plus = "+", times = "*", minus = "-", divide = "/", modulo = "%"
    case min, max
    case `in`, cat, substr, merge
    case fractional, startsWith = "starts_with", endsWith = "ends_with", semVer = "sem_ver"
}

extension JSONObject {
    /// The first member, found without listing the members.
    fileprivate var first: (key: String, value: JSONValue)? {
        var iterator = makeIterator()
        return iterator.next()
    }
}
