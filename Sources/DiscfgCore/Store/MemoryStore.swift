import Foundation
import DiscfgJSON
import Synchronization

/// A store that keeps everything in this process's memory: for tests, demos and
/// `--store memory:`. It follows the same rules as every other store.
public final class MemoryStore: ConfigStore {
    struct ConfigState {
        var info: ConfigInfo
        var items: [Key: Item] = [:]
        /// The keys of `items` that have an expiry time, so a change looks for due keys
        /// among those alone.
        var expiring: Set<Key> = []
        /// Oldest first.
        var history: [Event] = []
    }

    private let state = Mutex<[ConfigName: ConfigState]>([:])
    let tokens = Mutex<[String: AccessToken]>([:])
    /// Whether a token was ever saved, for ``TokenStore/tokensWereIssued()``.
    let tokensIssued = Mutex(false)
    /// Each config's etcd leases by id, apart from its keys: a lease changes no revision.
    let leaseRecords = Mutex<[ConfigName: [Int64: LeaseRecord]]>([:])
    /// Each config's deployments' health reports, by deployment and reporter.
    let healthRecords = Mutex<[ConfigName: [String: [String: HealthReport]]]>([:])
    private let clock: any WallClock
    private let notifier = ChangeNotifier()
    private let sweeper = ExpirySweeper()

    /// Creates an empty store.
    public init(clock: any WallClock = SystemClock()) {
        self.clock = clock
    }

    public func createConfig(_ name: ConfigName, settings: ConfigSettings) async throws -> ConfigInfo {
        let now = clock.now()
        return try state.withLock { configs in
            guard configs[name] == nil else {
                throw DiscfgError(.configExists, "config \"\(name)\" already exists", field: "config")
            }
            let info = ConfigInfo(name: name, revision: .zero, createdAt: now, modifiedAt: now, settings: settings)
            configs[name] = ConfigState(info: info)
            return info
        }
    }

    public func deleteConfig(_ name: ConfigName) async throws {
        try state.withLock { configs in
            guard configs.removeValue(forKey: name) != nil else { throw DiscfgError.configNotFound(name) }
        }
        _ = leaseRecords.withLock { $0.removeValue(forKey: name) }
        _ = healthRecords.withLock { $0.removeValue(forKey: name) }
        notifier.deleted(name)
    }

    public func updateConfig(_ name: ConfigName, _ patch: ConfigSettingsPatch) async throws -> ConfigInfo {
        try patch.checkAlarms()
        let now = clock.now()
        return try withConfig(name) { config in
            config.info.settings = patch.applied(to: config.info.settings)
            config.info.modifiedAt = now
            Self.prune(&config, now: now)
            return config.info
        }
    }

    public func listConfigs() async throws -> [ConfigInfo] {
        state.withLock { $0.values.map(\.info) }.sorted { $0.name < $1.name }
    }

    public func configInfo(_ name: ConfigName) async throws -> ConfigInfo {
        try withConfig(name) { $0.info }
    }

    public func get(_ key: Key, in config: ConfigName, atRevision revision: Revision?) async throws -> Item? {
        let now = clock.now()
        return try withConfig(config) { state in
            let current = state.items[key]
            guard let revision else { return current?.isExpired(at: now) == false ? current : nil }
            return try PastRead.resolve(
                key: key, at: revision, configRevision: state.info.revision, compacted: state.info.compactedRevision,
                current: current, now: now,
                firstEventAfter: { after in state.history.first { $0.revision > after && $0.key == key } }
            )
        }
    }

    public func list(in config: ConfigName, _ query: ListQuery) async throws -> ListPage {
        var folder = try ListingFolder(query)
        let now = clock.now()
        let (items, revision) = try withConfig(config) { state in
            (state.items.values.filter { query.prefix.contains($0.key) && !$0.isExpired(at: now) }, state.info.revision)
        }
        var skipUntil = folder.scanStart
        for item in items.sorted(by: { $0.key < $1.key }) where !folder.isDone {
            if item.key.path.utf8.lexicographicallyPrecedes(skipUntil.utf8) { continue }
            if let jump = folder.offer(item) { skipUntil = jump }
        }
        return folder.page(revision: revision)
    }

    public func set(_ key: Key, to value: Data, in config: ConfigName, options: SetOptions) async throws -> Event {
        try change(config) { try $0.set(key, to: value, options: options) }
    }

