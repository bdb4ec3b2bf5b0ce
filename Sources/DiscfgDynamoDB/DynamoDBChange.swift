import DiscfgCore
import Foundation

/// One change to one config, seen through the shared ``ChangeTransaction`` rules.
///
/// It reads only what was fetched before it started — the meta item, the keys the change
/// names, a whole prefix for prefix operations, and the due keys from the expiry index —
/// all strongly consistent, and collects the events; ``plan(retention:)`` then turns them
/// into the actions of one `TransactWriteItems`.
///
/// `dueExpirations()` returns the keys due at ``now`` from the `byExpiry` index, which is
/// queried only when the meta item's `expiryCheckAt` says one may be due, plus any due key
/// the change read itself.
struct DynamoDBChange: ChangeTransaction {
    let config: ConfigName
    let now: Date
    let meta: ConfigMeta
    /// The keys read, with what was stored (nil: absent).
    let stored: [Key: Item?]
    /// Ranges of keys read completely.
    let scannedRanges: [KeyRange]
    /// Due keys from the expiry index, in key order; nil when the index was not queried.
    let due: [Item]?
    /// The earliest expiry after ``now`` in the index, when it was queried.
    let nextExpiry: Date?
    /// Ranges of a budgeted transaction's reads read only in part (``BudgetedReads``).
    var partialRanges: [PartialRange] = []
    /// The budget of the transaction's reads, when it refuses past it.
    var readBudget: ReadBudget?
    /// Who makes this change and why, written on each of its history items.
    var attribution: Attribution?
    /// The chain of events of each key read, as its key item or tombstone records it
    /// (absent: the key has none, or it was not read yet; see ``unlinkedKeys``).
    var chains: [Key: DynamoDBKeyChain] = [:]
    /// Keys without an item whose tombstone was read with them (``chains`` has what it named).
    var tombstonesRead: Set<Key> = []
    /// Dropped revisions whose history items were deleted before this change, being too
    /// many for one transaction (a ``BulkChange``'s); its commit only records them purged.
    var purgedAhead: Set<UInt64> = []
    private(set) var overlay: [Key: Item?] = [:]
    private(set) var recorded: [Event] = []
    private var revision: Revision

    init(config: ConfigName, now: Date, meta: ConfigMeta, stored: [Key: Item?], scannedRanges: [KeyRange], due: [Item]?, nextExpiry: Date?) {
        self.config = config
        self.now = now
        self.meta = meta
        self.stored = stored
        self.scannedRanges = scannedRanges
        self.due = due
        self.nextExpiry = nextExpiry
        revision = meta.info.revision
    }

    func currentRevision() throws -> Revision { revision }

    func storedItem(_ key: Key) throws -> Item? {
        if let overlaid = overlay[key] { return overlaid }
        if let read = stored[key] { return read }
        if scannedRanges.contains(where: { $0.contains(key) }) { return nil }
        throw UnreadItems.key(key)
    }

    func storedItems(in range: KeyRange) throws -> [Item] {
        guard scannedRanges.contains(where: { $0.covers(range) }) else { throw UnreadItems.range(range) }
        var merged: [Key: Item] = [:]
        for (key, item) in stored where range.contains(key) { merged[key] = item }
        for (key, item) in overlay where range.contains(key) { merged[key] = item }
        return merged.values.sorted { $0.key < $1.key }
    }

    /// Offers the items of `range` in key order. A range read only in part
    /// (``partialRanges``) offers what was read, and a read that goes on past it is
    /// refused: it is sure to pass the budget (see ``BudgetedReads``).
    func forEachStoredItem(in range: KeyRange, _ body: (Item) throws -> Bool) throws {
        guard !scannedRanges.contains(where: { $0.covers(range) }),
              let partial = partialRanges.first(where: { $0.range.covers(range) }), let readBudget
        else {
            for item in try storedItems(in: range) {
                guard try body(item) else { return }
            }
            return
        }
        var merged: [Key: Item] = [:]
        let read = { (key: Key) in range.contains(key) && partial.through.map { !($0 < key) } == true }
        for (key, item) in stored where read(key) { merged[key] = item }
        for (key, item) in overlay where read(key) { merged[key] = item }
        for item in merged.values.sorted(by: { $0.key < $1.key }) {
            guard try body(item) else { return }
        }
        throw readBudget.refusal
    }

