/// The operators that take evaluated arguments: JSON Logic's own and flagd's custom ones.
extension LogicRun {
    mutating func operate(_ op: LogicOperator, _ args: [LogicValue], _ data: LogicValue) throws(LogicError) -> LogicValue {
        func arg(_ index: Int) -> LogicValue { index < args.count ? args[index] : .null }
        switch op {
        case .variable: return Self.variable(data, arg(0), default: arg(1))
        case .missing: return .array(Self.missing(data, args))
        case .missingSome: return Self.missingSome(data, arg(0), arg(1))
        case .equal: return .bool(arg(0).looselyEquals(arg(1)))
        case .notEqual: return .bool(!arg(0).looselyEquals(arg(1)))
        case .strictEqual: return .bool(arg(0).pythonEquals(arg(1)))
        case .strictNotEqual: return .bool(!arg(0).pythonEquals(arg(1)))
        case .less, .lessOrEqual, .greater, .greaterOrEqual: return .bool(Self.compare(op, args))
        case .not: return .bool(!arg(0).isTruthy)
        case .truthy: return .bool(arg(0).isTruthy)
        case .plus: return args.reduce(LogicNumber.int(0)) { $0 + $1.number }.value
        case .times: return args.reduce(LogicNumber.int(1)) { $0 * $1.number }.value
        case .minus: return (args.count < 2 || args[1].isNull ? -arg(0).number : arg(0).number - arg(1).number).value
        case .divide:
            guard let quotient = arg(0).number.divided(by: arg(1).number) else { throw .failed("division by zero") }
            return quotient.value
        case .modulo:
            guard let remainder = arg(0).number.remainder(dividingBy: arg(1).number) else { throw .failed("modulo by zero") }
            return remainder.value
        case .min, .max: return Self.extreme(op == .min, args)
        case .in: return .bool(Self.contains(arg(1), arg(0)))
        case .cat: return .string(args.map(\.text).joined())
        case .substr: return .string(Self.substring(arg(0), arg(1), args.count > 2 ? args[2] : .null))
        case .merge:
            var out: [LogicValue] = []
            for value in args {
                if case .array(let items) = value { out.append(contentsOf: items) } else { out.append(value) }
            }
            try count(out.count)
            return .array(out)
        case .fractional: return Fractional.evaluate(args, data: data, generation: fractional)
        case .startsWith, .endsWith: return Self.affix(op == .startsWith, args)
        case .semVer: return SemanticVersion.evaluate(args)
        case .conditional, .ternary, .and, .or, .map, .filter, .reduce, .all, .someOf, .noneOf:
            // Taken before their arguments are evaluated (``LogicRun``); never here.
            throw .unknownOperator(op.rawValue)
        }
    }

    /// `var`: a dotted path into the data (array indexes as numbers, `length` of arrays and
    /// strings); the default when the path leads nowhere or to null.
    static func variable(_ data: LogicValue, _ key: LogicValue, default fallback: LogicValue) -> LogicValue {
        if key.isNull { return data }
        if case .string(let s) = key, s.isEmpty { return data }
        if let number = key.numeric {
            switch data {
            case .array, .string:
                guard let index = number.truncated, LogicNumber.compare(.int(index), number) == 0 else { return fallback }
                return element(of: data, at: index) ?? fallback
            default:
                // Objects have string keys only; a number names no member.
                return fallback
            }
        }
        // The common case, a member of the context by a name without dots, without splitting.
        if case .string(let name) = key, case .object(let object) = data, !name.utf8.contains(UInt8(ascii: ".")) {
            let value = object[name] ?? .null
            return value.isNull ? fallback : value
        }
        var current = data
        for part in key.text.split(separator: ".", omittingEmptySubsequences: false) {
            let segment = String(part)
            switch current {
            case .array(let items):
                if segment == "length" { return .int(items.count) }
                guard let index = canonicalIndex(segment), let next = element(of: current, at: index) else { return fallback }
                current = next
            case .string(let s):
                if segment == "length" { return .int(s.unicodeScalars.count) }
                guard let index = canonicalIndex(segment), let next = element(of: current, at: index) else { return fallback }
                current = next
            case .object(let object):
                current = object[segment] ?? .null
            default:
                return fallback
            }
        }
        return current.isNull ? fallback : current
    }

    private static func canonicalIndex(_ segment: String) -> Int? {
        guard let index = Int(segment), index >= 0, String(index) == segment else { return nil }
        return index
    }

