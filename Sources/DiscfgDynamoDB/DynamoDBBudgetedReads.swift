import DiscfgCore
import Foundation

/// The reads of a transaction whose ``Transaction/readBudget`` refuses past it (the REST
/// API's), planned so the store stops reading near the budget instead of reading every
/// range whole before the rules run.
///
/// Comparisons and deletes need their ranges whole, and are read so. The comparisons are
/// then evaluated on what was read, as the rules will evaluate them, which names the
/// branch that runs: only its reads' ranges are read, page by page, until what they hold
/// (live keys the transaction's ``KeyFilter`` admits, costed as the budget costs them)
/// passes the budget plus the branch's ``slack(succeeded:stored:now:)``. A range read only
/// in part is a ``PartialRange``.
///
/// Why stopping there is exact: the branch runs every one of its reads, and each range
/// read here is read by at least one of them, so they return at least what was read,
/// less what the branch's own changes remove first: at most a key and a value per put,
/// patch or delete of a key, and what a prefix or range delete's range holds, which is read
/// whole. Past budget + that slack the reads are sure to pass the budget: the transaction
/// is refused, whether the rules get there first or a read runs off the part that was read.
struct BudgetedReads: Sendable {
    /// The transaction, with a budget of ``ReadBudget/Past/refuse``.
    let transaction: Transaction
    let budget: ReadBudget


    /// The budgeted reads of `transaction`; nil when it has no budget that refuses, or
    /// nests transactions (whose ranges are then read whole: which branch of each runs is
    /// not planned here).
    init?(_ transaction: Transaction) {
        guard let budget = transaction.readBudget, budget.pastBudget == .refuse, !transaction.nests else { return nil }
        self.transaction = transaction
        self.budget = budget
    }

    /// The ranges read whole: the comparisons' and the deletes', of both branches.
    var wholeRanges: [KeyRange] {
        var ranges: [KeyRange] = []
        for comparison in transaction.compares {
            switch comparison.subject {
            case .key: break
            case .prefix(let prefix): ranges.append(prefix.range)
            case .range(let range): ranges.append(range)
            }
        }
        for operation in transaction.success + transaction.failure {
            switch operation {
            case .deletePrefix(let prefix): ranges.append(prefix.range)
            case .deleteRange(let range): ranges.append(range)
            case .put, .patch, .delete, .get, .getPrefix, .getRange, .nested: break
            }
        }
        return Self.outermost(ranges)
    }

    /// The ranges the branch that runs reads, outside `whole`.
    func readRanges(succeeded: Bool, outside whole: [KeyRange]) -> [KeyRange] {
        let ranges = (succeeded ? transaction.success : transaction.failure).compactMap { operation -> KeyRange? in
            switch operation {
            case .getPrefix(let prefix): prefix.range
            case .getRange(let range): range
            case .put, .patch, .delete, .deletePrefix, .deleteRange, .get, .nested: nil
            }
        }
        return Self.outermost(ranges).filter { range in !whole.contains { $0.covers(range) } }
    }

    /// Whether the comparisons hold for `stored` (the keys and whole ranges read), as the
    /// rules decide it: keys past their TTL at `now` are absent, and over a range only
    /// the keys the filter admits count.
    func succeeds(_ stored: [Key: Item?], now: Date) -> Bool {
        let filter = transaction.keyFilter
        func live(_ range: KeyRange) -> [Item] {
            stored.values.compactMap { $0 }
                .filter { range.contains($0.key) && !$0.isExpired(at: now) && (filter?.admits($0.key) ?? true) }
                .sorted { $0.key < $1.key }
        }
        return transaction.compares.allSatisfy { comparison in
            switch comparison.subject {
            case .key(let key):
                let item = (stored[key] ?? nil).flatMap { $0.isExpired(at: now) ? nil : $0 }
                return comparison.holds(for: item.map { [$0] } ?? [])
            case .prefix(let prefix): return comparison.holds(for: live(prefix.range))
            case .range(let range): return comparison.holds(for: live(range))
            }
        }
    }

    /// The bytes past the budget to read before the branch is sure to be refused: what its
    /// own changes can take out of what its reads return — a key and a value per key it
    /// writes, and the keys (read whole in `stored`) of the ranges it deletes.
    func slack(succeeded: Bool, stored: [Key: Item?], now: Date) -> Int {
        var slack = 0
        var deleted: [KeyRange] = []
        for operation in succeeded ? transaction.success : transaction.failure {
            switch operation {
            case .put, .patch, .delete: slack += Key.maxBytes + Limits.maxValueBytes
            case .deletePrefix(let prefix): deleted.append(prefix.range)
            case .deleteRange(let range): deleted.append(range)
            case .get, .getPrefix, .getRange, .nested: break
            }
        }
        for case let item? in stored.values where deleted.contains(where: { $0.contains(item.key) }) {
            slack += cost(item, now: now)
        }
        return slack
    }

    /// What an item read for the branch's reads costs toward budget + slack: nothing for
    /// a key the reads will not return.
    func cost(_ item: Item, now: Date) -> Int {
        guard !item.isExpired(at: now), transaction.keyFilter?.admits(item.key) ?? true else { return 0 }
        return budget.size(item)
    }

    /// `ranges` without empty ones and those inside another.
    private static func outermost(_ ranges: [KeyRange]) -> [KeyRange] {
        let unique = Set(ranges.filter { !$0.isEmpty })
        return unique.filter { range in !unique.contains { $0 != range && $0.covers(range) } }
            .sorted { $0.lower.utf8.lexicographicallyPrecedes($1.lower.utf8) }
    }
}

/// A range of a transaction's reads read only up to a key (``BudgetedReads``): a read
/// that runs past that key is sure to pass the budget.
struct PartialRange: Sendable {
    let range: KeyRange
    /// The last key read; nil when none was.
    let through: Key?
}

extension DynamoDBStore {
    /// Reads the ranges of the branch of `reads` that runs into `stored`, stopping once
    /// they pass budget + slack.
    /// - Returns: the ranges read whole, and those read in part.
    func readBudgeted(
        _ reads: BudgetedReads, _ config: ConfigName, whole: [KeyRange], into stored: inout [Key: Item?], now: Date
    ) async throws -> (whole: [KeyRange], partial: [PartialRange]) {
        let succeeded = reads.succeeds(stored, now: now)
        var left = reads.budget.bytes + reads.slack(succeeded: succeeded, stored: stored, now: now)
        var complete: [KeyRange] = []
        var partial: [PartialRange] = []
        for range in reads.readRanges(succeeded: succeeded, outside: whole) {
            var query = keyRange(config, from: range.lower, to: range.scanUpper, consistent: true)
            var through: Key?
            var done = false
            while left >= 0 {
                let page = try await connection.queryPage(query)
                for item in (page.Items ?? []).compactMap(ItemCodec.item) where range.contains(item.key) {
                    stored[item.key] = item
                    through = item.key
                    left -= reads.cost(item, now: now)
                }
                guard let next = page.LastEvaluatedKey else {
                    done = true
                    break
                }
                query.ExclusiveStartKey = next
            }
            if done { complete.append(range) } else { partial.append(PartialRange(range: range, through: through)) }
        }
        return (complete, partial)
    }
}
