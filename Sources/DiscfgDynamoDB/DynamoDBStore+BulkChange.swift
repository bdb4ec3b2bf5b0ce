import DiscfgAWS
import DiscfgCore
import Foundation

extension DynamoDBStore {
    /// Commits a change too large for one transaction as a ``BulkChange``: stage, commit
    /// with one meta write, fold.
    /// - Returns: false when another change committed since `change` read, so nothing was
    ///   written and the caller starts over.
    /// - Throws: when staging or committing failed (everything staged is undone) or the
    ///   outcome of the commit cannot be told.
    func commitBulk(_ change: DynamoDBChange, compacted: ConfigMeta) async throws -> Bool {
        let config = change.config
        guard change.recorded.count <= BulkChange.maxEvents else {
            throw DiscfgError(
                .tooLarge,
                "this change makes \(change.recorded.count) changes to config \"\(config)\", more than one change holds on DynamoDB (\(BulkChange.maxEvents)); it was refused, so nothing was written: import in parts",
                field: "change"
            )
        }
        let planned = try change.planned(compacted: compacted)
        var bulk = BulkChange(id: UUID().uuidString, revision: change.recorded[0].revision, state: .staging, until: clock.now().addingTimeInterval(BulkChange.lease))
        var held = change.meta
        held.bulk = bulk
        held.lock += 1
        do {
            try await putMeta(held, expectedLock: change.meta.lock)
        } catch let error as AWSError where error.code == .conditionalCheckFailed {
            return false
        }

        // Stage: the history items, then the marks, each transaction checking the hold.
        // Every mark's event is then written before it, so an undo finds each marked key
        // from the events past the config's revision, wherever its writer stopped.
        let groups = planned.history.map { [$0] } + planned.keys.map { [bulk.stage($0)] }
        do {
            for (index, chunk) in Self.transactions(groups, reserving: 1).enumerated() {
                if bulk.until.timeIntervalSince(clock.now()) < BulkChange.lease / 2 {
                    bulk.until = clock.now().addingTimeInterval(BulkChange.lease)
                    held.bulk = bulk
                    held.lock += 1
                    try await putMeta(held, expectedLock: held.lock - 1)
                }
                try await transactWrite([.check(key: DynamoDBLayout.metaKey(config), condition: bulk.stillStaging())] + chunk.flatMap { $0 })
                if let hook = afterStagingTransaction.withLock({ $0 }) { await hook(index) }
            }
        } catch {
            await abandon(config, bulk)
            throw Self.stagingFailed(config, error, mapped: connection.mapped(error, operation: "TransactWriteItems"))
        }

        try await runBulkHook(.staging)

        // Commit: one write of the meta item.
        var committed = planned.meta
        committed.lock = held.lock + 1
        bulk.state = .committed
        committed.bulk = bulk
        committed.lastBulkRevision = planned.meta.info.revision
        do {
            try await putMeta(committed, expectedLock: held.lock)
        } catch {
            // The hold was taken over (its lease ran out) or the answer was lost: the meta
            // item tells which.
            let now = try? await meta(config, consistent: true, includingDeleted: true)
            guard let now, now.bulk == bulk else {
                await abandon(config, bulk)
                throw Self.stagingFailed(config, error, mapped: connection.mapped(error, operation: "PutItem"))
            }
        }
        remember(config, committed.info.revision)
        notifier.notify(config)
        try await runBulkHook(.committed)
        // The change is made; folding it is tidying that any later writer also does.
        do {
            try await fold(config, bulk, planned.keys)
            try await release(config, bulk)
        } catch {}
        return true
    }

    private func runBulkHook(_ step: BulkChange.State) async throws {
        if let hook = afterBulkStep.withLock({ $0 }) { try await hook(step) }
    }

    /// Deletes the history items of dropped revisions too large to purge within `change`'s
    /// transaction (see ``DynamoDBChange/revisionsToPurgeAhead(_:)``), so its commit
    /// records them purged.
    func purgeAhead(_ change: inout DynamoDBChange, compacted: ConfigMeta) async throws {
        let ahead = change.revisionsToPurgeAhead(compacted)
        guard !ahead.isEmpty else { return }
        let deletes = ahead.flatMap(\.items).map { [WriteAction.delete(key: $0, condition: nil)] }
        try await writeTolerating(Self.transactions(deletes, reserving: 0), in: change.config)
        change.purgedAhead.formUnion(ahead.map(\.revision.rawValue))
    }

    /// Brings the ``BulkChange`` that `meta` records to an end so that another change can
    /// be made: folds a committed one, waits a while for one being staged whose lease
    /// holds, undoes one whose lease ran out.
    func settle(_ config: ConfigName, _ meta: ConfigMeta) async throws {
        guard let bulk = meta.bulk else { return }
        switch bulk.state {
        case .committed:
            let keys = try await stagedWrites(config, bulk, through: meta.info.revision)
            try await fold(config, bulk, keys)
            try await release(config, bulk)
        case .staging where bulk.until > clock.now():
            // Its writer is at work: wait for it, a little at a time.
            try await Task.sleep(for: .milliseconds(min(250, max(10, Int(bulk.until.timeIntervalSince(clock.now()) * 1000)))))
        case .staging, .undoing:
            try await undo(config, bulk, meta)
        }
    }

