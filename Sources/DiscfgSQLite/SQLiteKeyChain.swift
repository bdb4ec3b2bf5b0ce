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
    /// One event's place in its key's chain.
    struct Link {
        let position: HistoryPosition
        /// The event's number in the chain, from 1 at its oldest.
        let seq: Int64
        let prev: HistoryPosition?
        /// nil on the oldest event, whose jump is itself.
        let jump: HistoryPosition?
        /// The jump's `seq` (the event's own on the oldest).
        let jumpSeq: Int64
    }

    /// The links a new event gets, as stored.
    struct NewLinks {
        let seq: Int64
        let prev: HistoryPosition?
        let jump: HistoryPosition?
        let jumpSeq: Int64

        /// The bound values for `seq, prev_revision, prev_sub, jump_revision, jump_sub, jump_seq`.
        var arguments: [SQLiteValue] {
            [
                .integer(seq), .optional(prev?.revision), .optional(prev?.sub),
                .optional(jump?.revision), .optional(jump?.sub), .integer(jumpSeq),
            ]
        }
    }

    static let columns = "seq, prev_revision, prev_sub, jump_revision, jump_sub, jump_seq"

    let connection: SQLiteConnection
    let config: String

    /// The key's newest event, from its row or its tombstone.
    func head(_ key: String) throws -> HistoryPosition? {
        let arguments: [SQLiteValue] = [.text(config), .text(key)]
        if let live = try connection.first("SELECT mod_revision, mod_sub FROM kv WHERE config = ? AND key = ?", arguments, Self.position) {
            return live
        }
        return try connection.first("SELECT revision, sub FROM tombstones WHERE config = ? AND key = ?", arguments, Self.position)
    }

    /// The links of the event at `position`, or nil once its row is gone.
    func link(_ position: HistoryPosition) throws -> Link? {
        try connection.first(
            "SELECT \(Self.columns) FROM history WHERE config = ? AND revision = ? AND sub = ?",
            [.text(config), .integer(position.revision), .integer(position.sub)]
        ) { row in
            let seq = row.optionalInteger(0) ?? 1
            return Link(
                position: position, seq: seq,
                prev: Self.position(row, revision: 1, sub: 2), jump: Self.position(row, revision: 3, sub: 4),
                jumpSeq: row.optionalInteger(5) ?? seq
            )
        }
    }

    /// The links for a new event on `key`, read before the key's row or tombstone
    /// moves on to it.
    func links(forNewEventOn key: String) throws -> NewLinks {
        guard let position = try head(key), let head = try link(position) else {
            return NewLinks(seq: 1, prev: nil, jump: nil, jumpSeq: 1)
        }
        // Past the parent's jump when the two spans behind the parent are equal; else
        // to the parent. Spans then grow as a skew-binary number's digits do.
        if let jump = head.jump, let behind = try link(jump), head.seq - head.jumpSeq == head.jumpSeq - behind.jumpSeq {
            return NewLinks(seq: head.seq + 1, prev: position, jump: behind.jump ?? jump, jumpSeq: behind.jumpSeq)
        }
        return NewLinks(seq: head.seq + 1, prev: position, jump: position, jumpSeq: head.seq)
    }

    /// The oldest retained event on `key` with a revision above `revision`.
    func firstEvent(on key: String, after revision: Int64) throws -> HistoryPosition? {
        guard let newest = try head(key), newest.revision > revision, var current = try link(newest) else { return nil }
        while true {
            if let jump = current.jump, jump.revision > revision, let next = try link(jump) {
                current = next
            } else if let prev = current.prev, prev.revision > revision, let next = try link(prev) {
                current = next
            } else {
                return current.position
            }
        }
    }

    /// Visits the key's events older than `before`, newest first, until `body` returns false.
    func walk(_ key: String, before: Int64, _ body: (Event) throws -> Bool) throws {
        var next: HistoryPosition?
        if before > Int64.min, let newer = try firstEvent(on: key, after: before - 1) {
            // The oldest event at or after `before`: the walk starts at the one before it.
            next = try link(newer)?.prev
        } else {
            next = try head(key)
        }
        while let position = next {
            let row = try connection.first(
                "SELECT \(SQLiteRows.eventColumns), prev_revision, prev_sub FROM history WHERE config = ? AND revision = ? AND sub = ?",
                [.text(config), .integer(position.revision), .integer(position.sub)]
            ) { row in (SQLiteRows.event(row), Self.position(row, revision: 16, sub: 17)) }
            guard let (event, prev) = row, try body(event) else { return }
            next = prev
        }
    }

    /// The event at `position`, or nil once its row is gone.
    func event(_ position: HistoryPosition) throws -> Event? {
        try connection.first(
            "SELECT \(SQLiteRows.eventColumns) FROM history WHERE config = ? AND revision = ? AND sub = ?",
            [.text(config), .integer(position.revision), .integer(position.sub)], SQLiteRows.event
        )
    }

    private static func position(_ row: SQLiteRow) -> HistoryPosition {
        HistoryPosition(revision: row.integer(0), sub: row.integer(1))
    }

    private static func position(_ row: SQLiteRow, revision: Int32, sub: Int32) -> HistoryPosition? {
        guard let value = row.optionalInteger(revision) else { return nil }
        return HistoryPosition(revision: value, sub: row.optionalInteger(sub) ?? 0)
    }

    /// Links the history of a file written before chains (schema 5), key by key in the
    /// order of its index of history by key, and finds each key's newest event: its
    /// row's `mod_sub`, or a tombstone for a key that is gone.
    static func linkExisting(_ connection: SQLiteConnection) throws {
        let keys = try connection.query("SELECT DISTINCT config, key FROM history INDEXED BY history_by_key ORDER BY config, key") { row in
            (row.text(0), row.text(1))
        }
        for (config, key) in keys {
            let rows = try connection.query(
                "SELECT revision, sub FROM history INDEXED BY history_by_key WHERE config = ? AND key = ? ORDER BY revision, sub",
                [.text(config), .text(key)], position
            )
            // jumps[i]: the index of event i's jump (the oldest's is itself).
            var jumps: [Int] = []
            jumps.reserveCapacity(rows.count)
            for (index, row) in rows.enumerated() {
                var jump = 0
                if index > 0 {
                    let parent = index - 1
                    let parentJump = jumps[parent]
                    let behind = jumps[parentJump]
                    jump = parent - parentJump == parentJump - behind ? behind : parent
                }
                jumps.append(jump)
                let links = NewLinks(
                    seq: Int64(index + 1), prev: index > 0 ? rows[index - 1] : nil,
                    jump: index > 0 ? rows[jump] : nil, jumpSeq: Int64(jump + 1)
                )
                try connection.run(
                    "UPDATE history SET seq = ?, prev_revision = ?, prev_sub = ?, jump_revision = ?, jump_sub = ?, jump_seq = ? WHERE config = ? AND revision = ? AND sub = ?",
                    links.arguments + [.text(config), .integer(row.revision), .integer(row.sub)]
                )
            }
            guard let newest = rows.last else { continue }
            let live = try connection.run(
                "UPDATE kv SET mod_sub = ? WHERE config = ? AND key = ? AND mod_revision = ?",
                [.integer(newest.sub), .text(config), .text(key), .integer(newest.revision)]
            )
            let exists = try connection.first("SELECT 1 FROM kv WHERE config = ? AND key = ?", [.text(config), .text(key)]) { _ in true } ?? false
            if live == 0, !exists {
                try connection.run(
                    "INSERT INTO tombstones (config, key, revision, sub) VALUES (?, ?, ?, ?)",
                    [.text(config), .text(key), .integer(newest.revision), .integer(newest.sub)]
                )
            }
        }
    }
}
