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
        switch rule {
        case .array(let items):
            try count(items.count)
            return .array(try descend { (run: inout LogicRun) throws(LogicError) in
                var out: [LogicValue] = []
                out.reserveCapacity(items.count)
                for item in items { out.append(try run.evaluate(item, data)) }
                return out
            })
        case .object(let object) where object.count == 1:
            let (name, raw) = object.members[0]
            let args: [JSONValue] = if case .array(let items) = raw { items } else { [raw] }
            return try descend { (run: inout LogicRun) throws(LogicError) in try run.apply(name, args, data) }
        default:
            return LogicValue(rule)
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

    private mutating func apply(_ name: String, _ args: [JSONValue], _ data: LogicValue) throws(LogicError) -> LogicValue {
        switch name {
        case "if", "?:": return try conditional(args, data)
        case "and", "or":
            var current = LogicValue.null
            for arg in args {
                current = try evaluate(arg, data)
                if current.isTruthy == (name == "or") { return current }
            }
            return current
        case "map", "filter", "reduce", "all", "some", "none":
            return try iterate(name, args, data)
        default:
            var values: [LogicValue] = []
            values.reserveCapacity(args.count)
            for arg in args { values.append(try evaluate(arg, data)) }
            return try operate(name, values, data)
        }
    }

    private mutating func conditional(_ args: [JSONValue], _ data: LogicValue) throws(LogicError) -> LogicValue {
        var index = 0
        while index < args.count - 1 {
            if try evaluate(args[index], data).isTruthy { return try evaluate(args[index + 1], data) }
            index += 2
        }
        return index < args.count ? try evaluate(args[index], data) : .null
    }

    private mutating func iterate(_ name: String, _ args: [JSONValue], _ data: LogicValue) throws(LogicError) -> LogicValue {
        let emptyAnswer: LogicValue =
            switch name {
            case "map", "filter": .array([])
            case "all", "some": .bool(false)
            case "none": .bool(true)
            default: .null
            }
        let needed = name == "map" || name == "reduce" ? 1 : 2
        guard args.count >= needed else { return emptyAnswer }
        let items = try evaluate(args[0], data)
        let sublogic = args.count > 1 ? args[1] : JSONValue.null
        guard case .array(let list) = items else {
            return name == "reduce" ? (args.count > 2 ? LogicValue(args[2]) : .null) : emptyAnswer
        }
        switch name {
        case "map":
            try count(list.count)
            var out: [LogicValue] = []
            for item in list { out.append(try evaluate(sublogic, item)) }
            return .array(out)
        case "filter":
            var out: [LogicValue] = []
            for item in list where try evaluate(sublogic, item).isTruthy { out.append(item) }
            try count(out.count)
            return .array(out)
        case "reduce":
            var context = LogicObject()
            context["accumulator"] = args.count > 2 ? LogicValue(args[2]) : .null
            for item in list {
                context["current"] = item
                context["accumulator"] = try evaluate(sublogic, .object(context))
            }
            return context["accumulator"] ?? .null
        case "all":
            if list.isEmpty { return .bool(false) }
            for item in list where !(try evaluate(sublogic, item).isTruthy) { return .bool(false) }
            return .bool(true)
        default:
            for item in list where try evaluate(sublogic, item).isTruthy { return .bool(name == "some") }
            return .bool(name != "some")
        }
    }
}
