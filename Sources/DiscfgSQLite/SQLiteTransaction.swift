import DiscfgCore
import Foundation
import Synchronization

/// A change to one config inside the writer's transaction.
struct SQLiteTransaction: ChangeTransaction {
    let connection: SQLiteConnection
    let config: ConfigName
    let now: Date
    let attribution: Attribution?
    private var revision: Revision
    /// The position of the next change within ``revision`` (a transaction's changes share it).
    private var position: Int64 = 0
    /// The config's settings as stored, decoded when history is pruned.
    private let settings: String
    /// Where the config's row is read and its moves kept until the group commits.
    private let configs: SQLiteConfigRows
    /// What this change's events did to the config's byte count.
    private var byteCountChange = 0
    /// Whether this change's events write any key (rather than only delete keys).
    private var writesKeys = false
    /// Where the newest event is of the key ``storedItem(_:)`` read last.
    private let lastRead = LastRead()

    /// When the config's first key with a TTL runs out: most changes find none due, and
    /// the group's config rows keep this, so one query serves every change of a group.
    private static let firstExpiry = SQLiteStatement(
        "SELECT expires_at FROM kv INDEXED BY kv_expiry WHERE expires_at IS NOT NULL AND config = ? ORDER BY expires_at LIMIT 1"
    )
    // Named, or the planner walks every key of the config instead of the expiry index.
    private static let due = SQLiteStatement(
        "SELECT \(SQLiteRows.itemColumns) FROM kv INDEXED BY kv_expiry WHERE expires_at <= ? AND config = ? ORDER BY key"
    )
    /// A key's stored item, its row's `mod_sub` and its newest event's links.
    private static let itemAndPlace = SQLiteStatement(
        "SELECT \(SQLiteRows.itemColumns), mod_sub, \(SQLiteKeyChain.columns) FROM kv WHERE config = ? AND key = ?"
    )
    /// A key's row, in the order both statements below number their values: the config,
    /// the item, its row's `mod_sub` and its newest event's links.
    private static let rowColumns = ["config"] + SQLiteRows.itemColumns.components(separatedBy: ", ") + ["mod_sub"] + SQLiteKeyChain.columnNames
    private static let putItem = SQLiteStatement(
        "INSERT OR REPLACE INTO kv (\(rowColumns.joined(separator: ", "))) VALUES (\(rowColumns.indices.map { "?\($0 + 1)" }.joined(separator: ", ")))"
    )
    /// A key's row changed where it is: a replace deletes the row and inserts it again,
    /// and in a table whose branch pages hold whole rows that rewrote a branch page in
    /// most commits besides the row's own page. Its values are numbered as ``putItem``'s.
    private static let updateItem = SQLiteStatement(
        "UPDATE kv SET \(rowColumns.enumerated().dropFirst(2).map { "\($1) = ?\($0 + 1)" }.joined(separator: ", ")) WHERE config = ?1 AND key = ?2"
    )
    private static let deleteItem = SQLiteStatement("DELETE FROM kv WHERE config = ? AND key = ?")
    private static let deleteTombstone = SQLiteStatement("DELETE FROM tombstones WHERE config = ? AND key = ?")
    private static let putTombstone = SQLiteStatement("INSERT OR REPLACE INTO tombstones (config, key, revision, sub) VALUES (?, ?, ?, ?)")
    /// A history row's values: its `sub`, `config`, the event's and its links'.
    private static let historyParameters = 2 + Int(SQLiteRows.eventColumnCount) + 6
    private static let appendHistory = SQLiteStatement(
        "INSERT INTO history (sub, config, \(SQLiteRows.eventColumns), \(SQLiteKeyChain.columns)) VALUES (\(Array(repeating: "?", count: historyParameters).joined(separator: ", ")))"
    )
    private static let oldestHistory = SQLiteStatement("SELECT at FROM history WHERE config = ? ORDER BY revision LIMIT 1")

    /// Starts a change, or a read, whose config's row `configs` holds (the writer's rows
    /// for its group, which the group's changes share; else rows of its own); throws
    /// `configNotFound` when the config does not exist.
    init(connection: SQLiteConnection, config: ConfigName, now: Date, attribution: Attribution? = nil, configs: SQLiteConfigRows = SQLiteConfigRows()) throws {
        self.connection = connection
        self.config = config
        self.now = now
        self.attribution = attribution
        self.configs = configs
        guard let row = try configs.row(config, connection) else {
            throw DiscfgError.configNotFound(config)
        }
        revision = row.revision
        settings = row.settings
    }

    func currentRevision() throws -> Revision { revision }

    /// Keeps the place of the key's newest event, and its links, beside the item (``LastRead``).
    func storedItem(_ key: Key) throws -> Item? {
        let read = try connection.first(Self.itemAndPlace, [.text(config.rawValue), .text(key.path)]) { row in
            let item = SQLiteRows.item(row)
            return (item, HistoryPosition(revision: item.modRevision.storageValue, sub: row.integer(8)), SQLiteKeyChain.Links(keyRow: row, from: 9))
        }
        lastRead.keep(read.map { ($0.1, $0.2) }, of: key.path)
        return read?.0
    }

