import Foundation

/// The two UTC renderings of a signing instant that SigV4 needs.
///
/// Computed by hand from the Unix time so signing never depends on locale, calendar
/// settings or a shared, non-thread-safe formatter.
public struct AWSTimestamp: Sendable, Hashable {
    /// `YYYYMMDD'T'HHMMSS'Z'`, the value of `X-Amz-Date`.
    public let dateTime: String
    /// `YYYYMMDD`, the first element of the credential scope.
    public let date: String

    /// Renders `instant` in UTC, truncated to whole seconds.
    public init(_ instant: Date) {
        let seconds = Int64(instant.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = Self.civilDate(daysSinceEpoch: days)
        let hour = secondOfDay / 3_600
        let minute = (secondOfDay % 3_600) / 60
        let second = secondOfDay % 60
        let datePart = Self.pad(year, 4) + Self.pad(month, 2) + Self.pad(day, 2)
        self.date = datePart
        self.dateTime = datePart + "T" + Self.pad(hour, 2) + Self.pad(minute, 2) + Self.pad(second, 2) + "Z"
    }

    /// Parses an `X-Amz-Date` style value (`20150830T123600Z`) back into an instant.
    public static func parse(_ text: String) -> Date? {
        let chars = Array(text.utf8)
        guard chars.count == 16, chars[8] == UInt8(ascii: "T"), chars[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for c in chars[range] {
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int64(c - 48)
            }
            return value
        }
        guard let y = number(0..<4), let mo = number(4..<6), let d = number(6..<8),
              let h = number(9..<11), let mi = number(11..<13), let s = number(13..<15),
              (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
        else { return nil }
        let days = daysSinceEpoch(year: y, month: mo, day: d)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + h * 3_600 + mi * 60 + s))
    }

    /// Parses an HTTP `Date` header in the IMF-fixdate form every AWS endpoint sends
    /// (`Wed, 26 Nov 2026 05:44:29 GMT`); nil for anything else.
    public static func parseHTTPDate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
              let day = Int64(parts[1]), (1...31).contains(day),
              let month = months.firstIndex(of: String(parts[2])).map({ Int64($0 + 1) }),
              let year = Int64(parts[3]), parts[3].count == 4
        else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let h = Int64(clock[0]), let mi = Int64(clock[1]), let s = Int64(clock[2]),
              h < 24, mi < 60, s < 61
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + h * 3_600 + mi * 60 + s))
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    // Proleptic Gregorian day arithmetic using 400-year eras, so it is exact for any year.
    private static func civilDate(daysSinceEpoch z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func daysSinceEpoch(year y0: Int64, month m: Int64, day d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
