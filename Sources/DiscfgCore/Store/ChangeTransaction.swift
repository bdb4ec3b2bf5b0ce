import Foundation
import DiscfgJSON

/// The write side of a store, seen from inside one atomic transaction on one config.
///
/// Stores supply the reads and ``record(_:)``; the rules of a change (conditions,
/// versions, TTL, one revision per change, expiring due keys first) are written once,
/// in this protocol's extension, so every store behaves the same.
public protocol ChangeTransaction {
    /// The config being changed.
    var config: ConfigName { get }
    /// The time of this transaction.
    var now: Date { get }
    /// Who makes this change and why, written with every event it records; the store
    /// reads ``Attribution/current`` where the change starts, in the caller's task.
    var attribution: Attribution? { get }
    /// The config's revision, including changes recorded in this transaction.
    func currentRevision() throws -> Revision
    /// The stored item at `key`, expired or not, including this transaction's changes.
    func storedItem(_ key: Key) throws -> Item?
    /// The stored items in `range`, in key order, including this transaction's changes.
    func storedItems(in range: KeyRange) throws -> [Item]
    /// Offers the stored items in `range`, in key order, to `body` until it returns
    /// false. A store that can step through rows one at a time implements it, so a read
    /// that stops early, or only counts, never holds the whole range; the default reads
    /// ``storedItems(in:)``.
    func forEachStoredItem(in range: KeyRange, _ body: (Item) throws -> Bool) throws
    /// The stored items whose TTL has run out at ``now``, in key order.
    func dueExpirations() throws -> [Item]
    /// The stored items under ``SchemaTarget/namespace``, expired or not, in key order,
    /// including this transaction's changes: every change is checked against them, so a
    /// store may keep them between the changes of one commit. The default reads
    /// ``storedItems(in:)``.
    func storedSchemaItems() throws -> [Item]
    /// The records of running deployments (under ``DeploymentKeys/running``), in key
    /// order, including this transaction's changes: every change that writes a key is
    /// checked against them, so a store may keep them as it keeps the schemas. The default
    /// reads ``storedItems(in:)``.
    func storedRunningDeployments() throws -> [Item]
    /// Makes a change: moves the config to `event.revision`, writes `event.item` at
    /// `event.key` (or removes the key when it is nil) and appends the event to history.
    mutating func record(_ event: Event) throws
}

extension ChangeTransaction {
    public func forEachStoredItem(in range: KeyRange, _ body: (Item) throws -> Bool) throws {
        for item in try storedItems(in: range) {
            guard try body(item) else { return }
        }
    }

    public func storedSchemaItems() throws -> [Item] {
        try storedItems(in: SchemaTarget.namespaceRange)
    }

    public func storedRunningDeployments() throws -> [Item] {
        try storedItems(in: DeploymentKeys.runningRange)
    }

    /// The stored items under `prefix`, in key order, including this transaction's changes.
    public func storedItems(under prefix: KeyPrefix) throws -> [Item] {
        try storedItems(in: prefix.range)
    }

    /// Records a put of `value` at `key` over `current` at `revision`: the next version,
    /// the key's creation kept, the TTL counted from ``now``. Every kind of change writes
    /// a value through here.
    mutating func recordPut(
        _ key: Key, _ value: Data, contentType: String?, expiresAt: Date?, over current: Item?, at revision: Revision
    ) throws -> Event {
        let item = Item(
            key: key, value: value, contentType: contentType,
            version: (current?.version ?? 0) + 1,
            createRevision: current?.createRevision ?? revision,
            modRevision: revision, modifiedAt: now, expiresAt: expiresAt
        )
        let event = Event(kind: .put, revision: revision, key: key, at: now, item: item, prevItem: current, attribution: attribution)
        try record(event)
        return event
    }

    /// Records the removal of `item` at `revision`, as a `delete` or an `expire`; an
    /// expiry is discfg's doing (``Attribution/expiry``), whoever's change found it due.
    mutating func recordRemoval(of item: Item, _ kind: Event.Kind = .delete, at revision: Revision) throws -> Event {
        let by = kind == .expire ? Attribution.expiry : attribution
        let event = Event(kind: kind, revision: revision, key: item.key, at: now, item: nil, prevItem: item, attribution: by)
        try record(event)
        return event
    }

