import DiscfgCore

/// The rows of `configs` that changes read and move (a config's revision, key and byte
/// counts and time of its last change), kept for the changes of one group commit: each row is read
/// once per group and written once, just before the group commits, where every change
/// used to read it and write it again.
///
/// The writer keeps one for its groups; a read, or a write that is not a change of keys,
/// uses a fresh one that lives as long as it does. Used by one thread at a time.
final class SQLiteConfigRows {
    struct Row {
        var revision: Revision
        /// The config's settings as stored (JSON), for pruning history.
        let settings: String
        /// The config's byte count as read, before this group's changes.
        let byteCount: Int64
        /// Keys added less keys deleted by this group's changes.
        var keyCountChange: Int64 = 0
        /// What this group's changes did to the byte count.
        var byteCountChange: Int64 = 0
        /// When this group last changed the config, if it did (milliseconds since 1970).
        var modifiedAt: Int64?
    }

    private static let read = SQLiteStatement("SELECT revision, settings, byte_count FROM configs WHERE name = ?")
    private static let move = SQLiteStatement(
        "UPDATE configs SET revision = ?, modified_at = ?, key_count = key_count + ?, byte_count = byte_count + ? WHERE name = ?"
    )

    /// The rows read or moved since the last ``forget()``, by config name; a change that
    /// is undone puts back what they were before it.
    var rows: [String: Row] = [:]

    /// The config's row, read from the table the first time; nil when there is no such config.
    func row(_ config: ConfigName, _ connection: SQLiteConnection) throws -> Row? {
        if let row = rows[config.rawValue] { return row }
        guard let row = try connection.first(Self.read, [.text(config.rawValue)], {
            Row(revision: Revision(UInt64(clamping: $0.integer(0))), settings: $0.text(1), byteCount: $0.integer(2))
        }) else {
            return nil
        }
        rows[config.rawValue] = row
        return row
    }

    /// Notes a change of `config` (read with ``row(_:_:)`` first) to `revision`.
    func move(_ config: ConfigName, to revision: Revision, at milliseconds: Int64, keyCountChange: Int, byteCountChange: Int) {
        guard var row = rows.removeValue(forKey: config.rawValue) else { return }
        row.revision = revision
        row.modifiedAt = milliseconds
        row.keyCountChange += Int64(keyCountChange)
        row.byteCountChange += Int64(byteCountChange)
        rows[config.rawValue] = row
    }

    /// The config's byte count with this group's changes so far (read with ``row(_:_:)`` first).
    func byteCount(_ config: ConfigName) -> Int {
        rows[config.rawValue].map { Int(clamping: $0.byteCount + $0.byteCountChange) } ?? 0
    }

    /// Writes every moved row to the table; they are read and written alike afterwards.
    func write(_ connection: SQLiteConnection) throws {
        for (name, row) in rows {
            guard let modifiedAt = row.modifiedAt else { continue }
            try connection.run(
                Self.move, [.integer(row.revision.storageValue), .integer(modifiedAt), .integer(row.keyCountChange), .integer(row.byteCountChange), .text(name)]
            )
            rows[name] = Row(revision: row.revision, settings: row.settings, byteCount: row.byteCount + row.byteCountChange)
        }
    }

    /// Forgets every row: the table may have changed since they were read.
    func forget() {
        rows.removeAll(keepingCapacity: true)
    }
}
