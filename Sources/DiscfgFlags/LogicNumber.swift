import Foundation

/// A number in targeting rules: an exact integer or a float, combined as Python combines them
/// (the reference evaluator's arithmetic), so results and their spelling agree with it.
enum LogicNumber: Sendable {
    case int(Int)
    case float(Double)

    /// Not a number (a string that does not read as one, an object, a longer array).
    static let nan = LogicNumber.float(.nan)

    var double: Double {
        switch self {
        case .int(let i): Double(i)
        case .float(let d): d
        }
    }

    var isNaN: Bool {
        if case .float(let d) = self { return d.isNaN }
        return false
    }

    var value: LogicValue {
        switch self {
        case .int(let i): .int(i)
        case .float(let d): .float(d)
        }
    }

    /// Python's `int()` of the number: truncated toward zero; nil for NaN and infinities.
    var truncated: Int? {
        switch self {
        case .int(let i): return i
        case .float(let d):
            guard d.isFinite, abs(d) < 9.2e18 else { return nil }
            return Int(d.rounded(.towardZero))
        }
    }

    static func + (lhs: LogicNumber, rhs: LogicNumber) -> LogicNumber {
        if case .int(let a) = lhs, case .int(let b) = rhs {
            let (sum, overflow) = a.addingReportingOverflow(b)
            return overflow ? .float(Double(a) + Double(b)) : .int(sum)
        }
        return .float(lhs.double + rhs.double)
    }

    static func - (lhs: LogicNumber, rhs: LogicNumber) -> LogicNumber {
        if case .int(let a) = lhs, case .int(let b) = rhs {
            let (difference, overflow) = a.subtractingReportingOverflow(b)
            return overflow ? .float(Double(a) - Double(b)) : .int(difference)
        }
        return .float(lhs.double - rhs.double)
    }

    static func * (lhs: LogicNumber, rhs: LogicNumber) -> LogicNumber {
        if case .int(let a) = lhs, case .int(let b) = rhs {
            let (product, overflow) = a.multipliedReportingOverflow(by: b)
            return overflow ? .float(Double(a) * Double(b)) : .int(product)
        }
        return .float(lhs.double * rhs.double)
    }

    static prefix func - (operand: LogicNumber) -> LogicNumber {
        switch operand {
        case .int(let i): i == .min ? .float(-Double(i)) : .int(-i)
        case .float(let d): .float(-d)
        }
    }

    /// True division; nil when dividing by zero (the reference raises, which flagd reports as an error).
    func divided(by divisor: LogicNumber) -> LogicNumber? {
        if divisor.double == 0 { return nil }
        return .float(double / divisor.double)
    }

    /// Python's `%`: the result takes the divisor's sign; nil when the divisor is zero.
    func remainder(dividingBy divisor: LogicNumber) -> LogicNumber? {
        if divisor.double == 0 { return nil }
        if case .int(let a) = self, case .int(let b) = divisor {
            if b == -1 { return .int(0) }
            let r = a % b
            return .int(r != 0 && (r < 0) != (b < 0) ? r + b : r)
        }
        let a = double, b = divisor.double
        if a.isNaN || b.isNaN || a.isInfinite { return .float(.nan) }
        if b.isInfinite { return .float(a == 0 || (a < 0) == (b < 0) ? a : b) }
        var r = fmod(a, b)
        if r != 0 {
            if (r < 0) != (b < 0) { r += b }
        } else {
            r = b < 0 ? -0.0 : 0.0
        }
        return .float(r)
    }

    /// Python's comparison of two numbers (false whenever NaN is involved).
    static func compare(_ lhs: LogicNumber, _ rhs: LogicNumber) -> Int? {
        if case .int(let a) = lhs, case .int(let b) = rhs { return a < b ? -1 : (a == b ? 0 : 1) }
        let a = lhs.double, b = rhs.double
        if a.isNaN || b.isNaN { return nil }
        return a < b ? -1 : (a == b ? 0 : 1)
    }

    /// Python's `float()` of a string: surrounding whitespace allowed, `_` between digits,
    /// `nan`, `inf` and `infinity` in any case (JSON Logic refuses the infinities: NaN).
    static func parse(_ text: String) -> LogicNumber {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let lowered = trimmed.lowercased()
        if ["inf", "-inf", "+inf"].contains(lowered) { return .nan }
        if ["nan", "+nan", "-nan"].contains(lowered) { return .nan }
        if ["infinity", "+infinity"].contains(lowered) { return .float(.infinity) }
        if lowered == "-infinity" { return .float(-.infinity) }
        var cleaned = ""
        var previous: Character = " "
        for (index, character) in trimmed.enumerated() {
            if character == "_" {
                let next = trimmed.dropFirst(index + 1).first
                guard previous.isASCIIDigit, next?.isASCIIDigit == true else { return .nan }
            } else {
                guard character.isASCII, "0123456789+-.eE".contains(character) else { return .nan }
                cleaned.append(character)
            }
            previous = character
        }
        guard cleaned.contains(where: \.isASCIIDigit), let value = Double(cleaned) else { return .nan }
        return .float(value)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
