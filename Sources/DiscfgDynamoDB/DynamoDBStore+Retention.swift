import DiscfgAWS
import DiscfgCore
import Foundation

/// History retention on DynamoDB.
///
/// - `.days(N)`: every event carries DynamoDB's native `ttl` (its time + N days + the
///   compaction grace + one day), so DynamoDB deletes old history by itself, never before
///   `compactedRevision` has moved past it. `compactedRevision` moves during changes:
///   the meta item remembers when the oldest retained event happened, so a change knows
///   without a read whether anything fell out; when it did (at most once per
///   ``HistoryRetention/compactionGrace``), one extra `Query` of event times finds the
///   exact new boundary. `updateConfig` compacts exactly, at once.
/// - `.last(N)`: `compactedRevision` is `revision - N`, moved in the same transaction;
///   the events that fell out are deleted in that transaction too, as far as
///   DynamoDB's 100-action limit leaves room (the meta item's `purged` tracks how far),
///   the rest by the next changes. Readers never look at or below `compactedRevision`,
///   so a not-yet-deleted event is never visible.
/// - `.forever`: nothing is dropped.
extension DynamoDBStore {
    /// Moves `meta`'s compacted revision as its retention says at `now`.
    /// - Parameters:
    ///   - exact: compact everything due now, ignoring the grace interval.
    ///   - committed: the newest revision whose event is written (by default `meta`'s
    ///     revision; a change about to commit passes the revision before its own).
    func compact(_ meta: inout ConfigMeta, now: Date, exact: Bool, committed: Revision? = nil) async throws {
        let retention = meta.info.settings.history
        switch retention {
        case .forever:
            meta.oldestEventAt = nil
        case .last:
            if let drop = retention.lastDroppable(revision: meta.info.revision), drop > meta.info.compactedRevision {
                meta.info.compactedRevision = drop
            }
            meta.oldestEventAt = nil
        case .days:
            guard meta.info.compactedRevision < meta.info.revision else {
                meta.oldestEventAt = nil
                return
            }
            let cutoff = retention.cutoff(now: now)?.milliseconds ?? 0
            let grace = Int64((exact ? 0 : retention.compactionGrace) * 1000)
            if let oldest = meta.oldestEventAt, oldest.milliseconds >= cutoff - grace { return }
            var query = historyRange(meta.info.name, from: meta.info.compactedRevision.next, through: meta.info.revision)
            query.project([.sk, .at])
            query.Limit = 200
            var oldest: Date?
            scan: while true {
                let page = try await connection.queryPage(query)
                for attributes in page.Items ?? [] {
                    guard let sk = attributes[.sk]?.string, let revision = DynamoDBLayout.revision(ofHistorySK: sk),
                          let at = attributes[.at]?.int64 else { continue }
                    if at < cutoff {
                        meta.info.compactedRevision = max(meta.info.compactedRevision, revision)
                    } else {
                        // Every revision writes its event, so revisions missing below the
                        // first retained one were removed by DynamoDB's TTL, which only
                        // removes events past the cutoff: they are compacted too.
                        meta.info.compactedRevision = max(meta.info.compactedRevision, Revision(revision.rawValue - 1))
                        oldest = Date(milliseconds: at)
                        break scan
                    }
                }
                guard let next = page.LastEvaluatedKey else { break }
                query.ExclusiveStartKey = next
            }
            if oldest == nil {
                // Nothing retained at all (DynamoDB's TTL removed the rest): all compacted.
                meta.info.compactedRevision = max(meta.info.compactedRevision, committed ?? meta.info.revision)
            }
            meta.oldestEventAt = oldest
        }
    }

    /// The meta item as readers of history must see it: with `.days` retention, its
    /// compacted revision moved past every event the retention let go, even when the
    /// config has been idle since (no change moved it, and DynamoDB's TTL may have removed
    /// those events), so a read from an expired revision reports `compacted` instead of
    /// silently skipping events. Costs one extra `Query` only once the oldest retained
    /// event is past the cutoff.
    func historyMeta(_ name: ConfigName) async throws -> ConfigMeta? {
        guard var meta = try await meta(name, consistent: true) else { return nil }
        if case .days = meta.info.settings.history {
            try await compact(&meta, now: clock.now(), exact: false)
        }
        return meta
    }

    /// A strongly consistent query of the history items (events and their overflow items)
    /// from `from` through `through`, in revision order.
    func historyRange(_ name: ConfigName, from: Revision, through: Revision) -> QueryInput {
        QueryInput(
            table: connection.table,
            key: .partition(DynamoDBLayout.historyPK(name), .sk, from: DynamoDBLayout.revisionSK(from), through: DynamoDBLayout.historyEndSK(through)),
            consistent: true
        )
    }

    /// Deletes the history items of revisions `from...through` (after they were compacted).
    func deleteHistory(_ name: ConfigName, from: Revision, through: Revision) async throws {
        guard from <= through else { return }
        var query = historyRange(name, from: from, through: through)
        query.project([.pk, .sk])
        try await connection.batchDelete(try await connection.queryAll(query))
    }

    /// Gives every retained history item the native `ttl` its retention asks for (none
    /// unless it is kept by age), after the retention changed.
    func retimeHistory(_ name: ConfigName, after: Revision, retention: HistoryRetention) async throws {
        var query = historyRange(name, from: after.next, through: Revision(UInt64.max))
        query.project([.pk, .sk, .at])
        var lastAt = clock.now()
        for attributes in try await connection.queryAll(query) {
            if let at = attributes[.at]?.int64 { lastAt = Date(milliseconds: at) }
            let key = DynamoDBLayout.key(attributes[.pk]?.string ?? "", attributes[.sk]?.string ?? "")
            // Conditioned on existence, so an item DynamoDB's TTL just removed is not recreated.
            let update = retention.historyTTL(at: lastAt).map { Expression("SET \(.ttl) = :ttl", values: [":ttl": .number($0)]) }
                ?? Expression("REMOVE \(.ttl)")
            let input = UpdateItemInput(table: connection.table, key: key, update: update, condition: .itemExists)
            do {
                _ = try await connection.raw("UpdateItem", input, as: IgnoredOutput.self)
            } catch let error as AWSError where error.code == .conditionalCheckFailed {
                continue
            } catch {
                throw connection.mapped(error, operation: "UpdateItem")
            }
        }
    }
}
