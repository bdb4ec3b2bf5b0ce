import CSQLite
import DiscfgConformance
import DiscfgCore
import DiscfgSQLite
import Foundation
import Testing

/// A file written before transactions (schema 3, one history row per revision) opens,
/// keeps its history, and takes transactions.
@Suite("SQLite schema migration")
struct SQLiteMigrationTests {
    /// The tables as schema 3 had them, with a config of two revisions.
    static func schemaThree(now: Int64) -> String {
        """
    CREATE TABLE IF NOT EXISTS configs (
    name TEXT PRIMARY KEY,
    revision INTEGER NOT NULL DEFAULT 0,
    compacted_revision INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    modified_at INTEGER NOT NULL,
    settings TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS kv (
    config TEXT NOT NULL,
    key TEXT NOT NULL,
    value BLOB NOT NULL,
    content_type TEXT,
    version INTEGER NOT NULL,
    create_revision INTEGER NOT NULL,
    mod_revision INTEGER NOT NULL,
    modified_at INTEGER NOT NULL,
    expires_at INTEGER,
    PRIMARY KEY (config, key)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS kv_expiry ON kv (expires_at, config) WHERE expires_at IS NOT NULL;
    CREATE TABLE IF NOT EXISTS history (
    config TEXT NOT NULL,
    revision INTEGER NOT NULL,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    at INTEGER NOT NULL,
    value BLOB,
    content_type TEXT,
    version INTEGER,
    create_revision INTEGER,
    expires_at INTEGER,
    prev_value BLOB,
    prev_content_type TEXT,
    prev_version INTEGER,
    prev_create_revision INTEGER,
    prev_mod_revision INTEGER,
    prev_modified_at INTEGER,
    prev_expires_at INTEGER,
    PRIMARY KEY (config, revision)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS history_by_key ON history (config, key, revision);
    CREATE TABLE tokens (id TEXT PRIMARY KEY, hash BLOB NOT NULL, role TEXT NOT NULL, configs TEXT, description TEXT, created_at INTEGER NOT NULL) WITHOUT ROWID;
    CREATE TABLE token_history (id INTEGER PRIMARY KEY CHECK (id = 1), first_issued_at INTEGER NOT NULL);
    INSERT INTO configs VALUES ('app', 2, 0, \(now - 2000), \(now - 1000), '{}');
    INSERT INTO kv VALUES ('app', '/a', CAST('two' AS BLOB), NULL, 2, 1, 2, \(now - 1000), NULL);
    INSERT INTO history (config, revision, kind, key, at, value, version, create_revision) VALUES ('app', 1, 'put', '/a', \(now - 2000), CAST('one' AS BLOB), 1, 1);
    INSERT INTO history (config, revision, kind, key, at, value, version, create_revision, prev_value, prev_version, prev_create_revision, prev_mod_revision, prev_modified_at)
        VALUES ('app', 2, 'put', '/a', \(now - 1000), CAST('two' AS BLOB), 2, 1, CAST('one' AS BLOB), 1, 1, 1, \(now - 2000));
    PRAGMA user_version = 3;
    """
    }

    @Test("a schema 3 file is migrated: its history reads as before, a transaction shares one revision, its keys are counted")
    func schemaThreeFileMigrates() async throws {
        try await SQLiteFileTests.withDirectory { directory in
            let path = directory.appendingPathComponent("old.db").path
            var handle: OpaquePointer?
            #expect(sqlite3_open(path, &handle) == SQLITE_OK)
            #expect(sqlite3_exec(handle, Self.schemaThree(now: Date().milliseconds), nil, nil, nil) == SQLITE_OK)
            sqlite3_close(handle)

            let store = try SQLiteStore(path: path)
            let config = try ConfigName("app")
            let a = try Key("/a")
            #expect(try await store.fullHistory(of: a, in: config).map(\.item?.text) == ["two", "one"])
            #expect(try await store.get(a, in: config, atRevision: 1)?.text == "one")
            #expect(try await store.configInfo(config).keyCount == 1, "counted by the migration")
            let result = try await store.transact(Transaction(success: [.put(a, Data(text: "three")), .put(try Key("/b"), Data(text: "b"))]), in: config)
            #expect(try await store.configInfo(config).keyCount == 2)
            #expect(result.revision == 3)
            let events = try await store.events(in: config, scope: .prefix(.root), from: 1, limit: 10).events
            #expect(events.map(\.revision) == [1, 2, 3, 3])
            #expect(events.map(\.key.path) == ["/a", "/a", "/a", "/b"])

            var reopened: OpaquePointer?
            #expect(sqlite3_open(path, &reopened) == SQLITE_OK)
            var statement: OpaquePointer?
            #expect(sqlite3_prepare_v2(reopened, "PRAGMA user_version", -1, &statement, nil) == SQLITE_OK)
            #expect(sqlite3_step(statement) == SQLITE_ROW)
            #expect(sqlite3_column_int(statement, 0) == 5)
            sqlite3_finalize(statement)
            sqlite3_close(reopened)
        }
    }
}
