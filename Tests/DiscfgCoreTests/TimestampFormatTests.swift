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

    @Test("a time reads back as written")
    func roundTrip() throws {
        let date = try #require(TimestampFormat.date(from: "2026-11-21T20:15:03.123Z"))
        #expect(TimestampFormat.string(from: date) == "2026-11-21T20:15:03.123Z")
    }
}