    /// The keys a committed ``BulkChange`` still has to fold, from its history items and
    /// the marks on its key items.
    func stagedWrites(_ config: ConfigName, _ bulk: BulkChange, through revision: Revision) async throws -> [KeyWrite] {
        let items = try await connection.queryAll(historyRange(config, from: bulk.revision, through: revision))
        var events: [EventPlace: Event] = [:]
        for (sk, event) in EventCodec.events(items).events {
            if let place = EventPlace(sortKey: sk) { events[place] = event }
        }
        let keys = Set(events.values.map(\.key))
        let found = try await connection.batchGet(keys.map { DynamoDBLayout.itemKey(config, $0) }, consistent: true)
        return found.compactMap { attributes in
            guard let path = attributes[.sk]?.string, let mark = PendingMark(attributes), mark.id == bulk.id, let event = events[mark.place] else { return nil }
            return mark.write(config, Key(stored: path), event: event)
        }
    }

    /// Writes each key's final state, in transactions of whole keys; a transaction refused
    /// because a key was folded already is done again key by key.
    func fold(_ config: ConfigName, _ bulk: BulkChange, _ keys: [KeyWrite]) async throws {
        try await writeTolerating(Self.transactions(keys.map(bulk.fold), reserving: 0), in: config)
    }

    /// Undoes a ``BulkChange`` whose writer stopped or failed: marks it `undoing` (the
    /// writer's staging then fails), takes the marks off, deletes the history items past the
    /// config's revision, and drops the record.
    func undo(_ config: ConfigName, _ bulk: BulkChange, _ meta: ConfigMeta) async throws {
        var meta = meta
        if bulk.state != .undoing {
            var undoing = bulk
            undoing.state = .undoing
            meta.bulk = undoing
            meta.lock += 1
            do {
                try await putMeta(meta, expectedLock: meta.lock - 1)
            } catch let error as AWSError where error.code == .conditionalCheckFailed {
                return
            }
        }
        let items = try await connection.queryAll(historyRange(config, from: meta.info.revision.next, through: Revision(UInt64.max)))
        let keys = Set(EventCodec.events(items).events.map(\.event.key))
        let found = try await connection.batchGet(keys.map { DynamoDBLayout.itemKey(config, $0) }, consistent: true)
        var groups = found.compactMap { bulk.unstage($0, config: config) }.map { [$0] }
        groups += items.compactMap { item in item[.sk]?.string.map { [.delete(key: DynamoDBLayout.key(DynamoDBLayout.historyPK(config), $0), condition: nil)] } }
        try await writeTolerating(Self.transactions(groups, reserving: 0), in: config)
        try await release(config, bulk)
    }

    /// Best effort, after staging failed: undo what was staged, now or by a later writer.
    func abandon(_ config: ConfigName, _ bulk: BulkChange) async {
        guard let meta = try? await meta(config, consistent: true, includingDeleted: true), meta.bulk?.id == bulk.id,
              meta.bulk?.state != .committed
        else { return }
        try? await undo(config, bulk, meta)
    }

    /// Drops the record of `bulk` from the meta item, if it is still there.
    func release(_ config: ConfigName, _ bulk: BulkChange) async throws {
        for _ in 0..<Self.releaseAttempts {
            guard var meta = try await meta(config, consistent: true, includingDeleted: true), meta.bulk?.id == bulk.id else { return }
            meta.bulk = nil
            meta.lock += 1
            do {
                try await putMeta(meta, expectedLock: meta.lock - 1)
                return
            } catch let error as AWSError where error.code == .conditionalCheckFailed {
                continue
            }
        }
    }

    static let releaseAttempts = 8

    /// Runs `transactions`; one refused is run again action group by action group, and a
    /// group refused only on its condition is skipped (another writer did it).
    func writeTolerating(_ transactions: [[[WriteAction]]], in config: ConfigName) async throws {
        for groups in transactions {
            do {
                try await transactWrite(groups.flatMap { $0 })
                continue
            } catch let error as AWSError where error.code == .transactionCanceled {
            } catch {
                throw connection.mapped(error, operation: "TransactWriteItems")
            }
            for group in groups {
                var attempt = 0
                while true {
                    do {
                        try await transactWrite(group)
                    } catch let error as AWSError where error.code == .transactionCanceled {
                        let codes = Set(error.cancellationReasons.map(\.code)).subtracting(["None"])
                        if codes == ["ConditionalCheckFailed"] { break }
                        attempt += 1
                        try await raceBackoff(attempt, config: config)
                        continue
                    } catch {
                        throw connection.mapped(error, operation: "TransactWriteItems")
                    }
                    break
                }
            }
        }
    }

    /// Groups of actions packed into transactions: a group never split, each transaction
    /// within DynamoDB's action and byte limits less `reserving` actions.
    static func transactions(_ groups: [[WriteAction]], reserving: Int) -> [[[WriteAction]]] {
        var transactions: [[[WriteAction]]] = []
        var current: [[WriteAction]] = []
        var count = 0
        var bytes = 0
        for group in groups {
            let size = group.reduce(0) { $0 + $1.itemSize }
            if !current.isEmpty, count + group.count > DynamoDBChange.maxActions - reserving || bytes + size > DynamoDBChange.maxTransactionBytes {
                transactions.append(current)
                current = []
                count = 0
                bytes = 0
            }
            current.append(group)
            count += group.count
            bytes += size
        }
        if !current.isEmpty { transactions.append(current) }
        return transactions
    }

    /// The error of a ``BulkChange`` that could not be staged or committed: nothing of it
    /// stays.
    static func stagingFailed(_ config: ConfigName, _ error: any Error, mapped: any Error) -> any Error {
        guard let error = error as? AWSError, error.code == .transactionCanceled || error.code == .conditionalCheckFailed else { return mapped }
        return DiscfgError(
            .unavailable,
            "this change to config \"\(config)\" was held up while it was written (a change of many keys takes several DynamoDB transactions, and its hold on the config ran out) and was undone; nothing was changed: try again",
            field: "change"
        )
    }
}
