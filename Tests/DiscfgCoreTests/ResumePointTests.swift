import DiscfgCore
import Foundation
import Testing

@Suite("Resuming a stream of events inside a transaction")
struct ResumePointTests {
    private func event(_ revision: UInt64, _ key: String) throws -> Event {
        Event(kind: .delete, revision: Revision(revision), key: try Key(key), at: Date(milliseconds: 0), item: nil, prevItem: nil)
    }

    @Test("event ids name the revision, then the position within it")
    func idsNamePositions() throws {
        var replay = ResumePoint(from: 5).replay()
        var ids: [String?] = []
        for event in [try event(5, "/a"), try event(6, "/a"), try event(6, "/b"), try event(6, "/c"), try event(7, "/a")] {
            let admitted = replay.admit(event)
            #expect(admitted)
            ids.append(replay.point.eventID)
        }
        #expect(ids == ["5", "6", "6.1", "6.2", "7"])
    }

    @Test("a reader resumed from an id gets exactly the events after it, even mid-transaction")
    func resumesExactly() throws {
        let stream = [try event(6, "/a"), try event(6, "/b"), try event(6, "/c"), try event(7, "/a")]
        for (id, expected) in [("6", ["/b", "/c", "/a"]), ("6.1", ["/c", "/a"]), ("6.2", ["/a"]), ("5", ["/a", "/b", "/c", "/a"])] {
            let point = try #require(ResumePoint(eventID: id))
            var replay = point.replay()
            #expect(stream.filter { replay.admit($0) }.map(\.key.path) == expected, "after \(id)")
        }
    }

    @Test("ids that are not ids are refused", arguments: ["", "-1", "x", "6.", ".1", "6.1.2", "6.-1", "6.10000", "18446744073709551616", "99999999999999999999", " 6", "6 ", "1e3", "٣"])
    func badIDs(text: String) {
        #expect(ResumePoint(eventID: text) == nil)
    }

    @Test("the largest revision and position read")
    func bounds() throws {
        let point = try #require(ResumePoint(eventID: "9223372036854775807.9999"))
        #expect(point.revision == .max)
        #expect(point.eventID == "9223372036854775807.9999")
        #expect(ResumePoint(eventID: "0")?.eventID == "0")
        #expect(ResumePoint(eventID: "9999999999999999999")?.revision == .max, "past the largest revision reads as it")
    }
}