    func dueExpirations() throws -> [Item] {
        var candidates: [Key: Item] = [:]
        for item in due ?? [] { candidates[item.key] = item }
        for case (let key, let item?) in stored { candidates[key] = item }
        for (key, item) in overlay { candidates[key] = item }
        return candidates.values.filter { $0.isExpired(at: now) }.sorted { $0.key < $1.key }
    }

    mutating func record(_ event: Event) throws {
        overlay[event.key] = .some(event.item)
        recorded.append(event)
        revision = event.revision
    }

    /// How many schemas the config holds after this change: every change reads them
    /// (none when the meta item counts none), so they are counted from what was read.
    var schemaCount: Int { liveCount(in: SchemaTarget.namespace.range) }

    /// How many deployments run in the config after this change: every change reads their
    /// records (none when the meta item counts none).
    var deploymentCount: Int { liveCount(in: DeploymentKeys.runningRange) }

    private func liveCount(in namespace: KeyRange) -> Int {
        var live: [Key: Bool] = [:]
        for (key, item) in stored where namespace.contains(key) { live[key] = item != nil }
        for (key, item) in overlay where namespace.contains(key) { live[key] = item != nil }
        return live.values.filter { $0 }.count
    }

    /// The keys this change records events on whose chain was not read with them: keys
    /// without an item (their tombstone may name one), and items read without it.
    var unlinkedKeys: [Key] { Array(Set(recorded.map(\.key)).filter { chains[$0] == nil && !tombstonesRead.contains($0) }).sorted() }

    /// What the item at `key` was before this change.
    func original(_ key: Key) -> Item? {
        if let read = stored[key] { return read }
        return due?.first { $0.key == key }
    }

    /// The actions of the transaction that commits this change, the meta item first,
    /// and the meta item as it will be.
    ///
    /// Each key is written once, with its final state, conditioned on its state as read
    /// (`mr = old modRevision`, or absence); the meta item is conditioned on its lock.
    /// The first event's history item carries `token`, the transaction's client request
    /// token, so a writer that never heard back can tell whether its transaction landed.
    /// - Parameters:
    ///   - compacted: `meta` with its retention applied (see `compact`).
    ///   - token: the `ClientRequestToken` the transaction is sent with.
    /// - Returns: nil when the change needs more than DynamoDB's 100 actions or 4 MB in
    ///   one transaction: the store then commits it as a ``BulkChange``.
    func plan(compacted: ConfigMeta, token: String) throws -> (actions: [WriteAction], meta: ConfigMeta)? {
        var planned = try self.planned(compacted: compacted)
        if !planned.history.isEmpty, case .put(var first, let condition) = planned.history[0] {
            first[.transactionToken] = .s(token)
            planned.history[0] = .put(first, condition: condition)
        }
        var meta = planned.meta
        var actions: [WriteAction] = [.put(meta.attributes, condition: nil)]
        actions += planned.keys.flatMap(\.actions) + planned.history
        actions += purgeActions(&meta, room: Self.maxActions - actions.count)
        actions[0] = .put(meta.attributes, condition: Self.lockCondition(self.meta))

        let bytes = actions.reduce(0) { $0 + $1.itemSize }
        guard actions.count <= Self.maxActions, bytes <= Self.maxTransactionBytes else { return nil }
        return (actions, meta)
    }