    public func delete(_ key: Key, in config: ConfigName, conditions: [Condition]) async throws -> Event {
        try change(config) { try $0.delete(key, conditions: conditions) }
    }

    public func putDocument(_ document: JSONValue, under prefix: KeyPrefix, in config: ConfigName, replace: Bool) async throws -> ImportResult {
        try change(config) { try $0.putDocument(document, under: prefix, replace: replace) }
    }

    public func setSchema(_ target: SchemaTarget, to schema: Data?, in config: ConfigName, force: Bool) async throws -> SchemaChange {
        try change(config) { try $0.setSchema(target, to: schema, force: force) }
    }

    public func changeDeployment(_ deployment: DeploymentChange, in config: ConfigName) async throws -> DeploymentOutcome {
        try change(config) { try $0.changeDeployment(deployment) }
    }

    public func deletePrefix(_ prefix: KeyPrefix, in config: ConfigName) async throws -> [Event] {
        try change(config) { try $0.deletePrefix(prefix) }
    }

    public func compact(_ config: ConfigName, through revision: Revision) async throws -> ConfigInfo {
        try withConfig(config) { state in
            guard revision <= state.info.revision else { throw Self.futureCompaction(revision, config: config, current: state.info.revision) }
            if revision > state.info.compactedRevision {
                state.history.removeAll { $0.revision <= revision }
                state.info.compactedRevision = revision
            }
            return state.info
        }
    }

    public func transact(_ transaction: Transaction, in config: ConfigName) async throws -> TransactionResult {
        try transaction.validate()
        return try change(config, by: transaction.attribution) { try $0.apply(transaction) }
    }

    public func history(of key: Key, in config: ConfigName, _ query: HistoryQuery) async throws -> HistoryPage {
        try Limits.validatePageSize(query.limit)
        try Limits.validatePageBytes(query.maxBytes)
        return try withConfig(config) { state in
            let matching = state.history.reversed().filter { $0.key == key && $0.revision < (query.before ?? Revision(.max)) }
            let page = Self.page(of: matching, limit: query.limit, maxBytes: query.maxBytes)
            let more = matching.count > page.count
            return HistoryPage(events: page, nextBefore: more ? page.last?.revision : nil, compactedRevision: state.info.compactedRevision)
        }
    }

    public func events(in config: ConfigName, scope: WatchScope, from: Revision, limit: Int, maxBytes: Int) async throws -> EventBatch {
        try Limits.validatePageSize(limit)
        try Limits.validatePageBytes(maxBytes)
        let from = Swift.max(from, Revision(1))
        return try withConfig(config) { state in
            guard from > state.info.compactedRevision else {
                throw DiscfgError.compacted(from, through: state.info.compactedRevision, field: "fromRevision")
            }
            let start = state.history.firstIndex { $0.revision >= from } ?? state.history.endIndex
            var page = EventPage(limit: limit, maxBytes: maxBytes)
            for event in state.history[start...] where scope.matches(event.key) {
                guard page.offer(event) else { break }
            }
            return page.batch(latest: state.info.revision, from: from)
        }
    }

    public func watch(_ config: ConfigName, scope: WatchScope, from: Revision?) async -> AsyncThrowingStream<Event, any Error> {
        let subscription = notifier.subscribe(config)
        // "Now" is when watch is called, not when the stream's task first runs; an unknown
        // config is left to the stream, which ends with `configNotFound`.
        let start = from ?? state.withLock { $0[config]?.info.revision.next }
        let stream = followEvents(config, scope: scope, from: start, subscription: subscription)
        sweeper.ensureRunning(while: notifier) { [weak self] in _ = try? await self?.sweepExpired() }
        return stream
    }

    public func exportPages(_ config: ConfigName, maxBytes: Int, atRevision revision: Revision?) async throws -> SnapshotPages {
        try await RevisionExport.pages(of: self, config, maxBytes: maxBytes, atRevision: revision, now: clock.now())
    }

    public func importSnapshot(_ snapshot: ConfigSnapshot, into config: ConfigName, options: ImportOptions) async throws -> ImportResult {
        try await ImportOptions.answer { try change(config) { try $0.importSnapshot(snapshot, options: options) } }
    }

    public func sweepExpired() async throws -> [Event] {
        let names = state.withLock { Array($0.keys) }
        var events: [Event] = []
        for name in names {
            do {
                events += try change(name) { try $0.expireDue() }
            } catch let error as DiscfgError where error.code == .configNotFound {
                continue
            }
        }
        return events
    }

