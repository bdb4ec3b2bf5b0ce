@testable import DiscfgSQLite
import Testing

/// What the SQLite writer remembers of a config's oldest history row, so that a change
/// under a retention of days reads that row only when it may have aged out. It may only
/// ever err towards reading. (That history is pruned as the clock moves is checked by the
/// conformance suite, on every store.)
@Suite("SQLite: the oldest history row, remembered")
struct SQLiteOldestHistoryTests {
    /// Asks at `now` whether history older than `cutoff` may exist, with `stored` as the
    /// oldest row's time; returns the answer and whether the row was read.
    private func ask(_ rows: OldestHistoryRows, cutoff: Int64, now: Int64, stored: Int64?) throws -> (due: Bool, read: Bool) {
        var read = false
        let due = try rows.mayBeBefore(cutoff, in: "app", now: now) {
            read = true
            return stored
        }
        return (due, read)
    }

    @Test("the row is read the first time, and again only once it may be past the cutoff")
    func readsOnlyWhenItMayBeDue() throws {
        let rows = OldestHistoryRows()
        #expect(try ask(rows, cutoff: 0, now: 1_000, stored: 500) == (false, true))
        // Within a minute, a cutoff still before the remembered row needs no read.
        #expect(try ask(rows, cutoff: 400, now: 2_000, stored: 500) == (false, false))
        #expect(try ask(rows, cutoff: 499, now: 3_000, stored: 500) == (false, false))
        // A cutoff past it: read, and the answer is the row's.
        #expect(try ask(rows, cutoff: 501, now: 4_000, stored: 500) == (true, true))
        #expect(try ask(rows, cutoff: 501, now: 5_000, stored: 900) == (false, true), "pruning made the oldest row newer")
        #expect(try ask(rows, cutoff: 800, now: 6_000, stored: 900) == (false, false))
    }

    @Test("what was read is read again after a minute, or when the clock went back")
    func readsAgainWhenStale() throws {
        let rows = OldestHistoryRows()
        #expect(try ask(rows, cutoff: 0, now: 100_000, stored: 50_000) == (false, true))
        #expect(try ask(rows, cutoff: 0, now: 100_000 + OldestHistoryRows.recheckMilliseconds - 1, stored: 50_000) == (false, false))
        // Another process may have written older rows meanwhile (its clock behind ours).
        #expect(try ask(rows, cutoff: 20_000, now: 100_000 + OldestHistoryRows.recheckMilliseconds, stored: 10_000) == (true, true))
        #expect(try ask(rows, cutoff: 0, now: 200_000, stored: 60_000) == (false, false))
        #expect(try ask(rows, cutoff: 0, now: 150_000, stored: 60_000) == (false, true), "the clock went back")
    }

    @Test("a change counts its own row, which may be older than the oldest read")
    func ownRowCounts() throws {
        let rows = OldestHistoryRows()
        // Rows written while the clock was ahead: the oldest is newer than the read.
        #expect(try ask(rows, cutoff: 0, now: 1_000, stored: 5_000) == (false, true))
        // This change wrote at 3,000: the oldest row now is at most that.
        #expect(try ask(rows, cutoff: 2_500, now: 3_000, stored: 3_000) == (false, false))
        #expect(try ask(rows, cutoff: 3_500, now: 4_000, stored: 3_000) == (true, true))
    }

    @Test("a deleted config's row is forgotten: a config made again under its name is read")
    func forgetsDeletedConfigs() throws {
        let rows = OldestHistoryRows()
        #expect(try ask(rows, cutoff: 0, now: 1_000, stored: 500) == (false, true))
        rows.forget("app")
        #expect(try ask(rows, cutoff: 400, now: 2_000, stored: 1_500) == (false, true))
    }

    @Test("a config with no history has nothing to prune, and is read again next time")
    func noHistory() throws {
        let rows = OldestHistoryRows()
        #expect(try ask(rows, cutoff: 1_000, now: 2_000, stored: nil) == (false, true))
        #expect(try ask(rows, cutoff: 1_000, now: 2_001, stored: 1_500) == (false, true))
        #expect(try ask(rows, cutoff: 1_600, now: 2_002, stored: 1_500) == (true, true))
    }
}
