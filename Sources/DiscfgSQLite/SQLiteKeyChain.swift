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
/// `tombstones` once it is deleted; the key's row also carries that event's links (its
/// ``columns``), so a change to a live key reads no history row to link its event. A
/// change then writes only rows it writes anyway (the key's, its history row), where an
/// index of history by key cost every change a page write more, on a page of its own.
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
            var arguments: [SQLiteValue] = []
            arguments.reserveCapacity(6)
            append(to: &arguments)
            return arguments
        }

        /// Appends ``arguments`` to a history row's.
        func append(to arguments: inout [SQLiteValue]) {
            arguments.append(.integer(seq))
            arguments.append(.optional(prev?.revision))
            arguments.append(.optional(prev?.sub))
            arguments.append(.optional(jump?.revision))
            arguments.append(.optional(jump?.sub))
            arguments.append(.integer(jumpSeq))
        }
    }

    /// An event's place and its links.
    struct LinkedEvent {
        let position: HistoryPosition
        let links: Links
    }

    /// The link columns of a history row, and of a key's row for its newest event.
    static let columnNames = ["seq", "prev_revision", "prev_sub", "jump_revision", "jump_sub", "jump_seq"]
    static let columns = columnNames.joined(separator: ", ")
    private static let liveHead = SQLiteStatement("SELECT mod_revision, mod_sub FROM kv WHERE config = ? AND key = ?")
    private static let tombstone = SQLiteStatement("SELECT revision, sub FROM tombstones WHERE config = ? AND key = ?")
    private static let linksAt = SQLiteStatement("SELECT \(columns) FROM history WHERE config = ? AND revision = ? AND sub = ?")
    /// The key's newest event through its row's place (`mod_revision`, `mod_sub`): two
    /// primary-key reads, whatever the number of events its revision holds (a search by
    /// key among a revision's events read every one of them, so a prefix delete after a
    /// 10,000-key import read 10,000² rows).
    private static let liveEvent = SQLiteStatement(
        "SELECT history.sub, \(columnNames.map { "history.\($0)" }.joined(separator: ", ")) FROM kv JOIN history ON history.config = kv.config AND history.revision = kv.mod_revision AND history.sub = kv.mod_sub WHERE kv.config = ? AND kv.key = ?"
    )
    private static let eventAndPreviousAt = SQLiteStatement(
        "SELECT \(SQLiteRows.eventColumns), prev_revision, prev_sub FROM history WHERE config = ? AND revision = ? AND sub = ?"
    )

    let connection: SQLiteConnection
    let config: String

    /// The place of the key's newest event, from its row or its tombstone.
    func head(_ key: String) throws -> HistoryPosition? {
        let arguments: [SQLiteValue] = [.text(config), .text(key)]
        return try connection.first(Self.liveHead, arguments, Self.position) ?? connection.first(Self.tombstone, arguments, Self.position)
    }

    /// The newest event on `key` before a new one is recorded, with its links (nil when
    /// the key has none kept), and whether the key is deleted (its place is in a
    /// tombstone). `stored` is the key's item as stored, when it has one: its row names
    /// its newest event's place, so one statement finds the event and its links; `place`
    /// is that place when the caller read it with the item, and then only the event's
    /// history row is read, or nothing when the row carried the event's links too (`known`).
    func newest(_ key: String, stored: Item?, at place: HistoryPosition? = nil, known: Links? = nil) throws -> (event: LinkedEvent?, deleted: Bool) {
        if stored != nil, let place {
            if let known { return (LinkedEvent(position: place, links: known), false) }
            return (try links(at: place).map { LinkedEvent(position: place, links: $0) }, false)
        }
        if let stored {
            let event = try connection.first(Self.liveEvent, [.text(config), .text(key)]) { row in LinkedEvent(position: HistoryPosition(revision: stored.modRevision.storageValue, sub: row.integer(0)), links: Links(row, from: 1)) }
            return (event, false)
        }
        guard let position = try connection.first(Self.tombstone, [.text(config), .text(key)], Self.position) else { return (nil, false) }
        return (try links(at: position).map { LinkedEvent(position: position, links: $0) }, true)
    }

    /// The links of the event at `position`, or nil once its row is gone.
    func links(at position: HistoryPosition) throws -> Links? {
        try connection.first(Self.linksAt, [.text(config), .integer(position.revision), .integer(position.sub)]) { Links($0, from: 0) }
    }

    /// The links of a new event whose key's newest event so far is `parent`.
    func links(after parent: LinkedEvent?) throws -> Links {
        guard let parent else { return .first }
        let head = parent.links
        // Past the parent's jump when the two spans behind the parent are equal; else to
        // the parent. Spans then grow as a skew-binary number's digits do. The span behind
        // the jump follows from numbers alone (``jumpSeq(of:)``), so the jump's row is
        // read only when the spans match, for where its own jump points; the span is then
        // checked against the row, which decides (rows linked around compacted ones may
        // differ from the numbers, and a jump to the parent is always sound).
        let span = head.seq - head.jumpSeq
        if let jump = head.jump, KeyChainRule.jumpsPastParentJump(parentSeq: head.seq, parentJumpSeq: head.jumpSeq),
           let behind = try links(at: jump), span == head.jumpSeq - behind.jumpSeq {
            return Links(seq: head.seq + 1, prev: parent.position, jump: behind.jump ?? jump, jumpSeq: behind.jumpSeq)
        }
        return Links(seq: head.seq + 1, prev: parent.position, jump: parent.position, jumpSeq: head.seq)
    }

    /// The `seq` that the chain's event number `seq` jumps to (``KeyChainRule/jumpSeq(of:)``).
    static func jumpSeq(of seq: Int64) -> Int64 { KeyChainRule.jumpSeq(of: seq) }

    /// The oldest retained event on `key` with a revision above `revision`.
    func firstEvent(on key: String, after revision: Int64) throws -> HistoryPosition? {
        try oldest(on: key, after: revision)?.position
    }

    /// The oldest retained event on `key` with a revision above `revision`, and its links.
    private func oldest(on key: String, after revision: Int64) throws -> LinkedEvent? {
        guard let newest = try head(key), newest.revision > revision, let found = try links(at: newest) else { return nil }
        var current = LinkedEvent(position: newest, links: found)
        while true {
            if let jump = current.links.jump, jump.revision > revision, let found = try links(at: jump) {
                current = LinkedEvent(position: jump, links: found)
            } else if let prev = current.links.prev, prev.revision > revision, let found = try links(at: prev) {
                current = LinkedEvent(position: prev, links: found)
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
            next = try head(key)
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
        try connection.first(Self.eventAndPreviousAt, [.text(config), .integer(position.revision), .integer(position.sub)]) { row in (SQLiteRows.event(row), Self.position(row, revision: SQLiteRows.eventColumnCount, sub: SQLiteRows.eventColumnCount + 1)) }
    }

    private static func position(_ row: SQLiteRow) -> HistoryPosition {
        HistoryPosition(revision: row.integer(0), sub: row.integer(1))
    }

    fileprivate static func position(_ row: SQLiteRow, revision: Int32, sub: Int32) -> HistoryPosition? {
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
            var newest: LinkedEvent?
            for row in rows {
                let links = try chain.links(after: newest)
                try connection.run(
                    "UPDATE history SET seq = ?, prev_revision = ?, prev_sub = ?, jump_revision = ?, jump_sub = ?, jump_seq = ? WHERE config = ? AND revision = ? AND sub = ?",
                    links.arguments + [.text(config), .integer(row.revision), .integer(row.sub)]
                )
                newest = LinkedEvent(position: row, links: links)
            }
            guard let newest = newest?.position else { continue }
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

extension SQLiteKeyChain.Links {
    /// The links a key's row carries in its ``SQLiteKeyChain/columns`` from `first` on;
    /// nil on a row written before rows carried them.
    init?(keyRow row: SQLiteRow, from first: Int32) {
        guard row.optionalInteger(first) != nil else { return nil }
        self.init(row, from: first)
    }

    /// The links in `row`, whose columns from `first` on are ``SQLiteKeyChain/columns``.
    init(_ row: SQLiteRow, from first: Int32) {
        seq = row.optionalInteger(first) ?? 1
        prev = SQLiteKeyChain.position(row, revision: first + 1, sub: first + 2)
        jump = SQLiteKeyChain.position(row, revision: first + 3, sub: first + 4)
        jumpSeq = row.optionalInteger(first + 5) ?? seq
    }
}
