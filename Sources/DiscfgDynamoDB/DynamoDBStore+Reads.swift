import DiscfgCore
import Foundation

extension DynamoDBStore {
    /// The current item is one `GetItem` (eventually consistent unless configured
    /// otherwise: 0.5 RCU for a value up to 4 KB). Only when it misses does a second
    /// `GetItem` of the meta item tell a missing key from a missing config. A read at a
    /// past revision reads meta, key and tombstone strongly consistently and, when the key
    /// changed since, walks the key's chain to the first later event (O(log n) `GetItem`s).
    public func get(_ key: Key, in config: ConfigName, atRevision revision: Revision?) async throws -> Item? {
        let now = clock.now()
        guard let revision else {
            let attributes = try await readingPastMarks { lastTry in
                let stored = try await connection.getItem(DynamoDBLayout.itemKey(config, key), consistent: configuration.consistentReads)
                guard let stored else { return stored }
                return try await (lastTry ? Self.ignoringMarks([stored]) : resolvingMarks([stored], in: config)).first
            }
            if let item = attributes.flatMap(ItemCodec.item) {
                return item.isExpired(at: now) ? nil : item
            }
            guard try await meta(config, consistent: configuration.consistentReads) != nil else { throw DiscfgError.configNotFound(config) }
            return nil
        }
        let heads = try await keyHeads(key, in: config, meta: true)
        guard var meta = heads.meta, !meta.deleting else { throw DiscfgError.configNotFound(config) }
        // As for history reads: events the retention let go may be gone already.
        if case .days = meta.info.settings.history { try await compact(&meta, now: now, exact: false) }
        let current = heads.item.flatMap(ItemCodec.item)
        let info = meta.info
        var later: Event?
        let needsHistory = revision <= info.revision && revision >= info.compactedRevision && !(current.map { $0.modRevision <= revision } ?? false)
        if needsHistory {
            later = try await firstEvent(on: key, in: config, after: max(revision, info.compactedRevision), item: heads.item, tombstone: heads.tombstone)
        }
        return try PastRead.resolve(
            key: key, at: revision, configRevision: info.revision, compacted: info.compactedRevision,
            current: current, now: now, firstEventAfter: { _ in later }
        )
    }

    /// A strongly consistent query of the `byKey` index for `key`'s events in `from...through`.
    func historyByKey(_ key: Key, in config: ConfigName, from: Revision, through: Revision, newestFirst: Bool, limit: Int) -> QueryInput {
        QueryInput(
            table: connection.table, index: .byKey,
            key: .partition(DynamoDBLayout.historyPK(config), .lsk, from: DynamoDBLayout.historyKeySK(key, from), through: DynamoDBLayout.historyKeySK(key, through)),
            consistent: true, limit: limit, newestFirst: newestFirst
        )
    }

    /// The events stored under these sort keys, in the order given, with overflowed
    /// values put back.
    func events(at sortKeys: [String], in config: ConfigName) async throws -> [Event] {
        let found = try await eventsBySortKey(sortKeys, in: config)
        return sortKeys.compactMap { found[$0] }
    }

    /// The events stored under these sort keys, by sort key.
    func eventsBySortKey(_ sortKeys: [String], in config: ConfigName) async throws -> [String: Event] {
        try await eventItems(sortKeys, in: config).mapValues(\.event)
    }

    /// The events stored under these sort keys and their history items, by sort key.
    func eventItems(_ sortKeys: [String], in config: ConfigName) async throws -> [String: (event: Event, attributes: Attributes)] {
        guard !sortKeys.isEmpty else { return [:] }
        let items = try await connection.batchGet(sortKeys.map { DynamoDBLayout.key(DynamoDBLayout.historyPK(config), $0) }, consistent: true)
        let overflowKeys = items.filter(EventCodec.hasOverflow).compactMap { $0[.sk]?.string }
            .map { DynamoDBLayout.key(DynamoDBLayout.historyPK(config), DynamoDBLayout.overflowSK(ofEventSK: $0)) }
        let overflow = try await connection.batchGet(overflowKeys, consistent: true)
        var bySK: [String: Attributes] = [:]
        for item in overflow { if let sk = item[.sk]?.string { bySK[sk] = item } }
        var bySortKey: [String: (event: Event, attributes: Attributes)] = [:]
        for item in items {
            guard let sk = item[.sk]?.string, let event = EventCodec.event(item, overflow: bySK[DynamoDBLayout.overflowSK(ofEventSK: sk)]) else { continue }
            bySortKey[sk] = (event, item)
        }
        return bySortKey
    }

    public func list(in config: ConfigName, _ query: ListQuery) async throws -> ListPage {
        try await list(in: config, query, consistent: configuration.consistentReads)
    }

    /// A listing, strongly consistent when asked (an export's pages must not be stale).
    ///
    /// A listing is not isolated from changes (DynamoDB's `Query` is not), except from a
    /// ``BulkChange``: one that commits while a listing reads makes it read again, so a
    /// listing shows all of it or none.
    func list(in config: ConfigName, _ query: ListQuery, consistent: Bool) async throws -> ListPage {
        try await readingPastMarks { lastTry in try await listOnce(in: config, query, consistent: consistent, lastTry: lastTry) }
    }

