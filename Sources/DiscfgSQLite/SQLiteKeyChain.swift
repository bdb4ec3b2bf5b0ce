import DiscfgCore

/// Where a history row is: its revision and its place among that revision's changes.
struct HistoryPosition: Equatable {
    let revision: Int64
    let sub: Int64
}

/// A key's events, linked newest to oldest through their history rows.
///
/// Each row points to the key's previous event (`prev_*`) and to one further back
/// (`jump_*`), chosen by Myers's rule for jump pointers ("An applicative random-access
/// stack", 1983): from the newest event, the oldest one after a given revision is found
/// in O(log n) steps, each a row read by its primary key. The newest event's place is
/// kept with the key, in `kv.mod_sub` beside `mod_revision` while the key exists and in
/// `tombstones` once it is deleted. A change then writes only rows it writes anyway
/// (the key's, its history row), where an index of history by key cost every change a
/// page write more, on a page of its own.
///
/// Compaction deletes rows; a link to a deleted row ends the walk there, which is right
/// for every read still answered (at or after the compacted revision, so every event
/// the walk needs is newer than any deleted one).
struct SQLiteKeyChain {
    /// An event's links, as its history row stores them.
    struct Links {
        /// The event's number in the chain, from 1 at its oldest.
        let seq: Int64
        let prev: HistoryPosition?
        /// nil on the oldest event, whose jump is itself.
        let jump: HistoryPosition?
        /// The jump's `seq` (the event's own on the oldest).
        let jumpSeq: Int64

        /// The links of a chain's first event.
        static let first = Links(seq: 1, prev: nil, jump: nil, jumpSeq: 1)

        /// The bound values for ``SQLiteKeyChain/columns``.
        var arguments: [SQLiteValue] {
            [
                .integer(seq), .optional(prev?.revision), .optional(prev?.sub),
                .optional(jump?.revision), .optional(jump?.sub), .integer(jumpSeq),
            ]
        }
    }

    /// A key's newest event, and whether the key is deleted (a tombstone keeps its place).
    struct Head {
        let position: HistoryPosition
        let deleted: Bool
    }

    static let columns = "seq, prev_revision, prev_sub, jump_revision, jump_sub, jump_seq"

    let connection: SQLiteConnection
    let config: String

    /// The key's newest event, from its row or its tombstone.
    func head(_ key: String) throws -> Head? {
        let arguments: [SQLiteValue] = [.text(config), .text(key)]
        if let live = try connection.first("SELECT mod_revision, mod_sub FROM kv WHERE config = ? AND key = ?", arguments, Self.position) {
            return Head(position: live, deleted: false)
        }
        return try connection.first("SELECT revision, sub FROM tombstones WHERE config = ? AND key = ?", arguments, Self.position)
            .map { Head(position: $0, deleted: true) }
    }

    /// The links of the event at `position`, or nil once its row is gone.
    func links(at position: HistoryPosition) throws -> Links? {
        try connection.first(
            "SELECT \(Self.columns) FROM history WHERE config = ? AND revision = ? AND sub = ?",
            [.text(config), .integer(position.revision), .integer(position.sub)]
        ) { row in
            let seq = row.optionalInteger(0) ?? 1
            return Links(
                seq: seq, prev: Self.position(row, revision: 1, sub: 2), jump: Self.position(row, revision: 3, sub: 4),
                jumpSeq: row.optionalInteger(5) ?? seq
            )
        }
    }

    /// The links of a new event whose key's newest event so far is at `parent`.
    func links(after parent: HistoryPosition?) throws -> Links {
        guard let parent, let head = try links(at: parent) else { return .first }
        // Past the parent's jump when the two spans behind the parent are equal; else
        // to the parent. Spans then grow as a skew-binary number's digits do.
        if let jump = head.jump, let behind = try links(at: jump), head.seq - head.jumpSeq == head.jumpSeq - behind.jumpSeq {
            return Links(seq: head.seq + 1, prev: parent, jump: behind.jump ?? jump, jumpSeq: behind.jumpSeq)
        }
        return Links(seq: head.seq + 1, prev: parent, jump: parent, jumpSeq: head.seq)
    }

