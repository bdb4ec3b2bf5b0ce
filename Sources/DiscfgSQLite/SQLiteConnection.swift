import CSQLite
import CSQLiteLog
import DiscfgCore
import Foundation
import Synchronization

/// A value bound to a statement parameter.
enum SQLiteValue {
    case integer(Int64)
    case text(String)
    case blob(Data)
    case null

    static func optional(_ value: Int64?) -> SQLiteValue { value.map(SQLiteValue.integer) ?? .null }
    static func optional(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }
    static func optional(_ value: Data?) -> SQLiteValue { value.map(SQLiteValue.blob) ?? .null }
}

/// One row of a result, read by column index.
struct SQLiteRow {
    fileprivate let statement: OpaquePointer

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
    func optionalInteger(_ column: Int32) -> Int64? { isNull(column) ? nil : integer(column) }
    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(statement, column) else { return "" }
        return String(cString: pointer)
    }
    func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
    func blob(_ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: pointer, count: count)
    }
    func optionalBlob(_ column: Int32) -> Data? { isNull(column) ? nil : blob(column) }
}

/// SQL text a connection runs; ``SQLiteStatement`` for the statements run on every
/// change or read, a plain `String` for the rest.
protocol SQLiteSQL {
    var sql: String { get }
    /// The statement prepared on `connection`, from its cache after the first time.
    func prepared(on connection: SQLiteConnection) throws -> OpaquePointer
}

extension String: SQLiteSQL {
    var sql: String { self }

    func prepared(on connection: SQLiteConnection) throws -> OpaquePointer {
        try connection.cachedStatement(self)
    }
}

/// A statement of the store's hot paths (every change, every read): prepared once per
/// connection and found again by a number fixed when it was made, where a `String` is
/// found by hashing its text and comparing it, over a hundred bytes on every call.
final class SQLiteStatement: SQLiteSQL, Sendable {
    let sql: String
    /// Its place in each connection's cache.
    fileprivate let slot: Int
    private static let made = Atomic<Int>(0)

    init(_ sql: String) {
        self.sql = sql
        slot = Self.made.add(1, ordering: .relaxed).oldValue
    }

    func prepared(on connection: SQLiteConnection) throws -> OpaquePointer {
        try connection.cachedStatement(self)
    }

    /// Ends the connection's transaction, the writer's group or a reader's snapshot.
    static let commit = SQLiteStatement("COMMIT")
}

/// One connection to a SQLite file, with its prepared statements cached.
///
/// Not thread-safe: each connection is used by one thread at a time (the writer's
/// queue, or a reader checked out of the pool).
final class SQLiteConnection {
    private let handle: OpaquePointer
    /// The prepared statements are read for every statement run, by one thread at a
    /// time, and no access to them calls out while it lasts: the runtime's check for
    /// overlapping accesses is left out.
    @exclusivity(unchecked) private var statements: [String: OpaquePointer] = [:]
    /// Prepared ``SQLiteStatement``s, by their slot.
    @exclusivity(unchecked) private var slots: [OpaquePointer?] = []
    let path: String

    /// Set once, before the process's first connection opens.
    private static let processSettings: Void = {
        _ = discfg_sqlite3_skip_memory_counts()
        _ = discfg_sqlite3_register_log_vfs()
    }()

    /// Opens (and for the writer, creates) the database file; `readOnly` opens one that
    /// exists for reading alone, writing nothing to it.
    init(path: String, create: Bool, readOnly: Bool = false) throws {
        self.path = path
        Self.processSettings
        var handle: OpaquePointer?
        let access = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        let flags = access | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw DiscfgError(.unavailable, "cannot open SQLite store \(path): \(message)", field: "store")
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_timeout(handle, 10_000)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        for statement in slots { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that take no parameters.
    func execute(_ sql: String) throws {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status, sql) }
    }

    /// Runs a statement and returns how many rows it changed.
    @discardableResult
    func run(_ sql: some SQLiteSQL, _ arguments: [SQLiteValue] = []) throws -> Int {
        try withBound(sql, arguments) { statement in
            let status = sqlite3_step(statement)
            guard status == SQLITE_DONE || status == SQLITE_ROW else { throw error(status, sql.sql) }
            return Int(sqlite3_changes(handle))
        }
    }

    /// Runs a query and maps each row.
    func query<T>(_ sql: some SQLiteSQL, _ arguments: [SQLiteValue] = [], _ map: (SQLiteRow) throws -> T) throws -> [T] {
        var rows: [T] = []
        try forEach(sql, arguments) { row in
            rows.append(try map(row))
            return true
        }
        return rows
    }

    /// Steps through a query's rows one at a time until `body` returns false, so a caller
    /// that needs only some rows (a page full by bytes) reads no more than those.
    func forEach(_ sql: some SQLiteSQL, _ arguments: [SQLiteValue] = [], _ body: (SQLiteRow) throws -> Bool) throws {
        try withBound(sql, arguments) { statement in
            while true {
                let status = sqlite3_step(statement)
                if status == SQLITE_DONE { return }
                guard status == SQLITE_ROW else { throw error(status, sql.sql) }
                guard try body(SQLiteRow(statement: statement)) else { return }
            }
        }
    }

