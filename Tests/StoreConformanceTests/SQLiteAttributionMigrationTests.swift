import CSQLite
import DiscfgConformance
import DiscfgCore
import DiscfgSQLite
import Foundation
import Testing

/// A file written before changes were attributed (schema 7) opens, reads its history as
/// made by no one known, and records who and why from its next change on.
@Suite("SQLite schema migration: attribution")
struct SQLiteAttributionMigrationTests {
    /// What takes a file back to before schema 8: history without who and why.
    static let dropAttribution = """
    ALTER TABLE history DROP COLUMN by_kind; ALTER TABLE history DROP COLUMN by_id;
    ALTER TABLE history DROP COLUMN by_description; ALTER TABLE history DROP COLUMN message;

    """

    @Test("a schema 7 file keeps its history, unattributed, and attributes what comes after")
    func schemaSevenFileGainsAttribution() async throws {
        try await SQLiteFileTests.withDirectory { directory in
            let path = directory.appendingPathComponent("seven.db").path
            let config = try ConfigName("app")
            let key = try Key("/db/host")
            do {
                let store = try SQLiteStore(path: path)
                _ = try await store.createConfig(config, settings: ConfigSettings())
                try await store.set("/db/host", "db1", in: config)
                _ = try await store.transact(Transaction(success: [.put(key, Data("db2".utf8)), .put(try Key("/db/port"), Data("5432".utf8))]), in: config)
            }
            // The file as schema 7 wrote it: history without the attribution columns.
            var handle: OpaquePointer?
            #expect(sqlite3_open(path, &handle) == SQLITE_OK)
            // The store just closed may still hold the file a moment (its writer closes on its own thread).
            sqlite3_busy_timeout(handle, 10_000)
            #expect(sqlite3_exec(handle, Self.dropAttribution + "PRAGMA user_version = 7;", nil, nil, nil) == SQLITE_OK, "\(String(cString: sqlite3_errmsg(handle)))")
            sqlite3_close(handle)

            let store = try SQLiteStore(path: path)
            let old = try await store.fullHistory(of: key, in: config)
            #expect(old.map(\.item?.text) == ["db2", "db1"])
            #expect(old.map(\.attribution) == [nil, nil])
            let ops = Attribution(principal: Principal(kind: .token, id: "0123456789ab", description: "ops-admin"), message: "move to the new primary")
            let change = try await ops.withValue { try await store.set("/db/host", "db3", in: config) }
            #expect(change.attribution == ops)
            let history = try await store.fullHistory(of: key, in: config)
            #expect(history.map(\.attribution) == [ops, nil, nil])
            #expect(try await store.get(key, in: config, atRevision: Revision(2))?.text == "db2")
            let log = try await store.changeLog(in: config, ChangeLogQuery())
            #expect(log.map(\.revision) == [3, 2, 1])
            #expect(log.map { $0.events.map(\.key.path) } == [["/db/host"], ["/db/host", "/db/port"], ["/db/host"]])
            #expect(try await store.changeLog(in: config, ChangeLogQuery(by: "unknown")).map(\.revision) == [2, 1])
            #expect(try await store.changeLog(in: config, ChangeLogQuery(by: "OPS-ADMIN")).map(\.revision) == [3])
            #expect(try await store.changeLog(in: config, ChangeLogQuery(by: "token:0123456789ab")).map(\.revision) == [3])
            #expect(try await store.changeLog(in: config, ChangeLogQuery(prefix: KeyPrefix("/db/"), revision: Revision(2))).map(\.events.count) == [2])
            #expect(try await store.changeLog(in: config, ChangeLogQuery(limit: 1)).map(\.revision) == [3])
        }
    }
}
