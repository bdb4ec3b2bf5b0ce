import DiscfgCore
import DiscfgJSON
import Foundation
import Testing

/// The flag set rule on the write path costs nothing to a change that writes no flag set:
/// it reads `/flags/` only for a change that puts a key there.
@Suite("Flag set enforcement reads /flags/ only for changes that write there")
struct FlagSetEnforcementCostTests {
    /// A transaction over a dictionary that records every range it is asked to read.
    final class Reads: @unchecked Sendable {
        var ranges: [KeyRange] = []
    }

    struct RecordingTransaction: ChangeTransaction {
        let config = try! ConfigName("app")
        let now = Date(milliseconds: 1_767_225_600_000)
        let attribution: Attribution? = nil
        var items: [Key: Item] = [:]
        var revision = Revision.zero
        let reads: Reads

        func currentRevision() throws -> Revision { revision }
        func storedItem(_ key: Key) throws -> Item? { items[key] }
        func storedItems(in range: KeyRange) throws -> [Item] {
            reads.ranges.append(range)
            return items.values.filter { item in item.key.path >= range.lower && (range.upper.map { item.key.path < $0 } ?? true) }.sorted { $0.key < $1.key }
        }
        func dueExpirations() throws -> [Item] { [] }
        mutating func record(_ event: Event) throws {
            revision = event.revision
            items[event.key] = event.item
        }
    }

    static func readsFlags(_ reads: Reads) -> Bool {
        let flags = ConfigFlags.prefix.range
        return reads.ranges.contains { range in
            (range.upper.map { flags.lower < $0 } ?? true) && (flags.upper.map { range.lower < $0 } ?? true)
        }
    }

    @Test("a set, a transaction and a delete outside /flags/ read nothing under it; a set of a flag set does")
    func readsOnlyWhenAFlagSetIsWritten() throws {
        let reads = Reads()
        var transaction = RecordingTransaction(reads: reads)
        let set = #"{"flags": {"new-ui": {"state": "ENABLED", "variants": {"on": true}, "defaultVariant": "on"}}}"#
        _ = try transaction.set(Key("/flags/web"), to: Data(set.utf8), options: SetOptions())
        #expect(Self.readsFlags(reads))

        reads.ranges = []
        _ = try transaction.set(Key("/app/host"), to: Data("db1".utf8), options: SetOptions())
        _ = try transaction.set(Key("/flagsmith"), to: Data("x".utf8), options: SetOptions())
        _ = try transaction.delete(Key("/app/host"), conditions: [])
        _ = try transaction.delete(Key("/flags/web"), conditions: [])
        #expect(!Self.readsFlags(reads), "\(reads.ranges)")
    }
}