    func storedItems(in range: KeyRange) throws -> [Item] {
        try connection.query(SQLiteRows.itemsInRange, [.text(config.rawValue), .text(range.lower), .text(range.scanUpper)], SQLiteRows.item)
    }

    /// Kept in the group's config rows: every change reads them, and a change that
    /// writes one forgets them (``record(_:)``).
    func storedSchemaItems() throws -> [Item] {
        try configs.schemaItems(config) { try storedItems(in: SchemaTarget.namespaceRange) }
    }

    /// Kept in the group's config rows, as the schemas are.
    func storedRunningDeployments() throws -> [Item] {
        try configs.runningDeployments(config) { try storedItems(in: DeploymentKeys.runningRange) }
    }

    /// Steps through the rows one at a time, so a transaction's read that stops at its
    /// budget, or a compare that fails early, never holds the whole range.
    func forEachStoredItem(in range: KeyRange, _ body: (Item) throws -> Bool) throws {
        try connection.forEach(SQLiteRows.itemsInRange, [.text(config.rawValue), .text(range.lower), .text(range.scanUpper)]) { row in
            try body(SQLiteRows.item(row))
        }
    }

    func dueExpirations() throws -> [Item] {
        let first = try configs.firstExpiry(config) {
            try connection.first(Self.firstExpiry, [.text(config.rawValue)]) { $0.integer(0) }
        }
        guard let first, first <= now.milliseconds else { return [] }
        // Expiring them moves the first expiry on: read again next time.
        configs.forgetFirstExpiry(config)
        return try connection.query(Self.due, [.integer(now.milliseconds), .text(config.rawValue)], SQLiteRows.item)
    }

    mutating func record(_ event: Event) throws {
        position = event.revision == revision ? position + 1 : 0
        let name = SQLiteValue.text(config.rawValue)
        let key = SQLiteValue.text(event.key.path)
        // Read before the key's row or tombstone moves on to this event. Every change
        // records over the item it read (`prevItem`), whose revision names the key's
        // newest event.
        let chain = SQLiteKeyChain(connection: connection, config: config.rawValue)
        let read = lastRead.take(event.key.path, stored: event.prevItem)
        let newest = try chain.newest(event.key.path, stored: event.prevItem, at: read?.place, known: read?.links)
        let links = try chain.links(after: newest.event)
        configs.move(config, to: event.revision, at: now.milliseconds, keyCountChange: event.keyCountChange, byteCountChange: event.byteCountChange)
        if SchemaTarget.namespace.contains(event.key) { configs.forgetSchemaItems(config) }
        if DeploymentKeys.running.contains(event.key) { configs.forgetRunningDeployments(config) }
        if let expiresAt = event.item?.expiresAt { configs.noteExpiry(config, at: expiresAt.milliseconds) }
        byteCountChange += event.byteCountChange
        if let item = event.item {
            writesKeys = true
            let value = SQLiteValue.blob(item.value), contentType = SQLiteValue.optional(item.contentType)
            let version = SQLiteValue.integer(Int64(clamping: item.version)), created = SQLiteValue.integer(item.createRevision.storageValue)
            let modified = SQLiteValue.integer(item.modRevision.storageValue), at = SQLiteValue.integer(item.modifiedAt.milliseconds)
            let expires = SQLiteValue.optional(item.expiresAt?.milliseconds), sub = SQLiteValue.integer(position)
            // A key with a row (the item it records over) is updated in place; should no
            // row match after all, it is inserted.
            var row: [SQLiteValue] = []
            row.reserveCapacity(Self.rowColumns.count)
            row.append(contentsOf: [name, key, value, contentType, version, created, modified, at, expires, sub])
            links.append(to: &row)
            let updated = event.prevItem == nil ? 0 : try connection.run(Self.updateItem, row)
            if updated == 0 {
                try connection.run(Self.putItem, row)
            }
            if newest.deleted {
                try connection.run(Self.deleteTombstone, [name, key])
            }
        } else {
            try connection.run(Self.deleteItem, [name, key])
            try connection.run(Self.putTombstone, [name, key, .integer(event.revision.storageValue), .integer(position)])
        }
        var history: [SQLiteValue] = []
        history.reserveCapacity(Self.historyParameters)
        history.append(.integer(position))
        SQLiteRows.appendEventArguments(config, event, to: &history)
        links.append(to: &history)
        try connection.run(Self.appendHistory, history)
        revision = event.revision
    }

    /// The config's settings as this change found them.
    func storedSettings() throws -> ConfigSettings {
        try configs.settings(config) ?? SQLiteRows.settings(settings)
    }

    /// Refuses this change, before it commits, when it writes a key while an alarm
    /// refuses that, or grows the config past its quota (`settings`, as this change found
    /// them); the writer then undoes it.
    func checkChange(_ settings: ConfigSettings) throws {
        try settings.checkChange(config, size: configs.byteCount(config) - byteCountChange, change: byteCountChange, writesKeys: writesKeys)
    }