    private static func element(of value: LogicValue, at index: Int) -> LogicValue? {
        switch value {
        case .array(let items): return index >= 0 && index < items.count ? items[index] : nil
        case .string(let s):
            let scalars = Array(s.unicodeScalars)
            return index >= 0 && index < scalars.count ? .string(String(scalars[index])) : nil
        default: return nil
        }
    }

    private static func missing(_ data: LogicValue, _ args: [LogicValue]) -> [LogicValue] {
        let keys: [LogicValue] = if case .array(let list)? = args.first { list } else { args }
        return keys.filter { key in
            let value = variable(data, key, default: .null)
            if case .string(let s) = value { return s.isEmpty }
            return value.isNull
        }
    }

    private static func missingSome(_ data: LogicValue, _ need: LogicValue, _ keys: LogicValue) -> LogicValue {
        guard case .array(let list) = keys else { return .array([]) }
        let absent = missing(data, [keys])
        let present = LogicNumber.int(list.count - absent.count)
        return LogicNumber.compare(present, need.number).map { $0 >= 0 } == true ? .array([]) : .array(absent)
    }

    /// `<`, `<=`, `>`, `>=`; with a third argument that is not null, both pairs must hold.
    private static func compare(_ op: LogicOperator, _ args: [LogicValue]) -> Bool {
        func arg(_ index: Int) -> LogicValue { index < args.count ? args[index] : .null }
        func holds(_ a: LogicValue, _ b: LogicValue) -> Bool {
            let order: Int?
            if let x = a.numeric {
                order = LogicNumber.compare(x, b.number)
            } else if let y = b.numeric {
                order = LogicNumber.compare(a.number, y)
            } else if case .string(let x) = a {
                order = x.precedes(b.text)
            } else if case .string(let y) = b {
                order = a.text.precedes(y)
            } else {
                order = LogicNumber.compare(a.number, b.number)
            }
            guard let order else { return false }
            switch op {
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            default: return order >= 0
            }
        }
        let third = arg(2)
        return third.isNull ? holds(arg(0), arg(1)) : holds(arg(0), arg(1)) && holds(arg(1), third)
    }

    private static func extreme(_ smallest: Bool, _ args: [LogicValue]) -> LogicValue {
        guard var best = args.first?.number else { return .float(.nan) }
        for arg in args.dropFirst() {
            let candidate = arg.number
            if let order = LogicNumber.compare(candidate, best), smallest ? order < 0 : order > 0 { best = candidate }
        }
        return best.value
    }

    private static func contains(_ haystack: LogicValue, _ needle: LogicValue) -> Bool {
        switch haystack {
        case .array(let items): return items.contains { needle.pythonEquals($0) }
        case .string(let s):
            let text = needle.text
            return text.isEmpty || s.utf8.firstRange(of: text.utf8) != nil
        default: return false
        }
    }

    private static func substring(_ value: LogicValue, _ start: LogicValue, _ length: LogicValue) -> String {
        let scalars = Array(value.text.unicodeScalars)
        let count = scalars.count
        var index: Int
        let position = start.number
        if position.isNaN {
            index = 0
        } else if LogicNumber.compare(position, .int(0)) == -1 {
            let back = -position
            if LogicNumber.compare(back, .int(count)).map({ $0 >= 0 }) == true { index = 0 } else { index = count - (back.truncated ?? 0) }
        } else {
            index = min(position.truncated ?? count, count)
        }
        var end: Int
        if length.isNull {
            end = count
        } else {
            let span = length.number
            if span.isNaN {
                end = index
            } else {
                let n = span.truncated ?? 0
                end = n < 0 ? max(count + n, index) : index + n
            }
        }
        end = min(max(end, index), count)
        return String(String.UnicodeScalarView(scalars[index..<end]))
    }

    /// `starts_with` and `ends_with`: two strings, else null.
    private static func affix(_ prefix: Bool, _ args: [LogicValue]) -> LogicValue {
        guard args.count == 2, case .string(let s) = args[0], case .string(let affix) = args[1] else { return .null }
        let scalars = Array(s.unicodeScalars), wanted = Array(affix.unicodeScalars)
        return .bool(prefix ? scalars.starts(with: wanted) : scalars.reversed().starts(with: wanted.reversed()))
    }
}

extension LogicValue {
    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}
