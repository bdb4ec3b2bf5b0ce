import CSQLite
import DiscfgCore
import Foundation

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

/// One connection to a SQLite file, with its prepared statements cached.
///
/// Not thread-safe: each connection is used by one thread at a time (the writer's
/// queue, or a reader checked out of the pool).
final class SQLiteConnection {
    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    let path: String

    /// Opens (and for the writer, creates) the database file.
    init(path: String, create: Bool) throws {
        self.path = path
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
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
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that take no parameters.
    func execute(_ sql: String) throws {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw error(status, sql) }
    }

    /// Runs a statement and returns how many rows it changed.
    @discardableResult
    func run(_ sql: String, _ arguments: [SQLiteValue] = []) throws -> Int {
        let statement = try prepared(sql, arguments)
        defer { sqlite3_reset(statement) }
        let status = sqlite3_step(statement)
        guard status == SQLITE_DONE || status == SQLITE_ROW else { throw error(status, sql) }
        return Int(sqlite3_changes(handle))
    }

    /// Runs a query and maps each row.
    func query<T>(_ sql: String, _ arguments: [SQLiteValue] = [], _ map: (SQLiteRow) throws -> T) throws -> [T] {
        let statement = try prepared(sql, arguments)
        defer { sqlite3_reset(statement) }
        var rows: [T] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw error(status, sql) }
            rows.append(try map(SQLiteRow(statement: statement)))
        }
    }

    /// Steps through a query's rows one at a time until `body` returns false, so a caller
    /// that needs only some rows (a page full by bytes) reads no more than those.
    func forEach(_ sql: String, _ arguments: [SQLiteValue] = [], _ body: (SQLiteRow) throws -> Bool) throws {
        let statement = try prepared(sql, arguments)
        defer { sqlite3_reset(statement) }
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw error(status, sql) }
            guard try body(SQLiteRow(statement: statement)) else { return }
        }
    }

    /// The first row of a query, mapped, or nil.
    func first<T>(_ sql: String, _ arguments: [SQLiteValue] = [], _ map: (SQLiteRow) throws -> T) throws -> T? {
        let statement = try prepared(sql, arguments)
        defer { sqlite3_reset(statement) }
        let status = sqlite3_step(statement)
        if status == SQLITE_DONE { return nil }
        guard status == SQLITE_ROW else { throw error(status, sql) }
        return try map(SQLiteRow(statement: statement))
    }

    private func prepared(_ sql: String, _ arguments: [SQLiteValue]) throws -> OpaquePointer {
        let statement: OpaquePointer
        if let cached = statements[sql] {
            statement = cached
        } else {
            var fresh: OpaquePointer?
            let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &fresh, nil)
            guard status == SQLITE_OK, let fresh else { throw error(status, sql) }
            statements[sql] = fresh
            statement = fresh
        }
        sqlite3_clear_bindings(statement)
        for (offset, argument) in arguments.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch argument {
            case .integer(let value): status = sqlite3_bind_int64(statement, index, value)
            // An explicit length, so a bound string keeps a trailing NUL (range ends such as
            // `key + "\u{0}"`) instead of being cut at it.
            case .text(let value): status = sqlite3_bind_text(statement, index, value, Int32(value.utf8.count), transient)
            case .blob(let value):
                status = value.withUnsafeBytes { buffer in
                    sqlite3_bind_blob(statement, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(buffer.count), transient)
                }
            case .null: status = sqlite3_bind_null(statement, index)
            }
            guard status == SQLITE_OK else { throw error(status, sql) }
        }
        return statement
    }

    /// Whether a transaction is open. SQLite ends one by itself on some failures (a
    /// full disk, an I/O error), undoing everything in it.
    var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    private func error(_ status: Int32, _ sql: String) -> DiscfgError {
        let message = String(cString: sqlite3_errmsg(handle))
        let primary = status & 0xFF
        let hint: String = switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED: " (the file stayed locked by another process for 10 s)"
        case SQLITE_FULL: " (the disk is full)"
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_CANTOPEN: " (check the file's permissions)"
        case SQLITE_NOTADB, SQLITE_CORRUPT: " (the file is not a discfg SQLite store)"
        default: ""
        }
        return DiscfgError(.unavailable, "SQLite store \(path): \(message)\(hint)", field: "store")
    }
}

private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// Hands a non-Sendable connection across threads where the code guarantees only one
/// thread uses it at a time.
final class ConnectionBox: @unchecked Sendable {
    let connection: SQLiteConnection
    init(_ connection: SQLiteConnection) { self.connection = connection }
}
