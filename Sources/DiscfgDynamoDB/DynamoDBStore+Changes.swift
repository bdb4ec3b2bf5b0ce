import DiscfgAWS
import DiscfgCore
import DiscfgJSON
import Foundation

/// What a change must read before the rules run.
struct ChangeReads: Sendable {
    /// Keys read one by one (with the meta item, in one `BatchGetItem`).
    var keys: [Key] = []
    /// Ranges of keys read completely, each with a `Query`.
    var ranges: [KeyRange] = []
    /// Read the meta item before anything else and, when nothing is written, again after:
    /// for changes whose outcome depends on keys they do not write (a transaction's
    /// comparisons and reads), so the lock proves every read saw one state.
    var consistentView = false
    /// A transaction's reads under a budget that refuses: its branch's ranges are read
    /// only as far as the budget needs (see ``BudgetedReads``).
    var budgeted: BudgetedReads?

    init(keys: [Key] = [], prefix: KeyPrefix? = nil) {
        self.keys = keys
        ranges = prefix.map { [$0.range] } ?? []
    }

    init(keys: [Key], ranges: [KeyRange], consistentView: Bool) {
        self.keys = keys
        self.ranges = ranges
        self.consistentView = consistentView
    }

    /// Adds a range to read whole, unless one already read covers it.
    mutating func include(_ range: KeyRange) {
        guard !ranges.contains(where: { $0.covers(range) }) else { return }
        ranges.append(range)
    }

    /// Adds what a change found it had not read.
    mutating func include(_ unread: UnreadItems) {
        switch unread {
        case .key(let key): keys.append(key)
        case .range(let range): include(range)
        }
    }
}

/// What a change asked for that was not read before it started: the change starts over
/// with it read too (the shared rules read what they need, such as the documents of the
/// prefixes a schema covers, which only the schemas themselves tell).
enum UnreadItems: Error {
    case key(Key)
    case range(KeyRange)
}

