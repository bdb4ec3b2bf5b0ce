import DiscfgCore
import Foundation
import Testing

@Suite("Timestamps read as RFC 3339 has them")
struct TimestampFormatTests {
    @Test("valid times read, with fractions and offsets", arguments: [
        "2026-11-21T20:15:03.120Z", "2024-02-29T00:00:00Z", "2026-01-31T23:59:59+01:00", "2026-01-31T12:00:00.5-05:30", "0918-10-23T19:07:14Z",
    ])
    func valid(text: String) {
        #expect(TimestampFormat.date(from: text) != nil, "\(text)")
    }

    @Test("fields out of range are refused, not rolled over", arguments: [
        "2024-01-01T12:99:00Z", "2024-01-01T24:00:00Z", "2024-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2024-04-31T00:00:00Z",
        "2024-00-10T00:00:00Z", "2024-01-00T00:00:00Z", "2024-01-01T00:00:61Z", "2024-01-01T00:00:00+24:00", "2024-01-01T00:00:00",
        "2024-01-01T00:00:00.Z", "2024-01-01T00:00:00Zjunk", "2024-1-01T00:00:00Z", "", "yesterday",
    ])
    func invalid(text: String) {
        #expect(TimestampFormat.date(from: text) == nil, "\(text)")
    }

    @Test("calendar fields agree with the C library's gmtime_r, from year 1 to 9999, leap days and both sides of 1970")
    func calendarFields() {
        let edges: [Int64] = [
            0, -1, 1, 86_399_999, 86_400_000, -86_400_000, -86_400_001, 951_782_400_000, 951_868_799_999, 4_107_542_400_000,
            -62_135_596_800_000, 253_402_300_799_999, -2_208_988_800_000, 68_169_600_000, 1_709_164_800_000,
        ]
        // 20,000 instants spread over years 1 to 9999 by a stride prime to its span, the
        // same on every run.
        let first: Int64 = -62_135_596_800_000, span: Int64 = 315_537_897_600_000
        let instants = edges + (0..<Int64(20_000)).map { first + ($0 &* 7_919_007_919_013) % span }
        for milliseconds in instants {
            let parts = TimestampFormat.utcParts(Date(milliseconds: milliseconds))
            var time = time_t(milliseconds >= 0 || milliseconds % 1000 == 0 ? milliseconds / 1000 : milliseconds / 1000 - 1)
            var expected = tm()
            gmtime_r(&time, &expected)
            let found = [parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second, parts.millisecond]
            let wanted = [
                Int(expected.tm_year) + 1900, Int(expected.tm_mon) + 1, Int(expected.tm_mday), Int(expected.tm_hour), Int(expected.tm_min),
                Int(expected.tm_sec), Int((milliseconds % 1000 + 1000) % 1000),
            ]
            #expect(found == wanted, "\(milliseconds) ms")
            if found != wanted { return }
        }
    }

    @Test("a time reads back as written")
    func roundTrip() throws {
        let date = try #require(TimestampFormat.date(from: "2026-11-21T20:15:03.123Z"))
        #expect(TimestampFormat.string(from: date) == "2026-11-21T20:15:03.123Z")
    }
}

