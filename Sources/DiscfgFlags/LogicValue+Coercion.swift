import Foundation

/// JSON Logic's coercions, as the reference evaluator performs them (JavaScript's rules as
/// panzi-json-logic reproduces them in Python, quirks included: `true` is the number 1 and
/// its text is `True`).
extension LogicValue {
    /// The number a value stands for: null is 0, a boolean 0 or 1, a string read as a float,
    /// an array of one element that element's number, an empty array 0, anything else NaN.
    var number: LogicNumber {
        switch self {
        case .null: .int(0)
        case .bool(let b): .int(b ? 1 : 0)
        case .int(let i): .int(i)
        case .float(let d): .float(d)
        case .string(let s): LogicNumber.parse(s)
        case .array(let items): items.isEmpty ? .int(0) : (items.count > 1 ? .nan : items[0].number)
        case .object: .nan
        }
    }

    /// The number itself when the value is one (booleans count, as in Python); nil otherwise.
    var numeric: LogicNumber? {
        switch self {
        case .bool(let b): .int(b ? 1 : 0)
        case .int(let i): .int(i)
        case .float(let d): .float(d)
        default: nil
        }
    }

    /// The text JSON Logic makes of a value (`cat`, `in` on strings, comparisons with strings).
    var text: String {
        switch self {
        case .string(let s): s
        case .float(let d): Self.shortFloat(d)
        case .int(let i): String(i)
        case .bool(let b): b ? "True" : "False"
        case .null: "null"
        case .array(let items): items.map(\.text).joined(separator: ",")
        case .object: "[object Object]"
        }
    }

    /// `%.15g`, as the reference formats a float into text.
    static func shortFloat(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        return String(format: "%.15g", d)
    }

    /// Truthiness: null, false, 0, NaN, "" and [] are false; every object is true.
    var isTruthy: Bool {
        switch self {
        case .null: false
        case .bool(let b): b
        case .int(let i): i != 0
        case .float(let d): !d.isNaN && d != 0
        case .string(let s): !s.isEmpty
        case .array(let items): !items.isEmpty
        case .object: true
        }
    }

    /// Python's `str()` of a value: how the reference names the variant a rule returned that
    /// is not a string (`3`, `3.0`, `True`, `['a']`).
    var pythonText: String {
        switch self {
        case .null: "None"
        case .bool(let b): b ? "True" : "False"
        case .int(let i): String(i)
        case .float(let d): d.pythonDescription
        case .string(let s): s
        case .array, .object: pythonRepresentation
        }
    }

    /// Python's `repr()`, for the members of arrays and objects in ``pythonText``.
    private var pythonRepresentation: String {
        switch self {
        case .string(let s):
            let quote: Character = s.contains("'") && !s.contains("\"") ? "\"" : "'"
            var out = String(quote)
            for scalar in s.unicodeScalars {
                switch scalar {
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                default:
                    if Character(scalar) == quote { out += "\\" + String(quote) }
                    else if scalar.value < 0x20 || scalar.value == 0x7f { out += String(format: "\\x%02x", scalar.value) }
                    else { out.unicodeScalars.append(scalar) }
                }
            }
            return out + String(quote)
        case .array(let items): return "[" + items.map(\.pythonRepresentation).joined(separator: ", ") + "]"
        case .object(let object):
            return "{" + object.members.map { LogicValue.string($0.key).pythonRepresentation + ": " + $0.value.pythonRepresentation }
                .joined(separator: ", ") + "}"
        default: return pythonText
        }
    }

    /// Python's `==`: numbers by value (booleans are 0 and 1), strings by code points,
    /// arrays and objects member by member; other types never equal.
    func pythonEquals(_ other: LogicValue) -> Bool {
        if let a = numeric, let b = other.numeric { return LogicNumber.compare(a, b) == 0 }
        switch (self, other) {
        case (.null, .null): return true
        case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { $0.pythonEquals($1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            return a.members.allSatisfy { member in b[member.key].map { member.value.pythonEquals($0) } ?? false }
        default: return false
        }
    }

    /// JSON Logic's loose `==`.
    func looselyEquals(_ other: LogicValue) -> Bool {
        switch (self, other) {
        case (.array, .array), (.object, .object), (.array, .object), (.object, .array):
            // The reference compares two arrays or two objects by identity: separately built values never match.
            return false
        default: break
        }
        if let a = numeric {
            if let b = other.numeric { return LogicNumber.compare(a, b) == 0 }
            return LogicNumber.compare(a, other.number) == 0
        }
        if let b = other.numeric { return LogicNumber.compare(number, b) == 0 }
        switch (self, other) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let a), .string(let b)): return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.string(let a), _): return a.unicodeScalars.elementsEqual(other.text.unicodeScalars)
        case (_, .string(let b)): return text.unicodeScalars.elementsEqual(b.unicodeScalars)
        default: return false
        }
    }
}

extension String {
    /// Python's string order: code point by code point.
    func precedes(_ other: String) -> Int {
        var a = unicodeScalars.makeIterator()
        var b = other.unicodeScalars.makeIterator()
        while true {
            switch (a.next(), b.next()) {
            case (nil, nil): return 0
            case (nil, _): return -1
            case (_, nil): return 1
            case (let x?, let y?): if x != y { return x.value < y.value ? -1 : 1 }
            }
        }
    }
}
