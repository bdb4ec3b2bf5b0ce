/// A size in bytes as people write it: `512MiB`, `2 GB`, `1048576`.
///
/// The number is read through ``NumberField`` (plain digits, no sign, no overflow) and
/// multiplied by its unit without overflow, then checked against the field's range, so
/// `0`, `-1`, `2^63` or `2^64` bytes are one clear error naming the field.
///
/// ```swift
/// try ByteSize.parse("512MiB", as: NumberField.quotaBytes.named("--quota"))  // 536870912
/// ByteSize.text(536_870_912)                                                 // "512 MiB"
/// ```
public enum ByteSize {
    /// The units understood, by their lowercased name: IEC (KiB = 1024 bytes) and SI
    /// (kB = 1000 bytes), and B for bytes.
    static let units: [String: Int64] = [
        "": 1, "b": 1,
        "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40, "pib": 1 << 50,
        "kb": 1_000, "mb": 1_000_000, "gb": 1_000_000_000, "tb": 1_000_000_000_000, "pb": 1_000_000_000_000_000,
    ]

    /// Reads `text` (digits, optional spaces, an optional unit) as a number of bytes in
    /// `field`'s range.
    /// - Throws: ``DiscfgError`` `invalidArgument` naming `field`, its range and the units.
    public static func parse(_ text: String, as field: NumberField) throws -> Int64 {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let unit = text.dropFirst(digits.count).drop { $0 == " " }.lowercased()
        guard let multiplier = units[unit],
              let number = try? NumberField(field.name, 0...Int64.max).parse(digits)
        else { throw problem(text, field) }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: multiplier)
        guard !overflow, field.range.contains(bytes) else { throw problem(text, field) }
        return bytes
    }

    /// `bytes` in the largest IEC unit that divides it evenly, or in bytes: `512 MiB`,
    /// `1536 KiB`, `1000 bytes`.
    public static func text(_ bytes: Int) -> String {
        for (name, shift) in [("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)] where bytes > 0 && bytes % (1 << shift) == 0 {
            return "\(bytes >> shift) \(name)"
        }
        return bytes == 1 ? "1 byte" : "\(bytes) bytes"
    }

    private static func problem(_ input: String, _ field: NumberField) -> DiscfgError {
        let shown = input.count > 40 ? String(input.prefix(40)) + "…" : input
        return DiscfgError.invalid(
            field.name,
            "\(field.name) must be a size from \(text(Int(field.range.lowerBound))) to \(text(Int(field.range.upperBound))) such as 512MiB or 2GB (units: B, KiB, MiB, GiB, TiB, PiB, kB, MB, GB, TB, PB), got \"\(shown.debugEscaped)\""
        )
    }
}