extension DynamoDBStore {
    public func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
        try Limits.validateValue(value)
        try options.validate()
        do {
            return try await change(config, ChangeReads(keys: [key])) { try $0.set(key, to: value, options: options) }
        } catch let error as DiscfgError where error == DynamoDBErrors.itemTooLarge(nil) {
            // One key changed: name it.
            throw DynamoDBErrors.itemTooLarge(key)
        }
    }

    public func delete(_ key: Key, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        try await change(config, ChangeReads(keys: [key])) { try $0.delete(key, conditions: conditions) }
    }

    /// Writes a prefix's document as one change (see ``deletePrefix(_:in:)``).
    public func putDocument(_ document: JSONValue, under prefix: KeyPrefix, in config: ConfigName, replace: Bool) async throws -> ImportResult {
        try await change(config, ChangeReads(prefix: prefix)) { try $0.putDocument(document, under: prefix, replace: replace) }
    }

    public func setSchema(_ target: SchemaTarget, to schema: Data?, in config: ConfigName, force: Bool) async throws -> SchemaChange {
        var reads = ChangeReads(keys: [target.storageKey])
        switch target {
        case .key(let key): reads.keys.append(key)
        case .prefix(let prefix): reads.ranges.append(prefix.range)
        }
        return try await change(config, reads) { try $0.setSchema(target, to: schema, force: force) }
    }

    /// Starts or moves a deployment as one change, reading its records, its staging and the
    /// prefix it deploys (a transition finds the prefix in the record, and widens its reads).
    public func changeDeployment(_ change: DeploymentChange, in config: ConfigName) async throws -> DeploymentOutcome {
        var reads = ChangeReads(keys: [], ranges: [DeploymentKeys.ended.range], consistentView: false)
        switch change {
        case .start(let plan):
            reads.include(plan.prefix.range)
            reads.include(DeploymentKeys.staged(plan.id).range)
        case .transition(let id, _, _, _):
            reads.include(DeploymentKeys.staged(id).range)
        }
        return try await self.change(config, reads) { try $0.changeDeployment(change) }
    }

    /// Deletes every key under a prefix as one change: one transaction while it fits
    /// (DynamoDB holds 100 writes in one, and each delete writes the key, its tombstone and
    /// its event: about 33 keys), else a ``BulkChange``, still all or nothing for readers.
    public func deletePrefix(_ prefix: KeyPrefix, in config: ConfigName) async throws -> [Event] {
        try await change(config, ChangeReads(prefix: prefix)) { try $0.deletePrefix(prefix) }
    }

    /// Runs a transaction with one `TransactWriteItems`. It reads the meta item before any
    /// key, so the commit's condition on the meta item's lock also guards every key and
    /// prefix the comparisons read; a transaction that writes nothing reads the meta item
    /// again afterwards and starts over when another change committed meanwhile, so its
    /// reads are one consistent view. Past one DynamoDB transaction (about 49 keys set, 33
    /// deleted) it is a ``BulkChange``.
    public func transact(_ transaction: Transaction, in config: ConfigName) async throws -> TransactionResult {
        try transaction.validate()
        let (keys, ranges) = transaction.reads
        var reads = ChangeReads(keys: keys, ranges: ranges, consistentView: true)
        if let budgeted = BudgetedReads(transaction) {
            reads.ranges = budgeted.wholeRanges
            reads.budgeted = budgeted
        }
        return try await change(config, reads, by: transaction.attribution) { try $0.apply(transaction) }
    }

    /// Imports a snapshot as one change (see ``deletePrefix(_:in:)``).
    public func importSnapshot(_ snapshot: ConfigSnapshot, into config: ConfigName, options: ImportOptions) async throws -> ImportResult {
        try snapshot.validate()
        try options.check(snapshot)
        // The snapshot's keys are under the prefix (checked), so a replace's read covers them.
        let reads = options.replace ? ChangeReads(prefix: options.prefix) : ChangeReads(keys: snapshot.items.map(\.key))
        return try await ImportOptions.answer { try await change(config, reads) { try $0.importSnapshot(snapshot, options: options) } }
    }

    /// Expires due keys of every config. The registry (`pk=#configs`) lists the configs
    /// with a `Query`, their meta items are read in batches, and only configs whose
    /// `expiryCheckAt` has passed are changed — each change finds its due keys with a
    /// `Query` on the expiry index. Never a `Scan`.
    public func sweepExpired() async throws -> [Event] {
        let registry = try await connection.queryAll(QueryInput(table: connection.table, key: .partition(DynamoDBLayout.registryPK), consistent: true))
        let names = registry.compactMap { $0[.sk]?.string.flatMap { try? ConfigName($0) } }
        return try await sweep(names)
    }

    /// Expires due keys of `names`, skipping configs with nothing due.
    func sweep(_ names: [ConfigName]) async throws -> [Event] {
        let now = clock.now()
        let metas = try await connection.batchGet(names.map(DynamoDBLayout.metaKey), consistent: true).compactMap(ConfigMeta.init)
        var events: [Event] = []
        for meta in metas.sorted(by: { $0.info.name < $1.info.name }) where !meta.deleting {
            guard let check = meta.expiryCheckAt, check <= now else { continue }
            do {
                events += try await change(meta.info.name, ChangeReads()) { try $0.expireDue() }
            } catch let error as DiscfgError where error.code == .configNotFound {
                continue
            }
        }
        return events
    }

    /// Runs one change: read (strongly consistent), apply the shared rules, commit with one
    /// `TransactWriteItems` (or, past one, as a ``BulkChange``); a lost race starts over
    /// after a jittered pause. A change that meets a ``BulkChange`` in progress settles it
    /// first.
    ///
    /// When an attempt may have committed without the answer arriving (a connection lost
    /// after sending, a 5xx), the client's retries reuse the token, which DynamoDB
    /// answers idempotently. Should the call still fail, or fail as a lost race (its own
    /// earlier attempt being the winner), the change reads its first event back: carrying
    /// the token, the change did commit and succeeds; absent, it did not; unreadable, the
    /// caller is told the outcome is unknown and how to check — never that it failed.
    func change<T>(_ config: ConfigName, _ reads: ChangeReads, by given: Attribution? = nil, _ body: (inout DynamoDBChange) throws -> T) async throws -> T {
        var attempt = 0
        var reads = reads
        // Every change is checked against the config's schemas, kept under one prefix.
        reads.include(SchemaTarget.namespace.range)
        // And against the deployments running, which refuse writes under their prefixes.
        reads.include(DeploymentKeys.runningRange)
        var widened = 0
        let attribution = try Attribution.forChange(given)
        while true {
            let now = clock.now()
            var transaction = try await prepare(config, reads, now: now)
            transaction.attribution = attribution
            if transaction.meta.bulk != nil {
                // A change of many keys holds the config: see it through (or out), then read again.
                try await settle(config, transaction.meta)
                continue
            }
            if transaction.meta.info.settings.quotaBytes != nil, transaction.meta.info.byteCount == nil {
                // A config from before bytes were counted: count them once, then start over.
                try await countKeysAndBytes(config)
                continue
            }
            let result: T
            do {
                result = try body(&transaction)
            } catch let unread as UnreadItems {
                widened += 1
                guard widened <= Self.maxWidenings else {
                    throw DiscfgError(.internal, "a change to config \"\(config)\" kept needing more keys than it had read", field: "config")
                }
                reads.include(unread)
                continue
            }
            var target = transaction.meta
            target.info.revision = try transaction.currentRevision()
            if transaction.recorded.isEmpty {
                if reads.consistentView, try await meta(config, consistent: true)?.lock != transaction.meta.lock {
                    // Another change committed while this one read: read again.
                    attempt += 1
                    try await raceBackoff(attempt, config: config)
                    continue
                }
                try await refreshExpiryBound(transaction)
                return result
            }
            try await compact(&target, now: now, exact: false, committed: transaction.meta.info.revision)
            try await linkChains(config, &transaction)
            try await purgeAhead(&transaction, compacted: target)
            let token = UUID().uuidString
            let plan = try transaction.plan(compacted: target, token: token)
            if let hook = beforeCommit.withLock({ hook in defer { hook = nil }; return hook }) { try await hook() }
            guard let (actions, committed) = plan else {
                // Past one transaction: staged, then committed with one write of the meta item.
                if try await commitBulk(transaction, compacted: target) { return result }
                attempt += 1
                try await raceBackoff(attempt, config: config)
                continue
            }
            let first = transaction.recorded[0].revision
            do {
                try await transactWrite(actions, token: token)
            } catch let error as AWSError where error.mayHaveApplied || (error.code == .transactionCanceled && Self.lostRace(error)) {
                let landed = error.mayHaveApplied ? await landed(config, revision: first, token: token) : false
                switch landed {
                case true?:
                    break
                case false? where error.code == .transactionCanceled && Self.lostRace(error):
                    attempt += 1
                    try await raceBackoff(attempt, config: config)
                    continue
                case false?:
                    throw connection.mapped(error, operation: "TransactWriteItems")
                case nil:
                    throw Self.outcomeUnknown(config, revision: first, keys: transaction.recorded.map(\.key), error: error)
                }
            } catch {
                throw connection.mapped(error, operation: "TransactWriteItems")
            }
            remember(config, committed.info.revision)
            notifier.notify(config)
            return result
        }
    }

    /// How many times one change may start over to read more (each schema it meets may
    /// ask for one prefix's keys).
    static let maxWidenings = 32

    /// Whether the transaction sent with `token`, whose first event is `revision`,
    /// committed: the event carries the token (true), or the config has not reached
    /// `revision` or another transaction's event holds it (false); nil when that cannot
    /// be told (the read failed, or the event is gone).
    func landed(_ config: ConfigName, revision: Revision, token: String) async -> Bool? {
        let eventKey = DynamoDBLayout.eventKey(config, revision)
        guard let found = try? await connection.batchGet([DynamoDBLayout.metaKey(config), eventKey], consistent: true) else { return nil }
        if let event = found.first(where: { $0[.pk] == eventKey[.pk] && $0[.sk] == eventKey[.sk] }) {
            return event[.transactionToken]?.string == token
        }
        guard let meta = found.first(where: { $0[.sk]?.string == DynamoDBLayout.metaSK }).flatMap(ConfigMeta.init) else { return nil }
        return meta.info.revision < revision ? false : nil
    }

    /// The error for a change whose commit neither succeeded nor failed for certain: what
    /// DynamoDB answered (its code and status, never its message, which may name accounts),
    /// and how the caller can tell whether the change was applied.
    static func outcomeUnknown(_ config: ConfigName, revision: Revision, keys: [Key], error: AWSError) -> DiscfgError {
        let subject = keys.count == 1 ? "key \"\(keys[0])\"" : "the changed keys"
        var answer = error.awsCode
        if let status = error.httpStatus { answer += ", HTTP \(status)" }
        if error.retries > 0 { answer += ", after \(error.retries) retr\(error.retries == 1 ? "y" : "ies")" }
        return DiscfgError(
            .unavailable,
            "this change may or may not have been applied: DynamoDB did not confirm it (\(answer)); read \(subject) of config \"\(config)\" again: a modRevision of \(revision) means it was applied, anything else means it was not and it can be retried",
            field: "outcome"
        )
    }

    /// Whether a cancelled transaction lost a race (a condition on the meta item or a key
    /// failed, or another transaction held an item) rather than failing for good.
    static func lostRace(_ error: AWSError) -> Bool {
        let codes = Set(error.cancellationReasons.map(\.code))
        return codes.isEmpty || codes.contains("ConditionalCheckFailed") || codes.contains("TransactionConflict")
    }

    /// Reads what a change needs: the meta item and named keys in one strongly
    /// consistent `BatchGetItem`, a prefix with a `Query`, and — only when the meta item
    /// says a key may be due — the due keys and the next expiry from the expiry index.
    func prepare(_ config: ConfigName, _ reads: ChangeReads, now: Date) async throws -> DynamoDBChange {
        let unique = Array(Set(reads.keys))
        // The named keys' tombstones come along: a key without an item links its chain there.
        let tombstones = unique.map { DynamoDBLayout.tombstoneKey(config, $0) }
        let tombstonePK = AttributeValue.s(DynamoDBLayout.tombstonePK(config))
        var found: [Attributes] = []
        if reads.consistentView {
            // The meta item strictly before the keys: the commit's lock condition then
            // covers every key read.
            guard let meta = try await connection.getItem(DynamoDBLayout.metaKey(config), consistent: true) else { throw DiscfgError.configNotFound(config) }
            found = try await [meta] + connection.batchGet(unique.map { DynamoDBLayout.itemKey(config, $0) } + tombstones, consistent: true)
        } else {
            found = try await connection.batchGet([DynamoDBLayout.metaKey(config)] + unique.map { DynamoDBLayout.itemKey(config, $0) } + tombstones, consistent: true)
        }
        guard let metaAttributes = found.first(where: { $0[.sk]?.string == DynamoDBLayout.metaSK }),
              let meta = ConfigMeta(metaAttributes), !meta.deleting
        else { throw DiscfgError.configNotFound(config) }
        var stored: [Key: Item?] = Dictionary(uniqueKeysWithValues: unique.map { ($0, nil) })
        var chains: [Key: DynamoDBKeyChain] = [:]
        var headsInTombstones: [Key: DynamoDBKeyChain] = [:]
        for attributes in found where attributes[.pk] == tombstonePK {
            if let path = attributes[.sk]?.string, let chain = DynamoDBKeyChain(head: attributes) { headsInTombstones[Key(stored: path)] = chain }
        }
        for attributes in found where attributes[.pk] != tombstonePK {
            guard let item = ItemCodec.item(attributes) else { continue }
            stored[item.key] = item
            chains[item.key] = DynamoDBKeyChain(head: attributes)
        }
        for range in reads.ranges {
            // The schemas are read with every change, unless the meta item counts none.
            if range == SchemaTarget.namespace.range, meta.schemaCount == 0 { continue }
            if range == DeploymentKeys.runningRange, meta.deploymentCount == 0 { continue }
            for attributes in try await connection.queryAll(keyRange(config, from: range.lower, to: range.scanUpper, consistent: true)) {
                guard let item = ItemCodec.item(attributes), range.contains(item.key) else { continue }
                stored[item.key] = item
                chains[item.key] = DynamoDBKeyChain(head: attributes)
            }
        }
        var scanned = reads.ranges
        var partial: [PartialRange] = []
        if let budgeted = reads.budgeted {
            let read = try await readBudgeted(budgeted, config, whole: reads.ranges, into: &stored, now: now)
            scanned += read.whole
            partial = read.partial
        }
        var due: [Item]?
        var nextExpiry: Date?
        if let check = meta.expiryCheckAt, check <= now {
            (due, nextExpiry) = try await expiryIndex(config, now: now)
        }
        var change = DynamoDBChange(config: config, now: now, meta: meta, stored: stored, scannedRanges: scanned, due: due, nextExpiry: nextExpiry)
        change.partialRanges = partial
        change.readBudget = reads.budgeted?.budget
        // A key read without an item continues the chain its tombstone names, if any.
        for key in unique where stored[key] == .some(nil) {
            change.tombstonesRead.insert(key)
            if let chain = headsInTombstones[key] { chains[key] = chain }
        }
        change.chains = chains
        return change
    }

    /// The keys due at `now` (whole items, key order) and the first expiry after it.
    func expiryIndex(_ config: ConfigName, now: Date) async throws -> ([Item], Date?) {
        let bound: Attributes = [":pk": .s(config.rawValue), ":now": .number(now.milliseconds)]
        let dueQuery = QueryInput(
            table: connection.table, index: .byExpiry,
            key: Expression("\(.pk) = :pk AND \(.expiresAt) <= :now", values: bound), consistent: true
        )
        var nextQuery = dueQuery
        nextQuery.setKey(Expression("\(.pk) = :pk AND \(.expiresAt) > :now", values: bound))
        nextQuery.Limit = 1
        nextQuery.project([.pk, .sk, .expiresAt])
        async let dueItems = connection.queryAll(dueQuery)
        async let nextPage = connection.queryPage(nextQuery)
        let due = try await dueItems.compactMap(ItemCodec.item).sorted { $0.key < $1.key }
        let next = try await nextPage.Items?.first?[.expiresAt]?.int64.map { Date(milliseconds: $0) }
        return (due, next)
    }

    /// After a change that changed nothing but read the expiry index, stores the fresher
    /// expiry bound so later changes do not query the index again for nothing.
    private func refreshExpiryBound(_ transaction: DynamoDBChange) async throws {
        guard transaction.due != nil, transaction.nextExpiry != transaction.meta.expiryCheckAt else { return }
        var meta = transaction.meta
        meta.expiryCheckAt = transaction.nextExpiry
        meta.lock += 1
        do {
            try await putMeta(meta, expectedLock: transaction.meta.lock)
        } catch let error as AWSError where error.code == .conditionalCheckFailed {
            // Someone else changed the config; the bound is only a hint.
        }
    }

    /// A query of key items with sort keys in `from...to` (meta item and the bound
    /// itself filtered out by callers that need a half-open range).
    func keyRange(_ config: ConfigName, from: String, to: String, consistent: Bool, limit: Int? = nil) -> QueryInput {
        QueryInput(table: connection.table, key: .partition(config.rawValue, .sk, from: from, through: to), consistent: consistent, limit: limit)
    }
}
