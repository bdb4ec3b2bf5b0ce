import DiscfgCore
import Foundation
import DiscfgJSON
import Synchronization

/// A read-only copy (``ReadOnlyCopy``) of configs kept in memory: what `discfg agent`
/// serves. Revisions, versions and times are the source's, never renumbered.
///
/// Reads (get, list, export, events, watch, config info) answer from memory. It has no
/// changes to make: the server serving it refuses them, naming ``source``; a config
/// not held is `configNotFound` naming the ones held; a read at a past revision is
/// `compacted` (only the current revision is held). A bounded ring of the latest events
/// lets watchers resume; a watch from before it is `compacted`, and clients list again.
///
/// ```swift
/// let replica = ReplicaStore(source: "dynamodb:///discfg", configs: [app])
/// replica.install(try await PublishedSnapshot.read(from: store, config: app))
/// let item = try await replica.get(Key("/db/host"), in: app)
/// ```
public final class ReplicaStore: ReadOnlyCopy {
    /// How many events each config's ring keeps by default.
    public static let defaultRingCapacity = 1000

    /// The store the copies come from, as the refusals name it.
    public let source: String
    /// The configs held, in order: those given at start, then those taken on by ``hold(_:)``.
    public var configs: [ConfigName] { names.withLock { $0 } }
    private let names: Mutex<[ConfigName]>
    private let state = Mutex<[ConfigName: ReplicaConfig]>([:])
    private let clock: any WallClock
    private let ringCapacity: Int
    private let notifier = ChangeNotifier()

    /// Creates a store holding nothing yet; reads of a config not loaded are `unavailable`.
    /// - Parameters:
    ///   - source: the real store, named in every refusal (`dynamodb:///discfg`).
    ///   - configs: the configs it will hold.
    ///   - ringCapacity: the events kept per config for watchers (at least 1).
    ///   - clock: the time expiring keys are checked against.
    public init(source: String, configs: [ConfigName], ringCapacity: Int = ReplicaStore.defaultRingCapacity, clock: any WallClock = SystemClock()) {
        self.source = source
        self.names = Mutex(configs)
        self.ringCapacity = max(1, ringCapacity)
        self.clock = clock
    }

    // MARK: - Keeping the copies

    /// Replaces a config's copy with a whole snapshot (a first load or a reload). A reload
    /// at a later revision becomes events for watchers, one per key that differs (a put at
    /// the item's revision, a delete at the snapshot's), so they go on as after a run of
    /// changes; a reload that cannot be told that way (the source went back, or an item
    /// changed at a revision already held) ends watchers from before it with `compacted`.
    public func install(_ snapshot: PublishedSnapshot) {
        guard configs.contains(snapshot.config) else { return }  // dropped meanwhile
        let now = clock.now()
        state.withLock { held in
            if var current = held[snapshot.config] {
                if current.snapshot.revision == snapshot.revision { return }
                if current.reload(snapshot, at: now) {
                    held[snapshot.config] = current
                    return
                }
            }
            held[snapshot.config] = ReplicaConfig(snapshot, capacity: ringCapacity)
        }
        notifier.notify(snapshot.config)
    }

    /// Holds `config` too (a config that appeared under a prefix); reads of it are
    /// `unavailable` until it is loaded.
    public func hold(_ config: ConfigName) {
        names.withLock { if !$0.contains(config) { $0.append(config) } }
    }

    /// Stops holding `config` (deleted at the source): its copy is dropped, reads of it are
    /// `configNotFound`, and its watchers end with `configNotFound`.
    public func drop(_ config: ConfigName) {
        names.withLock { $0.removeAll { $0 == config } }
        _ = state.withLock { $0.removeValue(forKey: config) }
        notifier.deleted(config)
    }

    /// Applies the source's events after the revision held, then moves to `through`
    /// (the last revision they account for).
    /// - Returns: the revision held afterwards; nil when the config is not loaded yet.
    @discardableResult
    public func apply(_ events: [Event], through: Revision, in config: ConfigName) -> Revision? {
        let revision: Revision? = state.withLock { held in
            guard var copy = held[config] else { return nil }
            _ = copy.apply(events)
            copy.advance(to: through)
            held[config] = copy
            return copy.snapshot.revision
        }
        notifier.notify(config)
        return revision
    }

    /// The copy of a config as a snapshot; nil when it is not loaded.
    public func snapshot(of config: ConfigName) -> PublishedSnapshot? {
        state.withLock { $0[config]?.snapshot }
    }

    /// The revision held of a config; nil when it is not loaded.
    public func revision(of config: ConfigName) -> Revision? {
        state.withLock { $0[config]?.snapshot.revision }
    }

    // MARK: - Reads

    public func listConfigs() async throws -> [ConfigInfo] {
        let configs = self.configs
        return state.withLock { held in configs.compactMap { held[$0]?.info() } }
    }

    public func configInfo(_ name: ConfigName) async throws -> ConfigInfo {
        try withCopy(name) { $0.info() }
    }

