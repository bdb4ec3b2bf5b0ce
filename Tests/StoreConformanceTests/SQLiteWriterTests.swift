import DiscfgCore
@testable import DiscfgSQLite
import DiscfgTestSupport
import Foundation
import Synchronization
import Testing

/// The SQLite store's one writer, on its own over a real file: changes that arrive
/// while a commit runs go into the next commit together, each caller hears back only
/// once its change is committed (another connection sees it), and a change or a commit
/// that fails fails only what it holds.
@Suite("SQLite writer: group commit")
struct SQLiteWriterTests {
    /// A writer over a fresh store file with a table `probe`, as the store sets it up,
    /// and a second connection to read what is committed; `prepare` runs on the writer's
    /// connection before the writer takes it.
    static func withWriter(
        prepare: (SQLiteConnection) throws -> Void = { _ in },
        _ body: (SQLiteWriter, _ path: String) async throws -> Void
    ) async throws {
        try await SQLiteFileTests.withDirectory { directory in
            let path = directory.appendingPathComponent("writer.db").path
            let connection = try SQLiteConnection(path: path, create: true)
            #expect(try connection.first("PRAGMA journal_mode = WAL") { $0.text(0) } == "wal")
            try connection.execute("PRAGMA synchronous = FULL")
            try connection.execute("PRAGMA wal_autocheckpoint = 0")
            try SQLiteSchema.migrate(connection)
            try connection.execute("CREATE TABLE probe (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES probe(id) DEFERRABLE INITIALLY DEFERRED)")
            try prepare(connection)
            let writer = SQLiteWriter(connection: connection, checkpointer: SQLiteCheckpointer(path: path))
            try await body(writer, path)
        }
    }

    /// The ids in `probe`, as a connection of its own reads them (only what is committed).
    static func committedIDs(_ path: String) throws -> Set<Int64> {
        let reader = try SQLiteConnection(path: path, create: false)
        return Set(try reader.query("SELECT id FROM probe") { $0.integer(0) })
    }

    /// Holds the writer's thread until `count` callers have asked for a write, so their
    /// changes queue up behind it and go into one commit.
    final class Gate: Sendable {
        private let asked = Atomic<Int>(0)
        private let holding = Atomic<Bool>(false)
        let count: Int

        init(count: Int) { self.count = count }

        func ask() { asked.add(1, ordering: .sequentiallyConsistent) }

        /// Runs on the writer's thread: waits for every caller to have asked, then a
        /// moment more for the last to reach the writer's queue.
        func hold() {
            holding.store(true, ordering: .sequentiallyConsistent)
            while asked.load(ordering: .sequentiallyConsistent) < count { Thread.sleep(forTimeInterval: 0.005) }
            Thread.sleep(forTimeInterval: 0.2)
        }

        /// A write that holds the writer, once it holds it: what is asked for next
        /// queues behind it, in a commit of its own.
        func holdWriter(_ writer: SQLiteWriter) async throws -> Task<Void, any Error> {
            let holder = Task { try await writer.write { _ in self.hold() } }
            try await eventually("the write holds the writer", interval: .milliseconds(5)) { holding.load(ordering: .sequentiallyConsistent) }
            return holder
        }
    }

    @Test("writes that arrive during a commit share the next one, and each is answered once another connection sees it")
    func groupCommit() async throws {
        try await Self.withWriter { writer, path in
            let writes = 24
            let gate = Gate(count: writes)
            let holder = try await gate.holdWriter(writer)
            let visible = try await withThrowingTaskGroup(of: Bool.self) { group in
                for id in 1...writes {
                    group.addTask {
                        gate.ask()
                        let answer = try await writer.write { connection in
                            _ = try connection.run("INSERT INTO probe (id) VALUES (?)", [.integer(Int64(id))])
                            return Int64(id)
                        }
                        // Answered: committed, so a connection of its own reads it.
                        return try Self.committedIDs(path).contains(answer)
                    }
                }
                var all: [Bool] = []
                for try await seen in group { all.append(seen) }
                return all
            }
            try await holder.value
            #expect(visible.count == writes)
            #expect(visible.allSatisfy { $0 })
            #expect(try Self.committedIDs(path) == Set(1...Int64(writes)))
            let statistics = writer.statistics
            #expect(statistics.changes == UInt64(writes + 1))
            // The holder's commit, then the queued writes in far fewer commits than writes
            // (one, unless a caller reached the queue only after the gate opened).
            #expect(statistics.commits >= 2)
            #expect(statistics.commits < UInt64(writes / 2))
            #expect(statistics.batches.dropFirst().reduce(0, +) >= 1)
        }
    }