    /// The moment a TTL of `seconds` from ``now`` runs out.
    func expiry(afterSeconds seconds: Int64?) -> Date? {
        seconds.map { Date(milliseconds: now.milliseconds + $0 * 1000) }
    }

    /// Records an `expire` event for every key whose TTL has run out.
    public mutating func expireDue() throws -> [Event] {
        try dueExpirations().map { try recordRemoval(of: $0, .expire, at: try currentRevision().successor()) }
    }

    /// Sets `key` to `value` if the conditions hold against the live item.
    public mutating func set(_ key: Key, to value: Data, options: SetOptions) throws -> Event {
        try Limits.validateValue(value)
        try options.validate()
        _ = try expireDue()
        let current = try storedItem(key)
        try options.conditions.check(against: current, key: key)
        let event = try recordPut(
            key, value, contentType: options.contentType, expiresAt: expiry(afterSeconds: options.ttlSeconds),
            over: current, at: try currentRevision().successor()
        )
        try enforce([event])
        return event
    }

    /// Deletes `key` if it exists and the conditions hold.
    public mutating func delete(_ key: Key, conditions: [Condition]) throws -> Event {
        try SchemaTarget.refuseDeleting(key)
        _ = try expireDue()
        let current = try storedItem(key)
        try conditions.check(against: current, key: key)
        guard let current else { throw DiscfgError.keyNotFound(key, in: config) }
        let event = try recordRemoval(of: current, at: try currentRevision().successor())
        try enforce([event])
        return event
    }

    /// Deletes every live key under `prefix` as one change: one new revision that every
    /// removal carries, in key order (nothing when no key is there).
    public mutating func deletePrefix(_ prefix: KeyPrefix) throws -> [Event] {
        try SchemaTarget.refuseDeleting(prefix)
        _ = try expireDue()
        let revision = try currentRevision().successor()
        let events = try storedItems(under: prefix).filter { !SchemaTarget.isReserved($0.key) }.map {
            try recordRemoval(of: $0, at: revision)
        }
        try enforce(events)
        return events
    }

    /// Writes a snapshot's entries as one change — one new revision that every event
    /// carries — skipping those already equal, those already expired and deployments'
    /// records and staging. A replace
    /// deletes, in the same revision, the live keys under the options' prefix that the
    /// snapshot does not name; discfg's own records (schemas) only when the options say
    /// so. A dry run throws the result as a ``DryRunOutcome``, so the store writes
    /// nothing.
    public mutating func importSnapshot(_ snapshot: ConfigSnapshot, options: ImportOptions) throws -> ImportResult {
        try snapshot.validate()
        try options.check(snapshot)
        try options.checkRevision(try currentRevision(), of: config)
        _ = try expireDue()
        let revision = try currentRevision().successor()
        var events: [Event] = []
        var unchanged = 0
        let named = Set(snapshot.items.map(\.key))
        if options.replace {
            for item in try storedItems(under: options.prefix) where !named.contains(item.key) {
                if SchemaTarget.isReserved(item.key) {
                    // A schema goes only with a replace that says so, and only as a schema
                    // record (never the `/.discfg` key a schema makes a directory of).
                    guard options.replaceSchemas, SchemaTarget(storageKey: item.key) != nil else { continue }
                }
                events.append(try recordRemoval(of: item, at: revision))
            }
        }
        for entry in snapshot.items.sorted(by: { $0.key < $1.key }) {
            if let expiresAt = entry.expiresAt, expiresAt <= now { continue }
            // A deployment belongs to the config it ran in: an export carries its records and
            // staging, an import leaves them out.
            if DeploymentKeys.holds(entry.key) { continue }
            let current = try storedItem(entry.key)
            if let current, current.value == entry.value, current.contentType == entry.contentType, current.expiresAt == entry.expiresAt {
                unchanged += 1
                continue
            }
            events.append(try recordPut(
                entry.key, entry.value, contentType: entry.contentType, expiresAt: entry.expiresAt,
                over: current, at: revision
            ))
        }
        try enforce(events)
        let result = ImportResult(events: events, unchanged: unchanged, revision: try currentRevision())
        if options.dryRun { throw DryRunOutcome(result: result) }
        return result
    }
}
