import DiscfgCore
import Foundation
import Synchronization

extension DynamoDBStore {
    /// Follows a config with ``ConfigStore/followEvents(_:scope:from:subscription:)``.
    ///
    /// Changes made through this store wake watchers at once. Changes made by other
    /// processes are found by polling: every ``Configuration/pollInterval`` while anyone
    /// watches, one `GetItem` of each watched config's meta item; the same poll expires
    /// due keys when the meta item says one may be due, so a watcher sees an `expire`
    /// event without any other write.
    ///
    /// "Now" (`from: nil`) is pinned when `watch` is called, not when the stream's task
    /// first runs: to the newest revision this store has seen of the config (its own
    /// commits and reads). When it has seen none, the stream reads the revision when it
    /// starts.
    public func watch(_ config: ConfigName, scope: WatchScope, from: Revision?) async -> AsyncThrowingStream<Event, any Error> {
        let subscription = notifier.subscribe(config)
        // Pin "now" before returning; an unknown config is left to the stream, which ends
        // with `configNotFound`.
        var start = from
        if start == nil { start = (try? await configInfo(config))?.revision.next }
        watched.watch(config)
        return followEvents(config, scope: scope, from: start, subscription: subscription)
    }
}

/// The configs this store's watchers follow, the newest revision seen of each config,
/// and the poll that notices changes from other processes.
final class WatchedConfigs: Sendable {
    /// Newest revision seen per config, from this store's commits and meta reads.
    let known = Mutex<[ConfigName: Revision]>([:])
    /// The store, once initialized (weak: the poll must not keep it alive).
    let store = Mutex<WeakStore>(WeakStore(store: nil))
    private let polled = Mutex<[ConfigName: Revision?]>([:])

    /// Starts polling `config`.
    func watch(_ config: ConfigName) {
        let known = known.withLock { $0[config] }
        polled.withLock { polled in
            if polled[config] == nil { polled[config] = .some(known) }
        }
    }

    /// Forgets a deleted config.
    func forget(_ config: ConfigName) {
        known.withLock { _ = $0.removeValue(forKey: config) }
        polled.withLock { _ = $0.removeValue(forKey: config) }
    }

    /// One poll: whether any watched config changed (or vanished); expires due keys.
    func poll() async -> Bool {
        guard let store = store.withLock({ $0.store }) else { return false }
        let configs = polled.withLock { $0 }
        var changed = false
        var due: [ConfigName] = []
        for (config, seen) in configs {
            // Bounded as a watch's reads are: a silent endpoint wakes the watchers within it.
            guard let meta = try? await Deadline.within(.after(watchReadTimeout), { try await store.meta(config, consistent: true) }) else {
                // Gone (or unreadable): wake watchers so they find out for themselves.
                polled.withLock { _ = $0.removeValue(forKey: config) }
                changed = true
                continue
            }
            if meta.info.revision != seen { changed = true }
            polled.withLock { $0[config] = .some(meta.info.revision) }
            if let check = meta.expiryCheckAt, check <= store.clock.now() { due.append(config) }
        }
        if !due.isEmpty, let swept = try? await store.sweep(due), !swept.isEmpty { changed = true }
        return changed
    }
}

/// A weak reference that can sit in a `Mutex`.
struct WeakStore: @unchecked Sendable {
    weak var store: DynamoDBStore?
}