    /// The first row of a query, mapped, or nil.
    func first<T>(_ sql: some SQLiteSQL, _ arguments: [SQLiteValue] = [], _ map: (SQLiteRow) throws -> T) throws -> T? {
        try withBound(sql, arguments) { statement in
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return nil }
            guard status == SQLITE_ROW else { throw error(status, sql.sql) }
            return try map(SQLiteRow(statement: statement))
        }
    }

    fileprivate func cachedStatement(_ sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        let fresh = try prepare(sql)
        statements[sql] = fresh
        return fresh
    }

    fileprivate func cachedStatement(_ statement: SQLiteStatement) throws -> OpaquePointer {
        if statement.slot < slots.count, let cached = slots[statement.slot] { return cached }
        let fresh = try prepare(statement.sql)
        if statement.slot >= slots.count { slots += Array(repeating: nil, count: statement.slot - slots.count + 1) }
        slots[statement.slot] = fresh
        return fresh
    }

    private func prepare(_ sql: String) throws -> OpaquePointer {
        var fresh: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &fresh, nil)
        guard status == SQLITE_OK, let fresh else { throw error(status, sql) }
        return fresh
    }

    /// Runs `body` with the statement prepared and `arguments` bound to its parameters in
    /// order, then resets it.
    ///
    /// Text and blobs are bound where they lie (SQLITE_STATIC), not copied by SQLite: each
    /// is bound inside the closure that lends its bytes, and `body` runs inside all of
    /// them, so the bytes outlive every step. Afterwards the statement keeps pointers to
    /// them, which nothing reads: every run binds all of a statement's parameters, or
    /// clears them, before it steps.
    private func withBound<R>(_ sql: some SQLiteSQL, _ arguments: [SQLiteValue], _ body: (OpaquePointer) throws -> R) throws -> R {
        let statement = try sql.prepared(on: self)
        // Every parameter is bound below when the arguments name them all (as every
        // caller's do); only fewer would leave a value from the last run to clear.
        if arguments.count < sqlite3_bind_parameter_count(statement) { sqlite3_clear_bindings(statement) }
        defer { sqlite3_reset(statement) }
        return try bind(arguments, from: 0, to: statement, sql) { try body(statement) }
    }

    /// Binds `arguments` from `index` on, then runs `body` inside the closures that lend
    /// the bytes of text and blobs.
    private func bind<R>(
        _ arguments: [SQLiteValue], from index: Int, to statement: OpaquePointer, _ sql: some SQLiteSQL, then body: () throws -> R
    ) throws -> R {
        var index = index
        while index < arguments.count {
            let parameter = Int32(index + 1)
            switch arguments[index] {
            case .integer(let value):
                try check(sqlite3_bind_int64(statement, parameter, value), sql)
            case .null:
                try check(sqlite3_bind_null(statement, parameter), sql)
            case .text(var text):
                // The string's own UTF-8 (made contiguous if it is not), with its length,
                // so a trailing NUL (range ends such as `key + "\u{0}"`) is kept.
                return try text.withUTF8 { bytes in
                    let pointer = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!).assumingMemoryBound(to: CChar.self)
                    // No destructor: SQLITE_STATIC.
                    try check(sqlite3_bind_text(statement, parameter, pointer, Int32(bytes.count), nil), sql)
                    return try bind(arguments, from: index + 1, to: statement, sql, then: body)
                }
            case .blob(let value):
                return try value.withUnsafeBytes { buffer in
                    try check(sqlite3_bind_blob(statement, parameter, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), nil), sql)
                    return try bind(arguments, from: index + 1, to: statement, sql, then: body)
                }
            }
            index += 1
        }
        return try body()
    }

    private func check(_ status: Int32, _ sql: some SQLiteSQL) throws {
        guard status == SQLITE_OK else { throw error(status, sql.sql) }
    }

    /// The rows inserted, updated or deleted through this connection so far: a change
    /// that moved it wrote something.
    var totalChanges: Int64 { sqlite3_total_changes64(handle) }

    /// Whether a transaction is open. SQLite ends one by itself on some failures (a
    /// full disk, an I/O error), undoing everything in it.
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Gathers this connection's writes to the log until the log is synced, one write
    /// per sync in place of two per page (CSQLiteLog). Only for a connection whose
    /// commits sync the log (`synchronous=FULL`), which publishes a commit after that.
    /// False when SQLite's file system is not CSQLiteLog's; the writes then go as they come.
    @discardableResult
    func gatherLogWrites() -> Bool {
        discfg_sqlite3_gather_log_writes(handle) == SQLITE_OK
    }

    /// The syncs of this connection's log, and the writes to it the kernel was handed.
    var logCalls: (syncs: UInt64, writes: UInt64) {
        let calls = discfg_sqlite3_log_calls(handle)
        return (calls.syncs, calls.writes)
    }

    private func error(_ status: Int32, _ sql: String) -> DiscfgError {
        let message = String(cString: sqlite3_errmsg(handle))
        let primary = status & 0xFF
        let hint: String = switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED: " (the file stayed locked by another process for 10 s)"
        case SQLITE_FULL: " (the disk is full)"
        case SQLITE_IOERR: " (the disk failed a read, write or sync)"
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN: " (check the file's permissions)"
        case SQLITE_NOTADB, SQLITE_CORRUPT: " (the file is not a discfg SQLite store)"
        default: ""
        }
        return DiscfgError(.unavailable, "SQLite store \(path): \(message)\(hint)", field: "store")
    }
}

/// Hands a non-Sendable connection across threads where the code guarantees only one
/// thread uses it at a time.
final class ConnectionBox: @unchecked Sendable {
    let connection: SQLiteConnection
    init(_ connection: SQLiteConnection) { self.connection = connection }
}
