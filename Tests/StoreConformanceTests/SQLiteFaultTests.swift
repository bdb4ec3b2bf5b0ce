import DiscfgConformance
import DiscfgCore
@testable import DiscfgSQLite
import Foundation
import Testing

/// The SQLite store under faults: a full disk in the middle of a group commit.
@Suite("SQLite faults")
struct SQLiteFaultTests {
    /// The outcome of one write: acknowledged with an event, or refused with an error.
    private enum Outcome: Sendable {
        case acknowledged(Event)
        case failed(DiscfgError)
    }

    /// Caps the store at its current size plus `extraPages`, on the writer's connection.
    private static func capSize(_ store: SQLiteStore, extraPages: Int64?) async throws {
        try await store.writer.write { connection in
            let limit = try extraPages.map { extra in
                try (connection.first("PRAGMA page_count") { $0.integer(0) } ?? 0) + extra
            } ?? 1_073_741_823
            try connection.execute("PRAGMA max_page_count = \(limit)")
        }
    }

    @Test("when SQLite rolls the whole group back, every change in it is told so and the rest run in the next group")
    func groupRolledBackBySQLite() async throws {
        try await SQLiteFileTests.withDirectory { directory in
            let path = directory.appendingPathComponent("faults.db").path
            let store = try SQLiteStore(path: path)
            let writer = store.writer
            try await writer.write { try $0.execute("CREATE TABLE probe (id INTEGER, payload BLOB)") }

            // Hold the writer so the next three changes queue up and commit as one group,
            // in the order they arrive (40 ms apart).
            let holder = Task { try await writer.write { _ in Thread.sleep(forTimeInterval: 0.6) } }
            try await Task.sleep(for: .milliseconds(100))
            let first = Task { _ = try await writer.write { try $0.run("INSERT INTO probe VALUES (1, x'01')") } }
            try await Task.sleep(for: .milliseconds(40))
            // A real SQLITE_FULL: no page may be added, and this row needs hundreds. With no
            // statement journal to fall back on, SQLite rolls back the whole transaction.
            let full = Task {
                try await writer.write { connection in
                    let pages = try connection.first("PRAGMA page_count") { $0.integer(0) } ?? 0
                    try connection.execute("PRAGMA max_page_count = \(pages)")
                    _ = try connection.run("INSERT INTO probe VALUES (2, zeroblob(1000000))")
                }
            }
            try await Task.sleep(for: .milliseconds(40))
            let last = Task {
                try await writer.write { connection in
                    try connection.execute("PRAGMA max_page_count = 1073741823")
                    _ = try connection.run("INSERT INTO probe VALUES (3, x'03')")
                }
            }
            try await holder.value

            var told: [Int64: Bool] = [:]
            for (id, task) in [(Int64(1), first), (2, full), (3, last)] {
                do {
                    _ = try await task.value
                    told[id] = true
                } catch let error as DiscfgError {
                    #expect(error.code == .unavailable, "\(error)")
                    told[id] = false
                }
            }
            #expect(told[2] == false, "the change that filled the disk failed")
            let stored = try store.readers.read { connection in
                Set(try connection.query("SELECT id FROM probe") { $0.integer(0) })
            }
            for id in Int64(1)...3 {
                #expect(told[id] == stored.contains(id), "change \(id): told \(told[id] == true ? "saved" : "failed"), stored: \(stored.contains(id))")
            }
            #expect(stored.contains(3), "a change queued behind the failure runs in the next group")
        }
    }

    @Test("concurrent sets on a full disk: each caller is told the truth and every acknowledged value survives reopening")
    func concurrentSetsOnAFullDisk() async throws {
        try await SQLiteFileTests.withDirectory { directory in
            let path = directory.appendingPathComponent("full.db").path
            let config: ConfigName
            var outcomes: [Key: Outcome] = [:]
            do {
                let store = try SQLiteStore(path: path)
                config = try await store.makeConfig("full")
                try await store.set("/seed", "x", in: config)
                // Room for a few of the 48 values of 20 KB, not for all of them.
                try await Self.capSize(store, extraPages: 60)
                outcomes = try await withThrowingTaskGroup(of: (Key, Outcome).self) { group in
                    for index in 0..<48 {
                        group.addTask {
                            let key = try Key("/k\(index)")
                            let value = Data(repeating: UInt8(index), count: 20_000)
                            do {
                                return (key, .acknowledged(try await store.set(key, to: value, in: config, options: SetOptions())))
                            } catch let error as DiscfgError {
                                return (key, .failed(error))
                            }
                        }
                    }
                    return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
                }
                try await Self.capSize(store, extraPages: nil)
                #expect(try await store.set("/after", "ok", in: config).revision > .zero, "the store works once there is room again")
            }

            let acknowledged = outcomes.values.compactMap { if case .acknowledged(let event) = $0 { event } else { nil } }
            let failures = outcomes.values.compactMap { if case .failed(let error) = $0 { error } else { nil } }
            #expect(!acknowledged.isEmpty, "some values fit")
            #expect(!failures.isEmpty, "the disk filled up")
            for error in failures {
                #expect(error.code == .unavailable)
                #expect(error.message.contains("full"), "\(error.message)")
            }
            let reopened = try SQLiteStore(path: path)
            for (key, outcome) in outcomes {
                let stored = try await reopened.get(key, in: config)
                switch outcome {
                case .acknowledged(let event):
                    #expect(stored?.modRevision == event.revision, "acknowledged \(key) at \(event.revision), stored \(String(describing: stored?.modRevision))")
                case .failed:
                    #expect(stored == nil, "\(key) was reported failed but is stored")
                }
            }
            // Nothing but the acknowledged changes took a revision: seed, the values, /after.
            #expect(try await reopened.revision(of: config) == Revision(UInt64(acknowledged.count + 2)))
            print("SQLite full disk: \(acknowledged.count) sets acknowledged and found after reopening, \(failures.count) refused and absent")
        }
    }
}
