import DiscfgCore

/// The rows of `configs` that changes read and move (a config's revision, key and byte
/// counts and time of its last change), kept for the changes of one group commit: each row is read
/// once per group and written once, just before the group commits, where every change
/// used to read it and write it again.
///
/// The writer keeps one for its groups, from one commit to the next while no other
/// connection commits (``SQLiteWriter``); a read, or a write that is not a change of keys,
/// uses a fresh one that lives as long as it does. Used by one thread at a time.
final class SQLiteConfigRows {
    struct Row {
        var revision: Revision
        /// The config's settings as stored (JSON), for pruning history.
        let settings: String
        /// The config's byte count as read, before this group's changes.
        var byteCount: Int64
        /// Keys added less keys deleted by this group's changes.
        var keyCountChange: Int64 = 0
        /// What this group's changes did to the byte count.
        var byteCountChange: Int64 = 0
        /// When this group last changed the config, if it did (milliseconds since 1970).
        var modifiedAt: Int64?
        /// ``settings`` decoded, once a change asked for them.
        var decodedSettings: ConfigSettings?
        /// The config's schema keys (``SchemaTarget/namespace``), expired or not, once a
        /// change read them: every change is checked against them, and few write them
        /// (their writes forget these).
        var schemaItems: [Item]?
        /// The config's running deployments' records (``DeploymentKeys/running``), once a
        /// change read them: every change that writes a key is checked against them.
        var runningDeployments: [Item]?
        /// When the config's first TTL runs out, as far as this group knows.
        var firstExpiry = FirstExpiry.unknown
    }

    /// When a config's first TTL runs out: every change expires what is due first, and
    /// most find nothing, known without a query once this is.
    enum FirstExpiry: Equatable {
        /// Not read yet, or forgotten since.
        case unknown
        /// No key has a TTL.
        case never
        /// No key runs out before this (milliseconds since 1970); one may run out then.
        case at(Int64)
    }

    private static let read = SQLiteStatement("SELECT revision, settings, byte_count FROM configs WHERE name = ?")
    private static let move = SQLiteStatement(
        "UPDATE configs SET revision = ?, modified_at = ?, key_count = key_count + ?, byte_count = byte_count + ? WHERE name = ?"
    )

    /// A config's row, by its name.
    struct Entry {
        let name: String
        var row: Row
    }

    /// The rows read or moved since the last ``forget()``; a change that is undone puts
    /// back what they were before it. A list, not a dictionary: a group changes one
    /// config or a few, and each change looks its row up several times, where hashing
    /// the name cost more than comparing it.
    ///
    /// Used by the writer's thread alone, and no access to it calls out while it lasts,
    /// so the runtime's check for overlapping accesses is left out (each change looked
    /// its row up seven times, each check some 60 instructions).
    @exclusivity(unchecked) var rows: [Entry] = []

    private func index(_ config: ConfigName) -> Int? {
        rows.firstIndex { $0.name == config.rawValue }
    }

    /// The config's row, read from the table the first time; nil when there is no such config.
    func row(_ config: ConfigName, _ connection: SQLiteConnection) throws -> Row? {
        if let index = index(config) { return rows[index].row }
        guard let row = try connection.first(Self.read, [.text(config.rawValue)], {
            Row(revision: Revision(UInt64(clamping: $0.integer(0))), settings: $0.text(1), byteCount: $0.integer(2))
        }) else {
            return nil
        }
        rows.append(Entry(name: config.rawValue, row: row))
        return row
    }

    /// The config's settings, decoded the first time (read with ``row(_:_:)`` first).
    func settings(_ config: ConfigName) throws -> ConfigSettings? {
        guard let index = index(config) else { return nil }
        if let settings = rows[index].row.decodedSettings { return settings }
        let settings = try SQLiteRows.settings(rows[index].row.settings)
        rows[index].row.decodedSettings = settings
        return settings
    }