    /// The oldest retained event on `key` with a revision above `revision`.
    func firstEvent(on key: String, after revision: Int64) throws -> HistoryPosition? {
        try oldest(on: key, after: revision)?.position
    }

    /// The oldest retained event on `key` with a revision above `revision`, and its links.
    private func oldest(on key: String, after revision: Int64) throws -> (position: HistoryPosition, links: Links)? {
        guard let newest = try head(key)?.position, newest.revision > revision, let found = try links(at: newest) else { return nil }
        var current = (position: newest, links: found)
        while true {
            if let jump = current.links.jump, jump.revision > revision, let found = try links(at: jump) {
                current = (jump, found)
            } else if let prev = current.links.prev, prev.revision > revision, let found = try links(at: prev) {
                current = (prev, found)
            } else {
                return current
            }
        }
    }

    /// Visits the key's events older than `before`, newest first, until `body` returns false.
    func walk(_ key: String, before: Int64, _ body: (Event) throws -> Bool) throws {
        var next: HistoryPosition?
        if before > Int64.min, let newer = try oldest(on: key, after: before - 1) {
            // The oldest event at or after `before`: the walk starts at the one before it.
            next = newer.links.prev
        } else {
            next = try head(key)?.position
        }
        while let position = next, let (event, prev) = try eventAndPrevious(position), try body(event) {
            next = prev
        }
    }

    /// The event at `position`, or nil once its row is gone.
    func event(_ position: HistoryPosition) throws -> Event? {
        try eventAndPrevious(position)?.event
    }

    private func eventAndPrevious(_ position: HistoryPosition) throws -> (event: Event, prev: HistoryPosition?)? {
        try connection.first(
            "SELECT \(SQLiteRows.eventColumns), prev_revision, prev_sub FROM history WHERE config = ? AND revision = ? AND sub = ?",
            [.text(config), .integer(position.revision), .integer(position.sub)]
        ) { row in (SQLiteRows.event(row), Self.position(row, revision: 16, sub: 17)) }
    }

    private static func position(_ row: SQLiteRow) -> HistoryPosition {
        HistoryPosition(revision: row.integer(0), sub: row.integer(1))
    }

    private static func position(_ row: SQLiteRow, revision: Int32, sub: Int32) -> HistoryPosition? {
        guard let value = row.optionalInteger(revision) else { return nil }
        return HistoryPosition(revision: value, sub: row.optionalInteger(sub) ?? 0)
    }

    /// Links the history of a file written before chains (schema 5), key by key in the
    /// order of its index of history by key, with the rule new events follow, and keeps
    /// each key's newest event: in its row's `mod_sub`, or in a tombstone for a key that
    /// is gone.
    static func linkExisting(_ connection: SQLiteConnection) throws {
        let keys = try connection.query("SELECT DISTINCT config, key FROM history INDEXED BY history_by_key ORDER BY config, key") { row in
            (row.text(0), row.text(1))
        }
        for (config, key) in keys {
            let chain = SQLiteKeyChain(connection: connection, config: config)
            let rows = try connection.query(
                "SELECT revision, sub FROM history INDEXED BY history_by_key WHERE config = ? AND key = ? ORDER BY revision, sub",
                [.text(config), .text(key)], position
            )
            var newest: HistoryPosition?
            for row in rows {
                try connection.run(
                    "UPDATE history SET seq = ?, prev_revision = ?, prev_sub = ?, jump_revision = ?, jump_sub = ?, jump_seq = ? WHERE config = ? AND revision = ? AND sub = ?",
                    try chain.links(after: newest).arguments + [.text(config), .integer(row.revision), .integer(row.sub)]
                )
                newest = row
            }
            guard let newest else { continue }
            let live = try connection.run(
                "UPDATE kv SET mod_sub = ? WHERE config = ? AND key = ? AND mod_revision = ?",
                [.integer(newest.sub), .text(config), .text(key), .integer(newest.revision)]
            )
            if live == 0 {
                try connection.run(
                    "INSERT INTO tombstones (config, key, revision, sub) VALUES (?, ?, ?, ?)",
                    [.text(config), .text(key), .integer(newest.revision), .integer(newest.sub)]
                )
            }
        }
    }
}
