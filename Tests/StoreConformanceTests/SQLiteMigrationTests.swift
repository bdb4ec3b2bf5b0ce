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
            // The store just closed may still hold the file a moment (its writer closes on its own thread).
            sqlite3_busy_timeout(handle, 10_000)
            #expect(sqlite3_exec(handle, Self.schemaThree(now: Date().milliseconds), nil, nil, nil) == SQLITE_OK)
            sqlite3_close(handle)

            let store = try SQLiteStore(path: path)
            let config = try ConfigName("app")
            let a = try Key("/a")
            #expect(try await store.fullHistory(of: a, in: config).map(\.item?.text) == ["two", "one"])
            #expect(try await store.get(a, in: config, atRevision: 1)?.text == "one")
            #expect(try await store.configInfo(config).keyCount == 1, "counted by the migration")
            #expect(try await store.configInfo(config).byteCount == 5, "/a and \"two\", counted by the migration")
            let result = try await store.transact(Transaction(success: [.put(a, Data(text: "three")), .put(try Key("/b"), Data(text: "b"))]), in: config)
            #expect(try await store.configInfo(config).keyCount == 2)
            #expect(result.revision == 3)
            let events = try await store.events(in: config, scope: .prefix(.root), from: 1, limit: 10).events
            #expect(events.map(\.revision) == [1, 2, 3, 3])
            #expect(events.map(\.key.path) == ["/a", "/a", "/a", "/b"])

            var reopened: OpaquePointer?
            #expect(sqlite3_open(path, &reopened) == SQLITE_OK)
            // The store just closed may still hold the file a moment (its writer closes on its own thread).
            sqlite3_busy_timeout(reopened, 10_000)
            var statement: OpaquePointer?
            #expect(sqlite3_prepare_v2(reopened, "PRAGMA user_version", -1, &statement, nil) == SQLITE_OK)
            #expect(sqlite3_step(statement) == SQLITE_ROW)
            #expect(sqlite3_column_int(statement, 0) == Int32(SQLiteStoreFile.supportedSchemaVersion))
            sqlite3_finalize(statement)
            sqlite3_close(reopened)
        }
    }

    /// What a schema 6 file holds that schema 5 did not: each history row's links, the
    /// newest event's place in a key's row, tombstones; and the index it replaced.
    static let backToSchemaFive = """
    \(SQLiteAttributionMigrationTests.dropAttribution)
    ALTER TABLE configs DROP COLUMN byte_count;
    ALTER TABLE history DROP COLUMN seq;
    ALTER TABLE history DROP COLUMN prev_revision;
    ALTER TABLE history DROP COLUMN prev_sub;
    ALTER TABLE history DROP COLUMN jump_revision;
    ALTER TABLE history DROP COLUMN jump_sub;
    ALTER TABLE history DROP COLUMN jump_seq;
    ALTER TABLE kv DROP COLUMN mod_sub;
    DROP TABLE tombstones;
    CREATE INDEX history_by_key ON history (config, key, revision);
    PRAGMA user_version = 5;
    """

    @Test("a schema 5 file gets its keys' history linked: reads at every revision and each key's history read as before")
    func schemaFiveFileLinksItsHistory() async throws {
        try await SQLiteFileTests.withDirectory { directory in
            let path = directory.appendingPathComponent("five.db").path
            let config = try ConfigName("app")
            let keys = try ["/a", "/b", "/c", "/d"].map { try Key($0) }
            var reads: [[Item?]] = []
            var histories: [[Event]] = []
            var latest = Revision.zero
            do {
                let store = try SQLiteStore(path: path)
                _ = try await store.createConfig(config, settings: ConfigSettings(history: .forever))
                for value in 1...9 { try await store.set("/a", "a\(value)", in: config) } // a chain long enough to jump
                try await store.set("/c", "c", in: config)
                _ = try await store.delete(keys[0], in: config, conditions: [])
                try await store.set("/a", "again", in: config)
                _ = try await store.transact(Transaction(success: [.put(keys[1], Data(text: "b")), .put(keys[2], Data(text: "c2")), .put(keys[3], Data(text: "d"))]), in: config)
                _ = try await store.deletePrefix(.root, in: config)
                try await store.set("/b", "b2", in: config)
                _ = try await store.compact(config, through: 4)
                latest = try await store.revision(of: config)
                for revision in 4...latest.rawValue {
                    reads.append(try await keys.asyncMap { try await store.get($0, in: config, atRevision: Revision(revision)) })
                }
                histories = try await keys.asyncMap { try await store.fullHistory(of: $0, in: config) }
            }
            #expect(histories.map(\.count) == [8, 3, 3, 2], "a: 5...9, the delete, again, the prefix delete; the rest compacted")

            var handle: OpaquePointer?
            #expect(sqlite3_open(path, &handle) == SQLITE_OK)
            // The store just closed may still hold the file a moment (its writer closes on its own thread).
            sqlite3_busy_timeout(handle, 10_000)
            #expect(sqlite3_exec(handle, Self.backToSchemaFive, nil, nil, nil) == SQLITE_OK, "\(String(cString: sqlite3_errmsg(handle)))")
            sqlite3_close(handle)

            let store = try SQLiteStore(path: path)
            #expect(Self.tombstones(path) == ["/a", "/c", "/d"], "the deleted keys' newest events")
            for revision in 4...latest.rawValue {
                let now = try await keys.asyncMap { try await store.get($0, in: config, atRevision: Revision(revision)) }
                #expect(now == reads[Int(revision - 4)], "at revision \(revision)")
            }
            #expect(try await keys.asyncMap { try await store.fullHistory(of: $0, in: config) } == histories)
            // Chains go on from the linked history: a re-created key and a live one.
            let recreated = try await store.set("/a", "after", in: config)
            let updated = try await store.set("/b", "b3", in: config)
            #expect(Self.tombstones(path) == ["/c", "/d"], "a key made again keeps its newest event in its row")
            #expect(try await store.fullHistory(of: keys[0], in: config) == [recreated] + histories[0])
            #expect(try await store.fullHistory(of: keys[1], in: config) == [updated] + histories[1])
            #expect(try await store.get(keys[0], in: config, atRevision: 6)?.text == "a6")
            #expect(try await store.get(keys[1], in: config, atRevision: latest) == reads.last?[1])
        }
    }
}