    private func listOnce(in config: ConfigName, _ query: ListQuery, consistent: Bool, lastTry: Bool) async throws -> ListPage {
        var folder = try ListingFolder(query)
        let now = clock.now()
        guard let meta = try await meta(config, consistent: consistent) else { throw DiscfgError.configNotFound(config) }
        let end = query.prefix.upperBound
        var start = folder.scanStart
        let batch = query.recursive ? query.limit + 1 : 64
        var newest = meta.info.revision
        scan: while !folder.isDone, start.utf8.lexicographicallyPrecedes(end.utf8) {
            var input = keyRange(config, from: start, to: end, consistent: consistent, limit: batch)
            while true {
                let page = try await connection.queryPage(input)
                let items = try await lastTry ? Self.ignoringMarks(page.Items ?? []) : resolvingMarks(page.Items ?? [], in: config)
                for item in items.compactMap(ItemCodec.item) where query.prefix.contains(item.key) && !item.isExpired(at: now) {
                    newest = max(newest, item.modRevision)
                    if let jump = folder.offer(item) {
                        start = jump
                        continue scan
                    }
                    if folder.isDone { break scan }
                }
                guard let next = page.LastEvaluatedKey else { break scan }
                input.ExclusiveStartKey = next
            }
        }
        if !lastTry, newest > meta.info.revision, let after = try await self.meta(config, consistent: true), after.lastBulkRevision > meta.info.revision {
            // A change of many keys committed while this listing read: read again.
            throw MarkOutdated()
        }
        return folder.page(revision: meta.info.revision)
    }

    /// The config's events from `from` on, oldest first, read with strongly consistent
    /// `Query`s of the history partition. The meta item is read first, and only events up
    /// to its revision are returned, so a batch never runs ahead of what is committed.
    /// No further `Query` page (at most 1 MB) is read once the batch is full by count or
    /// by bytes.
    public func events(in config: ConfigName, scope: WatchScope, from: Revision, limit: Int, maxBytes: Int) async throws -> EventBatch {
        try Limits.validatePageSize(limit)
        try Limits.validatePageBytes(maxBytes)
        guard let meta = try await historyMeta(config) else { throw DiscfgError.configNotFound(config) }
        return try await events(in: config, scope: scope, from: max(from, Revision(1)), committed: meta.info, limit: limit, maxBytes: maxBytes, whole: false)
    }

    /// The events from `from` through `info.revision` (a revision read from the meta
    /// item, so committed), with `info`'s compacted revision checked first.
    /// - Parameter whole: whether to check that history from `from` on is all there (its
    ///   first event is at `from` and no revision is skipped: every revision writes its
    ///   event), for an `info` that may be older than a compaction; `compacted` when not.
    func events(
        in config: ConfigName, scope: WatchScope, from: Revision, committed info: ConfigInfo, limit: Int, maxBytes: Int, whole: Bool
    ) async throws -> EventBatch {
        guard from > info.compactedRevision else {
            throw DiscfgError.compacted(from, through: info.compactedRevision, field: "fromRevision")
        }
        var page = EventPage(limit: limit, maxBytes: maxBytes)
        if from <= info.revision {
            var input = historyRange(config, from: from, through: info.revision)
            input.Limit = min(1000, limit * 2 + 2)
            var expected = from
            pages: while true {
                let queried = try await connection.queryPage(input)
                // An event whose overflow item fell on the next page is fetched again whole.
                var (decoded, missing) = EventCodec.events(queried.Items ?? [])
                if whole {
                    for (_, event) in decoded {
                        guard event.revision == expected || event.revision == expected.previous else {
                            throw DiscfgError.compacted(from, through: info.compactedRevision, field: "fromRevision")
                        }
                        expected = event.revision.next
                    }
                    if expected == from, queried.LastEvaluatedKey == nil {
                        throw DiscfgError.compacted(from, through: info.compactedRevision, field: "fromRevision")
                    }
                }
                decoded = decoded.filter { scope.matches($0.event.key) }
                let refetch = missing.filter { sk in decoded.contains { $0.sk == sk } }
                if !refetch.isEmpty {
                    let refetched = try await eventsBySortKey(refetch, in: config)
                    decoded = decoded.map { ($0.sk, refetched[$0.sk] ?? $0.event) }
                }
                for (_, event) in decoded {
                    guard page.offer(event) else { break pages }
                }
                guard let next = queried.LastEvaluatedKey else { break }
                input.ExclusiveStartKey = next
            }
        }
        return page.batch(latest: info.revision, from: from)
    }

    /// Pages of the current keys (Queries of at most 1 MB, no more than a page's budget
    /// read at once), fixed up to the export's revision from history: DynamoDB has no
    /// read snapshots. The pages are read strongly consistently whatever
    /// ``Configuration/consistentReads`` says, as a stale key could not be fixed up.
    public func exportPages(_ config: ConfigName, maxBytes: Int, atRevision revision: Revision?) async throws -> SnapshotPages {
        try await RevisionExport.pages(of: self, config, maxBytes: maxBytes, atRevision: revision, now: clock.now()) { [self] config, query in
            try await list(in: config, query, consistent: true)
        }
    }
}