    private func withConfig<T>(_ name: ConfigName, _ body: (inout ConfigState) throws -> T) throws -> T {
        try state.withLock { configs in
            guard var config = configs[name] else { throw DiscfgError.configNotFound(name) }
            configs[name] = nil
            defer { configs[name] = config }
            return try body(&config)
        }
    }

    /// Runs one change atomically: it works on a transaction that records events, and
    /// only a transaction that finished is applied.
    private func change<T>(_ name: ConfigName, by given: Attribution? = nil, _ body: (inout MemoryTransaction) throws -> T) throws -> T {
        let now = clock.now()
        let attribution = try Attribution.forChange(given)
        let result: T = try withConfig(name) { config in
            // The transaction's copy of the config is gone before the config changes, so
            // its items and history change in place rather than being copied whole.
            let result: T, recorded: [Event], revision: Revision
            do {
                var transaction = MemoryTransaction(base: config, now: now, attribution: attribution)
                result = try body(&transaction)
                (recorded, revision) = (transaction.recorded, transaction.revision)
            }
            guard !recorded.isEmpty else { return result }
            // Checked on the change as a whole, before any of it is applied.
            try config.info.settings.checkChange(name, size: config.info.byteCount ?? 0, change: recorded.byteCountChange, writesKeys: recorded.writesKeys)
            for event in recorded {
                config.items[event.key] = event.item
                if event.item?.expiresAt != nil {
                    config.expiring.insert(event.key)
                } else {
                    config.expiring.remove(event.key)
                }
                config.history.append(event)
                config.info.keyCount = config.info.keyCount.map { $0 + event.keyCountChange }
                config.info.byteCount = config.info.byteCount.map { $0 + event.byteCountChange }
            }
            config.info.revision = revision
            config.info.modifiedAt = now
            Self.prune(&config, now: now)
            return result
        }
        notifier.notify(name)
        return result
    }

    /// The leading events that fit `limit` and the byte budget.
    private static func page(of events: [Event], limit: Int, maxBytes: Int) -> [Event] {
        var budget = PageBudget(bytes: maxBytes)
        var page: [Event] = []
        for event in events {
            guard page.count < limit, budget.take(PageBudget.size(event)) else { break }
            page.append(event)
        }
        return page
    }

    private static func prune(_ config: inout ConfigState, now: Date) {
        let retention = config.info.settings.history
        var dropThrough: Revision?
        if let last = retention.lastDroppable(revision: config.info.revision) {
            dropThrough = last
        } else if let cutoff = retention.cutoff(now: now), let oldest = config.history.first, oldest.at < cutoff {
            // History is in time order, so the oldest event tells whether there is work.
            dropThrough = config.history.last(where: { $0.at < cutoff })?.revision
        }
        guard let dropThrough, dropThrough > config.info.compactedRevision else { return }
        config.history.removeAll { $0.revision <= dropThrough }
        config.info.compactedRevision = dropThrough
    }
}

/// A change to one config of a ``MemoryStore``, recorded and applied only if it finishes.
struct MemoryTransaction: ChangeTransaction {
    let base: MemoryStore.ConfigState
    let now: Date
    let attribution: Attribution?
    var overlay: [Key: Item?] = [:]
    var recorded: [Event] = []
    var revision: Revision

    init(base: MemoryStore.ConfigState, now: Date, attribution: Attribution?) {
        self.base = base
        self.now = now
        self.attribution = attribution
        revision = base.info.revision
    }

    var config: ConfigName { base.info.name }

    func currentRevision() throws -> Revision { revision }

    func storedItem(_ key: Key) throws -> Item? {
        if let overlaid = overlay[key] { return overlaid }
        return base.items[key]
    }

    private func allItems() -> [Item] {
        var merged = base.items
        for (key, item) in overlay { merged[key] = item }
        return merged.values.sorted { $0.key < $1.key }
    }

    func storedItems(in range: KeyRange) throws -> [Item] {
        allItems().filter { range.contains($0.key) }
    }

    func dueExpirations() throws -> [Item] {
        var due: [Item] = []
        for key in base.expiring where overlay[key] == nil {
            if let item = base.items[key], item.isExpired(at: now) { due.append(item) }
        }
        for case let item? in overlay.values where item.isExpired(at: now) { due.append(item) }
        return due.sorted { $0.key < $1.key }
    }

    mutating func record(_ event: Event) throws {
        overlay[event.key] = .some(event.item)
        recorded.append(event)
        revision = event.revision
    }
}
