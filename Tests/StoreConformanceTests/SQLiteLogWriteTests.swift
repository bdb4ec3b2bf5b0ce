import CSQLite
import CSQLiteLog
@testable import DiscfgSQLite
import Foundation
import Testing

/// The writer's connection gathers a commit's pages for the write-ahead log into one
/// write (CSQLiteLog). What it must never change: what a reader sees, what survives
/// closing and reopening, and what a rolled-back transaction leaves behind.
@Suite("SQLite: log writes gathered until the sync")
struct SQLiteLogWriteTests {
    /// A file in WAL mode with table `t`, and a connection to it that commits with a sync
    /// and, when `gathering`, gathers its log writes.
    private static func writer(_ path: String, gathering: Bool) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, create: true)
        _ = try connection.first("PRAGMA journal_mode = WAL") { $0.text(0) }
        try connection.execute("PRAGMA synchronous = FULL; PRAGMA wal_autocheckpoint = 0")
        if gathering { #expect(connection.gatherLogWrites()) }
        try connection.execute("CREATE TABLE IF NOT EXISTS t (k INTEGER PRIMARY KEY, v BLOB NOT NULL)")
        return connection
    }

    /// Every row of `t` as `connection` reads it.
    private static func rows(_ connection: SQLiteConnection) throws -> [Int64: Data] {
        Dictionary(uniqueKeysWithValues: try connection.query("SELECT k, v FROM t") { ($0.integer(0), $0.blob(1)) })
    }

    private static func value(_ key: Int, _ round: Int, size: Int = 3_000) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ key &* 7 &+ round) })
    }

    /// Inserts or replaces `keys` with `round`'s values in one transaction.
    private static func commit(_ connection: SQLiteConnection, keys: Range<Int>, round: Int) throws {
        try connection.execute("BEGIN IMMEDIATE")
        for key in keys {
            _ = try connection.run("INSERT OR REPLACE INTO t (k, v) VALUES (?, ?)", [.integer(Int64(key)), .blob(value(key, round))])
        }
        try connection.execute("COMMIT")
    }

    private static func withFile<T>(_ body: (String) throws -> T) throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("discfg-log-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        return try body(directory.appendingPathComponent("store.db").path)
    }

    @Test("a commit of 20 pages reaches the kernel in one write and one sync, against two writes a page without gathering")
    func oneWritePerCommit() throws {
        try Self.withFile { path in
            var counts: [Bool: (syncs: UInt64, writes: UInt64)] = [:]
            for gathering in [false, true] {
                let writer = try Self.writer(path, gathering: gathering)
                try Self.commit(writer, keys: 0..<20, round: 0)
                let before = writer.logCalls
                try Self.commit(writer, keys: 0..<20, round: gathering ? 2 : 1)
                let after = writer.logCalls
                counts[gathering] = (after.syncs - before.syncs, after.writes - before.writes)
            }
            // 20 rows of 3,000 bytes are at least 20 pages, each a frame header and a page.
            #expect(counts[false]?.writes ?? 0 >= 40)
            #expect(counts[false]?.syncs == 1)
            #expect(counts[true]?.writes == 1)
            #expect(counts[true]?.syncs == 1)
        }
    }

    @Test("commits bigger than one write and than the page cache, rewriting pages they spilled, read back whole by another connection and after reopening")
    func bigCommitsReadBackWhole() throws {
        try Self.withFile { path in
            var expected: [Int64: Data] = [:]
            do {
                let writer = try Self.writer(path, gathering: true)
                // A cache of 8 pages makes the transaction write frames before its commit
                // and read them back: 200 rows of a page each, then 12 rows rewritten in
                // turn, each round reading the pages the round before spilled.
                try writer.execute("PRAGMA cache_size = 8")
                let reader = try SQLiteConnection(path: path, create: false)
                try writer.execute("BEGIN IMMEDIATE")
                var rounds = [(0..<200, 0)]
                for round in 1...6 { rounds.append((0..<12, round)) }
                for (keys, round) in rounds {
                    for key in keys {
                        _ = try writer.run("INSERT OR REPLACE INTO t (k, v) VALUES (?, ?)", [.integer(Int64(key)), .blob(Self.value(key, round))])
                        expected[Int64(key)] = Self.value(key, round)
                    }
                }
                #expect(try Self.rows(reader).isEmpty, "nothing is visible before the commit")
                try writer.execute("COMMIT")
                #expect(writer.logCalls.writes >= 5, "800 KB cannot go in one write of at most 128 KiB")
                #expect(try Self.rows(reader) == expected)
                #expect(try reader.first("PRAGMA integrity_check") { $0.text(0) } == "ok")
            }
            let reopened = try SQLiteConnection(path: path, create: false)
            #expect(try Self.rows(reopened) == expected)
        }
    }

    @Test("a rolled-back transaction that spilled frames leaves nothing, and the next commit is read back whole")
    func rollbackLeavesNothing() throws {
        try Self.withFile { path in
            let writer = try Self.writer(path, gathering: true)
            try writer.execute("PRAGMA cache_size = 8")
            let reader = try SQLiteConnection(path: path, create: false)
            try Self.commit(writer, keys: 0..<10, round: 0)
            try writer.execute("BEGIN IMMEDIATE")
            for key in 0..<200 {
                _ = try writer.run("INSERT OR REPLACE INTO t (k, v) VALUES (?, ?)", [.integer(Int64(key)), .blob(Self.value(key, 9))])
            }
            try writer.execute("ROLLBACK")
            #expect(try Self.rows(reader) == Dictionary(uniqueKeysWithValues: (0..<10).map { (Int64($0), Self.value($0, 0)) }))
            try Self.commit(writer, keys: 5..<15, round: 1)
            let expected = Dictionary(uniqueKeysWithValues: (0..<5).map { (Int64($0), Self.value($0, 0)) } + (5..<15).map { (Int64($0), Self.value($0, 1)) })
            #expect(try Self.rows(reader) == expected)
            #expect(try reader.first("PRAGMA integrity_check") { $0.text(0) } == "ok")
        }
    }

    @Test("a log checkpointed and started over by another connection takes the next commits, read back whole")
    func logStartsOver() throws {
        try Self.withFile { path in
            let writer = try Self.writer(path, gathering: true)
            let other = try SQLiteConnection(path: path, create: false)
            var expected: [Int64: Data] = [:]
            for round in 0..<4 {
                try Self.commit(writer, keys: round * 10..<round * 10 + 30, round: round)
                for key in round * 10..<round * 10 + 30 { expected[Int64(key)] = Self.value(key, round) }
                let checkpoint = try other.first("PRAGMA wal_checkpoint(TRUNCATE)") { [$0.integer(0), $0.integer(1), $0.integer(2)] }
                #expect(checkpoint == [0, 0, 0], "the log was checkpointed whole and truncated")
                #expect(try Self.rows(other) == expected)
            }
            let reopened = try SQLiteConnection(path: path, create: false)
            #expect(try Self.rows(reopened) == expected)
            #expect(try reopened.first("PRAGMA integrity_check") { $0.text(0) } == "ok")
        }
    }

    @Test("the log file answers reads, its size and truncation with what was gathered, and keeps writes elsewhere in order")
    func theLogFileSeesGatheredWrites() throws {
        try Self.withFile { path in
            #expect(discfg_sqlite3_register_log_vfs() == SQLITE_OK)
            var handle: OpaquePointer?
            #expect(sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK)
            defer { sqlite3_close_v2(handle) }
            #expect(sqlite3_exec(handle, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; CREATE TABLE t (v); INSERT INTO t VALUES (1)", nil, nil, nil) == SQLITE_OK)
            #expect(discfg_sqlite3_gather_log_writes(handle) == SQLITE_OK)
            var pointer: UnsafeMutablePointer<sqlite3_file>?
            #expect(sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &pointer) == SQLITE_OK)
            let log = try #require(pointer)
            let methods = try #require(log.pointee.pMethods).pointee
            func write(_ byte: UInt8, _ count: Int, at offset: Int64) -> Int32 {
                [UInt8](repeating: byte, count: count).withUnsafeBytes { methods.xWrite(log, $0.baseAddress, Int32(count), offset) }
            }
            func read(_ count: Int, at offset: Int64) -> (status: Int32, bytes: [UInt8]) {
                var bytes = [UInt8](repeating: 0xEE, count: count)
                let status = bytes.withUnsafeMutableBytes { methods.xRead(log, $0.baseAddress, Int32(count), offset) }
                return (status, bytes)
            }
            func size() -> Int64 {
                var size: Int64 = -1
                _ = methods.xFileSize(log, &size)
                return size
            }
            func writes() -> UInt64 { discfg_sqlite3_log_calls(handle).writes }

            // Past the frames SQLite wrote, where nothing reads them as frames.
            let end = size()
            let before = writes()
            #expect(write(1, 100, at: end) == SQLITE_OK)
            #expect(write(2, 200, at: end + 100) == SQLITE_OK)
            #expect(writes() == before, "appended writes are gathered")
            #expect(read(300, at: end).bytes == [UInt8](repeating: 1, count: 100) + [UInt8](repeating: 2, count: 200))
            #expect(writes() == before + 1, "a read writes what was gathered first, in one write")

            // A write elsewhere writes what was gathered, then starts gathering afresh.
            #expect(write(3, 50, at: end + 300) == SQLITE_OK)
            #expect(write(4, 10, at: end + 20) == SQLITE_OK)
            #expect(write(5, 10, at: end + 30) == SQLITE_OK)
            #expect(size() == end + 350)
            #expect(read(40, at: end).bytes == [UInt8](repeating: 1, count: 20) + [UInt8](repeating: 4, count: 10) + [UInt8](repeating: 5, count: 10))
            #expect(read(50, at: end + 300).bytes == [UInt8](repeating: 3, count: 50))

            // The size counts what was gathered; a sync writes it before the disk is asked.
            func sizeOnDisk() throws -> Int64 {
                try (FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.int64Value ?? -1
            }
            #expect(write(6, 100, at: end + 350) == SQLITE_OK)
            #expect(size() == end + 450)
            #expect(write(7, 50, at: end + 450) == SQLITE_OK)
            #expect(try sizeOnDisk() == end + 450)
            #expect(methods.xSync(log, SQLITE_SYNC_NORMAL) == SQLITE_OK)
            #expect(try sizeOnDisk() == end + 500)

            // A truncation cuts what was gathered too.
            #expect(write(8, 100, at: end + 500) == SQLITE_OK)
            #expect(methods.xTruncate(log, end + 400) == SQLITE_OK)
            #expect(size() == end + 400)
            #expect(read(10, at: end + 395).bytes == [UInt8](repeating: 6, count: 5) + [UInt8](repeating: 0, count: 5))
            #expect(read(10, at: end + 395).status == SQLITE_IOERR | (2 << 8), "SQLITE_IOERR_SHORT_READ")
            #expect(methods.xTruncate(log, end) == SQLITE_OK)

            // The table SQLite wrote is untouched.
            #expect(sqlite3_exec(handle, "INSERT INTO t VALUES (2)", nil, nil, nil) == SQLITE_OK)
            var statement: OpaquePointer?
            #expect(sqlite3_prepare_v2(handle, "SELECT sum(v) FROM t", -1, &statement, nil) == SQLITE_OK)
            defer { sqlite3_finalize(statement) }
            #expect(sqlite3_step(statement) == SQLITE_ROW)
            #expect(sqlite3_column_int64(statement, 0) == 3)
        }
    }
}