    public func get(_ key: Key, in config: ConfigName, atRevision revision: Revision?) async throws -> Item? {
        let now = clock.now()
        return try withCopy(config) { copy in
            if let revision, revision != copy.snapshot.revision { throw pastRead(revision, of: copy) }
            guard let item = copy.snapshot.item(at: key), !item.isExpired(at: now) else { return nil }
            return item
        }
    }

    public func list(in config: ConfigName, _ query: ListQuery) async throws -> ListPage {
        var folder = try ListingFolder(query)
        let now = clock.now()
        return try withCopy(config) { copy in
            let items = copy.snapshot.items
            var index = copy.snapshot.position(of: Key(stored: folder.scanStart))
            while index < items.count, !folder.isDone {
                let item = items[index]
                guard query.prefix.contains(item.key) else { break }
                index += 1
                if item.isExpired(at: now) { continue }
                if let jump = folder.offer(item) { index = max(index, copy.snapshot.position(of: Key(stored: jump))) }
            }
            return folder.page(revision: copy.snapshot.revision)
        }
    }

    public func history(of key: Key, in config: ConfigName, _ query: HistoryQuery) async throws -> HistoryPage {
        try Limits.validatePageSize(query.limit)
        try Limits.validatePageBytes(query.maxBytes)
        return try withCopy(config) { copy in
            let before = query.before ?? .max
            let matching = copy.ring.reversed().filter { $0.key == key && $0.revision < before }
            var budget = PageBudget(bytes: query.maxBytes)
            var page: [Event] = []
            for event in matching {
                guard page.count < query.limit, budget.take(PageBudget.size(event)) else { break }
                page.append(event)
            }
            return HistoryPage(events: page, nextBefore: matching.count > page.count ? page.last?.revision : nil, compactedRevision: copy.floor)
        }
    }

    public func events(in config: ConfigName, scope: WatchScope, from: Revision, limit: Int, maxBytes: Int) async throws -> EventBatch {
        try Limits.validatePageSize(limit)
        try Limits.validatePageBytes(maxBytes)
        let from = max(from, Revision(1))
        return try withCopy(config) { copy in
            guard from > copy.floor else {
                throw DiscfgError(
                    .compacted,
                    "revision \(from) is older than the events this read-only copy of \(source) keeps (from revision \(copy.floor.next)); list the keys again, or watch \(source) itself",
                    field: "fromRevision")
            }
            let start = copy.ring.firstIndex { $0.revision >= from } ?? copy.ring.endIndex
            var page = EventPage(limit: limit, maxBytes: maxBytes)
            for event in copy.ring[start...] where scope.matches(event.key) {
                guard page.offer(event) else { break }
            }
            return page.batch(latest: copy.snapshot.revision, from: from)
        }
    }

    public func watch(_ config: ConfigName, scope: WatchScope, from: Revision?) async -> AsyncThrowingStream<Event, any Error> {
        let subscription = notifier.subscribe(config)
        let start = from ?? state.withLock { $0[config]?.snapshot.revision.next }
        return followEvents(config, scope: scope, from: start, subscription: subscription)
    }

    public func exportPages(_ config: ConfigName, maxBytes: Int, atRevision revision: Revision?) async throws -> SnapshotPages {
        try Limits.validatePageBytes(maxBytes)
        let now = clock.now()
        let snapshot = try withCopy(config) { copy in
            if let revision, revision != copy.snapshot.revision { throw pastRead(revision, of: copy) }
            return copy.snapshot
        }
        let entries = snapshot.items.filter { !$0.isExpired(at: now) }.map(ConfigSnapshot.Entry.init)
        let header = SnapshotHeader(config: config, revision: snapshot.revision, exportedAt: now)
        return SnapshotPages(ConfigSnapshot(config: config, revision: snapshot.revision, exportedAt: now, items: entries), header: header, maxBytes: maxBytes)
    }

    /// The source expires keys; their `expire` events arrive with the rest.
    public func sweepExpired() async throws -> [Event] { [] }

    // MARK: - Answers

    private func withCopy<T>(_ name: ConfigName, _ body: (ReplicaConfig) throws -> T) throws -> T {
        let copy = state.withLock { $0[name] }
        guard let copy else {
            guard configs.contains(name) else { throw notHeld(name) }
            throw DiscfgError(.unavailable, "config \"\(name)\" is not loaded from \(source) yet; try again shortly", field: "timeout")
        }
        return try body(copy)
    }

    private func notHeld(_ name: ConfigName) -> DiscfgError {
        let names = configs.map { "\"\($0)\"" }.joined(separator: ", ")
        return DiscfgError(.configNotFound, "config \"\(name)\" is not held by this read-only copy of \(source); it holds \(names)", field: "config")
    }

    private func pastRead(_ revision: Revision, of copy: ReplicaConfig) -> DiscfgError {
        if revision > copy.snapshot.revision { return .futureRevision(revision, current: copy.snapshot.revision) }
        return DiscfgError(
            .compacted,
            "this read-only copy of \(source) holds config \"\(copy.snapshot.config)\" at revision \(copy.snapshot.revision) only; read revision \(revision) from \(source)",
            field: "revision")
    }
}
