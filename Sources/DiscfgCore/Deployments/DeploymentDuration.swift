/// Durations as `discfg deploy start` takes them (`--interval`, `--bake`, `--rollback-over`):
/// whole seconds, or amounts with units in the order days, hours, minutes, seconds.
///
/// `30s`, `6m`, `1h30m`, `2d` and `1d12h` are durations; a bare number is seconds, so `0`
/// is none. Each unit appears at most once and in that order, so one duration has one
/// reading. Anything else — empty text, a sign, an unknown unit, a number past 2^63 or a
/// duration over the field's bound — is one `invalidArgument` sentence naming the field.
///
/// ```swift
/// try DeploymentDuration.seconds("1h30m", field: "--interval", upTo: DeploymentStrategy.maxIntervalSeconds)  // 5400
/// ```
public enum DeploymentDuration {
    /// The units, largest first, with their length in seconds.
    static let units: [(unit: UInt8, seconds: Int64)] = [
        (UInt8(ascii: "d"), 86_400), (UInt8(ascii: "h"), 3_600), (UInt8(ascii: "m"), 60), (UInt8(ascii: "s"), 1),
    ]

    /// The seconds `text` names, from 0 up to `bound`.
    /// - Throws: `invalidArgument` with `field`, in one sentence saying what is wrong.
    public static func seconds(_ text: String, field: String, upTo bound: Int64) throws -> Int64 {
        let example = "such as 30s, 6m, 1h30m, 2d or a number of seconds"
        let shown = "\"\(String(text.prefix(40)).debugEscaped)\(text.count > 40 ? "…" : "")\""
        guard !text.isEmpty else {
            throw DiscfgError.invalid(field, "\(field) is empty; give a duration \(example)")
        }
        if text.first == "-" {
            throw DiscfgError.invalid(field, "\(field) \(shown) is negative; give a duration \(example)")
        }
        var total: Int64 = 0
        var amount: Int64?
        var tooLong = false
        var nextUnit = 0
        for byte in text.utf8 {
            if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                let (shifted, overflowA) = (amount ?? 0).multipliedReportingOverflow(by: 10)
                let (sum, overflowB) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                tooLong = tooLong || overflowA || overflowB
                amount = tooLong ? 0 : sum
                continue
            }
            guard let index = units.firstIndex(where: { $0.unit == byte }) else {
                let unit = String(decoding: [byte], as: UTF8.self)
                let what = byte < 0x80 && byte >= 0x20 ? "the unknown unit \"\(unit)\"" : "a character that is not a digit or a unit"
                throw DiscfgError.invalid(field, "\(field) \(shown) has \(what); give a duration \(example) (units d, h, m, s)")
            }
            guard let value = amount else {
                throw DiscfgError.invalid(field, "\(field) \(shown) has a unit without a number before it; give a duration \(example)")
            }
            guard index >= nextUnit else {
                throw DiscfgError.invalid(field, "\(field) \(shown) repeats a unit or puts them out of order; write days, hours, minutes, seconds in that order, as in 1d12h or 1h30m")
            }
            let (part, overflowA) = value.multipliedReportingOverflow(by: units[index].seconds)
            let (sum, overflowB) = total.addingReportingOverflow(part)
            tooLong = tooLong || overflowA || overflowB
            total = tooLong ? 0 : sum
            amount = nil
            nextUnit = index + 1
        }
        if let value = amount {
            // Trailing digits are seconds only when they are the whole duration.
            guard nextUnit == 0 else {
                throw DiscfgError.invalid(field, "\(field) \(shown) ends in a number without a unit; write it as in 1h30m")
            }
            total = value
        }
        guard !tooLong, total <= bound else {
            throw DiscfgError.invalid(field, "\(field) \(shown) is longer than \(spelled(bound)), the most it may be")
        }
        return total
    }

    /// `seconds` as this parser reads it back, in the largest units that fit: `1h30m`, `0s`.
    public static func spelled(_ seconds: Int64) -> String {
        guard seconds > 0 else { return "0s" }
        var left = seconds
        var text = ""
        for (unit, length) in units where left >= length {
            text += "\(left / length)\(Character(Unicode.Scalar(unit)))"
            left %= length
        }
        return text
    }
}
