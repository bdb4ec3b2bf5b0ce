/// A JSON number kept exactly as written: a sign, the significant decimal digits and a power of ten.
///
/// `1`, `1.0` and `10e-1` are the same number (JSON Schema 2020-12 counts `1.0` as an integer),
/// `2^64` and `1e400` keep every digit, and comparisons never go through `Double`.
///
/// ```swift
/// let n = JSONNumber("12.50")!   // digits "125", exponent -1
/// n.isInteger                    // false
/// ```
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// True for numbers below zero; never true for zero (`-0` equals `0`).
    public let isNegative: Bool
    /// Significant digits (ASCII `0`...`9`) with no leading or trailing zeros; empty for zero.
    public let digits: [UInt8]
    /// The power of ten the digits are multiplied by.
    public let exponent: Int
    /// The text the number was parsed from, or its canonical spelling when built in code.
    public let text: String

    /// Exponents are clamped to this magnitude so a number like `1e99999999999999999999` cannot
    /// overflow arithmetic on exponents; such numbers still compare and order correctly against
    /// every number a document can spell in full.
    static let exponentBound = 1 << 40

    init(isNegative: Bool, digits: [UInt8], exponent: Int, text: String) {
        var start = 0
        while start < digits.count, digits[start] == UInt8(ascii: "0") { start += 1 }
        var end = digits.count
        while end > start, digits[end - 1] == UInt8(ascii: "0") { end -= 1 }
        if start == end {
            self.isNegative = false
            self.digits = []
            self.exponent = 0
        } else {
            self.isNegative = isNegative
            self.digits = Array(digits[start..<end])
            self.exponent = max(-Self.exponentBound * 2, min(Self.exponentBound * 2, exponent + (digits.count - end)))
        }
        self.text = text
    }

    /// Parses the JSON grammar for a number (no leading `+`, no leading zeros, no bare `.`).
    public init?(_ text: String) {
        guard let value = try? JSONParser.parse(Array(text.utf8)), case .number(let number) = value else { return nil }
        self = number
    }

    /// An exact integer.
    public init(_ value: Int) {
        let magnitude = String(value.magnitude)
        self.init(isNegative: value < 0, digits: Array(magnitude.utf8), exponent: 0, text: String(value))
    }

    /// True when the value has no fractional part (`1.0` and `1e2` are integers).
    public var isInteger: Bool { exponent >= 0 }

    /// True for zero.
    public var isZero: Bool { digits.isEmpty }

    /// The nearest `Double` (may be infinite for `1e400`, or round big integers).
    public var doubleValue: Double { Double(text) ?? (isNegative ? -.infinity : .infinity) }

    /// The value as an `Int` when it is an integer that fits.
    public var intValue: Int? {
        guard isInteger else { return nil }
        if isZero { return 0 }
        guard digits.count + exponent <= 19 else { return nil }
        var result = 0
        for digit in digits {
            let (m, o1) = result.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
            if o1 || o2 { return nil }
            result = a
        }
        for _ in 0..<exponent {
            let (m, o) = result.multipliedReportingOverflow(by: 10)
            if o { return nil }
            result = m
        }
        return isNegative ? -result : result
    }

    public var description: String { text }

    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        lhs.isNegative == rhs.isNegative && lhs.exponent == rhs.exponent && lhs.digits == rhs.digits
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(isNegative)
        hasher.combine(exponent)
        hasher.combine(digits)
    }
}

extension JSONNumber: Comparable {
    /// Orders numbers exactly, by value.
    public static func < (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        compare(lhs, rhs) < 0
    }

    /// -1, 0 or 1 as `lhs` is below, equal to or above `rhs`.
    package static func compare(_ lhs: JSONNumber, _ rhs: JSONNumber) -> Int {
        let lsign = lhs.isZero ? 0 : (lhs.isNegative ? -1 : 1)
        let rsign = rhs.isZero ? 0 : (rhs.isNegative ? -1 : 1)
        if lsign != rsign { return lsign < rsign ? -1 : 1 }
        if lsign == 0 { return 0 }
        let magnitude = compareMagnitude(lhs, rhs)
        return lsign > 0 ? magnitude : -magnitude
    }

    private static func compareMagnitude(_ lhs: JSONNumber, _ rhs: JSONNumber) -> Int {
        // Position of the leading digit: value is in [10^top, 10^(top+1)).
        let ltop = lhs.exponent + lhs.digits.count
        let rtop = rhs.exponent + rhs.digits.count
        if ltop != rtop { return ltop < rtop ? -1 : 1 }
        let count = max(lhs.digits.count, rhs.digits.count)
        for index in 0..<count {
            let l = index < lhs.digits.count ? lhs.digits[index] : UInt8(ascii: "0")
            let r = index < rhs.digits.count ? rhs.digits[index] : UInt8(ascii: "0")
            if l != r { return l < r ? -1 : 1 }
        }
        return 0
    }
}

extension JSONNumber {
    /// Whether `self / divisor` is an integer, computed exactly on the decimal digits.
    ///
    /// Returns nil when the divisor has more than 18 significant digits (the exact test needs
    /// 128-bit remainders); callers fall back to `Double` arithmetic then.
    package func isMultiple(of divisor: JSONNumber) -> Bool? {
        if isZero { return true }
        guard !divisor.isZero else { return nil }
        // self = a * 10^ea, divisor = b * 10^eb, with a and b free of trailing zeros.
        let shift = exponent - divisor.exponent
        guard shift >= 0 else {
            // a has no factor 10, so a * 10^shift with shift < 0 is never an integer multiple of b.
            return false
        }
        guard divisor.digits.count <= 18 else { return nil }
        var modulus: UInt128 = 0
        for digit in divisor.digits { modulus = modulus * 10 + UInt128(digit - UInt8(ascii: "0")) }
        if modulus == 1 { return true }
        var remainder: UInt128 = 0
        for digit in digits { remainder = (remainder * 10 + UInt128(digit - UInt8(ascii: "0"))) % modulus }
        // remainder * 10^shift mod b, by square-and-multiply so a shift of 10^12 costs ~40 steps.
        var power: UInt128 = 1
        var base: UInt128 = 10 % modulus
        var e = shift
        while e > 0 {
            if e & 1 == 1 { power = power * base % modulus }
            base = base * base % modulus
            e >>= 1
        }
        return remainder * power % modulus == 0
    }
}
