import DiscfgCore
@testable import DiscfgSQLite
import Foundation
import Testing

/// The shape of the SQLite store's key chains: the jump rule in numbers, and the rows
/// the store links by it. (What reads through the chains return is checked by the
/// conformance suite, on every store.)
@Suite("SQLite key chains")
struct SQLiteKeyChainTests {
    @Test("jumpSeq(of:) gives the jump the rule makes, applied from the first event, for 200,000 events")
    func jumpNumbersFollowTheRule() {
        // The rule as links(after:) applies it, on numbers alone: past the parent's jump
        // when the two spans behind the parent are equal, else to the parent.
        var jumps: [Int64] = [0, 1]
        for seq in Int64(2)...200_000 {
            let parent = seq - 1
            let jump = jumps[Int(parent)]
            let next = parent > 1 && parent - jump == jump - jumps[Int(jump)] ? jumps[Int(jump)] : parent
            jumps.append(next)
            #expect(SQLiteKeyChain.jumpSeq(of: seq) == next, "seq \(seq)")
            if SQLiteKeyChain.jumpSeq(of: seq) != next { return }
        }
        #expect(SQLiteKeyChain.jumpSeq(of: 1) == 1)
        #expect(SQLiteKeyChain.jumpSeq(of: Int64.max) < Int64.max)
    }

    @Test("a key changed 600 times, deleted and re-created on the way, has every row linked as the numbers say")
    func storedLinksMatchTheNumbers() async throws {
        try await SQLiteFileTests.withDirectory { directory in
            let store = try SQLiteStore(path: directory.appendingPathComponent("chains.db").path)
            let config = try ConfigName("chains")
            let key = try Key("k")
            _ = try await store.createConfig(config, settings: ConfigSettings(history: .forever))
            for round in 0..<600 {
                if round % 97 == 96 {
                    _ = try await store.delete(key, in: config, conditions: [])
                } else {
                    _ = try await store.set(key, to: Data("\(round)".utf8), in: config, options: SetOptions())
                }
            }
            let rows = try store.readers.read { connection in
                try connection.query("SELECT seq, jump_seq, prev_revision, jump_revision FROM history WHERE config = ? ORDER BY revision", [.text("chains")]) {
                    (seq: $0.integer(0), jumpSeq: $0.integer(1), prev: $0.optionalInteger(2), jump: $0.optionalInteger(3))
                }
            }
            #expect(rows.count == 600)
            Self.expectLinkedAsTheNumbersSay(rows)
        }
    }

    @Test("a key's row carries its newest event's links, and a row from schema 11, without them, gains them with its next change")
    func keyRowsCarryTheNewestEventsLinks() async throws {
        try await SQLiteFileTests.withDirectory { directory in
            let path = directory.appendingPathComponent("links.db").path
            let config = try ConfigName("chains")
            let key = try Key("k")
            do {
                let store = try SQLiteStore(path: path)
                _ = try await store.createConfig(config, settings: ConfigSettings(history: .forever))
                for round in 0..<40 { _ = try await store.set(key, to: Data("\(round)".utf8), in: config, options: SetOptions()) }
                let (row, newest) = try Self.rowAndNewestLinks(store)
                #expect(row == newest)
            }
            // The file as schema 11 wrote it: key rows without links.
            SQLiteFileTests.rewrite(path, SQLiteSchema.newestLinkColumns.map { "ALTER TABLE kv DROP COLUMN \($0);" }.joined() + "PRAGMA user_version = 11;")

            let store = try SQLiteStore(path: path)
            #expect(try Self.rowAndNewestLinks(store).row == nil)
            // Puts over a row with and without links, and one after a delete (a new row).
            for round in 40..<120 {
                if round == 77 {
                    _ = try await store.delete(key, in: config, conditions: [])
                } else {
                    _ = try await store.set(key, to: Data("\(round)".utf8), in: config, options: SetOptions())
                }
            }
            let (row, newest) = try Self.rowAndNewestLinks(store)
            #expect(row != nil && row == newest)
            let rows = try store.readers.read { connection in
                try connection.query("SELECT seq, jump_seq, prev_revision, jump_revision FROM history WHERE config = ? ORDER BY revision", [.text("chains")]) {
                    (seq: $0.integer(0), jumpSeq: $0.integer(1), prev: $0.optionalInteger(2), jump: $0.optionalInteger(3))
                }
            }
            #expect(rows.count == 120)
            Self.expectLinkedAsTheNumbersSay(rows)
        }
    }

    /// Rows of one key's events at revisions 1, 2, …, linked as ``KeyChainRule`` numbers them.
    static func expectLinkedAsTheNumbersSay(_ rows: [(seq: Int64, jumpSeq: Int64, prev: Int64?, jump: Int64?)]) {
        for (index, row) in rows.enumerated() {
            #expect(row.seq == Int64(index + 1))
            #expect(row.jumpSeq == SQLiteKeyChain.jumpSeq(of: row.seq), "seq \(row.seq)")
            // Revisions are 1, 2, … in order, so a row's seq is its revision.
            #expect(row.prev == (index == 0 ? nil : Int64(index)))
            #expect(row.jump == (index == 0 ? nil : row.jumpSeq))
        }
    }

    /// The link columns of config `chains`' one key row (nil while its `seq` is NULL), and
    /// those of the history row its place names.
    static func rowAndNewestLinks(_ store: SQLiteStore) throws -> (row: [Int64?]?, newest: [Int64?]?) {
        try store.readers.read { connection in
            let columns = SQLiteKeyChain.columns
            let row = try connection.first("SELECT \(columns) FROM kv WHERE config = 'chains'") { row in
                row.optionalInteger(0) == nil ? nil : (0..<6).map { row.optionalInteger(Int32($0)) }
            } ?? nil
            let newest = try connection.first(
                "SELECT \(columns) FROM history WHERE config = 'chains' AND (revision, sub) = (SELECT mod_revision, mod_sub FROM kv WHERE config = 'chains')"
            ) { row in (0..<6).map { row.optionalInteger(Int32($0)) } }
            return (row, newest)
        }
    }
}
