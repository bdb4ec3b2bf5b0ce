import Foundation

/// What the header of a SQLite store file says, read without opening it as a database,
/// so nothing is created, changed or upgraded: whether it is SQLite at all, its journal
/// mode and the discfg schema version it was written with.
///
/// The header is the file's first page as last copied back from the write-ahead log;
/// when the log holds pages (a process has the store open, or ended before copying
/// them back), the file is asked through a read-only SQLite connection instead, which
/// reads the log too and writes nothing.
///
/// ```swift
/// if let file = try SQLiteStoreFile(path: "/var/lib/discfg/discfg.db"), file.schemaVersion > SQLiteStoreFile.supportedSchemaVersion { … }
/// ```
public struct SQLiteStoreFile: Sendable, Hashable {
    /// Whether the file starts with SQLite's magic string (an empty file does not).
    public var isSQLite: Bool
    /// Whether the file is empty: a store not set up yet, which opening sets up.
    public var isEmpty: Bool
    /// `wal` or `rollback` (SQLite's legacy journal modes: delete, truncate, persist).
    public var journalMode: String
    /// The discfg schema version (SQLite's `user_version`); 0 before discfg set it up.
    public var schemaVersion: Int

    /// The newest schema this build reads and writes; older files are upgraded on opening.
    public static var supportedSchemaVersion: Int { SQLiteSchema.version }

    private static let magic = Array("SQLite format 3\u{0}".utf8)

    /// Reads the header of the file at `path`.
    /// - Throws: the file system's error when the file cannot be read.
    public init(path: String) throws {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let header = [UInt8](try handle.read(upToCount: 100) ?? Data())
        isEmpty = header.isEmpty
        isSQLite = header.count == 100 && Array(header[0..<16]) == Self.magic
        guard isSQLite else {
            journalMode = "none"
            schemaVersion = 0
            return
        }
        // Bytes 18 and 19 are the write and read format versions: 2 for WAL.
        journalMode = header[18] == 2 && header[19] == 2 ? "wal" : "rollback"
        // Bytes 60-63 are the user version, big-endian.
        schemaVersion = header[60..<64].reduce(0) { $0 << 8 | Int($1) }
        let log = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        if log > 0, let version = Self.readOnlyUserVersion(path) {
            schemaVersion = version
        }
    }

    /// `PRAGMA user_version` through a read-only connection, which sees the log's pages.
    private static func readOnlyUserVersion(_ path: String) -> Int? {
        let connection = try? SQLiteConnection(path: path, create: false, readOnly: true)
        return (try? connection?.first("PRAGMA user_version") { $0.integer(0) }).flatMap { $0 }.map(Int.init)
    }
}