extension SQLiteMigrationTests {
    @Test("a schema 6 file gets its configs' bytes counted, once, so a quota set afterwards holds from the first change")
    func schemaSixFileCountsItsBytes() async throws {
        try await SQLiteFileTests.withDirectory { directory in
            let path = directory.appendingPathComponent("six.db").path
            let config = try ConfigName("app")
            let empty = try ConfigName("empty")
            do {
                let store = try SQLiteStore(path: path)
                _ = try await store.createConfig(config, settings: ConfigSettings())
                _ = try await store.createConfig(empty, settings: ConfigSettings())
                try await store.set("/a", String(repeating: "a", count: 300), in: config)
                try await store.set("/dir/é", "b", in: config)
                try await store.set("/gone", "x", in: config)
                _ = try await store.delete(try Key("/gone"), in: config, conditions: [])
            }
            var handle: OpaquePointer?
            #expect(sqlite3_open(path, &handle) == SQLITE_OK)
            // The store just closed may still hold the file a moment (its writer closes on its own thread).
            sqlite3_busy_timeout(handle, 10_000)
            #expect(sqlite3_exec(handle, SQLiteAttributionMigrationTests.dropAttribution + "ALTER TABLE configs DROP COLUMN byte_count; PRAGMA user_version = 6;", nil, nil, nil) == SQLITE_OK)
            sqlite3_close(handle)

            let store = try SQLiteStore(path: path)
            // "/dir/é" is 7 bytes in UTF-8: counted in bytes, not characters.
            #expect(try await store.configInfo(config).byteCount == 2 + 300 + 7 + 1)
            #expect(try await store.configInfo(empty).byteCount == 0)
            _ = try await store.updateConfig(config, ConfigSettingsPatch(quotaBytes: 312))
            try await expectError(.quotaExceeded, mentioning: ["312", "313"]) { try await store.set("/b", "b", in: config) }
            try await store.set("/c", "", in: config)
            #expect(try await store.configInfo(config).byteCount == 312)
        }
    }

    /// The keys with a tombstone in the file at `path`.
    static func tombstones(_ path: String) -> [String] {
        var handle: OpaquePointer?
        guard sqlite3_open(path, &handle) == SQLITE_OK else { return ["cannot open \(path)"] }
        sqlite3_busy_timeout(handle, 10_000)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, "SELECT key FROM tombstones ORDER BY key", -1, &statement, nil) == SQLITE_OK else {
            return [String(cString: sqlite3_errmsg(handle))]
        }
        defer { sqlite3_finalize(statement) }
        var keys: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { keys.append(String(cString: sqlite3_column_text(statement, 0))) }
        return keys
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
