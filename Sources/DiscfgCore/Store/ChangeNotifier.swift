import Synchronization

/// Wakes watchers when a config changes.
///
/// A store calls ``notify(_:)`` after each commit, which wakes watchers in the same
/// process at once. Changes made by another process are found by an optional `poll`
/// that runs every `pollInterval` while anyone is watching (for SQLite: has the file
/// changed?). A wake-up only says "look again": watchers read the events themselves,
/// by revision, so a missed or doubled wake-up can never lose or repeat an event.
public final class ChangeNotifier: Sendable {
    /// One watcher's wake-ups, and whether this process deleted its config.
    public final class Subscription: Sendable {
        /// Yields whenever the config may have changed; holds at most one pending
        /// wake-up, and ends after the config is deleted or when its consumer stops.
        public let wakeUps: AsyncStream<Void>
        fileprivate let deleted = Mutex(false)

        fileprivate init(wakeUps: AsyncStream<Void>) {
            self.wakeUps = wakeUps
        }

        /// Whether the config was deleted since the subscription began. A watch checks
        /// it before and after each read: a config of the same name created meanwhile is
        /// a new config, whose revisions start afresh and must not read as the old one's.
        public var configDeleted: Bool { deleted.withLock { $0 } }
    }

    private struct Subscriber {
        var config: ConfigName
        var subscription: Subscription
        var continuation: AsyncStream<Void>.Continuation
    }

    private struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 0
        var polling = false
    }

    private let state = Mutex(State())
    private let pollInterval: Duration
    private let poll: (@Sendable () async -> Bool)?

    /// Creates a notifier.
    /// - Parameters:
    ///   - pollInterval: how often `poll` runs while there are watchers.
    ///   - poll: returns true when the store changed behind this process's back.
    public init(pollInterval: Duration = .milliseconds(100), poll: (@Sendable () async -> Bool)? = nil) {
        self.pollInterval = pollInterval
        self.poll = poll
    }

    /// Wake-ups for a watcher of `config`.
    public func subscribe(_ config: ConfigName) -> Subscription {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let subscription = Subscription(wakeUps: stream)
        let (id, startPolling) = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(config: config, subscription: subscription, continuation: continuation)
            let start = poll != nil && !state.polling
            if start { state.polling = true }
            return (id, start)
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        if startPolling { runPoller() }
        return subscription
    }

    /// Wakes the watchers of `config`.
    public func notify(_ config: ConfigName) {
        let continuations = state.withLock { $0.subscribers.values.filter { $0.config == config }.map(\.continuation) }
        for continuation in continuations { continuation.yield() }
    }

    /// Tells the watchers of `config` that this process deleted it: their watches end
    /// with `configNotFound`.
    public func deleted(_ config: ConfigName) {
        let subscribers = state.withLock { state in
            let ids = state.subscribers.filter { $0.value.config == config }.map(\.key)
            return ids.compactMap { state.subscribers.removeValue(forKey: $0) }
        }
        for subscriber in subscribers {
            subscriber.subscription.deleted.withLock { $0 = true }
            subscriber.continuation.yield()
            subscriber.continuation.finish()
        }
    }

    /// Wakes every watcher.
    public func notifyAll() {
        let continuations = state.withLock { $0.subscribers.values.map(\.continuation) }
        for continuation in continuations { continuation.yield() }
    }

    /// How many watchers are subscribed.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    private func runPoller() {
        guard let poll else { return }
        let interval = pollInterval
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                let keepGoing = self.state.withLock { state in
                    if state.subscribers.isEmpty { state.polling = false }
                    return state.polling
                }
                guard keepGoing else { return }
                if await poll() { self.notifyAll() }
            }
        }
    }
}
