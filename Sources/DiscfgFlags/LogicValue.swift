import DiscfgJSON

/// A value while targeting rules run: JSON with the number model of flagd's reference evaluator.
///
/// The reference (openfeature-flagd-core on panzi-json-logic) reads a JSON number without a
/// fraction or exponent as an integer and any other as a float, keeps integer arithmetic exact,
/// and turns `/` and string coercion into floats. `int` and `float` keep that distinction, so
/// `{"+": [1, 2]}` gives `3` and `{"+": ["1", 2]}` gives `3.0`, as there.
enum LogicValue: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case float(Double)
    case string(String)
    case array([LogicValue])
    case object(LogicObject)

    /// The value of a JSON document (targeting literals, the evaluation context).
    init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let n): self = LogicValue.number(n)
        case .string(let s): self = .string(s)
        case .array(let items): self = .array(items.map(LogicValue.init))
        case .object(let object): self = .object(LogicObject(object))
        }
    }

    /// A JSON number as the reference reads it: written with `.`, `e` or `E` is a float.
    static func number(_ n: JSONNumber) -> LogicValue {
        let written = n.text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        if !written, let int = n.intValue { return .int(int) }
        return .float(n.doubleValue)
    }

    /// The value as JSON; floats that are integral keep a `.0`, as the reference writes them.
    var json: JSONValue {
        switch self {
        case .null: .null
        case .bool(let b): .bool(b)
        case .int(let i): .number(JSONNumber(i))
        case .float(let d): d.isFinite ? (JSONNumber(d.pythonDescription).map(JSONValue.number) ?? .null) : .null
        case .string(let s): .string(s)
        case .array(let items): .array(items.map(\.json))
        case .object(let object): .object(JSONObject(object.members.map { (key: $0.key, value: $0.value.json) }))
        }
    }

    /// The member `key` of an object, nil for anything else or a missing member.
    subscript(key: String) -> LogicValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }
}

/// An object of ``LogicValue``s, members in order.
struct LogicObject: Sendable {
    private(set) var keys: [String] = []
    private var values: [String: LogicValue] = [:]

    init() {}

    /// The members of `object`, with room for `room` more without growing.
    init(_ object: JSONObject, room: Int = 0) {
        keys.reserveCapacity(object.count + room)
        values.reserveCapacity(object.count + room)
        for (key, value) in object { self[key] = LogicValue(value) }
    }

    /// The members in order.
    var members: [(key: String, value: LogicValue)] { keys.map { ($0, values[$0]!) } }

    /// The number of members.
    var count: Int { keys.count }

    subscript(key: String) -> LogicValue? {
        get { values[key] }
        set {
            if let newValue {
                if values.updateValue(newValue, forKey: key) == nil { keys.append(key) }
            } else if values.removeValue(forKey: key) != nil {
                keys.removeAll { $0 == key }
            }
        }
    }
}

extension Double {
    /// Python's `repr` of a float: the shortest spelling that reads back, `1.0` for integers,
    /// exponent form (`1e+16`, `1e-05`) outside `1e-4 ..< 1e16`.
    var pythonDescription: String {
        if isNaN { return "nan" }
        if isInfinite { return self < 0 ? "-inf" : "inf" }
        if self == 0 { return sign == .minus ? "-0.0" : "0.0" }
        let swift = "\(self)"  // shortest round-trip digits, Swift's layout
        let negative = swift.hasPrefix("-")
        let body = negative ? String(swift.dropFirst()) : swift
        var mantissa = body
        var exponent = 0
        if let e = body.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = String(body[..<e])
            exponent = Int(body[body.index(after: e)...]) ?? 0
        }
        let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
        let integral = String(parts[0])
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        var digits = integral + fraction
        var point = integral.count + exponent  // the decimal point sits after `point` digits
        while digits.hasPrefix("0"), digits.count > 1 { digits.removeFirst(); point -= 1 }
        while digits.hasSuffix("0"), digits.count > 1 { digits.removeLast() }
        let decimalExponent = point - 1
        let sign = negative ? "-" : ""
        if decimalExponent < -4 || decimalExponent >= 16 {
            let head = String(digits.prefix(1))
            let tail = String(digits.dropFirst())
            let e = decimalExponent < 0 ? "-" + pad(-decimalExponent) : "+" + pad(decimalExponent)
            return sign + head + (tail.isEmpty ? "" : "." + tail) + "e" + e
        }
        if point <= 0 { return sign + "0." + String(repeating: "0", count: -point) + digits }
        if point >= digits.count { return sign + digits + String(repeating: "0", count: point - digits.count) + ".0" }
        return sign + String(digits.prefix(point)) + "." + String(digits.dropFirst(point))
    }

    private func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