    /// Drops history the config's retention no longer keeps (its settings as this change
    /// found them, decoded again unless given), and records how far.
    func pruneHistory(_ oldestRows: OldestHistoryRows, settings decoded: ConfigSettings? = nil) throws {
        let retention = try (decoded ?? SQLiteRows.settings(settings)).history
        let name = SQLiteValue.text(config.rawValue)
        var dropThrough = retention.lastDroppable(revision: revision)
        if dropThrough == nil, let cutoff = retention.cutoff(now: now) {
            // History is in time order, so the oldest row tells whether there is work.
            let due = try oldestRows.mayBeBefore(cutoff.milliseconds, in: config.rawValue, now: now.milliseconds) {
                try connection.first(Self.oldestHistory, [name]) { $0.integer(0) }
            }
            if due {
                dropThrough = try connection.first(
                    "SELECT max(revision) FROM history WHERE config = ? AND at < ?", [name, .integer(cutoff.milliseconds)]
                ) { $0.optionalInteger(0).map { Revision(UInt64(clamping: $0)) } } ?? nil
            }
        }
        guard let dropThrough else { return }
        let changed = try connection.run(
            "UPDATE configs SET compacted_revision = ? WHERE name = ? AND compacted_revision < ?",
            [.integer(dropThrough.storageValue), name, .integer(dropThrough.storageValue)]
        )
        if changed > 0 {
            try Self.dropHistory(connection, config: name, through: dropThrough)
        }
    }

    /// Deletes history at or below `revision`, with the tombstones of keys whose last
    /// event it held.
    static func dropHistory(_ connection: SQLiteConnection, config: SQLiteValue, through revision: Revision) throws {
        try connection.run("DELETE FROM history WHERE config = ? AND revision <= ?", [config, .integer(revision.storageValue)])
        try connection.run("DELETE FROM tombstones WHERE config = ? AND revision <= ?", [config, .integer(revision.storageValue)])
    }
}

/// The place of the newest event of the key a change read last (its row's `mod_revision`
/// and `mod_sub`) and that event's links as the row carries them, kept until the change
/// records an event. A put reads the key's item, then records over it: with what is kept
/// it links the new event without reading the key's row again, or any history row (a row
/// written before rows carried links has the newest event's history row read by its
/// place). Any event recorded ends it, so a place is never used once the row may have
/// moved on.
private final class LastRead {
    private var kept: (key: String, place: HistoryPosition, links: SQLiteKeyChain.Links?)?

    func keep(_ read: (place: HistoryPosition, links: SQLiteKeyChain.Links?)?, of key: String) {
        kept = read.map { (key, $0.place, $0.links) }
    }

    /// The place and links kept for `key`, when it is the place of `stored` (the item the
    /// event records over); forgets what was kept either way.
    func take(_ key: String, stored: Item?) -> (place: HistoryPosition, links: SQLiteKeyChain.Links?)? {
        defer { kept = nil }
        guard let kept, kept.key == key, let stored, kept.place.revision == stored.modRevision.storageValue else { return nil }
        return (kept.place, kept.links)
    }
}

/// What the writer last read of each config's oldest history row, so that a change under
/// a retention of days reads that row only when it may have aged out, not on every
/// change. Errs only towards reading: a change's own row can only be newer (or, with a
/// clock set back, it is counted), pruning only makes the oldest row newer, and an
/// answer is read again after ``recheckMilliseconds`` whatever happened (another
/// process's writes, a group undone).
final class OldestHistoryRows: Sendable {
    static let recheckMilliseconds: Int64 = 60_000

    private struct Oldest {
        /// When the oldest row was written, at most.
        var at: Int64
        /// When that was read.
        var read: Int64
    }

    private let oldest = Mutex<[String: Oldest]>([:])

    /// Whether `config`'s oldest history row may be older than `cutoff`, at `now`;
    /// `readOldest` reads that row's time when what is known does not settle it.
    func mayBeBefore(_ cutoff: Int64, in config: String, now: Int64, readOldest: () throws -> Int64?) throws -> Bool {
        try oldest.withLock { oldest in
            if var known = oldest[config], now >= known.read, now - known.read < Self.recheckMilliseconds {
                // A change made just before wrote its row at `now`; counting it keeps `at`
                // a bound on the oldest row (a settings update wrote none, and errs towards reading).
                known.at = min(known.at, now)
                oldest[config] = known
                if known.at >= cutoff { return false }
            }
            guard let at = try readOldest() else {
                oldest[config] = nil
                return false
            }
            oldest[config] = Oldest(at: at, read: now)
            return at < cutoff
        }
    }

    /// Forgets a deleted config, so names no longer in use are not kept.
    func forget(_ config: String) {
        _ = oldest.withLock { $0.removeValue(forKey: config) }
    }
}