    /// What committing this change writes, however many transactions it takes: the meta
    /// item as it will be (its lock one past the one read), each key's final state and
    /// the history items.
    func planned(compacted: ConfigMeta) throws -> PlannedChange {
        var meta = compacted
        meta.lock = self.meta.lock + 1
        meta.info.revision = revision
        meta.info.modifiedAt = now
        meta.info.keyCount = meta.info.keyCount.map { count in recorded.reduce(count) { $0 + $1.keyCountChange } }
        meta.schemaCount = schemaCount
        meta.deploymentCount = deploymentCount
        let growth = recorded.byteCountChange
        // The store counts a config's bytes before it changes one with a quota
        // (`countKeysAndBytes`); should the count be missing anyway, refuse rather than
        // let the change past an unchecked quota.
        if meta.info.settings.quotaBytes != nil, meta.info.byteCount == nil {
            throw DiscfgError(.unavailable, "config \"\(config)\" has a quota but its size is not counted yet; try again", field: "quotaBytes")
        }
        try meta.info.settings.checkChange(config, size: meta.info.byteCount ?? 0, change: growth, writesKeys: recorded.writesKeys)
        meta.info.byteCount = meta.info.byteCount.map { $0 + growth }
        let retention = meta.info.settings.history
        if case .days = retention, meta.oldestEventAt == nil { meta.oldestEventAt = now }

        // Each event joins its key's chain; the key item, or the tombstone of a key the
        // change deletes, records the chain's newest event.
        var positions: [Int] = []
        var sharing: [Revision: Int] = [:]
        var chains = self.chains
        var links: [Attributes] = []
        for (index, event) in recorded.enumerated() {
            positions.append(index > 0 && recorded[index - 1].revision == event.revision ? positions[index - 1] + 1 : 0)
            sharing[event.revision, default: 0] += 1
            let chain = DynamoDBKeyChain.adding(EventPlace(revision: event.revision, position: positions[index]), after: chains[event.key])
            chains[event.key] = chain
            links.append(chain.eventLinks)
        }

        var keys: [KeyWrite] = []
        var written = Set<Key>()
        for event in recorded where !written.contains(event.key) {
            written.insert(event.key)
            let old = original(event.key)
            let condition = old.map { old in
                Expression("\(.modRevision) = :mr", values: [":mr": .number(old.modRevision.rawValue)])
            } ?? .keyAbsent
            let chain = chains[event.key]
            keys.append(KeyWrite(
                config: config, key: event.key, final: overlay[event.key] ?? nil, head: chain?.headAttributes ?? [:],
                place: chain?.place ?? EventPlace(revision: event.revision, position: 0), original: old != nil, condition: condition
            ))
        }

        var history: [WriteAction] = []
        let ttl = retention.historyTTL(at: now)
        for (index, event) in recorded.enumerated() {
            let position = positions[index]
            let (item, overflow) = EventCodec.attributes(
                event, in: config, position: position, revisionEvents: sharing[event.revision] ?? 1, links: links[index], ttl: ttl
            )
            history.append(.put(item, condition: nil))
            if let overflow {
                history.append(.put(overflow, condition: nil))
                if ttl == nil { meta.overflowRevisions.insert(event.revision.rawValue) }
            }
            if position > 0, ttl == nil { meta.sharedRevisions[event.revision.rawValue] = position + 1 }
        }

        // The expiry lower bound: the index's next expiry when it was read, the old bound
        // otherwise, and every TTL this change sets.
        var bound = due == nil ? self.meta.expiryCheckAt : nextExpiry
        for case let item? in overlay.values {
            if let expiresAt = item.expiresAt { bound = min(bound ?? expiresAt, expiresAt) }
        }
        meta.expiryCheckAt = bound
        return PlannedChange(meta: meta, keys: keys, history: history, events: recorded.count)
    }

    /// Deletes of events that `.last(N)` retention dropped, as many as fit in `room`.
    private func purgeActions(_ meta: inout ConfigMeta, room: Int) -> [WriteAction] {
        guard case .last = meta.info.settings.history else { return [] }
        var actions: [WriteAction] = []
        var next = meta.purgedRevision.next
        while next <= meta.info.compactedRevision {
            let overflow = meta.overflowRevisions.contains(next.rawValue)
            let events = meta.sharedRevisions[next.rawValue] ?? 1
            if purgedAhead.contains(next.rawValue) {
                // Deleted before this change (see ``purgeAhead``): only the bookkeeping.
                meta.overflowRevisions.remove(next.rawValue)
                meta.sharedRevisions[next.rawValue] = nil
                meta.purgedRevision = next
                next = next.next
                continue
            }
            let needed = events * (overflow ? 2 : 1)
            // A revision is purged whole; one with more items than a purge usually takes
            // goes alone when the change leaves room for it.
            guard actions.count + needed <= (actions.isEmpty ? room : min(room, Self.maxPurgePerChange)) else { break }
            for position in 0..<events {
                actions.append(.delete(key: DynamoDBLayout.eventKey(config, next, position: position), condition: nil))
                if overflow {
                    actions.append(.delete(key: DynamoDBLayout.key(DynamoDBLayout.historyPK(config), DynamoDBLayout.overflowSK(next, position: position)), condition: nil))
                }
            }
            meta.overflowRevisions.remove(next.rawValue)
            meta.sharedRevisions[next.rawValue] = nil
            meta.purgedRevision = next
            next = next.next
        }
        return actions
    }

