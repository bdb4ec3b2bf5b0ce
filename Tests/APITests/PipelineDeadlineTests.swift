import DiscfgCore
import DiscfgService
import Foundation
import Synchronization
import Testing

/// The pipeline applies a request's deadline to its store step with one policy, whatever
/// the face: the store sees it as `Deadline.current`; a deadline passed before the step,
/// or before its write began, fails it `unavailable` (`timeout`) with nothing run; a
/// write once begun takes the request out of its transport's hold (``RequestCutoff``).
@Suite("Pipeline: the request's deadline")
struct PipelineDeadlineTests {
    let demo = try! ConfigName("demo")
    let admin = Caller(name: "token:a", role: .admin)

    /// A transport's hold that records when it was told a write began, and may already
    /// have cut the request off.
    final class Hold: RequestCutoff {
        let told = Mutex(0)
        let isCut: Bool

        init(cut: Bool = false) {
            isCut = cut
        }

        func writeBegins() throws(DiscfgError) {
            told.withLock { $0 += 1 }
            if isCut { throw Deadline.exceeded() }
        }
    }

    func set(_ key: String = "/k") throws -> Action { Action(.set, on: demo, reaching: .key(try Key(key))) }

    @Test("the step sees the deadline as Deadline.current; an earlier one in force stays")
    func storeSeesDeadline() async throws {
        let deadline = Deadline.after(.seconds(30))
        let read = try await Pipeline.perform(Action(.get, on: demo, reaching: .key(try Key("/k"))), by: admin, deadline: deadline) { Deadline.current }
        #expect(read == deadline)
        let write = try await Pipeline.perform(try set(), by: admin, deadline: deadline) { Deadline.current }
        #expect(write == deadline)
        let earlier = Deadline.after(.seconds(5))
        let kept = try await Deadline.within(earlier) {
            try await Pipeline.perform(try set(), by: admin, deadline: deadline) { Deadline.current }
        }
        #expect(kept == earlier)
        #expect(try await Pipeline.perform(try set(), by: admin, deadline: nil) { Deadline.current } == nil)
    }

    @Test("a deadline passed before the step fails it unavailable (timeout), the step not run, read or write")
    func passedDeadline() async throws {
        let ran = Mutex(0)
        for action in [try set(), Action(.get, on: demo, reaching: .key(try Key("/k")))] {
            await #expect(throws: Deadline.exceeded()) {
                try await Pipeline.perform(action, by: admin, deadline: Deadline(.now - .milliseconds(1))) { ran.withLock { $0 += 1 } }
            }
        }
        #expect(ran.withLock { $0 } == 0)
    }

    @Test("a write begins with its step: the transport's hold is told first, and one that cut the request off stops it")
    func writeWithStep() async throws {
        let hold = Hold()
        let toldFirst = try await Pipeline.$cutoff.withValue(hold) {
            try await Pipeline.perform(try set(), by: admin, deadline: .after(.seconds(30))) { hold.told.withLock { $0 } }
        }
        #expect(toldFirst == 1)
        // A read is no write: the hold is not told.
        _ = try await Pipeline.$cutoff.withValue(hold) {
            try await Pipeline.perform(Action(.get, on: demo, reaching: .key(try Key("/k"))), by: admin, deadline: .after(.seconds(30))) { 0 }
        }
        #expect(hold.told.withLock { $0 } == 1)

        let cut = Hold(cut: true)
        let ran = Mutex(false)
        await #expect(throws: Deadline.exceeded()) {
            try await Pipeline.$cutoff.withValue(cut) {
                try await Pipeline.perform(try set(), by: admin, deadline: .after(.seconds(30))) { ran.withLock { $0 = true } }
            }
        }
        #expect(!ran.withLock { $0 }, "nothing written")
    }

    @Test("a marked write begins where the step commits: what it reads first is not the write; a deadline passed by then stops it")
    func markedWrite() async throws {
        let hold = Hold()
        let (before, after) = try await Pipeline.$cutoff.withValue(hold) {
            try await Pipeline.perform(try set(), by: admin, deadline: .after(.seconds(30)), writeStart: .marked) {
                let before = hold.told.withLock { $0 }
                let after = try await Pipeline.commit { hold.told.withLock { $0 } }
                return (before, after)
            }
        }
        #expect(before == 0 && after == 1)

        // The deadline passes while the step reads its request: its write never begins.
        let written = Mutex(false)
        await #expect(throws: Deadline.exceeded()) {
            try await Pipeline.perform(try set(), by: admin, deadline: .after(.milliseconds(20)), writeStart: .marked) {
                try await Task.sleep(until: Deadline.current!.instant + .milliseconds(5), clock: .continuous)
                try await Pipeline.commit { written.withLock { $0 = true } }
            }
        }
        #expect(!written.withLock { $0 })
    }

    @Test("a write once begun runs to its end past its deadline: the answer is what the store did")
    func begunWriteRunsToItsEnd() async throws {
        let answer = try await Pipeline.perform(try set(), by: admin, deadline: .after(.milliseconds(20))) {
            // A store that does not read deadlines (SQLite waiting for its lock) finishing late.
            try await Task.sleep(until: Deadline.current!.instant + .milliseconds(30), clock: .continuous)
            return "written"
        }
        #expect(answer == "written")
    }
}
