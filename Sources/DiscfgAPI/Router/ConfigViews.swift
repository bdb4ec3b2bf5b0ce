import DiscfgCore
import Foundation
import NIOCore
import Synchronization

/// In-memory views of the configs a server is asked for, kept current by each store's
/// own change feed (``ConfigReading/watch(_:scope:from:)``), so the event loops can answer
/// key reads without a hop to the store.
///
/// A view is made once the store has answered a key read of its config, loaded from the
/// store and then followed through watch. It answers only when it is known to be current:
/// - **Read your writes.** Every write this server commits is noted
///   (``committed(_:at:changes:)``) before its caller is answered, and a view that has not
///   yet applied that revision (every change of it, for a transaction) does not answer;
///   the store does.
/// - **Other writers** (another process on the same SQLite file, another server on the
///   same table) reach the view through the watch: for SQLite within its poll interval
///   (100 ms), for DynamoDB within its watch's poll interval.
/// - Keys whose TTL has run out, and configs deleted or whose history the watch lost,
///   are not answered from the view.
///
/// The answer of each item (its envelope's bytes and entity tag) is made once per item
/// revision, on first read; how it goes on the wire is the transport's (``ResponseHeads``).
/// All views together hold at most ``maxBytes`` of keys and values; a config that would
/// take them past it is not viewed
/// and its reads go to the store.
public final class ConfigViews: Sendable {
    /// A key's item and, once read, its answer.
    struct Entry {
        var item: Item
        var answer: ItemAnswer?
    }

    /// What a view's reader gets.
    enum Lookup {
        /// The view is current and holds the key: the config and the item's answer.
        case found(ConfigName, ItemAnswer)
        /// The store must answer (no view yet, not current, absent key, expired).
        case miss
    }

    private struct View {
        /// Which view this is: a config dropped and viewed again gets a new one, and the
        /// old view's watcher must not touch it.
        var id: UInt64
        var config: ConfigName
        /// By key path, which the request's path names exactly when it is the key.
        var entries: [String: Entry] = [:]
        /// The revision the view reflects; nil while loading.
        var revision: Revision?
        /// How many changes of ``revision`` the view has applied (a transaction's share
        /// one revision and arrive one by one); `Int.max` when it was loaded at it whole.
        var changesAtRevision = Int.max
        /// The revision the load must reach before the view may answer.
        var readyAt: Revision = .zero
        var bytes = 0
        /// How many deployments run in the config (records under `/.discfg/deploying/`):
        /// while any does, reads go to the router, which overlays them.
        var deploying = 0
        var watcher: Task<Void, Never>?
    }

    private struct State {
        /// By config name, which the request's path names exactly when it is the config.
        var views: [String: View] = [:]
        /// The newest revision this server committed in each config, and how many
        /// changes it holds.
        var committed: [ConfigName: (revision: Revision, changes: Int)] = [:]
        /// Configs too big to view, with when they were found so; tried again later.
        var refused: [ConfigName: ContinuousClock.Instant] = [:]
        var nextID: UInt64 = 0
        /// Bytes of keys and values in all views.
        var totalBytes = 0
        var closed = false
    }

    /// The store the views read and follow.
    public let store: any ConfigReading
    /// The most bytes of keys and values all views hold together.
    public let maxBytes: Int
    /// The most configs viewed at once.
    public let maxViews: Int
    private let clock: any WallClock
    private let state = Mutex(State())

    /// Creates views over `store`.
    public init(store: any ConfigReading, maxBytes: Int = 64 * 1024 * 1024, maxViews: Int = 1024, clock: any WallClock = SystemClock()) {
        self.store = store
        self.maxBytes = maxBytes
        self.maxViews = maxViews
        self.clock = clock
    }

    deinit { close() }

    /// Stops following every config.
    public func close() {
        let watchers = state.withLock { state in
            state.closed = true
            state.totalBytes = 0
            defer { state.views = [:] }
            return state.views.values.compactMap(\.watcher)
        }
        for watcher in watchers { watcher.cancel() }
    }

    /// Notes that this server committed `revision` in `config`, with `changes` changes
    /// (more than one for a transaction): the view does not answer until it has applied
    /// all of them.
    public func committed(_ config: ConfigName, at revision: Revision, changes: Int = 1) {
        state.withLock { state in
            let known = state.committed[config]
            if known.map({ $0.revision < revision }) ?? true {
                state.committed[config] = (revision, changes)
            } else if let known, known.revision == revision, known.changes < changes {
                state.committed[config] = (revision, changes)
            }
        }
    }

    /// Notes that this server deleted `config`: its view is dropped at once.
    public func deleted(_ config: ConfigName) {
        let watcher = state.withLock { state in
            state.committed[config] = nil
            let view = state.views.removeValue(forKey: config.rawValue)
            state.totalBytes -= view?.bytes ?? 0
            return view?.watcher
        }
        watcher?.cancel()
    }

    /// The answer for the key at `keyPath` of the config named `configName`, both as the
    /// request spells them, when the view of that config is current and holds the key;
    /// otherwise ``Lookup/miss``. A spelling that is not a valid name or key finds nothing,
    /// since views hold only valid ones.
    func lookup(keyPath: String, configName: String) -> Lookup {
        let now = clock.now()
        return state.withLock { state in
            guard let (config, entry) = Self.current(state, configName, keyPath) else { return .miss }
            if let expiresAt = entry.item.expiresAt, expiresAt <= now { return .miss }
            if let answer = entry.answer { return .found(config, answer) }
            let answer = ItemAnswer(entry.item, in: config)
            // In place: no copy of the view is held here, so its entries are not copied.
            state.views[configName]?.entries[keyPath]?.answer = answer
            return .found(config, answer)
        }
    }

