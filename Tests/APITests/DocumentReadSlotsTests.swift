@testable import DiscfgAPI
import Testing

/// The turns of document reads: at most `capacity` at once, handed on in order, never lost.
@Suite("API: document read turns")
struct DocumentReadSlotsTests {
    @Test("a read over the cap gets the turn given back; a wait cancelled takes none; a lease dropped gives its turn back", .timeLimit(.minutes(1)))
    func turns() async throws {
        let slots = DocumentReadSlots(capacity: 2)
        let first = try await slots.acquire()
        let second = try await slots.acquire()
        let third = Task { try await slots.acquire() }
        first.release()
        first.release()  // a second release gives nothing back
        let handedOver = try await third.value

        let cancelled = Task { try await slots.acquire() }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { _ = try await cancelled.value }

        handedOver.release()
        var dropped: DocumentReadSlots.Lease? = try await slots.acquire()
        // Both turns are held (second, dropped): one more waits until a lease is dropped.
        let fourth = Task { try await slots.acquire() }
        dropped = nil
        let last = try await fourth.value
        second.release()
        last.release()
        // Had the cancelled wait or the double release kept or added a turn, these would not be two.
        let (one, two) = try await (slots.acquire(), slots.acquire())
        #expect(dropped == nil)
        one.release()
        two.release()
    }
}
