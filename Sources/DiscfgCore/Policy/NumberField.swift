/// A whole number that arrives from outside — a path, query parameter, header, body
/// field, CLI flag, file or environment variable — with its name and its bounds.
///
/// Every number discfg reads from outside goes through ``parse(_:)``: plain decimal
/// digits, no sign, no overflow, within the field's range. Anything else is one
/// `invalidArgument` error naming the field and its range, so no request or flag can
/// reach unchecked arithmetic in a store.
///
/// ```swift
/// let limit = try NumberField.pageSize.parse("50")        // 50
/// try NumberField.revision("fromRevision").parse("-1")    // throws, naming fromRevision
/// ```
public struct NumberField: Sendable, Hashable {
    /// The field's name as the caller wrote it (`limit`, `If-Match`, `--ttl`).
    public let name: String
    /// The values accepted.
    public let range: ClosedRange<Int64>

    /// A field accepting `range`.
    public init(_ name: String, _ range: ClosedRange<Int64>) {
        self.name = name
        self.range = range
    }

    /// The same bounds under another name, such as a CLI flag's.
    public func named(_ name: String) -> NumberField { NumberField(name, range) }

    /// Reads `text` as a number in range.
    /// - Throws: ``DiscfgError`` `invalidArgument` with ``name`` as its field.
    public func parse(_ text: some StringProtocol) throws -> Int64 {
        var value: Int64 = 0
        var digits = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { throw problem(text) }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowA, !overflowB else { throw problem(text) }
            value = sum
            digits += 1
        }
        guard digits > 0, range.contains(value) else { throw problem(text) }
        return value
    }

    /// Checks a number that arrived already parsed (a JSON body, an argument parser).
    public func check<Number: BinaryInteger>(_ number: Number) throws -> Int64 {
        guard let value = Int64(exactly: number), range.contains(value) else { throw problem(String(number)) }
        return value
    }

    private func problem(_ text: some StringProtocol) -> DiscfgError {
        let shown = text.isEmpty ? "nothing" : String(text.prefix(40)).debugEscaped + (text.count > 40 ? "…" : "")
        return DiscfgError.invalid(name, "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound), got \(shown)")
    }
}

extension NumberField {
    /// A revision: 0 up to ``Revision/max``.
    public static func revision(_ name: String) -> NumberField { NumberField(name, 0...Int64(Revision.max.rawValue)) }

    /// A key's version in a condition: 0 (absent) up to the largest storable number.
    public static func version(_ name: String) -> NumberField { NumberField(name, 0...Int64.max) }

    /// How many entries one page may hold.
    public static let pageSize = NumberField("limit", 1...Int64(Limits.maxPageSize))
    /// A page's byte budget (``ListQuery/maxBytes``); a server applies at most its own.
    public static let pageBytes = NumberField("maxBytes", 1...Int64(Int32.max))

    /// A config's quota in bytes (``ConfigSettings/quotaBytes``).
    public static let quotaBytes = NumberField("quotaBytes", 1...Limits.maxQuotaBytes)

    /// A time to live, in seconds.
    public static let ttl = NumberField("ttl", 1...Limits.maxTTLSeconds)
}
