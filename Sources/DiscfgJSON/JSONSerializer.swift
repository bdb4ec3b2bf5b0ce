/// Writes ``JSONValue``s as compact JSON, byte-for-byte the same for equal values when keys are sorted.
///
/// Canonical form: no whitespace; strings escape only `"`, `\` and control characters
/// (`\b \f \n \r \t`, others as `\u00XX`); numbers in one spelling per value (`1.0` → `1`,
/// `1E2` → `100`, `-0` → `0`, `12.5e-10` → `1.25e-9`); with ``Options/sortKeys`` members are
/// ordered by Unicode code point, otherwise in document order.
///
/// ```swift
/// let bytes = try JSONSerializer.serialize(value, options: .init(sortKeys: true))
/// ```
public enum JSONSerializer {
    /// How to write.
    public struct Options: Sendable {
        /// Order object members by key (Unicode code point order) rather than document order.
        public var sortKeys: Bool
        /// Deepest nesting written; deeper values are an error rather than a stack overflow.
        public var maxDepth: Int
        /// Write each number as it was written (``JSONNumber/text``) instead of canonically, so a
        /// float written `10.0` stays `10.0` for readers that tell floats from integers by the
        /// spelling (OpenFeature SDKs reading a flag's value do).
        public var numbersAsWritten: Bool

        /// Document order, depth 512, canonical numbers, unless told otherwise.
        public init(sortKeys: Bool = false, maxDepth: Int = 512, numbersAsWritten: Bool = false) {
            self.sortKeys = sortKeys
            self.maxDepth = maxDepth
            self.numbersAsWritten = numbersAsWritten
        }
    }

    /// The value nests deeper than ``Options/maxDepth``.
    public struct DepthError: Error, Sendable, CustomStringConvertible {
        /// The limit that was passed.
        public let maxDepth: Int
        public var description: String { "value nests deeper than the limit of \(maxDepth)" }
    }

    /// The value as UTF-8 JSON bytes.
    public static func serialize(_ value: JSONValue, options: Options = Options()) throws(DepthError) -> [UInt8] {
        var out: [UInt8] = []
        try write(value, into: &out, options: options, depth: 0)
        return out
    }

    /// The value as a JSON string.
    public static func string(_ value: JSONValue, options: Options = Options()) throws(DepthError) -> String {
        String(decoding: try serialize(value, options: options), as: UTF8.self)
    }

    private static func write(_ value: JSONValue, into out: inout [UInt8], options: Options, depth: Int) throws(DepthError) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: (options.numbersAsWritten ? n.text : canonical(n)).utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            guard depth < options.maxDepth else { throw DepthError(maxDepth: options.maxDepth) }
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                try write(item, into: &out, options: options, depth: depth + 1)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            guard depth < options.maxDepth else { throw DepthError(maxDepth: options.maxDepth) }
            out.append(UInt8(ascii: "{"))
            var members = object.members
            if options.sortKeys { members.sort { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) } }
            for (i, member) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                try write(member.value, into: &out, options: options, depth: depth + 1)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 0x08: out.append(contentsOf: #"\b"#.utf8)
            case 0x0C: out.append(contentsOf: #"\f"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// One spelling per value: plain digits while the number has at most 21 integer digits and
    /// no more than 6 leading fractional zeros (as JavaScript prints numbers), else `d.ddde±x`.
    package static func canonical(_ n: JSONNumber) -> String {
        if n.isZero { return "0" }
        let digits = String(decoding: n.digits, as: UTF8.self)
        let sign = n.isNegative ? "-" : ""
        let top = n.digits.count + n.exponent  // digits before the decimal point
        if n.exponent >= 0, top <= 21 {
            return sign + digits + String(repeating: "0", count: n.exponent)
        }
        if n.exponent < 0, top > 0 {
            return sign + digits.prefix(top) + "." + digits.dropFirst(top)
        }
        if n.exponent < 0, top > -6 {
            return sign + "0." + String(repeating: "0", count: -top) + digits
        }
        let mantissa = n.digits.count == 1 ? digits : digits.prefix(1) + "." + digits.dropFirst()
        let power = top - 1
        return sign + mantissa + "e" + (power < 0 ? "-" : "+") + String(power.magnitude)
    }
}

extension JSONSerializer {
    /// A value in a message: JSON, cut at 60 characters.
    package static func brief(_ value: JSONValue) -> String {
        let text = (try? JSONSerializer.string(value, options: .init(maxDepth: 32))) ?? "(deeply nested value)"
        return text.count > 60 ? String(text.prefix(57)) + "…" : text
    }
}
