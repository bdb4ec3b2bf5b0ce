import DiscfgJSON

/// One evaluation of a targeting rule: JSON Logic with flagd's operators, as flagd's reference
/// evaluator (openfeature-flagd-core) runs it.
///
/// Every nested rule and every value an operator builds is counted against fixed bounds, so a
/// deeply nested rule or a `merge`/`map` that multiplies an array fails with ``LogicError``
/// instead of exhausting the stack or memory.
struct LogicRun {
    /// Deepest nesting of rules evaluated.
    static let maxDepth = 100
    /// Most values (array elements) one evaluation may build.
    static let maxElements = 1_000_000

    /// How `fractional` hashes.
    let fractional: FractionalGeneration
    private var depth = 0
    private var elements = 0

    init(fractional: FractionalGeneration) {
        self.fractional = fractional
    }

    /// Evaluates `rule` against `data`.
    mutating func evaluate(_ rule: JSONValue, _ data: LogicValue) throws(LogicError) -> LogicValue {
        try evaluate(LogicRule(rule), data)
    }

    /// Evaluates `rule`, read once (``LogicRule``), against `data`.
    mutating func evaluate(_ rule: LogicRule, _ data: LogicValue) throws(LogicError) -> LogicValue {
        switch rule {
        case .literal(let value):
            return value
        case .array(let items):
            try count(items.count)
            return .array(try descend { (run: inout LogicRun) throws(LogicError) in
                var out: [LogicValue] = []
                out.reserveCapacity(items.count)
                for item in items { out.append(try run.evaluate(item, data)) }
                return out
            })
        case .operation(let op, let name, let args, let initial):
            return try descend { (run: inout LogicRun) throws(LogicError) in try run.apply(op, name, args, initial, data) }
        }
    }

    /// Runs `body` one level deeper.
    private mutating func descend<T>(_ body: (inout LogicRun) throws(LogicError) -> T) throws(LogicError) -> T {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw .tooDeep(Self.maxDepth) }
        return try body(&self)
    }

    /// Counts `n` values built against ``maxElements``.
    mutating func count(_ n: Int) throws(LogicError) {
        elements += n
        guard elements <= Self.maxElements else { throw .tooLarge(Self.maxElements) }
    }

    private mutating func apply(
        _ op: LogicOperator?, _ name: String, _ args: [LogicRule], _ initial: LogicValue?, _ data: LogicValue
    ) throws(LogicError) -> LogicValue {
        switch op {
        case .conditional, .ternary: return try conditional(args, data)
        case .and, .or:
            var current = LogicValue.null
            for arg in args {
                current = try evaluate(arg, data)
                if current.isTruthy == (op == .or) { return current }
            }
            return current
        case .map, .filter, .reduce, .all, .someOf, .noneOf:
            return try iterate(op!, args, initial, data)
        default:
            var values: [LogicValue] = []
            values.reserveCapacity(args.count)
            for arg in args { values.append(try evaluate(arg, data)) }
            guard let op else { throw .unknownOperator(name) }
            return try operate(op, values, data)
        }
    }

    private mutating func conditional(_ args: [LogicRule], _ data: LogicValue) throws(LogicError) -> LogicValue {
        var index = 0
        while index < args.count - 1 {
            if try evaluate(args[index], data).isTruthy { return try evaluate(args[index + 1], data) }
            index += 2
        }
        return index < args.count ? try evaluate(args[index], data) : .null
    }

    private mutating func iterate(_ op: LogicOperator, _ args: [LogicRule], _ initial: LogicValue?, _ data: LogicValue) throws(LogicError) -> LogicValue {
        let emptyAnswer: LogicValue =
            switch op {
            case .map, .filter: .array([])
            case .all, .someOf: .bool(false)
            case .noneOf: .bool(true)
            default: .null
            }
        let needed = op == .map || op == .reduce ? 1 : 2
        guard args.count >= needed else { return emptyAnswer }
        let items = try evaluate(args[0], data)
        let sublogic = args.count > 1 ? args[1] : LogicRule.literal(.null)
        guard case .array(let list) = items else {
            return op == .reduce ? (initial ?? .null) : emptyAnswer
        }
        switch op {
        case .map:
            try count(list.count)
            var out: [LogicValue] = []
            for item in list { out.append(try evaluate(sublogic, item)) }
            return .array(out)
        case .filter:
            var out: [LogicValue] = []
            for item in list where try evaluate(sublogic, item).isTruthy { out.append(item) }
            try count(out.count)
            return .array(out)
        case .reduce:
            var context = LogicObject()
            context["accumulator"] = initial ?? .null
            for item in list {
                context["current"] = item
                context["accumulator"] = try evaluate(sublogic, .object(context))
            }
            return context["accumulator"] ?? .null
        case .all:
            if list.isEmpty { return .bool(false) }
            for item in list where !(try evaluate(sublogic, item).isTruthy) { return .bool(false) }
            return .bool(true)
        default:
            for item in list where try evaluate(sublogic, item).isTruthy { return .bool(op == .someOf) }
            return .bool(op != .someOf)
        }
    }
}
