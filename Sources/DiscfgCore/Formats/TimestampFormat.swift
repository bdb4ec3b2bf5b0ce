import Foundation

/// ISO 8601 timestamps in UTC with milliseconds, e.g. `2026-11-21T20:15:03.120Z`.
public enum TimestampFormat {
    /// The text for a date.
    public static func string(from date: Date) -> String {
        let (parts, millis) = utcParts(date)
        func padded(_ value: Int, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return padded(Int(parts.tm_year) + 1900, 4) + "-" + padded(Int(parts.tm_mon) + 1, 2) + "-" + padded(Int(parts.tm_mday), 2)
            + "T" + padded(Int(parts.tm_hour), 2) + ":" + padded(Int(parts.tm_min), 2) + ":" + padded(Int(parts.tm_sec), 2)
            + "." + padded(Int(millis), 3) + "Z"
    }

    /// The calendar fields of `date` in UTC and its milliseconds, computed from whole
    /// milliseconds: a formatter given the Double would truncate .123 (stored as
    /// .12299…) to .122 and a round trip would change the time.
    public static func utcParts(_ date: Date) -> (parts: tm, milliseconds: Int) {
        let (seconds, fraction) = date.milliseconds.quotientAndRemainder(dividingBy: 1000)
        let (wholeSeconds, millis) = fraction < 0 ? (seconds - 1, fraction + 1000) : (seconds, fraction)
        var time = time_t(wholeSeconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        return (parts, Int(millis))
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