    /// The config's schema keys, expired or not, read with `read` the first time in this
    /// group (the config's row read with ``row(_:_:)`` first).
    func schemaItems(_ config: ConfigName, read: () throws -> [Item]) throws -> [Item] {
        let index = index(config)
        if let index, let items = rows[index].row.schemaItems { return items }
        let items = try read()
        if let index { rows[index].row.schemaItems = items }
        return items
    }

    /// The config's running deployments' records, read with `read` the first time in this
    /// group (the config's row read with ``row(_:_:)`` first).
    func runningDeployments(_ config: ConfigName, read: () throws -> [Item]) throws -> [Item] {
        let index = index(config)
        if let index, let items = rows[index].row.runningDeployments { return items }
        let items = try read()
        if let index { rows[index].row.runningDeployments = items }
        return items
    }

    /// Forgets the config's running deployments read so far: a change wrote a record.
    func forgetRunningDeployments(_ config: ConfigName) {
        if let index = index(config) { rows[index].row.runningDeployments = nil }
    }

    /// Forgets the config's schema keys read so far: a change wrote one.
    func forgetSchemaItems(_ config: ConfigName) {
        if let index = index(config) { rows[index].row.schemaItems = nil }
    }

    /// The earliest time a key of the config runs out, nil when none has a TTL: read with
    /// `read` the first time in this group, then kept as changes go (the config's row
    /// read with ``row(_:_:)`` first).
    func firstExpiry(_ config: ConfigName, read: () throws -> Int64?) throws -> Int64? {
        guard let index = index(config) else { return try read() }
        switch rows[index].row.firstExpiry {
        case .never: return nil
        case .at(let milliseconds): return milliseconds
        case .unknown:
            let first = try read()
            rows[index].row.firstExpiry = first.map(FirstExpiry.at) ?? .never
            return first
        }
    }

    /// Notes a key written with a TTL that runs out at `milliseconds`.
    func noteExpiry(_ config: ConfigName, at milliseconds: Int64) {
        guard let index = index(config) else { return }
        switch rows[index].row.firstExpiry {
        case .unknown: break
        case .never: rows[index].row.firstExpiry = .at(milliseconds)
        case .at(let first): rows[index].row.firstExpiry = .at(min(first, milliseconds))
        }
    }

    /// Forgets when the config's first TTL runs out: its due keys are being expired.
    func forgetFirstExpiry(_ config: ConfigName) {
        if let index = index(config) { rows[index].row.firstExpiry = .unknown }
    }

    /// Notes a change of `config` (read with ``row(_:_:)`` first) to `revision`.
    func move(_ config: ConfigName, to revision: Revision, at milliseconds: Int64, keyCountChange: Int, byteCountChange: Int) {
        guard let index = index(config) else { return }
        rows[index].row.revision = revision
        rows[index].row.modifiedAt = milliseconds
        rows[index].row.keyCountChange += Int64(keyCountChange)
        rows[index].row.byteCountChange += Int64(byteCountChange)
    }

    /// The config's byte count with this group's changes so far (read with ``row(_:_:)`` first).
    func byteCount(_ config: ConfigName) -> Int {
        index(config).map { Int(clamping: rows[$0].row.byteCount + rows[$0].row.byteCountChange) } ?? 0
    }

    /// Writes every moved row to the table; they are read and written alike afterwards.
    func write(_ connection: SQLiteConnection) throws {
        for index in rows.indices {
            let row = rows[index].row
            guard let modifiedAt = row.modifiedAt else { continue }
            try connection.run(
                Self.move,
                [.integer(row.revision.storageValue), .integer(modifiedAt), .integer(row.keyCountChange), .integer(row.byteCountChange), .text(rows[index].name)]
            )
            rows[index].row.byteCount += row.byteCountChange
            rows[index].row.keyCountChange = 0
            rows[index].row.byteCountChange = 0
            rows[index].row.modifiedAt = nil
        }
    }

    /// Forgets every row: the table may have changed since they were read.
    func forget() {
        rows.removeAll(keepingCapacity: true)
    }
}