    /// The condition every meta write carries: the lock as read, and not being deleted.
    static func lockCondition(_ meta: ConfigMeta) -> Expression {
        Expression("\(.lock) = :lock AND attribute_not_exists(\(.deleting))", values: [":lock": .number(meta.lock)])
    }

    /// DynamoDB's limit of actions in one transaction.
    static let maxActions = 100
    /// DynamoDB's limit of bytes in one transaction (4 MB), with room for names.
    static let maxTransactionBytes = 4_000_000
    /// At most this many purge deletes ride along with one change.
    static let maxPurgePerChange = 40

    /// The next dropped revisions to purge whose history items are more than a change's
    /// transaction can take along: a ``BulkChange``'s. Deleting them ahead of the change that
    /// records them purged is safe, as no reader reads history at or below the compacted
    /// revision.
    func revisionsToPurgeAhead(_ meta: ConfigMeta) -> [(revision: Revision, items: [Attributes])] {
        guard case .last = meta.info.settings.history else { return [] }
        var ahead: [(revision: Revision, items: [Attributes])] = []
        var next = meta.purgedRevision.next
        while next <= meta.info.compactedRevision, ahead.count < 2 {
            let events = meta.sharedRevisions[next.rawValue] ?? 1
            guard events > Self.maxPurgePerChange / 2 else { break }
            let overflow = meta.overflowRevisions.contains(next.rawValue)
            var keys: [Attributes] = []
            for position in 0..<events {
                keys.append(DynamoDBLayout.eventKey(config, next, position: position))
                if overflow { keys.append(DynamoDBLayout.key(DynamoDBLayout.historyPK(config), DynamoDBLayout.overflowSK(next, position: position))) }
            }
            ahead.append((next, keys))
            next = next.next
        }
        return ahead
    }
}

/// What committing a change writes (``DynamoDBChange/planned(compacted:)``).
struct PlannedChange: Sendable {
    /// The meta item once committed.
    var meta: ConfigMeta
    /// Each key the change writes, once, in the order of its first event.
    var keys: [KeyWrite]
    /// The history items: every event, and the overflow items of large previous values.
    var history: [WriteAction]
    /// How many events the change records.
    var events: Int
}

/// One key's write in a change: its final state, the chain head its item or tombstone
/// records, and the condition on its state as read.
struct KeyWrite: Sendable {
    let config: ConfigName
    let key: Key
    /// The key's item once the change is applied; nil when the change deletes it.
    let final: Item?
    /// The chain head the key item or tombstone records after the change.
    let head: Attributes
    /// The place of the key's newest event.
    let place: EventPlace
    /// Whether the key had an item when the change read it.
    let original: Bool
    /// The key's state as read: `mr` as read, or absent.
    let condition: Expression

    /// What the key item (nil: deleted) and its tombstone (nil: left as it is) become.
    var folded: (item: Attributes?, tombstone: Attributes?) {
        Self.folded(config, key, final: final, head: head, place: place)
    }

    /// The key item and tombstone a change writes for a key whose final state is `final`
    /// and whose chain head is `head` at `place`: one rule for a change in one
    /// transaction, the fold of a ``BulkChange`` and a read that meets one unfolded.
    static func folded(_ config: ConfigName, _ key: Key, final: Item?, head: Attributes, place: EventPlace?) -> (item: Attributes?, tombstone: Attributes?) {
        if let final { return (ItemCodec.attributes(final, in: config).merging(head) { $1 }, nil) }
        guard let place else { return (nil, nil) }
        var tombstone = DynamoDBLayout.tombstoneKey(config, key).merging(head) { $1 }
        tombstone[.modRevision] = .number(place.revision.rawValue)
        return (nil, tombstone)
    }

    /// The actions that write it in one transaction.
    var actions: [WriteAction] {
        let (item, tombstone) = folded
        if let item { return [.put(item, condition: condition)] }
        var actions: [WriteAction] = [.delete(key: DynamoDBLayout.itemKey(config, key), condition: condition)]
        if let tombstone { actions.append(.put(tombstone, condition: nil)) }
        return actions
    }
}