    /// The config and the entry at `keyPath` of the view named `name`, if it is current.
    private static func current(_ state: borrowing State, _ name: String, _ keyPath: String) -> (ConfigName, Entry)? {
        guard let view = state.views[name], let revision = view.revision, revision >= view.readyAt, view.deploying == 0,
              let entry = view.entries[keyPath] else { return nil }
        if let committed = state.committed[view.config] {
            guard revision > committed.revision || (revision == committed.revision && view.changesAtRevision >= committed.changes) else { return nil }
        }
        return (view.config, entry)
    }

    /// Starts a view of `config` unless there is one. Called after the store answered a
    /// key read of it, so only configs that exist and are read get views.
    func want(_ config: ConfigName) {
        let started: UInt64? = state.withLock { state in
            guard state.views[config.rawValue] == nil, !state.closed, state.views.count < maxViews,
                  state.refused[config].map({ ContinuousClock.now - $0 > .seconds(60) }) ?? true
            else { return nil }
            state.refused[config] = nil
            state.nextID += 1
            state.views[config.rawValue] = View(id: state.nextID, config: config)
            return state.nextID
        }
        if let started { begin(config, id: started) }
    }

    /// Loads `config` and follows it; on any end of the watch (deleted, history lost,
    /// store failure) the view is dropped, and the next read starts a new one.
    private func begin(_ config: ConfigName, id: UInt64) {
        let task = Task { [weak self, maxBytes, store] in
            do {
                let (items, loadedAt) = try await store.items(in: config)
                // Pages may come from successive revisions: answer only once the watch has
                // replayed up to where the last page was read.
                let readyAt = try await store.configInfo(config).revision
                var bytes = 0
                var entries: [String: Entry] = [:]
                var deploying = 0
                for item in items {
                    bytes += item.key.path.utf8.count + item.value.count
                    entries[item.key.path] = Entry(item: item)
                    if DeploymentKeys.running.contains(item.key) { deploying += 1 }
                }
                guard let self else { return }
                let stillWanted = self.state.withLock { state in
                    guard state.views[config.rawValue]?.id == id else { return false }
                    guard state.totalBytes + bytes <= maxBytes else {
                        state.views[config.rawValue] = nil
                        state.refused[config] = .now
                        return false
                    }
                    state.totalBytes += bytes
                    state.views[config.rawValue]?.entries = entries
                    state.views[config.rawValue]?.bytes = bytes
                    state.views[config.rawValue]?.deploying = deploying
                    state.views[config.rawValue]?.revision = loadedAt
                    state.views[config.rawValue]?.readyAt = readyAt
                    return true
                }
                guard stillWanted else { return }
                for try await event in await store.watch(config, scope: .prefix(.root), from: loadedAt.next) {
                    guard self.apply(event, to: config, id: id) else { return }
                }
            } catch {}
            self?.drop(config, id: id)
        }
        let kept = state.withLock { state in
            guard state.views[config.rawValue]?.id == id, !state.closed else { return false }
            state.views[config.rawValue]?.watcher = task
            return true
        }
        if !kept { task.cancel() }
    }

    /// Applies one change; false when the view is gone or grew past its limit.
    private func apply(_ event: Event, to config: ConfigName, id: UInt64) -> Bool {
        state.withLock { state in
            guard state.views[config.rawValue]?.id == id, var view = state.views.removeValue(forKey: config.rawValue) else { return false }
            // While replaying after the load, a key may already be newer than the event.
            let path = event.key.path
            let current = view.entries[path]
            let before = view.bytes
            if current.map({ $0.item.modRevision < event.revision }) ?? true {
                if DeploymentKeys.running.contains(event.key) { view.deploying += (event.item == nil ? 0 : 1) - (current == nil ? 0 : 1) }
                view.bytes -= current.map { $0.item.key.path.utf8.count + $0.item.value.count } ?? 0
                if let item = event.item {
                    view.entries[path] = Entry(item: item)
                    view.bytes += item.key.path.utf8.count + item.value.count
                } else {
                    view.entries[path] = nil
                }
            }
            if event.revision > view.revision ?? .zero {
                view.revision = event.revision
                view.changesAtRevision = 1
            } else if event.revision == view.revision, view.changesAtRevision < .max {
                view.changesAtRevision += 1
            }
            state.totalBytes += view.bytes - before
            guard state.totalBytes <= maxBytes else {
                // Grown past what the views may hold: this one goes.
                state.totalBytes -= view.bytes
                state.refused[config] = .now
                return false
            }
            state.views[config.rawValue] = view
            return true
        }
    }

    private func drop(_ config: ConfigName, id: UInt64) {
        state.withLock { state in
            guard state.views[config.rawValue]?.id == id else { return }
            state.totalBytes -= state.views.removeValue(forKey: config.rawValue)?.bytes ?? 0
        }
    }
}

/// The answer to `GET keys/{key}` for the current item, as the router gives it: its
/// envelope's bytes and its entity tag.
struct ItemAnswer: Sendable {
    /// The item's envelope (``ConfigAPI/itemBody(_:in:)``), in JSON.
    var body: ByteBuffer
    /// The item's entity tag (``ETag/value(_:)``).
    var etag: String
    /// Which answer this is, for the transport to keep what it makes of it (its wire
    /// head, ``ResponseHeads/Wire``): unique in the process, new for each item revision
    /// a view answers.
    let serial: UInt64

    init(_ item: Item, in config: ConfigName) {
        body = ConfigAPI.itemBody(item, in: config)
        etag = ETag.value(item.modRevision)
        serial = Self.made.add(1, ordering: .relaxed).newValue
    }

    private static let made = Atomic<UInt64>(0)
}
