import Foundation

/// ISO 8601 timestamps in UTC with milliseconds, e.g. `2026-11-21T20:15:03.120Z`.
public enum TimestampFormat {
    /// The text for a date.
    public static func string(from date: Date) -> String {
        let parts = utcParts(date)
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return padded(parts.year, 4) + "-" + padded(parts.month, 2) + "-" + padded(parts.day, 2)
            + "T" + padded(parts.hour, 2) + ":" + padded(parts.minute, 2) + ":" + padded(parts.second, 2)
            + "." + padded(parts.millisecond, 3) + "Z"
    }

    /// The calendar fields of `date` in UTC and its milliseconds, computed from whole
    /// milliseconds: a formatter given the Double would truncate .123 (stored as
    /// .12299…) to .122 and a round trip would change the time.
    ///
    /// Worked out by arithmetic on the proleptic Gregorian calendar (days to civil date as
    /// in H. Hinnant's `civil_from_days`), not `gmtime_r`, which takes the C library's
    /// time zone lock for every call; every change answered writes two or three.
    public static func utcParts(_ date: Date) -> UTCParts {
        let (seconds, fraction) = date.milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (wholeSeconds, millis) = fraction < 0 ? (seconds - 1, fraction + 1000) : (seconds, fraction)
        var (days, secondOfDay) = wholeSeconds.quotientAndRemainder(dividingBy: 86_400)
        if secondOfDay < 0 { (days, secondOfDay) = (days - 1, secondOfDay + 86_400) }
        // Days since 0000-03-01, in 400-year eras of 146,097 days; a year from March on.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return UTCParts(
            year: Int(year), month: Int(month), day: Int(day),
            hour: Int(secondOfDay / 3_600), minute: Int(secondOfDay % 3_600 / 60), second: Int(secondOfDay % 60), millisecond: Int(millis)
        )
    }

    /// A time's calendar fields in UTC: month and day from 1.
    public struct UTCParts: Equatable, Sendable {
        public var year: Int
        public var month: Int
        public var day: Int
        public var hour: Int
        public var minute: Int
        public var second: Int
        public var millisecond: Int
    }

    /// The date for a text, with or without fractional seconds.
    public static func date(from text: String) -> Date? {
        // Foundation's parser rolls fields over (12:99 reads as 13:39); RFC 3339's ranges
        // are checked first, so a time that is not one is refused, not moved.
        guard hasValidFields(text) else { return nil }
        if let date = try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)) {
            return Date(milliseconds: date.milliseconds)
        }
        return try? Date(text, strategy: .iso8601)
    }

    /// Whether `text` is `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` with every field in its
    /// range (a leap second's 60 included, as RFC 3339 has it).
    static func hasValidFields(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[from..<from + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        func at(_ index: Int, _ characters: String) -> Bool { index < bytes.count && characters.utf8.contains(bytes[index]) }
        guard let year = number(0, 4), at(4, "-"), let month = number(5, 2), at(7, "-"), let day = number(8, 2), at(10, "Tt "),
              let hour = number(11, 2), at(13, ":"), let minute = number(14, 2), at(16, ":"), let second = number(17, 2)
        else { return false }
        let daysInMonth = [31, (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...daysInMonth[month - 1]).contains(day), hour <= 23, minute <= 59, second <= 60 else { return false }
        var index = 19
        if at(index, ".") {
            index += 1
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > start else { return false }
        }
        if at(index, "Zz") { return index + 1 == bytes.count }
        guard at(index, "+-"), let offsetHours = number(index + 1, 2), at(index + 3, ":"), let offsetMinutes = number(index + 4, 2) else { return false }
        return offsetHours <= 23 && offsetMinutes <= 59 && index + 6 == bytes.count
    }
}