    @Test("a change that throws is undone alone: the others in its commit are kept and answered")
    func failedChangeFailsAlone() async throws {
        struct Refused: Error, Equatable {}
        try await Self.withWriter { writer, path in
            let gate = Gate(count: 3)
            let holder = try await gate.holdWriter(writer)
            func insert(_ id: Int64, thenThrow: Bool = false) -> Task<Void, any Error> {
                Task {
                    gate.ask()
                    try await writer.write { connection in
                        _ = try connection.run("INSERT INTO probe (id) VALUES (?)", [.integer(id)])
                        if thenThrow { throw Refused() }
                    }
                }
            }
            let first = insert(1)
            let refused = insert(2, thenThrow: true)
            let last = insert(3)
            try await holder.value
            try await first.value
            try await last.value
            await #expect(throws: Refused.self) { try await refused.value }
            #expect(try Self.committedIDs(path) == [1, 3])
            // An SQL error in a change is undone the same way.
            await #expect(throws: DiscfgError.self) {
                try await writer.write { connection in
                    _ = try connection.run("INSERT INTO probe (id) VALUES (4)")
                    _ = try connection.run("INSERT INTO probe (id) VALUES (1)")
                }
            }
            #expect(try Self.committedIDs(path) == [1, 3])
        }
    }

    @Test("in one commit, a change that throws before writing and one that throws after writing are both undone alone; the others are kept")
    func failedChangesBeforeAndAfterWriting() async throws {
        struct Refused: Error, Equatable {}
        try await Self.withWriter { writer, path in
            let gate = Gate(count: 5)
            let holder = try await gate.holdWriter(writer)
            func insert(_ id: Int64, before: Bool = false, after: Bool = false) -> Task<Void, any Error> {
                Task {
                    gate.ask()
                    try await writer.write { connection in
                        if before { throw Refused() }
                        _ = try connection.run("INSERT INTO probe (id) VALUES (?)", [.integer(id)])
                        if after { throw Refused() }
                    }
                }
            }
            let first = insert(1)
            let refusedBefore = insert(2, before: true)
            let second = insert(3)
            let refusedAfter = insert(4, after: true)
            let last = insert(5)
            try await holder.value
            try await first.value
            try await second.value
            try await last.value
            await #expect(throws: Refused.self) { try await refusedBefore.value }
            await #expect(throws: Refused.self) { try await refusedAfter.value }
            #expect(try Self.committedIDs(path) == [1, 3, 5])
        }
    }

    @Test("a change alone in its commit that throws is undone whole, and the writer goes on")
    func failedChangeAloneIsUndone() async throws {
        struct Refused: Error {}
        try await Self.withWriter { writer, path in
            try await writer.write { _ = try $0.run("INSERT INTO probe (id) VALUES (1)") }
            // Each write below is alone in its commit: nothing else is queued.
            await #expect(throws: Refused.self) {
                try await writer.write { connection in
                    _ = try connection.run("INSERT INTO probe (id) VALUES (2)")
                    _ = try connection.run("INSERT INTO probe (id) VALUES (3)")
                    throw Refused()
                }
            }
            await #expect(throws: DiscfgError.self) {
                try await writer.write { connection in
                    _ = try connection.run("INSERT INTO probe (id) VALUES (4)")
                    _ = try connection.run("INSERT INTO probe (id) VALUES (1)")
                }
            }
            #expect(try Self.committedIDs(path) == [1])
            try await writer.write { _ = try $0.run("INSERT INTO probe (id) VALUES (5)") }
            #expect(try Self.committedIDs(path) == [1, 5])
            #expect(writer.statistics.changes == 2)
        }
    }

    @Test("a commit that fails fails every change in it, and only those: the next commit goes on")
    func failedCommitFailsItsGroup() async throws {
        // A deferred foreign key is checked at COMMIT: a change that leaves a dangling
        // reference runs without error and makes its whole commit fail.
        try await Self.withWriter(prepare: { try $0.execute("PRAGMA foreign_keys = ON") }) { writer, path in
            try await writer.write { _ = try $0.run("INSERT INTO probe (id) VALUES (1)") }

            let gate = Gate(count: 2)
            let holder = try await gate.holdWriter(writer)
            let dangling = Task {
                gate.ask()
                try await writer.write { _ = try $0.run("INSERT INTO probe (id, parent) VALUES (10, 999)") }
            }
            let innocent = Task {
                gate.ask()
                try await writer.write { _ = try $0.run("INSERT INTO probe (id, parent) VALUES (11, 1)") }
            }
            try await holder.value
            let danglingError = await #expect(throws: DiscfgError.self) { try await dangling.value }
            let innocentError = await #expect(throws: DiscfgError.self) { try await innocent.value }
            // Both heard the commit's own failure.
            #expect(danglingError == innocentError)
            #expect(try Self.committedIDs(path) == [1])

            // The writer is not left inside the failed transaction: the next commit works.
            try await writer.write { _ = try $0.run("INSERT INTO probe (id, parent) VALUES (12, 1)") }
            #expect(try Self.committedIDs(path) == [1, 12])
        }
    }
}
