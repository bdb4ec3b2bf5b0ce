import DiscfgAWS
import Foundation
import Testing

@Suite("Server clock from the Date header")
struct ServerClockTests {
    @Test("IMF-fixdate parses to the instant it names")
    func parsesHTTPDate() {
        #expect(AWSTimestamp.parseHTTPDate("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(AWSTimestamp.parseHTTPDate("Sun, 30 Aug 2015 12:36:00 GMT") == AWSTimestamp.parse("20150830T123600Z"))
        #expect(AWSTimestamp.parseHTTPDate("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
    }

    @Test("anything but IMF-fixdate is nil", arguments: [
        "", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
    ])
    func rejectsOtherForms(text: String) {
        #expect(AWSTimestamp.parseHTTPDate(text) == nil)
    }

    @Test("the recorder keeps the latest readable Date and our time beside it; an unreadable one changes nothing")
    func records() {
        let clock = ServerClock()
        #expect(clock.reading == nil)
        let local = Date(timeIntervalSince1970: 784_111_777 + 400)
        clock.record(dateHeader: "Sun, 06 Nov 1994 08:49:37 GMT", at: local)
        #expect(clock.reading?.skew == 400, "our clock is 400 s ahead")
        #expect((clock.reading?.skew ?? 0) > ServerClockReading.signatureWindow)
        clock.record(dateHeader: "not a date", at: Date())
        clock.record(dateHeader: nil, at: Date())
        #expect(clock.reading?.localDate == local)
    }
}
